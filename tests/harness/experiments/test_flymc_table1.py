"""The flymc-table1 experiment (002, Table 1) on small rows: records, resume, the section,
bad settings, keys and the claims' rules."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from harness.engine import label_words
from harness.experiments import get_experiment
from harness.experiments.declare import from_manifest
from harness.experiments.flymc_table1 import PAPER, FlymcTable1, Row, Table1Config
from harness.experiments.framework import section
from harness.report import write_report
from harness.store import RECORDS, load_records
from tests.harness.experiments.tiny import assert_decided, run_tiny

FLYMC = FlymcTable1()


def small(**change: object) -> Table1Config:
    """Logistic rows on 2000 synthetic points and the real digits, short chains; one scaling
    size."""
    rows = tuple(
        Row("logistic", data, column, 2000 if data == "synthetic" else 359, 300)
        for data in ("synthetic", "digits")
        for column in ("regular", "untuned", "map")
    )
    config = FLYMC.config("quick")
    kw = {"rows": rows, "scaling_N": (1000,), "scaling_iterations": 50, "reference_max_N": 1000}
    return dataclasses.replace(config, **{**kw, "notes": ("small test rows",), **change})


# Slow set (about 15-30 s on 2 cores): keeps the default suite under its 10 minutes.
@pytest.mark.slow
def test_rows_record_queries_and_ess_resume_and_report(tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = run_tiny(FLYMC, small(), out)
    assert first.ran == 7 and first.planned == 7
    records = load_records(out / RECORDS)
    rows = {(r["data"], r["column"]): r for r in records if r["type"] == "row"}
    for data in ("synthetic", "digits"):
        regular, untuned, tuned = (rows[(data, c)] for c in ("regular", "untuned", "map"))
        assert regular["queries_per_iter"] == regular["N"]  # every new theta reads all N
        assert tuned["queries_per_iter"] < 0.2 * tuned["N"] and tuned["map_evaluations"] > 0
        assert 0.0 < untuned["ess_mean_per_1000"] and untuned["map_evaluations"] is None
    assert rows[("digits", "map")]["source"].startswith("real")
    scaling = [r for r in records if r["type"] == "scaling"]
    assert {(r["algorithm"], r["impl"]) for r in scaling} == {
        ("flymc-mh", "numba"),
        ("rwmh", "numba"),
        ("flymc-mh", "reference"),
        ("rwmh", "reference"),
    }
    again = run_tiny(FLYMC, small(), out)
    assert again.ran == 0 and again.already_done == 7
    sec = section(get_experiment("flymc-table1"), out)
    assert sec["complete"] and sec["notes"] == ["small test rows"]
    assert len(sec["figure_groups"]) == 1 and len(sec["records_table"]["rows"]) == 10
    efficiency = [row[8]["text"] for row in sec["records_table"]["rows"]]
    assert efficiency[6:] == ["-"] * 4  # ESS per query: the scaling records have no ESS
    eff = {k: 1e3 * r["ess_mean_per_1000"] / r["queries_per_iter"] for k, r in rows.items()}
    assert efficiency[:6] == [
        format(eff[d, c], ".3g")
        for d in ("synthetic", "digits")
        for c in ("regular", "untuned", "map")
    ]
    verdicts = {c["id"]: c["verdict"] for c in sec["claims"]}
    assert verdicts["logistic-regular-queries"] == "not reproduced"  # N = 2000, not 12,214
    assert verdicts["logistic-map-speedup"] == "setting differs"
    assert verdicts["softmax-map-ess"] == "setting differs"  # no softmax row: the rule alone
    html = write_report([out], tmp_path / "r.html").read_text(encoding="utf-8")
    assert "Paper claims</h3>" in html and "logistic-map-gains-much" in html


def test_the_scaling_part_runs_alone(tmp_path: Path) -> None:
    summary = run_tiny(FLYMC, small(), tmp_path / "out", part="scaling")
    assert summary.ran == 1 and "flymc-mh" in summary.text


@pytest.mark.parametrize(
    ("change", "name"),
    [
        (lambda: Row("softmax", "digits", "map", 359, 100), "data"),
        (lambda: Row("probit", "synthetic", "map", 100, 100), "model"),
        (lambda: Row("logistic", "synthetic", "best", 100, 100), "column"),
        (lambda: Row("logistic", "synthetic", "map", 0, 100), "N"),
        (lambda: Row("logistic", "synthetic", "map", 100, 5), "iterations"),
        (lambda: small(q_db=0.0), "q_db"),
        (lambda: small(q_db=1.5), "q_db"),
        (lambda: small(burn_in=0.5), "burn_in"),
        (lambda: small(burn_in=-0.1), "burn_in"),
        (lambda: small(rows=()), "rows"),
        (lambda: small(rows=small().rows[:1] * 2), "rows"),
        (lambda: small(scaling_N=(5,)), "scaling_N"),
        (lambda: small(scaling_iterations=2.5), "scaling_iterations"),
        (lambda: small(seed=-1), "seed"),
    ],
)
def test_bad_settings_name_the_parameter(change, name: str) -> None:
    with pytest.raises(ValueError, match=f"'{name}"):
        change()


def test_q_db_and_burn_in_ranges_are_half_open() -> None:
    # q_db in (0, 1] (1: every dark point proposed each iteration); burn_in in [0, 0.5).
    assert (small(q_db=1.0).q_db, small(burn_in=0.0).burn_in) == (1.0, 0.0)


def test_levels_round_trip_and_keys_match_the_old_records() -> None:
    for level in ("quick", "full"):
        config = FLYMC.config(level, 3)
        back = from_manifest(Table1Config, json.loads(json.dumps(config.manifest())))
        assert back == config and len(config.rows) == 12
    tasks = FLYMC.plan(FLYMC.config("quick", 3), [], "all")
    # Literal keys of the pre-framework code: old directories still resume, seeds unchanged.
    assert tasks[0].key == "table|logistic synthetic N=12214 regular|it=4000"
    assert tasks[8].key == "table|robust synthetic N=100000 map|it=1500"
    assert tasks[12].key == "scaling|N=1000|it=200"
    assert [t.key for t in FLYMC.plan(FLYMC.config("full"), [], "scaling")][-1] == (
        "scaling|N=1000000|it=2000"
    )
    assert tasks[0].seed is not None and tasks[0].seed.entropy == 3
    assert tasks[0].seed.spawn_key == label_words(tasks[0].key)


def _made_up(ess: dict[str, float], queries: float, regular_queries: float | None) -> list:
    """Two chains per synthetic row from 002's own numbers, ESS scaled per column and queries
    by ``queries`` (regular logistic and softmax set to ``regular_queries``); only the fields
    the claims read."""
    records = []
    for (model, column), (q, e, _) in PAPER.items():
        if regular_queries is not None and column == "regular" and model != "robust":
            q = regular_queries / queries
        for jitter in (1.0, 1.03):
            records.append(
                {
                    "type": "row",
                    "model": model,
                    "data": "synthetic",
                    "column": column,
                    "queries_per_iter": q * queries * jitter,
                    "ess_mean_per_1000": e * ess[column] * jitter,
                }
            )
    return records


def test_claims_decide_both_ways() -> None:
    """002's own numbers reproduce every claim; these, scaled, reproduce none."""
    claims = FLYMC.claims(FLYMC.config("quick"))
    assert len(claims) == 30 and sum(not c.differs for c in claims) == 2
    good = _made_up({"regular": 1.0, "untuned": 1.0, "map": 1.0}, 1.0, None)
    # Every ESS and count out of its band; MAP-tuned's speedups far under 10 and untuned's
    # above a third of them.
    bad = _made_up({"regular": 4.0, "untuned": 12.0, "map": 0.2}, 3.0, 5000.0)
    assert_decided(claims, good, "reproduced")
    assert_decided(claims, bad, "not reproduced")
