"""The run-to-completion audit and the sampler's own bound (harness/gates/search_audit.py):
correct searches pass, the planted bugs of tests/plugins/planted_search.py fail, a sampler that
declares the switches but does not deliver fails, and the gates apply only where declared."""

import math

import numpy as np
import pytest

from harness.gates import search_audit
from harness.gates.result import GateContext
from harness.registry import build_registry
from harness.spec import AlgorithmSpec, Check, Draws, Param, rerun_for, sample
from harness.targets.box_density import clutter, peaky_exponential
from harness.targets.pm_examples import bimodal_mixture
from tests.conftest import ROOT

PLANTED = str(ROOT / "tests" / "plugins" / "planted_search.py")
ALPHA = 1e-4
SUPPLEMENT = search_audit.SUPPLEMENTS[0]


@pytest.fixture(scope="module")
def registry():
    return build_registry([PLANTED])


@pytest.fixture(scope="module")
def targets():
    return {"peaky": peaky_exponential(10.0), "mixture": bimodal_mixture(), "clutter": clutter(1)}


def _gates(spec, target, n, seed, impl="reference", params=None):
    """The supplement's verdicts on a run of n draws (it reruns min(n, 1000) of them)."""
    params = params or {}
    rng = np.random.default_rng(seed)
    output = sample(spec, impl, target, n, rng, **params)
    assert SUPPLEMENT.applies(spec, target, params)
    context = GateContext(rerun_for(spec, impl, params), rng)
    return {g.gate: g for g in SUPPLEMENT.run(spec, target, output, ALPHA, params, context)}


CORRECT = [
    ("astar", "peaky", {}),
    ("astar", "mixture", {"extra_draws": 1.0, "reuse": True}),
    ("astar-drill-down", "peaky", {}),
    ("pm-astar", "mixture", {}),
    ("astar-nobound", "mixture", {}),
    ("os-star", "peaky", {}),
    ("rejection", "peaky", {}),
]


@pytest.mark.parametrize(
    ("name", "which", "params"), CORRECT, ids=[f"{c[0]}-{c[1]}-{len(c[2])}" for c in CORRECT]
)
def test_correct_searches_pass_both_gates(registry, targets, name, which, params):
    spec = registry.get(name)
    gates = _gates(spec, targets[which], 300, 1, params=params)
    searches = name not in ("os-star", "rejection")  # these have no frontier to continue
    assert set(gates) == ({"run-to-completion", "own-bound"} if searches else {"own-bound"})
    assert all(g.passed and not g.multiple_testing for g in gates.values()), gates
    if searches:
        assert gates["run-to-completion"].n == 300 and gates["run-to-completion"].statistic == 0
        assert gates["run-to-completion"].interval[1] < 0.05


def test_the_numba_search_passes_both_gates(registry, small_box):
    # small_box: the contract tests' target, whose kernels a worker has compiled already (the
    # slow set runs the other searches' numba builds over 200 seeds).
    gates = _gates(registry.get("astar"), small_box, 300, 7, "numba", {})
    assert set(gates) == {"run-to-completion", "own-bound"}
    assert all(g.passed for g in gates.values()), gates


def test_the_stale_stop_fails_run_to_completion_only(registry, targets):
    gates = _gates(registry.get("planted-search-stale-stop"), targets["mixture"], 1000, 2)
    audit = gates["run-to-completion"]
    assert not audit.passed and audit.statistic > 0 and audit.n == 1000
    assert "changed their answer" in audit.detail and gates["own-bound"].passed


def test_the_invented_bound_fails_own_bound(registry, targets):
    # own-bound needs few draws (about 1 in 7 evaluates a point above the bound it held); the
    # audit's 1000 draws run in the slow set.
    spec = registry.get("planted-search-invented-bound")
    target = targets["clutter"]
    rerun = rerun_for(spec, "reference", {})
    extras = rerun(target, 150, np.random.default_rng(3), report_bounds=True).extras
    result = search_audit.own_bound(target, extras, ALPHA, np.random.default_rng(4))
    assert not result.passed and result.statistic > 0
    assert "above the bound" in result.detail and "is below o(x)" in result.detail


def _extras(changed, capped=None):
    changed = np.asarray(changed, dtype=bool)
    capped = np.zeros_like(changed) if capped is None else np.asarray(capped, dtype=bool)
    return {"audit_changed": changed, "audit_capped": capped}


def test_run_to_completion_fails_on_one_changed_draw_and_bounds_the_rate():
    clean = search_audit.run_to_completion(_extras([False] * 1000), ALPHA)
    assert clean.passed and clean.n == 1000
    # No change in 1000 draws: the rate is below 1 - alpha^(1/1000) (about 0.9%).
    assert clean.interval[1] == pytest.approx(1 - ALPHA ** (1 / 1000), rel=1e-6)
    assert clean.detectable == pytest.approx(1 - 0.2 ** (1 / 1000))
    one = search_audit.run_to_completion(_extras([False] * 999 + [True]), ALPHA)
    assert not one.passed and one.statistic == pytest.approx(1e-3) and "draws [999]" in one.detail


def test_capped_continuations_are_not_counted_as_audited():
    some = search_audit.run_to_completion(_extras([False] * 10, [True] * 3 + [False] * 7), ALPHA)
    assert some.passed and some.n == 7 and "3 continuations capped" in some.detail
    # A pass that could not have failed is not a pass.
    none = search_audit.run_to_completion(_extras([False] * 4, [True] * 4), ALPHA)
    assert not none.passed and none.n == 0


def test_own_bound_fails_a_box_bounded_below_o(targets):
    target = targets["peaky"]  # o(x) = -10 log(1 + x): M([lo, hi]) = o(lo)
    lo, hi = np.array([[0.0], [1.0]]), np.array([[1.0], [3.0]])
    m = np.array([0.0, target.o(np.array([1.0]))])
    extras = {"bound_gap": np.array([-0.5]), "bound_lo": lo, "bound_hi": hi, "bound_m": m}
    assert search_audit.own_bound(target, extras, ALPHA, np.random.default_rng(0)).passed
    low = {**extras, "bound_m": m - np.array([0.0, 1.0])}  # the second box's bound 1 nat short
    result = search_audit.own_bound(target, low, ALPHA, np.random.default_rng(0))
    assert not result.passed and "[[1.0], [3.0]]" in result.detail
    # A point the search evaluated above the bound it held fails it with no box to probe.
    above = {**extras, "bound_gap": np.array([-0.5, 1e-6])}
    assert not search_audit.own_bound(target, above, ALPHA, np.random.default_rng(0)).passed


def _plugin(fn, params):
    return AlgorithmSpec(
        name="plugin-search",
        family="plugin",
        paper="-",
        guarantee="exact",
        target_kinds=("box-density",),
        implementations={"reference": fn},
        params=params,
        checks=(Check(),),
    )


def test_the_gates_apply_where_a_sampler_opts_in(registry, targets):
    target = targets["peaky"]
    assert not SUPPLEMENT.applies(registry.get("gumbel-max"), target, {})
    assert SUPPLEMENT.applies(registry.get("rejection"), target, {})
    assert not SUPPLEMENT.applies(registry.get("rejection"), object(), {})  # not a box density
    plain = _plugin(lambda target, n, rng: Draws(np.zeros(n), 0), ())
    assert not SUPPLEMENT.applies(plain, target, {})
    assert SUPPLEMENT.applies(
        _plugin(plain.implementations["reference"], _audit_param()), target, {}
    )


def _audit_param():
    return (Param("audit", False, bool),)


def test_a_sampler_that_declares_the_audit_but_returns_nothing_fails(targets):
    target = targets["peaky"]

    def silent(target, n, rng, audit=False):
        return Draws(rng.exponential(size=n), n)

    spec = _plugin(silent, _audit_param())
    rng = np.random.default_rng(0)
    output = sample(spec, "reference", target, 50, rng)
    context = GateContext(rerun_for(spec, "reference", {}), rng)
    (result,) = SUPPLEMENT.run(spec, target, output, ALPHA, {}, context)
    assert result.gate == "run-to-completion" and not result.passed
    assert "returned no extras['audit_changed']" in result.detail and math.isnan(result.statistic)


def test_the_audit_reruns_at_least_1000_draws_and_a_twentieth_at_full_size():
    assert search_audit.audit_draws(300) == 300
    assert search_audit.audit_draws(20_000) == 1000
    assert search_audit.audit_draws(100_000) == 5000


# --- slow set: the numba build, false failures over 200 seeds, harness verify on the bugs ---

FFR_CASES = [
    ("astar", "peaky", {}),
    ("astar", "clutter", {}),
    ("astar", "mixture", {"extra_draws": 1.0, "reuse": True}),
    ("astar-drill-down", "peaky", {}),
    ("pm-astar", "mixture", {}),
    ("pm-astar", "clutter", {"stop_bound": "regions"}),
    ("astar-nobound", "mixture", {}),
    ("os-star", "clutter", {}),
    ("rejection", "peaky", {}),
]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "which", "params"), FFR_CASES, ids=[f"{c[0]}-{c[1]}" for c in FFR_CASES]
)
def test_no_false_failures_on_correct_searches_over_200_seeds(
    registry, targets, name, which, params
):
    # Definite gates: a correct search with a valid bound changes no answer and never exceeds
    # its bound, so none of 200 seeds (1000 audited draws each, the quick level's) may fail.
    spec, target = registry.get(name), targets[which]
    failed = []
    for seed in range(200):
        gates = _gates(spec, target, 1000, 1000 + seed, "numba", params)
        failed += [(seed, g.gate, g.detail) for g in gates.values() if not g.passed]
    assert not failed, failed[:3]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("bug", "caught"),
    [
        ("planted-search-stale-stop", {"run-to-completion"}),
        ("planted-search-invented-bound", {"run-to-completion", "own-bound"}),
    ],
)
def test_verify_catches_the_planted_search_bugs_where_the_older_gates_cannot(tmp_path, bug, caught):
    from harness.verify.config import RunConfig
    from harness.verify.runner import verify

    config = RunConfig(algorithms=(bug,), impls=("reference",), plugins=(PLANTED,))
    summary = verify(config, tmp_path / "run", workers=1, progress=False, scheduler="inprocess")
    verdicts = {v["gate"]: v["verdict"] for v in summary["verdicts"]}
    assert {g for g, v in verdicts.items() if v == "fail"} == caught
    assert {"ks", "ks-gumbel-max", "bound-validity"} <= set(verdicts)
