"""The Gaussian-mean box density (001_78ff986a3d316097.txt, Sec. 6.2): its three bounds hold,
order and coincide as built, its exact posterior matches quadrature, and A* draws from it."""

import math

import numba
import numpy as np
import pytest
from scipy import stats

from harness.targets.box_density import quadrature_truth
from harness.targets.gaussian_mean import (
    BOUNDS,
    PRIOR_SD,
    gaussian_mean,
    gaussian_mean_posterior,
)
from implementations.astar import reference

SLACK = 1e-9  # relative: rounding of a sum of N terms, far below any gap A* acts on


def _boxes(rng: np.random.Generator, centre: float) -> list[tuple[np.ndarray, np.ndarray]]:
    """Finite boxes from 1e-6 to 1e3 wide near ``centre`` and far from it (on both sides),
    half-infinite boxes with their end on either side of it, and the whole line."""
    boxes = []
    for _ in range(60):
        mid = centre + rng.choice([0.0, 1.0, 30.0, -30.0]) * rng.standard_normal()
        half = 10.0 ** rng.uniform(-6.0, 3.0)
        boxes.append((np.array([mid - half]), np.array([mid + half])))
    for _ in range(20):
        end = centre + 10.0 ** rng.uniform(-3.0, 2.0) * rng.choice([-1.0, 1.0])
        boxes.append((np.array([end]), np.array([math.inf])))
        boxes.append((np.array([-math.inf]), np.array([end])))
    boxes.append((np.array([-math.inf]), np.array([math.inf])))
    return boxes


def _points(lo: float, hi: float, rng: np.random.Generator, k: int = 25) -> np.ndarray:
    """Points of [lo, hi]: uniform and both ends on a finite box; on an infinite side, the finite
    end plus distances spread over many scales."""
    if math.isfinite(lo) and math.isfinite(hi):
        return np.concatenate([[lo, hi], lo + rng.random(k) * (hi - lo)])
    reach = 10.0 ** rng.uniform(-4.0, 3.0, k)
    if math.isfinite(lo):
        return np.concatenate([[lo], lo + reach])
    if math.isfinite(hi):
        return np.concatenate([[hi], hi - reach])
    return rng.standard_normal(k) * reach


def _violations(target, bound, rng) -> tuple[int, int]:
    """(boxes, boxes where o exceeds ``bound`` at a point) over :func:`_boxes`; the sample mean,
    where o peaks, is checked too when the box holds it."""
    boxes = _boxes(rng, target.mode)
    bad = 0
    for lo, hi in boxes:
        m = bound(lo, hi, target.data)
        xs = _points(lo[0], hi[0], rng)
        if lo[0] <= target.mode <= hi[0]:
            xs = np.append(xs, target.mode)
        o = np.array([target.o(np.array([x])) for x in xs])
        bad += bool(np.any(o > m + SLACK * (1.0 + abs(m))))
    return len(boxes), bad


@pytest.mark.parametrize("bound", BOUNDS)
@pytest.mark.parametrize("N", [1, 7, 300])
def test_each_bound_is_above_o_everywhere_on_random_boxes(bound, N):
    target = gaussian_mean(N, bound, seed=N)
    boxes, bad = _violations(target, target.bound, np.random.default_rng(N))
    assert bad == 0, f"{bad} of {boxes} boxes"


def _chord_bound(lo, hi, data):
    """Invalid on purpose: per point the chord of the concave term between the box's ends (it
    lies BELOW the term), summed and maximised; on an infinite box the term at the finite end."""
    lo, hi = lo[0], hi[0]
    ends = [v for v in (lo, hi) if math.isfinite(v)] or [0.0]
    return max(float(np.sum(-0.5 * (data - v) ** 2 - 0.5 * math.log(2 * math.pi))) for v in ends)


def test_a_chord_below_the_concave_terms_is_caught():
    target = gaussian_mean(50, "linear", seed=3)
    boxes, bad = _violations(target, _chord_bound, np.random.default_rng(0))
    assert bad > boxes // 4


@pytest.mark.parametrize("N", [2, 40, 1000])
def test_tight_is_below_linear_is_below_constant(N):
    targets = {b: gaussian_mean(N, b, seed=5) for b in BOUNDS}
    rng = np.random.default_rng(N)
    mode = targets["tight"].mode
    # Boxes inside the data's spread too: there the bounds differ (with every y_n on one side of
    # a box, each tangent's slope points the same way and linear = constant).
    mids, halves = mode + rng.standard_normal(40), 10.0 ** rng.uniform(-3.0, -0.5, 40)
    inner = [(np.array([m - h]), np.array([m + h])) for m, h in zip(mids, halves, strict=True)]
    gaps = []
    for lo, hi in _boxes(rng, mode) + inner:
        tight, linear, constant = (targets[b].M(lo, hi) for b in ("tight", "linear", "constant"))
        tol = SLACK * (1.0 + abs(constant))
        assert tight <= linear + tol and linear <= constant + tol, (lo, hi)
        gaps.append((linear - tight, constant - linear))
    if N >= 40:  # strictly between on most inner boxes: three genuinely different bounds
        gaps = np.array(gaps[-len(inner) :])
        assert np.mean(gaps[:, 0] > 1e-9) > 0.9 and np.mean(gaps[:, 1] > 1e-9) > 0.9


def test_for_one_point_the_three_bounds_are_the_same_number():
    # Each term is expanded around its own maximiser on the box, so for N = 1 the tangent's max
    # is the term's max, which the tight bound is too (001 Sec. 6.2).
    targets = [gaussian_mean(1, b, seed=11) for b in BOUNDS]
    for lo, hi in _boxes(np.random.default_rng(1), targets[0].mode):
        values = {t.M(lo, hi) for t in targets}
        assert len(values) == 1, (lo, hi, values)


@pytest.mark.parametrize("N", [1, 10, 200])
def test_the_exact_posterior_matches_quadrature(N):
    target = gaussian_mean(N, "tight", seed=N)
    post = gaussian_mean_posterior(target)
    truth = quadrature_truth(target)
    assert post.log_z == pytest.approx(truth.log_z, abs=1e-8)
    x = post.mean + post.sd * np.linspace(-4.0, 4.0, 17)
    assert np.max(np.abs(post.cdf(x) - truth.cdf(x))) < 1e-6
    # Conjugacy by hand: precision 1/s0^2 + N.
    assert post.sd == pytest.approx((1.0 / PRIOR_SD**2 + N) ** -0.5)


def test_data_are_seeded_one_dimensional_and_centred_on_a_prior_draw():
    a, b = gaussian_mean(500, "constant", seed=4), gaussian_mean(500, "tight", seed=4)
    assert a.data.shape == (500,) and a.data.dtype == np.float64
    assert np.array_equal(a.data, b.data)
    assert not np.array_equal(a.data, gaussian_mean(500, "constant", seed=5).data)
    assert a.mode == pytest.approx(np.mean(a.data))
    assert np.std(a.data) == pytest.approx(1.0, abs=0.1)  # unit observation noise
    assert a.d == 1 and math.isinf(a.lo[0]) and math.isinf(a.hi[0])
    assert a.name == "gaussian-mean-N500-constant"


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"N": 0}, "N = 0 is invalid"),
        ({"N": 2.0}, "N = 2.0 is invalid"),
        ({"N": True}, "N = True is invalid"),
        ({"bound": "quadratic"}, "bound = 'quadratic' is invalid; valid: constant, linear, tight"),
        ({"seed": -1}, "seed = -1 is invalid"),
    ],
)
def test_bad_arguments_name_the_parameter_value_and_valid_choices(kwargs, needle):
    with pytest.raises(ValueError, match=needle):
        gaussian_mean(**{"N": 3, "bound": "linear", **kwargs})


def test_numba_compiles_log_lik_and_bounds_to_the_same_values():
    rng = np.random.default_rng(2)
    for bound in BOUNDS:
        target = gaussian_mean(20, bound, seed=1)
        compiled_bound = numba.njit(target.bound)
        for lo, hi in _boxes(rng, target.mode)[::5]:
            assert compiled_bound(lo, hi, target.data) == target.M(lo, hi)
    compiled = numba.njit(target.log_lik)
    for x in rng.standard_normal(20) * 5.0:
        assert compiled(np.array([x]), target.data) == target.o(np.array([x]))


@pytest.mark.parametrize("bound", BOUNDS)
def test_astar_draws_follow_the_exact_posterior_with_each_bound(bound):
    target = gaussian_mean(10, bound, seed=2)
    post = gaussian_mean_posterior(target)
    draws = reference.astar(target, 800, np.random.default_rng(0))
    assert stats.kstest(draws.values, post.cdf).pvalue > 1e-3
    gumbel = stats.gumbel_r(loc=post.log_z)
    assert stats.kstest(draws.extras["gumbel_max"], gumbel.cdf).pvalue > 1e-3


def test_astar_runs_identically_with_all_three_bounds_at_one_point():
    runs = [
        reference.astar(gaussian_mean(1, b, seed=8), 200, np.random.default_rng(1)) for b in BOUNDS
    ]
    for run in runs[1:]:
        assert np.array_equal(run.values, runs[0].values)
        assert np.array_equal(run.extras["bound_evals"], runs[0].extras["bound_evals"])


@pytest.mark.parametrize("bound", BOUNDS)
@pytest.mark.parametrize("N", [1, 7, 3000])
def test_the_summed_layout_gives_the_same_o_bounds_and_posterior(bound, N):
    plain, summed = gaussian_mean(N, bound, seed=N), gaussian_mean(N, bound, seed=N, sums=True)
    assert summed.name == plain.name + "-sums" and summed.mode == plain.mode
    rng = np.random.default_rng(N)
    for lo, hi in _boxes(rng, plain.mode):
        want = plain.M(lo, hi)
        assert summed.M(lo, hi) == pytest.approx(want, rel=1e-12, abs=1e-9), (lo, hi)
        for x in _points(lo[0], hi[0], rng, 3):
            v = np.array([x])
            assert summed.o(v) == pytest.approx(plain.o(v), rel=1e-12, abs=1e-9)
    a, b = gaussian_mean_posterior(plain), gaussian_mean_posterior(summed)
    assert (b.mean, b.sd, b.log_z) == pytest.approx((a.mean, a.sd, a.log_z), rel=1e-12)
    boxes, bad = _violations(summed, summed.bound, np.random.default_rng(0))
    assert bad == 0, f"{bad} of {boxes} boxes"


def test_the_summed_layout_costs_astar_the_same_evaluations():
    runs = [
        reference.astar(
            gaussian_mean(300, "constant", seed=4, sums=s), 30, np.random.default_rng(2)
        )
        for s in (False, True)
    ]
    for key in ("draw_evals", "bound_evals"):
        assert np.array_equal(runs[0].extras[key], runs[1].extras[key])
