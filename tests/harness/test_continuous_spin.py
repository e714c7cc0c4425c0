"""The continuous-spin experiment (003, Sec. 4.2), tiny grid: records, resume, errors, report."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from harness.experiments import continuous_spin_report
from harness.experiments.continuous_spin import (
    ContinuousSpinConfig,
    bin_counts,
    config_for_level,
    format_speed,
    kl_floor,
    plan,
    run,
    sym_kl,
)
from harness.experiments.store import RECORDS_FILE, load_records


def tiny_config(seed: int = 0) -> ContinuousSpinConfig:
    # 3 x 3 grid, short chains: exercises every path in a few seconds.
    return ContinuousSpinConfig(
        level="quick",
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
        n_steps=500,
        replicates=2,
        checkpoints=5,
        notes=("tiny test configuration",),
    )


def _silent(msg: str) -> None:
    del msg


def test_tiny_run_writes_records_and_resumes_without_duplicates(tmp_path: Path) -> None:
    config = tiny_config()
    out = tmp_path / "cs"
    first = run(config, out, progress=False, log=_silent)
    assert (first.planned, first.ran, first.already_done, first.skipped_by_rule) == (7, 7, 0, 0)
    records = load_records(out / RECORDS_FILE)
    assert sorted(r["type"] for r in records) == ["chain"] * 6 + ["reference"]
    ref = next(r for r in records if r["type"] == "reference")
    assert np.asarray(ref["counts"]).sum(axis=1).tolist() == [4_000 - 200] * 9
    for r in (r for r in records if r["type"] == "chain"):
        assert r["reference_key"] == ref["key"]
        assert len(r["sym_kl"]) == len(r["iterations"]) == len(r["sampler_s"])
        assert all(v >= 0 for v in r["sym_kl"])
    second = run(config, out, progress=False, log=_silent)
    assert (second.ran, second.already_done) == (0, 7)
    lines = (out / RECORDS_FILE).read_text().splitlines()
    assert len(lines) == 7
    assert "pgda" in format_speed(second.speed)


def test_other_settings_in_same_dir_are_refused(tmp_path: Path) -> None:
    out = tmp_path / "cs"
    run(tiny_config(), out, progress=False, log=_silent)
    with pytest.raises(ValueError, match="n_steps"):
        run(dataclasses.replace(tiny_config(), n_steps=600), out, progress=False, log=_silent)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("side", 1),
        ("lam_l2", 0.0),
        ("m", 0),
        ("k", 1.5),
        ("n_bins", 1),
        ("reference_burn_in", 3_000),
        ("n_steps", 0),
        ("replicates", True),
        ("algorithms", ("gibbs-its", "pg-rejection")),
        ("level", "huge"),
    ],
)
def test_bad_config_names_the_parameter(field: str, value: object) -> None:
    name = "algorithms" if field == "algorithms" else field
    with pytest.raises(ValueError, match=name):
        dataclasses.replace(tiny_config(), **{field: value})


def test_bad_level_and_run_arguments(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="level"):
        config_for_level("medium")
    with pytest.raises(ValueError, match="workers"):
        run(tiny_config(), tmp_path / "a", progress=False, workers=0, log=_silent)
    with pytest.raises(ValueError, match="part"):
        run(tiny_config(), tmp_path / "b", progress=False, part="half", log=_silent)


def test_levels_match_the_paper() -> None:
    full = config_for_level("full")
    assert (full.side, full.m, full.k, full.lam_l2, full.reference_steps) == (
        20,
        3,
        10,
        1.0,
        10_000_000,
    )
    assert plan(full)[0].is_reference


def test_sym_kl_and_floor() -> None:
    values = np.array([[0.0, 0.99], [0.5, 1.0], [0.26, 0.74]])
    assert bin_counts(values, 4).tolist() == [[1, 1, 1, 0], [0, 0, 1, 2]]
    c = np.array([[10, 0], [3, 7]])
    assert sym_kl(c, c) == 0.0
    assert sym_kl(c, c[::-1]) > 0.0
    assert kl_floor(5, 9, 100, 100) == pytest.approx(2 * 4 * 9 * 0.02)


def test_section_returns_svg_figures_and_table(tmp_path: Path) -> None:
    out = tmp_path / "cs"
    run(tiny_config(), out, progress=False, log=_silent)
    sec = continuous_spin_report.section(out)
    assert sec["complete"] and sec["missing"] == 0
    figures = [f for g in sec["figure_groups"] for f in g["figures"]]
    assert len(figures) == 2
    assert all(f["svg"].lstrip().startswith(("<?xml", "<svg")) for f in figures)
    (tab,) = sec["tables"]
    labels = [row[0]["text"] for row in tab["rows"]]
    assert labels == ["reference", "gibbs-its", "pgits", "pgda"]
    paper_col = tab["columns"].index("paper (003 Sec. 4.2)")
    assert [row[paper_col]["text"] for row in tab["rows"]] == ["-", "-", "190", "190"]
    assert sec["records_table"] is not None
