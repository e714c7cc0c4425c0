"""astar-intervals' harder reading (issue 29, case 5): the per-model noise descent, its claims
beside ours, and its report table."""

from __future__ import annotations

import dataclasses

from harness.experiments.astar_intervals import AstarIntervals, IntervalsConfig, descent
from harness.experiments.framework import section
from harness.store import RECORDS, load_records
from tests.harness.experiments.tiny import run_tiny

INTERVALS = AstarIntervals()
TINY = IntervalsConfig(
    level="quick",
    seed=0,
    models=("notch",),
    sigmas=(1.0,),
    per_sigma=2,
    instances=1,
    per_instance=2,
)


def _done(cell, liks):
    return {"type": "cell", "task_id": cell.key, "series": cell.series, "x": cell.x, "liks": liks}


def test_the_descent_plans_one_level_at_a_time_and_stops_after_the_cap():
    config = dataclasses.replace(TINY, hard_sigmas=(0.03, 0.3, 0.1), hard_cap=100.0)
    first = descent(config, "notch", [])
    assert [c.x for c in first] == [1.0]  # the next level waits for this one
    records = [_done(first[0], [50, 60])]
    second = descent(config, "notch", records)
    assert [c.x for c in second] == [1.0, 0.3]
    records.append(_done(second[1], [150, 90]))  # mean 120 > 100: the last level run
    assert [c.x for c in descent(config, "notch", records)] == [1.0, 0.3]
    # Ours are always planned, whatever the cap.
    ours = dataclasses.replace(config, sigmas=(1.0, 0.1))
    assert [c.x for c in descent(ours, "notch", records)] == [1.0, 0.3, 0.1]


def test_quick_keeps_ours_and_full_adds_the_harder_claims():
    quick, full = INTERVALS.config("quick"), INTERVALS.config("full")
    ids = [c.id for c in INTERVALS.claims(quick)]
    assert "savings-grow" in ids and not any(i.endswith("harder") for i in ids)
    assert len(INTERVALS.skipped(quick)) == 2 and INTERVALS.skipped(full) == []
    # The harder reading is shown under ours, not counted: two claims at either level.
    full_claims = INTERVALS.claims(full)
    full_ids = [r.id for c in full_claims for r in c.readings]
    assert {"savings-grow-harder", "os-star-premium-bump-harder"} <= set(full_ids)
    assert [c.id for c in full_claims] == ids == ["savings-grow", "os-star-premium"]
    assert len(full_ids) == 1 + 2 * 5 + 1
    # The quick level's cells are those it always had.
    keys = {c.key for c in INTERVALS.cells(quick)}
    assert len(keys) == 45 and not any("harder" in k for k in keys)


def test_a_tiny_harder_run_records_both_readings_and_reports(tmp_path):
    config = dataclasses.replace(
        TINY, hard_sigmas=(0.5,), hard_cap=1e6, hard_mid=1.0, hard_instances=1
    )
    out = tmp_path / "out"
    summary = run_tiny(INTERVALS, config, out)
    records = load_records(out / RECORDS)
    scaling = sorted(r["x"] for r in records if r["series"] == "scaling notch")
    assert scaling == [0.5, 1.0]  # ours, then the descent's one level
    assert {r["series"] for r in records} >= {"A* notch harder", "OS* notch harder"}
    assert summary.planned == summary.ran == 6
    ids = {v.id for v in summary.verdicts}
    assert {"savings-grow", "savings-grow-harder", "os-star-premium-notch-harder"} <= ids
    page = section(INTERVALS, out)
    (table,) = page["tables"]
    assert table["title"] == "Where the savings come from" and len(table["rows"]) == 1
