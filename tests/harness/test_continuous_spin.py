"""The continuous-spin experiment (003, Sec. 4.2), tiny grid: records, resume, errors, report."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

import harness.experiments.continuous_spin as cs
from harness.engine import label_words
from harness.experiments import get_experiment
from harness.experiments.continuous_spin.run import bin_counts, kl_floor, sym_kl
from harness.experiments.continuous_spin.settings import (
    ContinuousSpinConfig,
    config_for_level,
    config_from_manifest,
)
from harness.experiments.framework import RunSummary, run, section
from harness.report import write_report
from harness.store import RECORDS, load_records

# Fields that depend on the clock or the source tree, or that the store adds, not on the seed.
TIMING_FIELDS = {"sampler_s", "wall_s", "code", "task_lines"}


def tiny_config(level: str = "quick", seed: int = 0, n_steps: int = 500) -> ContinuousSpinConfig:
    # 3 x 3 grid, short chains: exercises every path in a few seconds.
    return ContinuousSpinConfig(
        level=level,
        seed=seed,
        side=3,
        beta=1.0,
        scale=0.4,
        lam_l2=1.0,
        m=3,
        k=10,
        n_bins=5,
        reference_steps=4_000,
        reference_burn_in=200,
        n_steps=n_steps,
        replicates=2,
        checkpoints=5,
        notes=("tiny test configuration",),
    )


@pytest.fixture
def tiny(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every level of the continuous-spin package the tiny configuration."""
    monkeypatch.setattr(cs, "config_for_level", tiny_config)


def _run(out: Path, seed: int = 0, **kw) -> RunSummary:
    return run(
        get_experiment("continuous-spin"),
        "quick",
        seed,
        out,
        progress=False,
        scheduler="inprocess",
        log=lambda msg: None,
        **kw,
    )


def _strip(record: dict) -> dict:
    return {k: v for k, v in record.items() if k not in TIMING_FIELDS}


@pytest.mark.usefixtures("tiny")
def test_tiny_run_writes_records_and_resumes_without_duplicates(tmp_path: Path) -> None:
    out = tmp_path / "cs"
    first = _run(out)
    assert (first.planned, first.ran, first.already_done) == (7, 7, 0)
    records = load_records(out / RECORDS)
    assert sorted(r["type"] for r in records) == ["chain"] * 6 + ["reference"]
    assert records[0]["type"] == "reference"  # every chain waits for it
    ref = records[0]
    assert np.asarray(ref["counts"]).sum(axis=1).tolist() == [4_000 - 200] * 9
    for r in records[1:]:
        assert r["reference_key"] == ref["key"]
        assert len(r["sym_kl"]) == len(r["iterations"]) == len(r["sampler_s"])
        assert all(v >= 0 for v in r["sym_kl"])
    second = _run(out)
    assert (second.ran, second.already_done) == (0, 7)
    assert len((out / RECORDS).read_text().splitlines()) == 7
    assert "pgda" in second.text and "reference" in second.text

    # A kill: keep the reference and 2 chains, and a torn fourth line; the resumed chains
    # repeat the lost ones exactly.
    lines = (out / RECORDS).read_text().splitlines(keepends=True)
    (out / RECORDS).write_text("".join(lines[:3]) + lines[3][:40])
    resumed = _run(out)
    assert (resumed.ran, resumed.already_done) == (4, 3)
    after = load_records(out / RECORDS)
    keys = [r["key"] for r in after]
    assert len(keys) == len(set(keys)) == 7
    old = {r["key"]: _strip(r) for r in records}
    assert all(_strip(r) == old[r["key"]] for r in after)


@pytest.mark.usefixtures("tiny")
def test_a_lost_reference_is_rerun_before_any_chain(tmp_path: Path) -> None:
    out = tmp_path / "cs"
    _run(out)
    before = {r["key"]: _strip(r) for r in load_records(out / RECORDS)}
    (out / RECORDS).write_text("")
    again = _run(out)
    assert (again.planned, again.ran) == (7, 7)
    after = load_records(out / RECORDS)
    assert after[0]["type"] == "reference"
    assert {r["key"]: _strip(r) for r in after} == before


@pytest.mark.usefixtures("tiny")
def test_other_settings_in_same_dir_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "cs"
    _run(out)
    monkeypatch.setattr(cs, "config_for_level", lambda level, seed: tiny_config(n_steps=600))
    with pytest.raises(ValueError, match="n_steps"):
        _run(out)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("side", 1),
        ("lam_l2", 0.0),
        ("beta", float("nan")),
        ("m", 0),
        ("k", 1.5),
        ("n_bins", 1),
        ("reference_burn_in", 3_000),
        ("n_steps", 0),
        ("replicates", True),
        ("seed", -1),
        ("algorithms", ("gibbs-its", "pg-rejection")),
        ("algorithms", ("pgits", "pgits")),
        ("level", "huge"),
    ],
)
def test_bad_config_names_the_parameter(field: str, value: object) -> None:
    with pytest.raises(ValueError, match=field):
        dataclasses.replace(tiny_config(), **{field: value})


def test_bad_level_part_and_workers_fail_before_any_work(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="level"):
        config_for_level("medium")
    experiment = get_experiment("continuous-spin")
    with pytest.raises(ValueError, match="level"):
        run(experiment, "medium", 0, tmp_path / "a", progress=False)
    with pytest.raises(ValueError, match="workers"):
        run(experiment, "quick", 0, tmp_path / "b", progress=False, workers=0)
    with pytest.raises(ValueError, match="part"):
        run(experiment, "quick", 0, tmp_path / "c", progress=False, part="half")
    assert not any(tmp_path.iterdir())


def test_levels_match_the_paper() -> None:
    full = config_for_level("full")
    assert (full.side, full.m, full.k, full.lam_l2, full.reference_steps) == (
        20,
        3,
        10,
        1.0,
        10_000_000,
    )
    for level in ("quick", "full"):
        config = config_for_level(level)
        assert config_from_manifest(json.loads(json.dumps(config.manifest()))) == config
    # Before the reference exists only it is planned; then the 9 chains join it.
    (ref_task,) = cs.plan(full, [], "all")
    assert ref_task.key.startswith("reference|gibbs-its|steps=10000000|")
    tasks = cs.plan(full, [{"key": ref_task.key, "counts": [[1]]}], "all")
    assert len(tasks) == len({t.key for t in tasks}) == 10
    assert all(t.inputs[2]["key"] == ref_task.key for t in tasks[1:])


def test_task_keys_and_seeds_match_the_old_records() -> None:
    """Keys and streams are those of the pre-framework code, so old directories still resume."""
    (task,) = cs.plan(config_for_level("quick", 3), [], "all")
    assert task.key == (
        "reference|gibbs-its|steps=2000000|burn=100000|side=20|beta=1|scale=0.4|lam=1L2|m=3|"
        "k=10|bins=20|cp=25|rep=-1"
    )
    # The old setting_rng(seed, key): SeedSequence(seed, spawn_key=SHA-256(key)'s two words).
    assert task.seed is not None and task.seed.entropy == 3
    assert task.seed.spawn_key == label_words(task.key)


def test_sym_kl_and_floor() -> None:
    values = np.array([[0.0, 0.99], [0.5, 1.0], [0.26, 0.74]])
    assert bin_counts(values, 4).tolist() == [[1, 1, 1, 0], [0, 0, 1, 2]]
    c = np.array([[10, 0], [3, 7]])
    assert sym_kl(c, c) == 0.0
    assert sym_kl(c, c[::-1]) > 0.0
    assert kl_floor(5, 9, 100, 100) == pytest.approx(2 * 4 * 9 * 0.02)


@pytest.mark.usefixtures("tiny")
def test_section_returns_svg_figures_and_table(tmp_path: Path) -> None:
    out = tmp_path / "cs"
    _run(out)
    sec = section(get_experiment("continuous-spin"), out)
    assert sec["complete"] and sec["missing"] == 0 and sec["planned"] == 7
    figures = [f for g in sec["figure_groups"] for f in g["figures"]]
    assert len(figures) == 2
    assert all(f["svg"].lstrip().startswith(("<?xml", "<svg")) for f in figures)
    (tab,) = sec["tables"]
    labels = [row[0]["text"] for row in tab["rows"]]
    assert labels == ["reference", "gibbs-its", "pgits", "pgda"]
    paper_col = tab["columns"].index("paper (003 Sec. 4.2)")
    assert [row[paper_col]["text"] for row in tab["rows"]] == ["-", "-", "190", "190"]
    assert sec["records_table"] is not None and len(sec["records_table"]["rows"]) == 6

    page = write_report([out], tmp_path / "report.html").read_text(encoding="utf-8")
    assert "Factors per iteration and cost" in page and "<svg" in page


@pytest.mark.usefixtures("tiny")
def test_section_of_a_partial_run_says_what_is_missing(tmp_path: Path) -> None:
    out = tmp_path / "cs"
    _run(out)
    lines = (out / RECORDS).read_text().splitlines(keepends=True)
    (out / RECORDS).write_text("".join(lines[:3]))
    sec = section(get_experiment("continuous-spin"), out)
    assert not sec["complete"] and sec["missing"] == 4
    assert len(sec["records_table"]["rows"]) == 2
