"""The FlyMC Table 1 reproduction on small rows: records, resume, the report, bad settings."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from harness.experiments import get_experiment
from harness.experiments.flymc_table1.report import with_speedups
from harness.experiments.flymc_table1.settings import Row, Table1Config
from harness.experiments.framework import run, section
from harness.report import write_report
from harness.store import RECORDS, load_records

NAME = "flymc-table1"


def _run(out: Path, config: Table1Config, part: str = "all"):
    return run(
        get_experiment(NAME),
        "quick",
        0,
        out,
        part=part,
        progress=False,
        scheduler="inprocess",
        log=lambda msg: None,
        config=config,
    )


def _small() -> Table1Config:
    """Logistic rows on 2000 synthetic points and the real digits, short chains; one scaling
    size."""
    config = get_experiment(NAME).module().config_for_level("quick", 0)
    rows = [
        Row("logistic", data, column, 2000 if data == "synthetic" else 359, 600)
        for data in ("synthetic", "digits")
        for column in ("regular", "untuned", "map")
    ]
    return dataclasses.replace(
        config, rows=tuple(rows), scaling_N=(1000,), scaling_iterations=50, reference_max_N=1000
    )


# Slow set (about 15-30 s on 2 cores): keeps the default suite under its 10 minutes.
@pytest.mark.slow
def test_rows_record_queries_and_ess_resume_and_report(tmp_path):
    config = _small()
    first = _run(tmp_path / "out", config)
    assert first.ran == 7 and first.planned == 7
    records = load_records(tmp_path / "out" / RECORDS)
    rows = {(r["data"], r["column"]): r for r in with_speedups(records)}
    for data in ("synthetic", "digits"):
        regular, untuned, tuned = (rows[(data, c)] for c in ("regular", "untuned", "map"))
        assert regular["queries_per_iter"] == regular["N"]  # every new theta reads all N
        assert tuned["queries_per_iter"] < 0.2 * tuned["N"] and tuned["map_evaluations"] > 0
        assert regular["speedup"] == pytest.approx(1.0)
        assert 0.0 < untuned["ess_mean_per_1000"] and untuned["map_evaluations"] is None
    assert rows[("digits", "map")]["source"].startswith("real")
    scaling = [r for r in records if r["type"] == "scaling"]
    assert {(r["algorithm"], r["impl"]) for r in scaling} == {
        ("flymc-mh", "numba"),
        ("rwmh", "numba"),
        ("flymc-mh", "reference"),
        ("rwmh", "reference"),
    }
    again = _run(tmp_path / "out", config)
    assert again.ran == 0 and again.already_done == 7
    sec = section(get_experiment(NAME), tmp_path / "out")
    assert sec["complete"] and len(sec["figure_groups"]) == 2
    assert [t["title"][:5] for t in sec["tables"]] == ["Table", "Cost ", "Scali"]
    html = Path(write_report([tmp_path / "out"], tmp_path / "r.html")).read_text()
    assert "MAP-tuned FlyMC" in html and "12,214" in html  # the paper's column beside ours


def test_the_scaling_part_runs_alone(tmp_path):
    summary = _run(tmp_path / "out", _small(), part="scaling")
    assert summary.ran == 1 and "flymc-mh" in summary.text


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda: Row("softmax", "digits", "map", 359, 100), "data = 'digits' is invalid"),
        (lambda: Row("probit", "synthetic", "map", 100, 100), "'model' = 'probit' is invalid"),
        (lambda: Row("logistic", "synthetic", "map", 100, 5), "'iterations' = 5 is invalid"),
        (
            lambda: dataclasses.replace(_small(), q_db=0.0),
            r"'q_db' = 0.0 is invalid; valid: a number in \(0.0, 1.0\]",
        ),
    ],
)
def test_bad_settings_are_named(change, message):
    with pytest.raises(ValueError, match=message):
        change()
