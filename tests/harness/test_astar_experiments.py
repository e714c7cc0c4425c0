"""The A* experiments (001 Sec. 6) on tiny cells: records, resume, errors, report sections."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from harness.experiments import get_experiment
from harness.experiments.astar_costs.cells import Cell, CostConfig
from harness.experiments.astar_costs.figures import points
from harness.experiments.framework import run, section
from harness.report import write_report
from harness.store import RECORDS, load_records


def _run(name: str, out: Path, config: CostConfig):
    return run(
        get_experiment(name),
        "quick",
        0,
        out,
        progress=False,
        scheduler="inprocess",
        log=lambda msg: None,
        config=config,
    )


def _tiny(name: str, draws: int = 20) -> CostConfig:
    """The level's first cells with few samples, on the smallest of their targets."""
    config = get_experiment(name).module().config_for_level("quick", 0)
    seen, cells = set(), []
    for c in config.cells:  # one data set of each point
        if c.x <= 100 and (c.series, c.x) not in seen:
            seen.add((c.series, c.x))
            cells.append(dataclasses.replace(c, draws=draws))
    if name == "astar-intervals":  # one scaling cell, then one A* / OS* instance of a model
        cells = [cells[0], *[c for c in cells if not c.series.startswith("scaling")][:2]]
    return dataclasses.replace(config, cells=tuple(cells[:6]))


@pytest.mark.parametrize(
    "name",
    [
        "astar-drill-down",
        "astar-clutter",
        # The same scaffold as astar-clutter, and 15 s of Numba compiles for its targets.
        pytest.param("astar-bounds", marks=pytest.mark.slow),
        "astar-intervals",
    ],
)
def test_an_astar_experiment_records_every_draw_resumes_and_reports(tmp_path, name):
    config = _tiny(name)
    first = _run(name, tmp_path / "out", config)
    assert first.ran == len(config.cells) and first.planned == len(config.cells)
    records = load_records(tmp_path / "out" / RECORDS)
    for r in records:
        assert len(r["liks"]) == len(r["bounds"]) == 20 and min(r["liks"]) >= 1
    again = _run(name, tmp_path / "out", config)
    assert again.ran == 0 and again.already_done == len(config.cells)
    sec = section(get_experiment(name), tmp_path / "out")
    assert sec["complete"] and sec["figure_groups"][0]["figures"][0]["svg"].startswith("<svg")
    assert sec["tables"] and all(t["rows"] for t in sec["tables"])
    html = write_report([tmp_path / "out"], tmp_path / "r.html")
    assert name in Path(html).read_text()


def test_drill_down_costs_about_a_binary_search_where_rejection_costs_1_over_z(tmp_path):
    config = _tiny("astar-drill-down", draws=200)
    _run("astar-drill-down", tmp_path / "out", config)
    pts = {(p.series, p.x): p for p in points(load_records(tmp_path / "out" / RECORDS))}
    drill, reject = pts[("drill-down A*", 100.0)], pts[("rejection", 100.0)]
    assert drill.mean("liks") < 10 < 50 < reject.mean("liks")  # rejection: 1 / Z = 96 at a = 100


@pytest.mark.slow  # 13 s: Numba compiles of the robust target's bounds
def test_robust_plans_its_slice_baseline_from_astars_budget_and_counts_mode_switches(tmp_path):
    config = get_experiment("astar-robust").module().config_for_level("quick", 0)
    reuse = [c for c in config.cells if c.series == "reuse A*" and c.x == 1.0][:1]
    reuse = [dataclasses.replace(c, draws=20) for c in reuse]
    small = dataclasses.replace(
        config, cells=tuple(reuse), extra={**config.extra, "reuse_seeds": [100]}
    )
    summary = _run("astar-robust", tmp_path / "out", small)
    assert summary.planned == 2  # the A* cell, then the slice chain its budget allows
    records = load_records(tmp_path / "out" / RECORDS)
    chain = next(r for r in records if r["type"] == "slice")
    cell_rec = next(r for r in records if r["type"] == "cell")
    assert chain["budget"] == 10 * (sum(cell_rec["liks"]) + 3 * sum(cell_rec["bounds"]))
    assert chain["evals"] >= chain["budget"] and chain["switches"] >= 0
    sec = section(get_experiment("astar-robust"), tmp_path / "out")
    assert any("Slice sampler" in t["title"] for t in sec["tables"])


def test_the_slice_baseline_switches_modes_where_they_touch_and_classifies_with_hysteresis():
    # At D = 1 and N = 20 the two modes (near +-2) overlap enough that a slice chain crosses
    # often and spends a fair share of its steps in each; the classifier ignores the middle.
    import numpy as np

    from harness.experiments.astar_robust.slice_baseline import mode_of, slice_chain
    from harness.targets.robust_regression import robust_regression

    chain = slice_chain(robust_regression(1, 20, "constant", 0), 20000, np.random.default_rng(0))
    assert chain["switches"] >= 10 and 0.2 < chain["share_plus"] < 0.8
    assert chain["evals"] >= 20000 and chain["steps"] > 1000
    assert [mode_of(np.array(v)) for v in ([2.0, 1.9], [-2.0, -2.1], [0.5, -0.4])] == [1, -1, 0]


def test_a_bad_cell_is_refused_before_any_work(tmp_path):
    with pytest.raises(ValueError, match="target"):
        Cell("s", 1.0, "astar", "no-such-target", {}, 10)
    with pytest.raises(ValueError, match="no-such-sampler"):
        Cell("s", 1.0, "no-such-sampler", "peaky", {"a": 1.0}, 10)
    with pytest.raises(ValueError, match="draws"):
        Cell("s", 1.0, "astar", "peaky", {"a": 1.0}, 0)
    with pytest.raises(ValueError, match="strategy"):
        Cell("s", 1.0, "os-star", "peaky", {"a": 1.0}, 5, params={"strategy": 3})
