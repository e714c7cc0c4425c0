"""The pm-astar experiment (004, Sec. 5) on small settings: records, resume, the report section,
bad settings, the old task keys, and every claim's rule decided both ways on made-up records."""

from __future__ import annotations

import dataclasses
import itertools
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from harness.declare import from_manifest
from harness.experiments.claims import sum_of_differences
from harness.experiments.framework import judged, section
from harness.experiments.pm_astar import SEARCHES, SGD_ASTAR, PmAstar, PMConfig, settings
from harness.store import EXPERIMENT_MANIFEST, RECORDS, append_task, load_records, open_run
from harness.tasks import label_words
from tests.harness.experiments.tiny import CLOCK_FIELDS, run_tiny, stable

PM_ASTAR = PmAstar()
PM, TRAJ, ASTAR, NOBOUND = SEARCHES
MH = "MH from the prior"


def tiny_config(seed: int = 0) -> PMConfig:
    return PMConfig.for_level(
        "quick",
        seed,
        mixture_draws=300,
        counter_runs=3,
        counter_horizon=40,
        clutter_dims=(5,),
        clutter_runs=2,
        clutter_horizon=30,
        logistic_sets=("titanic",),
        logistic_runs=2,
        logistic_horizon=20,
        astar_bounds=("exact", "paper"),
        notes=("tiny test configuration",),
    )


# Slow set (about 15-30 s on 2 cores, most of it Numba compiling each target's kernels).
@pytest.mark.slow
def test_every_part_records_resumes_and_reports(tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = run_tiny(PM_ASTAR, tiny_config(), out)
    assert (first.planned, first.ran) == (4, 4)  # mixture, counter, one D, one data set
    records = load_records(out / RECORDS)
    kinds = {(r["type"], r.get("problem")) for r in records}
    assert kinds == {("mixture", None), ("trace", "counter"), ("trace", "clutter")} | {
        ("trace", "logistic"),
        ("mh", "logistic"),
    }
    assert {r["label"] for r in records if r["type"] == "mixture"} == set(SEARCHES)
    sgd = [r for r in records if r["label"] == SGD_ASTAR]
    assert [r["problem"] for r in sgd] == ["clutter", "logistic"]
    assert all(r["sgd"] == [100, 10] and r["exact_stops"] <= r["runs"] for r in sgd)
    for r in (r for r in records if r["type"] == "trace"):
        assert len(r["at_checkpoints"]) == r["runs"] and r["checkpoints"][-1] == r["horizon"]
        assert [row[-1] for row in r["at_checkpoints"]] == r["final"]
    for r in records:
        if r["type"] == "trace":
            assert len(r["mean_trace"]) == r["horizon"] and len(r["final"]) == r["runs"]
            # The best value found never falls.
            assert all(b >= a - 1e-9 for a, b in itertools.pairwise(r["mean_trace"]))
    assert "claims:" in first.text and "best Gumbel (mean)" in first.text
    assert json.loads((out / "claims.json").read_text())[0]["id"] == "fig2a-pm-exact"

    again = run_tiny(PM_ASTAR, tiny_config(), out)
    assert (again.ran, again.already_done) == (0, 4)
    lines = (out / RECORDS).read_text().splitlines(keepends=True)
    (out / RECORDS).write_text("".join(lines[:4]))  # the mixture's four records survive
    resumed = run_tiny(PM_ASTAR, tiny_config(), out)
    assert (resumed.ran, resumed.already_done) == (3, 1)
    clock = CLOCK_FIELDS | {"run_wall_s", "draws_wall_s"}
    old = {(r["task_id"], r["label"]): stable(r, clock) for r in records}
    after = load_records(out / RECORDS)
    assert len(after) == len(records)
    assert all(stable(r, clock) == old[(r["task_id"], r["label"])] for r in after)

    sec = section(PM_ASTAR, out)
    assert sec["complete"] and sec["planned"] == 4 and sec["notes"] == ["tiny test configuration"]
    (fig_group,) = sec["figure_groups"]
    titles = [f["title"] for f in fig_group["figures"]]
    assert [t.split(":")[0] for t in titles] == ["Fig. 2a", "Fig. 2b", "Fig. 3", "Fig. 4a"]
    assert all(f["svg"].startswith("<svg") for f in fig_group["figures"])
    assert "Fig. 4b" in fig_group["caption"]
    assert [c["id"] for c in sec["claims"]][-1] == "fig4b-titanic-above-mh"
    assert sec["skipped"] and "AIE" in sec["skipped"][0]
    assert len(sec["records_table"]["rows"]) == len(records)
    (where,) = sec["tables"]
    assert [row[0]["text"] for row in where["rows"]] == ["counter", "clutter", "logistic"]


@pytest.mark.parametrize(
    ("change", "name"),
    [
        ({"counter_runs": 0}, "counter_runs"),
        ({"logistic_horizon": 0}, "logistic_horizon"),
        ({"mixture_draws": 99}, "mixture_draws"),
        ({"clutter_dims": (0,)}, "clutter_dims"),
        ({"clutter_dims": ()}, "clutter_dims"),
        ({"logistic_sets": ("mnist",)}, "logistic_sets"),
        ({"clutter_points": 1.5}, "clutter_points"),
        ({"astar_bounds": ("sgd",)}, "astar_bounds"),
        ({"sgd_steps": 0}, "sgd_steps"),
        ({"seed": -1}, "seed"),
        ({"level": "huge"}, "level"),
    ],
)
def test_bad_config_names_the_parameter(change: dict, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        dataclasses.replace(tiny_config(), **change)


def test_keys_and_seeds_match_the_old_code() -> None:
    """Literal keys of the pre-framework code (commit 1b0454e), so old records still resume."""
    tasks = PM_ASTAR.plan(PM_ASTAR.config("quick", 7), [], "all")
    keys = [t.key for t in tasks]
    assert keys[:3] == [
        "mixture|n=2000",
        "counter|[]|runs=50|T=300",
        "clutter|[('D', 5), ('points', 20), ('seed', 5005)]|runs=20|T=1000",
    ]
    assert "logistic|[('seed', 0), ('set', 'titanic')]|runs=10|T=500" in keys
    assert len(keys) == 1 + 1 + 3 + 5
    assert all(t.seed.entropy == 7 and t.seed.spawn_key == label_words(t.key) for t in tasks)
    full = PM_ASTAR.plan(PM_ASTAR.config("full"), [], "all")
    assert len(full) == 1 + 1 + 3 + 13 and full[0].key == "mixture|n=20000"
    parts = {p: len(PM_ASTAR.plan(PM_ASTAR.config("quick"), [], p)) for p in PM_ASTAR.parts}
    assert parts == {"all": 10, "mixture": 1, "counter": 1, "clutter": 3, "logistic": 5}
    # A*'s readings ride in the same tasks (A* on the SGD estimate draws from its own stream).
    assert tasks[2].inputs[4:] == (("exact", "paper"), (100, 10))
    assert full[2].inputs[4:] == (("exact", "paper"), (100, 10))


def test_manifest_round_trip_and_the_old_manifest() -> None:
    for level in ("quick", "full"):
        config = PM_ASTAR.config(level)
        assert from_manifest(PMConfig, json.loads(json.dumps(config.manifest()))) == config
    # The settings an old quick run wrote (its notes aside) read back as today's quick config.
    old = {
        "experiment": "pm-astar",
        "level": "quick",
        "seed": 0,
        "mixture_draws": 2000,
        "counter_runs": 50,
        "counter_horizon": 300,
        "clutter_dims": [5, 15, 20],
        "clutter_points": 20,
        "clutter_runs": 20,
        "clutter_horizon": 1000,
        "logistic_sets": ["titanic", "flare-sonar", "heart", "thyroid", "breast-cancer"],
        "logistic_runs": 10,
        "logistic_horizon": 500,
    }
    back = from_manifest(PMConfig, old)
    quick = PM_ASTAR.config("quick")
    # It ran A* on the true bound alone, as the quick level did then.
    assert dataclasses.replace(back, notes=quick.notes) == dataclasses.replace(
        quick, astar_bounds=("exact",)
    )


def test_the_gap_is_the_summed_difference_of_means_with_a_t_interval() -> None:
    """The claims' estimator (claims.sum_of_differences, once pm-astar's own ``gap``)."""
    est = sum_of_differences([([1.0, 2.0, 3.0], [0.0, 0.0, 0.0]), ([5.0, 5.0], [4.0, 6.0])])
    assert est.value == pytest.approx(2.0) and est.n == 2
    half = 12.706 * np.sqrt(1.0 / 3 + 2.0 / 2)  # t(0.975, 1) * sqrt(sum of var / n)
    assert (est.low, est.high) == pytest.approx((2.0 - half, 2.0 + half), rel=1e-3)


def both_readings() -> PMConfig:
    """The quick sizes with A* on both readings of its bound, as the full level has them."""
    return PMConfig.for_level("quick", 0, astar_bounds=("exact", "paper"))


def made_up(config: PMConfig, good: bool) -> list[dict[str, Any]]:
    """Records with only the fields the claims read: PM-A* ahead and faster an expansion when
    ``good``, behind and slower otherwise."""
    sign, rng = (1.0 if good else -1.0), np.random.default_rng(1)
    cost = 5.0 if good else 20.0  # A*'s 5 a draw: similar, or 4x; A* without a bound's 10
    recs: list[dict[str, Any]] = [
        {"type": "mixture", "label": lb, "ks_p": 0.4 if good else 1e-4, "evals_per_draw": e}
        | {"evals_sd_per_draw": e, "counts": [10] * 60, "draws": 600}
        for lb, e in ((PM, cost), (TRAJ, cost), (ASTAR, 5.0), (NOBOUND, 10.0))
    ]

    def trace(problem: str, args: dict, label: str, mean: float, spe: float) -> dict[str, Any]:
        final = list(mean + rng.normal(0, 1, 10))
        return {
            "type": "trace" if label != MH else "mh",
            "problem": problem,
            "args": args,
            "label": label,
            "horizon": 50,
            "final": final,
            "loglik": final,
            "mean_trace": list(np.linspace(mean - 20, mean, 50)),
            "run_wall_s": [50 * spe] * 10,
            "runs": 10,
            "exact_stops": 0,
        }

    for problem, args in ((p, a) for p, arguments in settings(config).items() for a in arguments):
        for label in (*SEARCHES, SGD_ASTAR, MH):
            pm = label in (PM, TRAJ)
            recs.append(trace(problem, args, label, 10 * sign * pm, 1.0 - 0.5 * sign * pm))
    return recs


def test_claims_decide_both_ways() -> None:
    config = both_readings()
    for good, verdict in ((True, "reproduced"), (False, "not reproduced")):
        verdicts = judged(PM_ASTAR, config, made_up(config, good))
        # 7 claims; readings: Fig. 2a's trajectory estimator (3), each baseline of Fig. 2b (2),
        # each D under both bounds (6), each baseline of 4a (3), each set of 4b (5).
        assert sum(v.reading_of is None for v in verdicts) == 7 and len(verdicts) == 7 + 19
        assert all(v.verdict == verdict for v in verdicts), verdicts


def test_a_slower_search_ahead_is_undecided_at_equal_time() -> None:
    """Fig. 3 is against time: PM-A* ahead at equal expansions but slower an expansion may
    not be ahead at equal time, and the records hold no per-run traces to tell."""
    config = both_readings()
    recs = made_up(config, True)
    for r in recs:
        if r.get("label") == TRAJ:
            r["run_wall_s"] = [500.0] * 10
    by_id = {v.id: v for v in judged(PM_ASTAR, config, recs)}
    fig3 = by_id["fig3-D5-above-astar"]
    assert "equal time" in fig3.reason
    assert by_id["fig3-D5-above-astar-sgd"].verdict == "inconclusive"
    assert by_id["fig2b-above-astar"].verdict == "reproduced"  # 2b is against expansions


def test_per_run_checkpoints_decide_at_equal_time() -> None:
    """With each run's best value at checkpoints, the slower search is read at its share of the
    faster one's time: PM-A* (trajectory) ahead by 10 at 50 expansions but 10x slower an
    expansion is at 5 expansions (10 - 18.4) when A* has run its 50 (0)."""
    config = both_readings()
    recs = made_up(config, True)
    for r in (r for r in recs if r["type"] == "trace"):
        r["checkpoints"] = list(range(1, 51))
        r["at_checkpoints"] = [list(np.linspace(f - 20, f, 50)) for f in r["final"]]
        if r["label"] == TRAJ:
            r["run_wall_s"] = [500.0] * 10
    by_id = {v.id: v for v in judged(PM_ASTAR, config, recs)}
    fig3 = by_id["fig3-D5-above-astar-sgd"]
    assert fig3.verdict == "not reproduced" and fig3.value == pytest.approx(-8.4, abs=1.5)


def test_section_opens_with_the_claims_and_draws_every_figure(tmp_path: Path) -> None:
    config = both_readings()
    records = made_up(config, True)
    path = open_run(tmp_path / "run", EXPERIMENT_MANIFEST, config.manifest())
    for t in PM_ASTAR.plan(config, [], "all"):
        problem, args = t.inputs[:2] if t.key[0] != "m" else ("mixture", {})
        mine = [r for r in records if r.get("problem", "mixture") == problem]
        append_task(path, t.key, [r for r in mine if r.get("args", {}).items() <= args.items()])
    sec = section(PM_ASTAR, tmp_path / "run")
    assert sec["complete"] and sec["planned"] == 10
    assert {c["verdict"] for c in sec["claims"]} == {"reproduced"}
    assert sec["claims_table"]["rows"][0][0]["text"] == "fig2a-pm-exact"
    (figures,) = sec["figure_groups"]
    titles = [f["title"].split(":")[0] for f in figures["figures"]]
    assert titles == ["Fig. 2a", "Fig. 2b", "Fig. 3", "Fig. 3", "Fig. 3", "Fig. 4a"]
    assert all(f["svg"].startswith("<svg") for f in figures["figures"])
    assert "Fig. 4b" in figures["caption"] and "AIE" in sec["skipped"][0]
    assert len(sec["records_table"]["rows"]) == len(records)
    (where,) = sec["tables"]
    assert len(where["rows"]) == 1 + 3 + 5 and where["rows"][1][4]["text"] != "-"


def test_one_failing_baseline_decides_outperforms_all_and_a_missing_one_alone_does_not() -> None:
    """ "Outperforms all baselines" is the worst gap, its intervals Bonferroni-widened: one gap
    below 0 fails the claim even where another baseline has no records; none below 0 with one
    missing leaves it undecided."""
    config = both_readings()
    recs = made_up(config, True)
    head = {v.id: v for v in judged(PM_ASTAR, config, recs)}["fig4a-above-baselines"]
    alone = {v.id: v for v in judged(PM_ASTAR, config, recs)}["fig4a-sum-above-nobound"]
    assert head.verdict == "reproduced" and "Bonferroni" in head.how
    assert head.high - head.low > alone.high - alone.low  # 97.5% against 95%
    no_sgd = [r for r in recs if r["label"] != SGD_ASTAR]
    by_id = {v.id: v for v in judged(PM_ASTAR, config, no_sgd)}
    assert by_id["fig4a-above-baselines"].verdict == "inconclusive"
    assert "A* (SGD bound)" in by_id["fig4a-above-baselines"].reason
    for r in no_sgd:
        if r.get("label") == NOBOUND and r.get("problem") == "logistic":
            r["final"] = [x + 100.0 for x in r["final"]]  # ahead, and 10x faster
            r["run_wall_s"] = [x / 10.0 for x in r["run_wall_s"]]
    by_id = {v.id: v for v in judged(PM_ASTAR, config, no_sgd)}
    assert by_id["fig4a-above-baselines"].verdict == "not reproduced"
    assert "not measured" in by_id["fig4a-above-baselines"].how


def test_givens_and_claims_quote_004() -> None:
    config = PM_ASTAR.config("quick")
    claims = [r for c in PM_ASTAR.claims(config) for r in (c, *c.readings)]
    assert all(c.fails_if and "\n" not in c.fails_if and not c.differs for c in claims)
    texts = {c.id: c.text for c in claims}
    assert "outperforms baselines significantly" in texts["fig2b-above-baselines"]
    assert "similar performance to A* sampling" in texts["fig2a-pm-similar-astar"]
    givens = PM_ASTAR.givens(config)
    assert [g.basis for g in givens] == [
        "by construction",
        "by construction",
        "taken from the paper",
    ]
    assert "Fig. 1(c)" in givens[0].paper and "1e-105" in givens[0].why
