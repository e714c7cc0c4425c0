"""The A* experiments (001 Sec. 6) on tiny configurations: records, resume, keys, claims."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from harness.declare import from_manifest
from harness.experiments import get_experiment
from harness.experiments.astar_bounds import AstarBounds, BoundsConfig
from harness.experiments.astar_cells import Cell, run_cell
from harness.experiments.astar_clutter import AstarClutter, ClutterConfig
from harness.experiments.astar_drill_down import DRILL as DRILL_SERIES
from harness.experiments.astar_drill_down import (
    GLOBAL,
    AstarDrillDown,
    DrillDownConfig,
    inverse_z,
)
from harness.experiments.astar_intervals import MODELS, AstarIntervals, IntervalsConfig
from harness.experiments.astar_robust import AstarRobust, RobustConfig, mode_of, slice_chain
from harness.experiments.framework import judged, section
from harness.report.page import write_report
from harness.store import RECORDS, load_records
from harness.tasks import label_words
from tests.harness.experiments.tiny import run_tiny, stable

DRILL, CLUTTER, BOUNDS = AstarDrillDown(), AstarClutter(), AstarBounds()
INTERVALS, ROBUST = AstarIntervals(), AstarRobust()
ALL = (DRILL, CLUTTER, BOUNDS, INTERVALS, ROBUST)

TINY = {
    # a = 1, 100, 1e4, 1e6; rejection at the first two; A* with the global bound in its own
    # (slow) test below.
    "astar-drill-down": DrillDownConfig(
        level="quick", seed=0, points=4, draws=200, rejection_top=100.0, global_top=0.0
    ),
    "astar-clutter": ClutterConfig(level="quick", seed=0, dims=(1, 2), data_sets=2, per_set=5),
    "astar-bounds": BoundsConfig(level="quick", seed=0, ns=(1, 10), data_sets=1, per_set=5),
    "astar-intervals": IntervalsConfig(
        level="quick",
        seed=0,
        models=("notch",),
        sigmas=(1.0,),
        per_sigma=3,
        instances=1,
        per_instance=2,
    ),
    # One rate and one data set per panel; the slice chain follows from A*'s budget.
    "astar-robust": RobustConfig(
        level="quick",
        seed=0,
        rates=(1.0,),
        single_sets=1,
        single_draws=1,
        reuse_sets=1,
        reuse_draws=5,
        slice_dims=(2,),
    ),
}


def _check_run(experiment: Any, out: Path) -> list[dict[str, Any]]:
    config = TINY[experiment.name]
    first = run_tiny(experiment, config, out)
    assert first.ran == first.planned and first.already_done == 0
    records = load_records(out / RECORDS)
    for r in (r for r in records if r["type"] == "cell"):
        assert len(r["liks"]) == len(r["bounds"]) == r["draws"] and min(r["liks"]) >= 1
        assert r["task_id"] == ac_key(r)
    assert "claims:" in first.text and json.loads((out / "claims.json").read_text())
    again = run_tiny(experiment, config, out)
    assert again.ran == 0 and again.already_done == first.planned
    # A kill: keep the first record and a torn second; the resumed tasks repeat the lost ones.
    lines = (out / RECORDS).read_text().splitlines(keepends=True)
    (out / RECORDS).write_text(lines[0] + lines[1][:30])
    resumed = run_tiny(experiment, config, out)
    assert resumed.ran == first.planned - 1
    old = {r["task_id"]: stable(r) for r in records}
    assert all(stable(r) == old[r["task_id"]] for r in load_records(out / RECORDS))
    sec = section(experiment, out)
    assert sec["complete"] and sec["claims"] and sec["records_table"]["rows"]
    figures = [f for g in sec["figure_groups"] for f in g["figures"]]
    assert figures and all(f["svg"].startswith("<svg") for f in figures)
    return records


def ac_key(r: dict[str, Any]) -> str:
    names = [f.name for f in dataclasses.fields(Cell)]
    return Cell(**{k: r[k] for k in names}).key


@pytest.mark.parametrize(
    "experiment",
    [
        # (astar-drill-down: in the test below)
        CLUTTER,
        # 15 s of Numba compiles for its targets; the same scaffold as astar-clutter.
        pytest.param(BOUNDS, marks=pytest.mark.slow),
        INTERVALS,
    ],
    ids=lambda e: e.name,
)
def test_a_tiny_run_records_every_draw_resumes_and_reports(experiment, tmp_path) -> None:
    _check_run(experiment, tmp_path / "out")


def test_drill_down_costs_a_binary_search_where_rejection_costs_1_over_z(tmp_path) -> None:
    records = _check_run(DRILL, tmp_path / "out")
    cost = {(r["series"], r["x"]): np.mean(r["liks"]) for r in records}
    # Rejection: 1 / Z = 100 at a = 100.
    assert cost["drill-down A*", 100.0] < 10 < 50 < cost["rejection", 100.0]
    assert 99 < inverse_z(100.0) < 101
    page = write_report([tmp_path / "out"], tmp_path / "r.html").read_text(encoding="utf-8")
    assert "astar-drill-down" in page and "Paper claims" in page


@pytest.mark.slow  # 20 s: Numba compiles A* for the global bound
def test_astar_with_one_global_bound_costs_what_rejection_costs() -> None:
    # 001 Sec. 5: Geometric iterations of rate Z / (exp(M) nu) = Z here (M = 0, nu = 1).
    cell = Cell(GLOBAL, 10.0, "astar", "peaky-global", {"a": 10.0}, 2000)
    (record,) = run_cell(cell, np.random.default_rng(1))
    liks = np.asarray(record["liks"])
    se = liks.std() / math.sqrt(liks.size)
    assert abs(liks.mean() - inverse_z(10.0)) < 3 * se and record["root_bound"] == 0.0
    # The drill-down on the same target's own bounds costs a few evaluations.
    (drill,) = run_cell(
        Cell(DRILL_SERIES, 10.0, "astar-drill-down", "peaky", {"a": 10.0}, 200),
        np.random.default_rng(1),
    )
    assert np.mean(drill["liks"]) < liks.mean() / 2


@pytest.mark.slow  # 13 s: Numba compiles of the robust target's bounds
def test_robust_plans_its_slice_chain_from_astars_budget(tmp_path) -> None:
    records = _check_run(ROBUST, tmp_path / "out")
    assert len(records) == 11  # 5 single (A*, OS* strategies 1-4), 5 reuse cells, the chain
    chain = next(r for r in records if r["type"] == "slice")
    astar = next(r for r in records if r["series"] == "reuse A*")
    assert chain["budget"] == 10 * (sum(astar["liks"]) + 3 * sum(astar["bounds"]))
    assert chain["evals"] >= chain["budget"] and chain["switches"] >= 0


def test_the_slice_chain_switches_modes_where_they_touch_and_classifies_with_hysteresis():
    # At D = 1 and N = 20 the two modes (near +-2) overlap enough that a slice chain crosses
    # often and spends a fair share of its steps in each; the classifier ignores the middle.
    from harness.targets.robust_regression import robust_regression

    chain = slice_chain(robust_regression(1, 20, "constant", 0), 20000, np.random.default_rng(0))
    assert chain["switches"] >= 10 and 0.2 < chain["share_plus"] < 0.8
    assert chain["evals"] >= 20000 and chain["steps"] > 1000
    assert [mode_of(np.array(v)) for v in ([2.0, 1.9], [-2.0, -2.1], [0.5, -0.4])] == [1, -1, 0]


@pytest.mark.parametrize(
    ("name", "change", "param"),
    [
        ("astar-drill-down", {"points": 1}, "points"),
        ("astar-drill-down", {"draws": 0}, "draws"),
        ("astar-drill-down", {"rejection_top": 0.5}, "rejection_top"),
        ("astar-clutter", {"dims": ()}, "dims"),
        ("astar-clutter", {"dims": (0, 1)}, "dims"),
        ("astar-clutter", {"data_sets": 1.5}, "data_sets"),
        ("astar-bounds", {"ns": (0,)}, "ns"),
        ("astar-bounds", {"per_set": 0}, "per_set"),
        ("astar-intervals", {"models": ("sine",)}, "models"),
        ("astar-intervals", {"sigmas": (0.0,)}, "sigmas"),
        ("astar-intervals", {"mid": -1.0}, "mid"),
        ("astar-intervals", {"instances": 0}, "instances"),
        ("astar-robust", {"rates": (0.0,)}, "rates"),
        ("astar-robust", {"rates": (1.5,)}, "rates"),
        ("astar-robust", {"N": 1}, "N"),
        ("astar-robust", {"slice_dims": ()}, "slice_dims"),
        ("astar-robust", {"reuse_draws": True}, "reuse_draws"),
        ("astar-robust", {"seed": -1}, "seed"),
        ("astar-robust", {"strategies": (5,)}, "strategies"),
        ("astar-robust", {"level": "huge"}, "level"),
    ],
)
def test_bad_config_names_the_parameter(name: str, change: dict, param: str) -> None:
    with pytest.raises(ValueError, match=param):
        dataclasses.replace(TINY[name], **change)


def test_a_bad_cell_is_refused_before_any_work() -> None:
    with pytest.raises(ValueError, match="no-such-sampler"):
        Cell("s", 1.0, "no-such-sampler", "peaky", {"a": 1.0}, 10)
    with pytest.raises(ValueError, match="strategy"):
        Cell("s", 1.0, "os-star", "peaky", {"a": 1.0}, 5, params={"strategy": 5})


@pytest.mark.parametrize("experiment", ALL, ids=lambda e: e.name)
def test_levels_round_trip_through_the_manifest(experiment: Any) -> None:
    for level in ("quick", "full"):
        config = experiment.config(level, 3)
        back = from_manifest(type(config), json.loads(json.dumps(config.manifest())))
        assert back == config and back.manifest() == config.manifest()
    assert get_experiment(experiment.name).config_type is experiment.config_type


#: One task of each kind, by (experiment, level): its key as the pre-framework code wrote it.
OLD_KEYS = {
    (DRILL, "quick"): [
        "drill-down A*|x=1|astar-drill-down|numba||peaky(a=1.0)|n=1000",
        "rejection|x=1|rejection|numba||peaky(a=1.0)|n=1000",
    ],
    (CLUTTER, "quick"): [
        "A*|x=1|astar|numba||clutter(D=1,seed=1000)|n=10",
        "OS*|x=1|os-star|numba|strategy=1|clutter(D=1,seed=1000)|n=10",
    ],
    (BOUNDS, "quick"): [
        "constant|x=1|astar|numba||gaussian-mean(N=1,bound=constant,seed=0)|n=20",
        "linear|x=1|astar|numba||gaussian-mean(N=1,bound=linear,seed=0)|n=20",
        "tight|x=1|astar|numba||gaussian-mean(N=1,bound=tight,seed=0)|n=20",
    ],
    (INTERVALS, "full"): [
        "scaling notch|x=0.03|astar|reference||interval(model=notch,seed=0,sigma=0.03)|n=5",
        "A* notch|x=0|astar|reference||interval(model=notch,seed=100,sigma=0.3)|n=50",
        "OS* notch|x=0|os-star|reference|strategy=1|interval(model=notch,seed=100,sigma=0.3)|n=50",
    ],
    (ROBUST, "full"): [
        "single A*|x=0.2|astar|numba|extra_draws=4.0|"
        "robust(D=2,N=250,bound=linear-quadratic,seed=0)|n=5",
        "single OS* s2|x=0.2|os-star|numba|refine_prob=0.2,strategy=2|"
        "robust(D=2,N=250,bound=linear-quadratic,seed=0)|n=5",
        "reuse OS* s1|x=1|os-star|numba|refine_prob=1.0,reuse=True,strategy=1|"
        "robust(D=2,N=250,bound=linear-quadratic,seed=100)|n=200",
        "reuse A*|x=1|astar|numba|extra_draws=0.0,reuse=True|"
        "robust(D=3,N=250,bound=linear-quadratic,seed=100)|n=200",
    ],
}


@pytest.mark.parametrize(
    ("experiment", "level"), list(OLD_KEYS), ids=lambda v: getattr(v, "name", str(v))
)
def test_task_keys_and_seeds_match_the_old_code(experiment: Any, level: str) -> None:
    tasks = {t.key: t for t in experiment.plan(experiment.config(level, 7), [], "all")}
    for key in OLD_KEYS[experiment, level]:
        assert key in tasks
        assert tasks[key].seed.entropy == 7 and tasks[key].seed.spawn_key == label_words(key)
    sizes = {"astar-drill-down": 15, "astar-clutter": 90, "astar-bounds": 75}
    if level == "quick":
        assert len(tasks) == sizes[experiment.name]


def test_the_slice_chain_key_matches_the_old_code() -> None:
    """Planned once A*'s reused-bounds record is in (its liks and bounds give the budget)."""
    config = ROBUST.config("quick", 0)
    astar = {
        "type": "cell", "series": "reuse A*", "x": 1, "liks": [100] * 200, "bounds": [10] * 200,
        "target_args": {"D": 2, "N": 250, "bound": "linear-quadratic", "seed": 100},
    }  # fmt: skip
    tasks = [t for t in ROBUST.plan(config, [astar], "all") if t.key.startswith("slice")]
    assert [t.key for t in tasks] == ["slice|D=2|N=250|data=100|budget=260000"]
    assert tasks[0].inputs == (2, 250, 100, 260000)


# Made-up records: only the fields the claims read.


def cell(series: str, x: float, liks: float, bounds: float, seed: Any = None, **more: Any):
    args = {"seed": seed, **more}
    return {"type": "cell", "series": series, "x": x, "liks": [liks] * 4, "bounds": [bounds] * 4,
            "target_args": args}  # fmt: skip


def drill_records(holds: bool) -> list[dict[str, Any]]:
    # Holding: 1 + 0.6 ln a (a binary search, under 10 at a = 1e6); not: sqrt(a). A* with the
    # global bound at 1 / Z a sample (the Geometric law's mean), or twice that.
    def cost(a: float) -> float:
        return 1 + 0.6 * math.log(a) if holds else math.sqrt(a)

    drill = [cell(DRILL_SERIES, a, cost(a), 1.0) | {"liks": [cost(a)] * 10} for a in (1, 1e3, 1e6)]
    rejection = [cell("rejection", a, inverse_z(a), 0.0) for a in (1.0, 10.0, 100.0)]
    glob = [cell(GLOBAL, a, inverse_z(a) * (1 if holds else 2), 1.0) for a in (1.0, 10.0)]
    return drill + rejection + glob


def clutter_records(holds: bool) -> list[dict[str, Any]]:
    # Holding: few bound evaluations, so every reading of the count is about the liks, growing 4.44x
    # a dimension to 900 at D = 3 and 4000 at D = 4; not holding: too cheap in every reading,
    # flat from D = 1 to 2 and growing 10x from D = 3 to 4, and OS* at twice A*'s likelihood
    # evaluations and half its bound evaluations.
    out = []
    for D, k in ((D, k) for D in (1, 2, 3, 4, 5) for k in range(5)):
        a = 4000 / (4000 / 900) ** (4 - D) if holds else {3: 90.0, 4: 900.0}.get(D, 1.0)
        b = a / 1000 if holds else a / 10
        f = 1.25 if holds else 2.0
        out.append(cell("A*", D, a, b, 1000 * D + k))
        out.append(cell("OS*", D, a * f, b * (f if holds else 0.5), 1000 * D + k))
    return out


def bounds_records(holds: bool) -> list[dict[str, Any]]:
    out = []
    for N, k in ((N, k) for N in (1, 10, 100, 1000, 10000, 1e5, 1e6, 1e7) for k in range(5)):
        out.append(cell("tight", N, 2.0, 3.0, k))
        f = 3.0 if holds else 10.0
        out.append(cell("linear", N, 2.0 * f, 3.0 * f, k))
        g = N**0.5 if holds else N**0.9
        out.append(cell("constant", N, 2.0 * g, 3.0 * g, k))
    return out


def intervals_records(holds: bool) -> list[dict[str, Any]]:
    out = []
    for j, model in enumerate(MODELS):
        for i, sigma in enumerate((1.0, 0.3, 0.1)):
            rejection = 10.0 ** (1 + 3 * i + j / 5)  # its cost as exp(M) nu / Z
            r = cell(f"scaling {model}", sigma, rejection ** (0.5 if holds else 1.2), 1.0, 0)
            r |= {"root_bound": 0.0, "root_log_mass": 0.0}
            r["gumbel_mean"] = np.euler_gamma - math.log(rejection)
            out.append(r)
        premium = (0.21, 0.30, 0.11, 0.21, 0.27)[j] if holds else 2.0
        for seed in range(100, 105):
            out.append(cell(f"A* {model}", j, 100.0, 10.0, seed))
            out.append(cell(f"OS* {model}", j, 100 * (1 + premium), 10 * (1 + premium), seed))
    return out


def robust_records(holds: bool) -> list[dict[str, Any]]:
    out = []
    for p, k in ((p, k) for p in (1.0, 0.5, 0.2, 0.1) for k in range(5)):
        out.append(cell("single A*", p, 100.0, 100.0, k, D=2))
        out.append(cell("reuse A*", p, 100.0, 10.0, 100 + k, D=2))
        for s in ("OS* s1", "OS* s2", "OS* s2 envelope", "OS* s2 envelope sampled"):
            # Not holding: OS* beats A* on liks (single), on bounds (reuse) and, by cost
            # (liks + 3 bounds), lies far outside 2x of A* (Fig. 3's claims) in both panels.
            out.append(
                cell(f"single {s}", p, *((150.0, 150.0) if holds else (50.0, 1500.0)), k, D=2)
            )
            out.append(
                cell(f"reuse {s}", p, *((50.0, 30.0) if holds else (20.0, 5.0)), 100 + k, D=2)
            )
    switches = 0 if holds else 10
    out += [{"type": "slice", "D": D, "switches": switches} for D in (2, 3) for _ in range(5)]
    return out


MADE_UP = {
    "astar-drill-down": drill_records,
    "astar-clutter": clutter_records,
    "astar-bounds": bounds_records,
    "astar-intervals": intervals_records,
    "astar-robust": robust_records,
}


@pytest.mark.parametrize("experiment", ALL, ids=lambda e: e.name)
def test_claims_decide_both_ways(experiment: Any) -> None:
    config = experiment.config("quick", 0)
    for holds, verdict in ((True, "reproduced"), (False, "not reproduced")):
        verdicts = judged(experiment, config, MADE_UP[experiment.name](holds))
        assert {v.id: v.verdict for v in verdicts} == {v.id: verdict for v in verdicts}


@pytest.mark.parametrize("experiment", ALL, ids=lambda e: e.name)
def test_claims_on_no_records_are_inconclusive(experiment: Any) -> None:
    verdicts = judged(experiment, experiment.config("quick", 0), [])
    assert verdicts and all(v.verdict == "inconclusive" and v.reason for v in verdicts)


def test_robust_claims_of_a_strategy_not_run_say_so() -> None:
    config = dataclasses.replace(ROBUST.config("quick", 0), strategies=(1, 2))
    verdicts = {v.id: v for v in judged(ROBUST, config, robust_records(True))}
    assert verdicts["fig3-single-cost-s2"].verdict == "reproduced"
    for id in ("fig3-single-cost-s2-envelope", "reuse-astar-cheapest-envelope-sampled"):
        assert verdicts[id].verdict == "inconclusive" and "not run" in verdicts[id].reason


def test_too_few_data_sets_say_the_value_and_what_would_decide() -> None:
    records = [r for r in clutter_records(True) if r["target_args"]["seed"] % 1000 < 3]
    by_id = {v.id: v for v in judged(CLUTTER, CLUTTER.config("quick", 0), records)}
    assert by_id["astar-D3"].verdict == "inconclusive"
    assert by_id["astar-D3"].reason == "3 data sets: a bootstrap interval needs at least 5"
    assert by_id["astar-D3"].ours == "900 (no interval)"
