"""PM-A* and A* without a bound (004_b270422b62f00607.txt, Alg. 1 and 3) beyond the registry's
contract tests: the horizon, the trajectory estimator, the targets' gradients, bad input."""

import functools

import numpy as np
import pytest

from harness.registry import build_registry
from harness.spec import sample
from harness.targets.box_density import clutter, peaky_exponential
from harness.targets.logistic_box import mika_logistic
from harness.targets.pm_examples import bimodal_mixture, counter_example, with_sgd_bound
from implementations.astar import pm_fast, pm_reference

#: Targets by id, built on first use: each compiles its functions with Numba when it is made
#: (harness.targets.box_probes), which at collection would cost every pytest worker ~4 s.
TARGETS = {
    "clutter-D3-seed1": lambda: clutter(3, seed=1),
    "clutter-D3-seed2": lambda: clutter(3, seed=2),
    "clutter-D5": lambda: clutter(5, seed=5005),
    "titanic": lambda: mika_logistic("titanic"),
    "heart": lambda: mika_logistic("heart"),
    "mixture": bimodal_mixture,
    "peaky": lambda: peaky_exponential(5.0),
}


@functools.cache
def target_named(name):
    return TARGETS[name]()


def _same(a, b):
    assert np.array_equal(a.values, b.values) and a.evals == b.evals
    for key in a.extras:
        assert np.array_equal(a.extras[key], b.extras[key], equal_nan=True), key


@pytest.mark.parametrize("select", pm_reference.SELECTIONS)
def test_a_horizon_stops_early_and_traces_a_best_value_that_never_falls(select):
    draws = pm_fast.pm_search(counter_example(), 4, np.random.default_rng(0), select, horizon=50)
    trace = draws.extras["trace"]
    assert trace.shape == (4, 50)
    for row, exact in zip(trace, draws.extras["exact_stop"], strict=True):
        done = row[~np.isnan(row)]
        assert np.all(np.diff(done) >= 0)
        assert exact or done.size == 50
    assert np.array_equal(draws.extras["gumbel_max"], np.nanmax(trace, axis=1))


@pytest.mark.parametrize("name", ["clutter-D3-seed1", "titanic"])
def test_the_trajectory_estimator_is_bit_identical(name):
    target = target_named(name)
    runs = []
    for impl in (pm_reference, pm_fast):
        rng = np.random.default_rng(7)
        runs.append(
            (impl.pm_astar(target, 2, rng, 4, 40, "global", "trajectory", 0.3), rng.random())
        )
    _same(runs[0][0], runs[1][0])
    assert runs[0][1] == runs[1][1]
    # Each trajectory step costs a gradient and a likelihood evaluation beyond x(S)'s own.
    assert runs[0][0].evals > 40 * 2 * 4


@pytest.mark.parametrize("name", ["mixture", "clutter-D3-seed2", "heart", "peaky"])
def test_gradients_match_finite_differences(name):
    target = target_named(name)
    rng = np.random.default_rng(3)
    for _ in range(3):
        x = target.sample_in(target.lo, target.hi, rng.random(target.d))
        grad = np.empty(target.d)
        value = target.log_lik_grad(x, target.data, grad)
        assert value == pytest.approx(target.o(x), rel=1e-12, abs=1e-12)
        h = 1e-6
        fd = np.array(
            [(target.o(x + h * e) - target.o(x - h * e)) / (2 * h) for e in np.eye(target.d)]
        )
        assert np.max(np.abs(fd - grad)) <= 1e-5 * (1 + np.max(np.abs(grad)))


def test_the_trajectory_estimator_needs_a_gradient():
    spec = build_registry().get("pm-astar")
    with pytest.raises(ValueError, match="estimator = 'trajectory' is invalid"):
        sample(
            spec,
            "reference",
            counter_example(),
            2,
            np.random.default_rng(0),
            estimator="trajectory",
        )
    with pytest.raises(ValueError, match="particles"):
        sample(spec, "numba", bimodal_mixture(), 2, np.random.default_rng(0), particles=0)
    with pytest.raises(ValueError, match="stop_bound"):
        sample(spec, "numba", bimodal_mixture(), 2, np.random.default_rng(0), stop_bound="none")


def _boxes(target, rng, count):
    """The whole box and ``count`` boxes of the kind A* makes (split at points of the proposal)."""
    lo, hi, out = target.lo.copy(), target.hi.copy(), [(target.lo, target.hi)]
    for _ in range(count):
        x = target.sample_in(lo, hi, rng.random(target.d))
        j = int(rng.integers(target.d))
        lo, hi = lo.copy(), hi.copy()
        if rng.random() < 0.5:
            hi[j] = x[j]
        else:
            lo[j] = x[j]
        out.append((lo, hi))
    return out


@pytest.mark.parametrize(
    ("kind", "name"),
    [("clutter", "clutter-D5"), ("logistic", "heart")],
)
def test_the_sgd_estimate_lies_below_the_true_bound_and_is_a_function_of_the_box(kind, name):
    target = target_named(name)
    """004 Sec. 5.3's SGD "bound" is o at a point of the box: below any true bound."""
    sgd = with_sgd_bound(target, kind)
    assert sgd.data is target.data and sgd.name.endswith("-sgd100x10")
    for lo, hi in _boxes(target, np.random.default_rng(1), 12):
        estimate = sgd.M(lo, hi)
        assert np.isfinite(estimate) and estimate == sgd.M(lo, hi)
        assert estimate <= target.M(lo, hi) + 1e-9 * (1 + abs(estimate))


def test_the_sgd_estimate_is_no_bound_on_clutter():
    """From the middle of [-20, 4]^5, (-8, ..., -8), every inlier pull is below exp(-17): SGD
    stays there, far below o at the cluster around (-4, ..., -4) inside the box."""
    target = clutter(5, seed=5005)
    estimate = with_sgd_bound(target, "clutter").M(np.full(5, -20.0), np.full(5, 4.0))
    assert estimate < target.o(np.full(5, -4.0)) - 100.0


def test_astar_on_the_sgd_estimate_agrees_and_stops_early_unless_offset():
    target = with_sgd_bound(mika_logistic("titanic"), "logistic")
    runs = []
    for impl in (pm_reference, pm_fast):
        rng = np.random.default_rng(3)
        runs.append((impl.pm_search(target, 3, rng, "max-bound", horizon=200), rng.random()))
    _same(runs[0][0], runs[1][0])
    assert runs[0][1] == runs[1][1]
    # On titanic (n = 24) the estimate is close to the box's maximum: the best value beats every
    # region's G + estimate within a few dozen expansions, where the true bound's A* goes on.
    assert runs[0][0].extras["exact_stop"].all()
    assert np.all(runs[0][0].extras["expanded"] < 200)
    # An offset keeps A*'s order and removes its stop: every run reaches the horizon.
    far = with_sgd_bound(mika_logistic("titanic"), "logistic", offset=1e4)
    draws = pm_fast.pm_search(far, 3, np.random.default_rng(3), "max-bound", horizon=200)
    assert not draws.extras["exact_stop"].any()


def test_a_bad_sgd_setting_is_refused():
    target = clutter(2, seed=0)
    for kwargs, name in (
        ({"kind": "robust"}, "kind"),
        ({"steps": 0}, "steps"),
        ({"batch": 1.5}, "batch"),
        ({"offset": -1.0}, "offset"),
    ):
        with pytest.raises(ValueError, match=name):
            with_sgd_bound(target, **({"kind": "clutter"} | kwargs))
