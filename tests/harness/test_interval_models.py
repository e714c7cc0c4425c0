"""The regression models of 001_78ff986a3d316097.txt, Sec. 6.3, Fig. 2(c) with interval bounds:
the bound must be >= o everywhere on a box (or A* is inexact), shrink to o on small boxes, and
A* on them must reproduce a quadrature ground truth."""

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from harness.targets.box_density import box_density
from harness.targets.interval_models import (
    _IV,
    MODELS,
    expected_rejection_evals,
    identification,
    interval_model,
    model_data,
)
from implementations.astar.reference import astar


def _random_boxes(target, rng, count):
    """Boxes of every scale (relative widths 1e-6 to 1 a side, log-uniform), some sides snapped
    to the prior's edges (where sin, cos and sqrt reach their special points)."""
    span = target.hi - target.lo
    boxes = []
    for _ in range(count):
        width = span * 10.0 ** rng.uniform(-6.0, 0.0, target.d)
        lo = target.lo + rng.random(target.d) * (span - width)
        hi = lo + width
        lo = np.where(rng.random(target.d) < 0.15, target.lo, lo)
        hi = np.where(rng.random(target.d) < 0.15, target.hi, hi)
        boxes.append((lo, hi))
    return boxes


def _points_in(lo, hi, rng, count):
    """Random points of [lo, hi], its centre and two of its corners."""
    u = np.vstack([rng.random((count, lo.size)), np.full(lo.size, 0.5), np.zeros(lo.size)])
    return np.vstack([lo + u * (hi - lo), hi])


def _violations(target, bound, boxes, rng):
    """(excess, box) for every box where some point has o above the bound."""
    out = []
    for lo, hi in boxes:
        m = bound(lo, hi)
        top = max(target.o(x) for x in _points_in(lo, hi, rng, 12))
        if top > m:
            out.append((top - m, lo, hi))
    return out


@pytest.mark.parametrize("sigma", [1.0, 0.01])
@pytest.mark.parametrize("name", list(MODELS))
def test_bound_is_above_o_at_every_point_of_random_boxes(name, sigma):
    target = interval_model(name, sigma, seed=3)
    rng = np.random.default_rng(7)
    boxes = [*_random_boxes(target, rng, 80), (target.lo, target.hi)]
    assert _violations(target, target.M, boxes, rng) == []


def test_a_bound_from_the_box_centre_only_is_caught():
    # Negative control: the same check finds the boxes where o at the centre is not the max.
    target = interval_model("cubic", 0.3, seed=3)
    rng = np.random.default_rng(7)

    def centre(lo, hi):
        return target.o((lo + hi) / 2.0)

    boxes = _random_boxes(target, rng, 40)
    assert len(_violations(target, centre, boxes, rng)) > 10
    assert _violations(target, target.M, boxes, rng) == []


@pytest.mark.parametrize("name", list(MODELS))
def test_interval_of_f_encloses_f_at_points_of_the_box(name):
    model = MODELS[name]
    target = interval_model(name, 1.0)
    rng = np.random.default_rng(11)
    for lo, hi in _random_boxes(target, rng, 30):
        box = [_IV.mpf([a, b]) for a, b in zip(lo, hi, strict=True)]
        for x in rng.uniform(*model.inputs, size=2):
            enclosure = model.f_interval(box, _IV.mpf(x))
            values = [model.f(p, x) for p in _points_in(lo, hi, rng, 5)]
            assert float(enclosure.a) <= min(values) and max(values) <= float(enclosure.b)


@pytest.mark.parametrize("name", list(MODELS))
def test_bounds_shrink_to_o_on_boxes_shrinking_around_a_point(name):
    target = interval_model(name, 0.3, seed=1)
    rng = np.random.default_rng(2)
    span = target.hi - target.lo
    for x in rng.uniform(target.lo, target.hi, (3, target.d)):
        o = target.o(x)
        gaps = []
        for h in 10.0 ** -np.arange(1, 9):
            lo = np.maximum(x - h * span, target.lo)
            hi = np.minimum(x + h * span, target.hi)
            gaps.append(target.M(lo, hi) - o)
        tol = 1e-8 * (1.0 + abs(o))
        assert all(g >= 0.0 for g in gaps)
        # Nested boxes give nested intervals: the bound never grows as the box shrinks.
        assert all(b <= a + tol for a, b in itertools.pairwise(gaps))
        assert gaps[-1] < 1e-5 * (1.0 + abs(o))
        # Linear convergence: a box 1e4 times smaller leaves a gap at least 100 times smaller.
        assert gaps[6] < 1e-2 * gaps[2] + tol


def test_point_boxes_give_o_itself():
    for name in MODELS:
        target = interval_model(name, 0.05)
        x = (target.lo + 2.0 * target.hi) / 3.0
        assert target.M(x, x) == pytest.approx(target.o(x), rel=1e-8, abs=1e-8)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"name": "quadratic", "sigma": 1.0}, r"name = 'quadratic'.*notch, cubic, projectile"),
        ({"name": "cubic", "sigma": 0.0}, r"sigma = 0.0 .*finite number > 0"),
        ({"name": "cubic", "sigma": -1.0}, r"sigma = -1.0 "),
        ({"name": "cubic", "sigma": math.nan}, r"sigma = nan "),
        ({"name": "cubic", "sigma": math.inf}, r"sigma = inf "),
        ({"name": "cubic", "sigma": "1"}, r"sigma = '1' "),
        ({"name": "cubic", "sigma": True}, r"sigma = True "),
        ({"name": "cubic", "sigma": 1.0, "n_data": 0}, r"n_data = 0 .*integer >= 1"),
        ({"name": "cubic", "sigma": 1.0, "n_data": 2.0}, r"n_data = 2.0 "),
    ],
)
def test_constructor_rejects_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        interval_model(**kwargs)


def test_specs_and_data():
    assert list(MODELS) == ["notch", "cubic", "projectile", "bump", "two-sines"]
    assert [m.d for m in MODELS.values()] == [3, 3, 3, 5, 6]
    for name, model in MODELS.items():
        assert len(model.prior) == len(model.params) and model.formula.startswith("y = ")
        data = model_data(name, 0.5, seed=4, n_data=5)
        lo, hi = np.array(model.prior).T
        assert np.all((lo <= data.theta) & (data.theta <= hi))
        assert np.all((model.inputs[0] <= data.x) & (data.x <= model.inputs[1]))
        # The noise draws do not depend on sigma: theta and x stay, the noise scales.
        other = model_data(name, 0.05, seed=4, n_data=5)
        np.testing.assert_array_equal(other.x, data.x)
        np.testing.assert_allclose(
            other.y - model.f(data.theta, data.x),
            0.1 * (data.y - model.f(data.theta, data.x)),
            rtol=1e-9,
            atol=1e-12,
        )
        target = interval_model(name, 0.5, seed=4, n_data=5)
        np.testing.assert_array_equal(target.data, np.column_stack([data.x, data.y]))


@pytest.mark.parametrize("name", list(MODELS))
def test_reference_astar_runs_on_each_model(name):
    target = interval_model(name, 0.3)
    draws = astar(target, 3, np.random.default_rng(0))
    assert draws.values.shape == (3, target.d)
    assert np.all((target.lo <= draws.values) & (draws.values <= target.hi))
    assert np.all(np.isfinite(draws.extras["gumbel_max"]))
    assert np.all(draws.extras["draw_evals"] >= 1) and np.all(draws.extras["bound_evals"] >= 1)


def _grid_truth(target, points):
    """The posterior on a midpoint grid of the (uniform) prior box: cell weights and log Z."""
    axes = [
        lo + (np.arange(points) + 0.5) * (hi - lo) / points
        for lo, hi in zip(target.lo, target.hi, strict=True)
    ]
    mesh = np.meshgrid(*axes, indexing="ij")
    o = target.log_lik.batch(np.stack([m.ravel() for m in mesh], axis=1), target.data)
    top = float(np.max(o))
    w = np.exp(o - top).reshape(mesh[0].shape)
    return w / w.sum(), top + math.log(float(np.mean(w)))  # nu(box) = 1


def test_astar_matches_a_grid_quadrature_of_the_projectile_posterior():
    target = interval_model("projectile", 0.5)
    n = 200
    draws = astar(target, n, np.random.default_rng(0))
    w, log_z = _grid_truth(target, 100)
    for j in range(target.d):
        marginal = w.sum(axis=tuple(k for k in range(target.d) if k != j))
        edges = np.linspace(target.lo[j], target.hi[j], marginal.size + 1)
        cdf = np.concatenate([[0.0], np.cumsum(marginal)])
        p = stats.kstest(draws.values[:, j], lambda v, e=edges, c=cdf: np.interp(v, e, c)).pvalue
        assert p > 1e-3, (j, p)
    # A*'s maxima are Gumbel(log Z) draws: mean log Z + gamma, sd pi / sqrt(6).
    se = math.pi / math.sqrt(6.0 * n)
    assert abs(np.mean(draws.extras["gumbel_max"]) - np.euler_gamma - log_z) < 4.0 * se
    # The rejection cost exp(M) / E[exp(o)], by both estimators, against the grid's.
    want = target.M(target.lo, target.hi) - log_z
    for cost in (
        expected_rejection_evals(target, samples=20_000),
        expected_rejection_evals(target, gumbel_max=draws.extras["gumbel_max"]),
    ):
        assert abs(cost.log_evals - want) < 4.0 * cost.log_std_error, cost
        assert cost.evals == pytest.approx(math.exp(cost.log_evals))


def _flat(x, data):
    return -1.5


def _flat_bound(lo, hi, data):
    return -1.5


def test_rejection_cost_of_a_flat_likelihood_is_one_evaluation():
    target = box_density([0.0, 0.0], [1.0, 2.0], [("uniform",)] * 2, _flat, _flat_bound, [1.0])
    cost = expected_rejection_evals(target, samples=100)
    assert cost.evals == pytest.approx(1.0) and cost.std_error == pytest.approx(0.0, abs=1e-12)
    assert cost.method == "monte-carlo"
    with pytest.raises(ValueError, match="samples = 1 "):
        expected_rejection_evals(target, samples=1)
    with pytest.raises(ValueError, match="gumbel_max has 1 values"):
        expected_rejection_evals(target, gumbel_max=np.zeros(1))


def test_identification_finds_the_projectile_ridge_and_the_flat_directions():
    # The projectile model depends on (a, b, c) only through sin(a) cos(a) / b and
    # 2 c cos^2(a) / b: one direction is never constrained, whatever the data.
    for seed in (0, 5):
        ident = identification("projectile", seed)
        assert ident.flat == 0 and ident.smallest < 1e-7 * ident.singular_values[0]
    assert identification("bump").flat == 2 and identification("two-sines").flat == 3
    assert identification("bump").smallest == 0.0
    cubic = identification("cubic")
    assert len(cubic.singular_values) == 3 and cubic.smallest > 0.1
    assert identification("cubic", n_data=5).flat == 0
