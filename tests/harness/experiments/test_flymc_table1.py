"""The flymc-table1 experiment (002, Table 1) on small rows: records, resume, the section,
bad settings, keys and the claims' rules."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from harness.declare import from_manifest
from harness.experiments import get_experiment
from harness.experiments.flymc_table1 import (
    PAPER,
    REAL,
    SYNTHETIC,
    WIDE,
    FlymcTable1,
    Row,
    Table1Config,
)
from harness.experiments.framework import section
from harness.report.page import write_report
from harness.store import RECORDS, load_records
from harness.tasks import label_words
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
    at = sec["records_table"]["columns"].index("ESS / 1e6 queries")
    efficiency = [row[at]["text"] for row in sec["records_table"]["rows"]]
    assert efficiency[6:] == ["-"] * 4  # ESS per query: the scaling records have no ESS
    eff = {k: 1e3 * r["ess_mean_per_1000"] / r["queries_per_iter"] for k, r in rows.items()}
    assert efficiency[:6] == [
        format(eff[d, c], ".3g")
        for d in ("synthetic", "digits")
        for c in ("regular", "untuned", "map")
    ]
    verdicts = {c["id"]: c["verdict"] for c in sec["claims"]}
    # MNIST's absolute cells are judged (002's own data), here with no MNIST row to judge on
    assert verdicts["logistic-untuned-queries"] == "inconclusive"
    assert verdicts["logistic-map-speedup"] == "inconclusive"
    assert verdicts["softmax-map-ess"] == "setting differs"  # no softmax row: the rule alone
    html = write_report([out], tmp_path / "r.html").read_text(encoding="utf-8")
    assert "Paper claims</h3>" in html and "logistic-map-speedup@digits" in html


def test_the_scaling_part_runs_alone(tmp_path: Path) -> None:
    summary = run_tiny(FLYMC, small(), tmp_path / "out", part="scaling")
    assert summary.ran == 1 and "flymc-mh" in summary.text


@pytest.mark.parametrize(
    ("change", "name"),
    [
        (lambda: Row("softmax", "digits", "map", 359, 100), "data"),
        (lambda: Row("logistic", "digits-3", "map", 537, 100), "data"),
        (lambda: Row("logistic", "breast-cancer", "map", 100, 100), "N"),
        (lambda: Row("logistic", "synthetic", "map", 100, 100, -1), "chain"),
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
        (lambda: small(chains=0), "chains"),
        (lambda: small(mnist_chains=0), "mnist_chains"),
    ],
)
def test_bad_settings_name_the_parameter(change, name: str) -> None:
    with pytest.raises(ValueError, match=f"'{name}"):
        change()


def test_q_db_and_burn_in_ranges_are_half_open() -> None:
    # q_db in (0, 1] (1: every dark point proposed each iteration); burn_in in [0, 0.5).
    assert (small(q_db=1.0).q_db, small(burn_in=0.0).burn_in) == (1.0, 0.0)


def test_chains_add_seeds_of_every_row_but_the_full_robust_one() -> None:
    # --decide's unit: chains = 4 at the quick level gives every row four chains (MNIST has
    # four already); at the full level only the 1.8e6-point robust row stays at one chain.
    quick = FLYMC.config("quick", 0)
    four = dataclasses.replace(quick, chains=4)
    assert quick.table_rows == quick.rows and four.table_rows[:30] == quick.rows
    assert len(four.table_rows) == 84 and {r.chain for r in four.table_rows} == {0, 1, 2, 3}
    assert len({r.key for r in four.table_rows}) == 84
    full = FLYMC.config("full", 0)
    eight = dataclasses.replace(full, chains=8).table_rows
    assert full.table_rows == full.rows
    assert [r.chain for r in eight if r.N > 100_000] == [0, 0, 0]
    assert sum(r.data == "synthetic" and r.model == "robust" for r in eight) == 3
    assert FLYMC.replicates == ("chains", "mnist_chains")
    # --decide multiplies both: ten times the pilot's gives MNIST forty chains, the rest ten
    ten = dataclasses.replace(quick, chains=10, mnist_chains=40).table_rows
    assert sum(r.data == "mnist" for r in ten) == 3 * 40 and len(ten) == 3 * 40 + 18 * 10
    assert len({r.key for r in ten}) == len(ten)


def test_levels_round_trip_and_keys_match_the_old_records() -> None:
    # 12 MNIST chains (four of each column) at both levels
    for level, rows, study in (("quick", 30, 0), ("full", 111, 9)):
        config = FLYMC.config(level, 3)
        back = from_manifest(Table1Config, json.loads(json.dumps(config.manifest())))
        assert back == config and (len(config.rows), len(config.ess_rows)) == (rows, study)
    tasks = FLYMC.plan(FLYMC.config("quick", 3), [], "all")
    assert tasks[0].key == "table|logistic mnist N=12214 regular|it=4000"
    assert tasks[11].key == "table|logistic mnist N=12214 map #3|it=4000"
    # Literal keys of the pre-framework code: old directories still resume, seeds unchanged.
    assert tasks[12].key == "table|logistic synthetic N=12214 regular|it=4000"
    assert tasks[20].key == "table|robust synthetic N=100000 map|it=1500"
    assert tasks[30].key == "scaling|N=1000|it=200"
    assert tasks[21].key == "table|logistic digits N=359 regular|it=4000"  # the old key
    full = {t.key for t in FLYMC.plan(FLYMC.config("full", 3), [], "all")}
    assert "table|logistic digits N=359 untuned #3|it=40000" in full
    assert [t.key for t in FLYMC.plan(FLYMC.config("full"), [], "scaling")][-1] == (
        "scaling|N=1000000|it=2000"
    )
    assert tasks[12].seed is not None and tasks[12].seed.entropy == 3
    assert tasks[12].seed.spawn_key == label_words(tasks[12].key)


def _made_up(ess: dict[str, float], queries: dict[str, float]) -> list:
    """Two chains per row and data reading from 002's own numbers, ESS and queries scaled per
    column; only the fields the claims read."""
    records = []
    for data in (SYNTHETIC, WIDE, *REAL):
        for (model, column), (q, e, _) in PAPER.items():
            if data in REAL and REAL[data][0] != model:
                continue
            for jitter in (1.0, 1.01):
                records.append(
                    {
                        "type": "row",
                        "model": model,
                        "data": data,
                        "column": column,
                        "queries_per_iter": q * queries[column] * jitter,
                        "ess_mean_per_1000": e * ess[column] * jitter,
                    }
                )
    return records


def _with_readings(claims: tuple) -> list:
    return [r for c in claims for r in (c, *c.readings)]


def test_claims_decide_both_ways() -> None:
    """002's own numbers reproduce every claim and reading; these, scaled, reproduce none."""
    claims = FLYMC.claims(FLYMC.config("full"))
    # Per model: Regular MCMC's ESS (and robust's queries), then each FlyMC column's queries,
    # ESS and speedup; the absolute cells of CIFAR-10 and OPV differ, MNIST's (002's own data)
    # and the speedups are judged.
    mnist = ["logistic-regular-ess"] + [
        f"logistic-{c}-{cell}" for c in ("untuned", "map") for cell in ("queries", "ess", "speedup")
    ]
    assert len(claims) == 22 and [c.id for c in claims if not c.differs] == mnist + [
        f"{m}-{c}-speedup" for m in ("softmax", "robust") for c in ("untuned", "map")
    ]
    # Same-data ratios on every data reading (logistic 5, softmax 3, robust 2): the query share
    # and ESS ratio on each, the speedup on each but the primary data.
    assert sum(len(c.readings) for c in claims) == 2 * sum(3 * n - 1 for n in (5, 3, 2))
    assert all(not r.differs for c in claims for r in c.readings)
    assert {c.id for c in FLYMC.claims(FLYMC.config("quick"))} <= {c.id for c in claims}
    one = {"regular": 1.0, "untuned": 1.0, "map": 1.0}
    # Every absolute cell out of its band; the query shares 0.1x and 10x 002's, the ESS ratios
    # 6x and 0.1x, so the speedups 60x and 0.01x.
    bad = _made_up(
        {"regular": 4.0, "untuned": 24.0, "map": 0.4},
        {**one, "regular": 2.0} | {"untuned": 0.2, "map": 20.0},
    )
    assert_decided(_with_readings(claims), _made_up(one, one), "reproduced")
    assert_decided(_with_readings(claims), bad, "not reproduced")


def test_claims_state_the_data_and_quote_only_table_1() -> None:
    claims = _with_readings(FLYMC.claims(FLYMC.config("full")))
    by_id = {c.id: c for c in claims}
    assert "real digits-3, N = 537, for 002's 3-Class CIFAR-10" in (
        by_id["softmax-untuned-speedup@digits-3"].quantity
    )
    wide = by_id["logistic-map-share@synthetic-wide"].quantity
    assert "N(0, 1) (002's scale, assumed)" in wide and "N = 12,214" in wide
    assert by_id["robust-untuned-share"].paper_value == "0.151"
    # MNIST's cells are judged on 002's own data; CIFAR-10's and OPV's say they are stand-ins
    for cid in ("logistic-map-queries", "logistic-untuned-share", "logistic-map-speedup"):
        assert "real MNIST 7 vs 9, 002's own data, N = 12,214" in by_id[cid].quantity
    assert "logistic-map-speedup@synthetic" in by_id
    assert "synthetic stand-in" in by_id["softmax-map-ess"].quantity
    assert "synthetic stand-in" in by_id["robust-map-speedup"].quantity
    assert "N not stated" in by_id["robust-regular-queries"].quantity
    # 002 is Table 1 and its caption: every claim quotes a cell, and nothing else.
    assert all(c.text.startswith("Table 1, ") and not re.search(r"\bgain", c.text) for c in claims)
    assert all(c.fails_if and "\n" not in c.fails_if for c in claims)
    given = {g.value: g.basis for g in FLYMC.givens(FLYMC.config("quick"))}
    assert given == {"12,214": "taken from the paper", "18,000": "taken from the paper"} | {
        "(1)": "by construction"
    }


def test_the_robust_ess_study_runs_alone_and_has_its_own_table(tmp_path: Path) -> None:
    from harness.experiments.flymc_table1.study import EssRow

    rows = (EssRow(2, 1.0, 4.0, 200, 60), EssRow(2, 100.0, 4.0, 200, 60, "flymc-slice"))
    out = tmp_path / "out"
    summary = run_tiny(FLYMC, small(ess_rows=rows), out, part="robust-ess")
    assert summary.ran == 2
    study = [r for r in load_records(out / RECORDS) if r["type"] == "ess-study"]
    assert {r["algorithm"] for r in study} == {"slice", "flymc-slice"}
    assert all(r["ess_mean_per_1000"] > 0 and r["evals_per_iter"] > 0 for r in study)
    (table,) = FLYMC.tables(small(ess_rows=rows), study)
    assert len(table["rows"]) == 2 and "AR / bulk" in table["columns"]


def test_chains_accepting_under_one_percent_are_listed_beside_the_claims():
    from harness.experiments.flymc_table1.study import low_acceptance_table

    def row(label, accept):
        return {
            "type": "row",
            "label": label,
            "model": "logistic",
            "data": "synthetic-wide",
            "column": "map",
            "chain": 0,
            "accept_rate": accept,
            "ess_mean_per_1000": 3.0,
        }

    assert low_acceptance_table([row("fine", 0.2), row("at the floor", 0.01)]) == []
    (t,) = low_acceptance_table([row("stuck", 0.004), row("fine", 0.2), {"type": "scaling"}])
    assert [r[0]["text"] for r in t["rows"]] == ["stuck"]
    assert t["banner"]["cls"] == "warn" and "1 chains accept under 1%" in t["banner"]["lines"][0]
