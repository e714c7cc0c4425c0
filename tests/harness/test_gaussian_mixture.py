"""The truncated Gaussian mixture experiment (003, Sec. 4.3), tiny sizes: records, resume after an
interruption, distances, levels and the report section."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from harness.experiments import gaussian_mixture_report
from harness.experiments.gaussian_mixture import (
    GaussianMixtureConfig,
    config_for_level,
    distances,
    format_speed,
    hist2d,
    plan,
    run,
)
from harness.experiments.store import RECORDS_FILE, load_records
from harness.targets.gaussian_mixture import PAPER_L


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


def _silent(msg: str) -> None:
    del msg


def test_tiny_run_records_and_report(tmp_path: Path) -> None:
    out = tmp_path / "gm"
    summary = run(tiny_config(), out, progress=False, log=_silent)
    assert (summary.planned, summary.ran, summary.already_done) == (4, 4, 0)
    records = load_records(out / RECORDS_FILE)
    assert [r["type"] for r in records] == ["truth", "chain", "chain", "chain"]
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
    assert "pgda" in format_speed(summary.speed)

    sec = gaussian_mixture_report.section(out)
    assert sec["complete"] and sec["missing"] == 0
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


def test_resume_after_interruption(tmp_path: Path) -> None:
    out = tmp_path / "gm"
    run(tiny_config(), out, progress=False, log=_silent)
    path = out / RECORDS_FILE
    lines = path.read_text().splitlines(keepends=True)
    before = load_records(path)
    # A kill during the third record: two complete lines and a torn one.
    path.write_text("".join(lines[:2]) + lines[2][: len(lines[2]) // 2])
    again = run(tiny_config(), out, progress=False, log=_silent)
    assert (again.ran, again.already_done) == (2, 2)
    after = load_records(path)
    assert len(path.read_text().splitlines()) == 4
    for a, b in zip(before, after, strict=True):
        assert a["key"] == b["key"]
        if a["type"] == "chain":  # same seed stream per setting: the same chain again
            assert a["counts"] == b["counts"] and a["tv"] == b["tv"]
    third = run(tiny_config(), out, progress=False, log=_silent)
    assert (third.ran, third.already_done) == (0, 4)


def test_other_settings_in_same_dir_are_refused(tmp_path: Path) -> None:
    out = tmp_path / "gm"
    run(tiny_config(), out, progress=False, log=_silent)
    with pytest.raises(ValueError, match="n_steps"):
        run(dataclasses.replace(tiny_config(), n_steps=900), out, progress=False, log=_silent)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("n_data", 0),
        ("L", -1.0),
        ("lam", 0.0),
        ("m", 0),
        ("k", 2.5),
        ("n_steps", 0),
        ("rejection_cap", True),
        ("burn_in", 30),
        ("n_bins", 1),
        ("algorithms", ("pgda", "gibbs-its")),
        ("level", "huge"),
    ],
)
def test_bad_config_names_the_parameter(field: str, value: object) -> None:
    with pytest.raises(ValueError, match=field):
        dataclasses.replace(tiny_config(), **{field: value})


def test_bad_level_and_run_arguments(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="level"):
        config_for_level("medium")
    with pytest.raises(ValueError, match="workers"):
        run(tiny_config(), tmp_path / "a", progress=False, workers=0, log=_silent)


def test_levels_match_the_paper() -> None:
    full = config_for_level("full")
    assert (full.n_data, full.L, full.lam, full.m, full.k, full.n_steps) == (
        1_000_000,
        1581.14,
        500.0,
        20,
        25,
        1_000_000,
    )
    quick = config_for_level("quick")
    assert quick.L == full.L and quick.n_data < full.n_data
    assert plan(full)[0].is_truth


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
