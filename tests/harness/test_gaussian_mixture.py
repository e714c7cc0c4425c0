"""The truncated Gaussian mixture experiment (003, Sec. 4.3), tiny sizes: records, resume after an
interruption, distances, levels and the report section."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import numpy as np
import pytest

import harness.experiments.gaussian_mixture as gm
from harness.experiments import get_experiment
from harness.experiments.framework import RunSummary, run, section
from harness.experiments.gaussian_mixture.metrics import distances, hist2d
from harness.experiments.gaussian_mixture.settings import GaussianMixtureConfig, config_for_level
from harness.store import RECORDS, load_records
from harness.targets.gaussian_mixture import PAPER_L

EXPERIMENT = get_experiment("gaussian-mixture")


def tiny_config(seed: int = 0) -> GaussianMixtureConfig:
    # 200 data tempered to the paper's L, short chains, coarse grid: every path in seconds.
    return dataclasses.replace(
        config_for_level("quick", seed),
        n_data=200,
        n_steps=800,
        rejection_steps=30,
        rejection_cap=200,
        burn_in=10,
        n_bins=32,
        quad_points=5,
        notes=("tiny test configuration",),
    )


def _run(out: Path, config: GaussianMixtureConfig | None = None, **kw) -> RunSummary:
    """framework.run with ``config`` (the tiny one by default) in place of the level's."""
    config = config or tiny_config()
    return run(
        EXPERIMENT,
        "quick",
        config.seed,
        out,
        progress=False,
        scheduler="inprocess",
        log=lambda msg: None,
        config=config,
        **kw,
    )


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, RunSummary]:
    out = tmp_path_factory.mktemp("gm") / "run"
    return out, _run(out)


def test_tiny_run_records_and_report(finished: tuple[Path, RunSummary]) -> None:
    out, summary = finished
    assert (summary.planned, summary.ran, summary.already_done) == (4, 4, 0)
    records = load_records(out / RECORDS)
    assert [r["type"] for r in records] == ["truth", "chain", "chain", "chain"]
    assert all(r["task_id"] == r["key"] for r in records)
    truth = records[0]
    assert truth["L"] == pytest.approx(PAPER_L, abs=1e-9)
    assert truth["n_eff"] == pytest.approx(truth["tau"] * 200)
    assert np.sum(truth["probs"]) == pytest.approx(1.0)
    assert truth["quad_check_tv"] < 1e-2
    assert truth["envelope"] > truth["top"]  # log w dominates U at the mode's conditionals
    for r in records[1:]:
        assert np.sum(r["counts"]) == r["n_steps"] - r["burn_in"]
        assert 0.0 <= r["tv"] <= 1.0 and r["hellinger"] >= 0.0 and r["sym_kl"] >= 0.0
    rej = records[-1]
    assert rej["label"] == "gibbs-rejection" and rej["proposals_per_iter"] > 1.0
    assert rej["params"]["envelope"] == truth["envelope"]
    assert "pgda" in summary.text and "gibbs-rejection" in summary.text

    sec = section(EXPERIMENT, out)
    assert sec["complete"] and sec["missing"] == 0 and sec["planned"] == 4
    figures = [f for g in sec["figure_groups"] for f in g["figures"]]
    assert len(figures) == 2 and all(f["svg"].lstrip().startswith("<svg") for f in figures)
    paper, results = sec["tables"]
    rows = {row[0]["text"]: row for row in paper["rows"]}
    assert rows["L"][1]["text"] == "1581.14"
    assert rows["L"][2]["text"] == f"{PAPER_L:.6f}"
    labels = [row[0]["text"] for row in results["rows"]]
    assert labels == ["pgits", "pgda", "gibbs-rejection"]
    col = results["columns"].index("paper (003 Sec. 4.3)")
    assert [row[col]["text"] for row in results["rows"]] == ["1802", "1802", "-"]
    assert any("tempering" in line for line in paper["banner"]["lines"])


def test_chains_wait_for_the_truth_record(finished: tuple[Path, RunSummary]) -> None:
    config = tiny_config()
    before = gm.plan(config, [], "all")
    assert [t.key.split("|")[0] for t in before] == ["truth"]
    truth = load_records(finished[0] / RECORDS)[0]
    after = gm.plan(config, [truth], "all")
    assert after[0] == before[0] and len(after) == 4
    assert all(t.inputs[-1] is truth and t.seed is not None for t in after[1:])


def test_resume_after_interruption(tmp_path: Path, finished: tuple[Path, RunSummary]) -> None:
    out = tmp_path / "gm"
    shutil.copytree(finished[0], out)
    path = out / RECORDS
    lines = path.read_text().splitlines(keepends=True)
    before = load_records(path)
    # A kill during the third record: two complete lines and a torn one.
    path.write_text("".join(lines[:2]) + lines[2][: len(lines[2]) // 2])
    again = _run(out)
    assert (again.ran, again.already_done) == (2, 2)
    after = load_records(path)
    assert len(path.read_text().splitlines()) == 4
    for a, b in zip(before, after, strict=True):
        assert a["key"] == b["key"]
        if a["type"] == "chain":  # same seed stream per setting: the same chain again
            assert a["counts"] == b["counts"] and a["tv"] == b["tv"]
    third = _run(out)
    assert (third.ran, third.already_done) == (0, 4)


def test_other_settings_in_same_dir_are_refused(finished: tuple[Path, RunSummary]) -> None:
    with pytest.raises(ValueError, match="n_steps"):
        _run(finished[0], dataclasses.replace(tiny_config(), n_steps=900))


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("n_data", 0),
        ("L", -1.0),
        ("L", float("nan")),
        ("lam", 0.0),
        ("m", 0),
        ("k", 2.5),
        ("n_steps", 0),
        ("rejection_cap", True),
        ("burn_in", 30),
        ("n_bins", 1),
        ("algorithms", ("pgda", "gibbs-its")),
        ("algorithms", ("pgda", "pgda")),
        ("level", "huge"),
    ],
)
def test_bad_config_names_the_parameter(field: str, value: object) -> None:
    with pytest.raises(ValueError, match=f"parameter '{field}'|--{field}"):
        dataclasses.replace(tiny_config(), **{field: value})


def test_bad_level_and_run_arguments(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="level"):
        gm.config_for_level("medium", 0)
    with pytest.raises(ValueError, match="level"):
        run(EXPERIMENT, "medium", 0, tmp_path / "a", progress=False)
    with pytest.raises(ValueError, match="part"):
        run(EXPERIMENT, "quick", 0, tmp_path / "a", part="chains", progress=False)
    with pytest.raises(ValueError, match="workers"):
        run(EXPERIMENT, "quick", 0, tmp_path / "a", progress=False, workers=0)
    assert not (tmp_path / "a").exists()


def test_levels_match_the_paper_and_round_trip() -> None:
    full = gm.config_for_level("full", 0)
    assert (full.n_data, full.L, full.lam, full.m, full.k, full.n_steps) == (
        1_000_000,
        1581.14,
        500.0,
        20,
        25,
        1_000_000,
    )
    quick = gm.config_for_level("quick", 0)
    assert quick.L == full.L and quick.n_data < full.n_data
    (truth,) = gm.plan(full, [], "all")
    assert truth.key.startswith("truth|") and truth.seed is None
    for config in (quick, full):
        assert gm.config_from_manifest(config.manifest()) == config
    assert callable(gm.warm)


def test_distances_and_histogram() -> None:
    values = np.array([[-6.0, 5.99], [0.1, 0.1], [5.0, -5.0]])
    assert hist2d(values, 2, -6.0, 6.0).tolist() == [[0, 1], [1, 1]]
    q = np.array([[0.25, 0.25], [0.25, 0.25]])
    same = distances(np.array([[5, 5], [5, 5]]), q)
    assert same["tv"] == 0.0 and same["sym_kl"] == 0.0 and same["hellinger"] == 0.0
    far = distances(np.array([[10, 0], [0, 0]]), q)
    assert far["tv"] == pytest.approx(0.75)
    assert far["hellinger"] == pytest.approx(np.sqrt(1 - 0.5))
    assert far["sym_kl"] > 0.5
    with pytest.raises(ValueError, match="empty"):
        distances(np.zeros((2, 2)), q)
