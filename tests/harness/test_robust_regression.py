"""Robust (Cauchy) Bayesian regression as a box density (001_78ff986a3d316097.txt, Sec. 6.4):
its data, both bounds (valid on any box, the quadratic one maximised exactly), and A* on it."""

import math

import numba
import numpy as np
import pytest
from scipy import optimize, stats

from harness.targets.robust_regression import (
    BOUNDS,
    MAX_D_LINEAR_QUADRATIC,
    W_STAR,
    _box_qp_max,
    _linear_quadratic,
    regression_data,
    robust_regression,
)
from implementations.astar import fast, reference

SLACK = 1e-9  # relative: rounding of a sum of N terms, far below any gap A* acts on


def _boxes(rng: np.random.Generator, d: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Boxes 1e-7 to 30 wide per side around the modes +-w*, anywhere in [-10, 10]^d and far
    outside it, plus boxes with infinite sides (A* never makes them under the uniform proposal,
    but the bounds hold there too)."""
    boxes = []
    for k in range(90):
        if k % 3 == 0:
            mid = rng.choice([-1.0, 1.0]) * W_STAR + 0.05 * rng.standard_normal(d)
        elif k % 3 == 1:
            mid = rng.uniform(-10.0, 10.0, d)
        else:
            mid = rng.uniform(-60.0, 60.0, d)
        half = 10.0 ** rng.uniform(-7.0, 1.2, d)
        boxes.append((mid - half, mid + half))
    for _ in range(20):
        lo, hi = rng.uniform(-8.0, -1.0, d), rng.uniform(1.0, 8.0, d)
        lo[rng.random(d) < 0.5] = -math.inf
        hi[rng.random(d) < 0.5] = math.inf
        boxes.append((lo, hi))
    return boxes


def _points(lo: np.ndarray, hi: np.ndarray, rng: np.random.Generator, k: int = 20) -> np.ndarray:
    """Uniform points of the box, its corners-ish (each side at an end with probability 1/2), and
    on an infinite side the finite end plus distances over many scales."""
    d = lo.size
    out = np.empty((k, d))
    for j in range(d):
        if math.isfinite(lo[j]) and math.isfinite(hi[j]):
            u = rng.random(k)
            u[: k // 2] = np.round(u[: k // 2])
            out[:, j] = lo[j] + u * (hi[j] - lo[j])
        else:
            reach = 10.0 ** rng.uniform(-3.0, 3.0, k)
            if math.isfinite(lo[j]):
                out[:, j] = lo[j] + reach
            elif math.isfinite(hi[j]):
                out[:, j] = hi[j] - reach
            else:
                out[:, j] = rng.choice([-1.0, 1.0], k) * reach
    return out


def _violations(target, bound, rng) -> tuple[int, int]:
    boxes = _boxes(rng, target.d)
    bad = 0
    for lo, hi in boxes:
        m = bound(lo, hi, target.data)
        o = np.array([target.o(x) for x in _points(lo, hi, rng)])
        bad += bool(np.any(o > m + SLACK * (1.0 + abs(m))))
    return len(boxes), bad


@pytest.mark.parametrize("bound", BOUNDS)
@pytest.mark.parametrize(("D", "N"), [(1, 2), (1, 60), (2, 20), (3, 40)])
def test_each_bound_is_above_o_everywhere_on_random_boxes(bound, D, N):
    target = robust_regression(D, N, bound, seed=D + N)
    boxes, bad = _violations(target, target.bound, np.random.default_rng(D * N))
    assert bad == 0, f"{bad} of {boxes} boxes"


def _tangents_everywhere(lo, hi, data):
    """Invalid on purpose: tangent lines in r also where |r| > 1, where f = -log(1 + r^2) is
    convex and its tangents lie BELOW it."""
    return _linear_quadratic(lo, hi, data, math.inf)


def test_a_tangent_where_f_is_convex_is_caught():
    target = robust_regression(2, 20, "linear-quadratic", seed=3)
    boxes, bad = _violations(target, _tangents_everywhere, np.random.default_rng(0))
    assert bad > boxes // 10


def _negated_quadratic(v, c, g, h):
    return -(c + g @ v - 0.5 * v @ h @ v), -(g - h @ v)


@pytest.mark.parametrize("D", [1, 2, 3, 4])
def test_the_box_qp_max_is_exact(D):
    """Against L-BFGS-B from many starts: never below the true max (which would make A*
    inexact), and equal to it."""
    rng = np.random.default_rng(D)
    for trial in range(25):
        a = rng.standard_normal((D, D))
        h = a @ a.T + 0.04 * np.eye(D)
        g, c = 3.0 * rng.standard_normal(D), rng.standard_normal()
        lo = rng.uniform(-3.0, 0.0, D)
        hi = lo + 10.0 ** rng.uniform(-3.0, 0.5, D)
        if trial % 4 == 0:
            lo[0] = -math.inf
        value = _box_qp_max(c, g, h, lo, hi)
        limits = [(None if math.isinf(v) else v, w) for v, w in zip(lo, hi, strict=True)]
        best = -math.inf
        for _ in range(4):
            start = np.clip(rng.standard_normal(D), np.where(np.isfinite(lo), lo, -5.0), hi)
            res = optimize.minimize(
                _negated_quadratic,
                start,
                args=(c, g, h),
                jac=True,
                bounds=limits,
                method="L-BFGS-B",
                options={"ftol": 1e-15, "gtol": 1e-12},
            )
            best = max(best, -res.fun)
        assert value >= best - 1e-12 * (1.0 + abs(best))
        assert value == pytest.approx(best, rel=1e-8, abs=1e-8)


@pytest.mark.parametrize("D", [1, 2])
def test_linear_quadratic_is_below_constant_and_much_tighter_near_the_modes(D):
    lq = robust_regression(D, 100, "linear-quadratic", seed=1)
    const = robust_regression(D, 100, "constant", seed=1)
    rng = np.random.default_rng(D)
    gains = []
    for lo, hi in _boxes(rng, D):
        a, b = lq.M(lo, hi), const.M(lo, hi)
        assert a <= b
        gains.append(b - a)
    assert max(gains) > 1.0
    # On the small boxes around the modes, which A* refines, the excess over o's max shrinks
    # like the box's width squared with the quadratic pieces, like its width without them.
    for half, ratio in ((0.02, 0.5), (0.005, 0.1)):
        for w in (np.full(D, W_STAR), np.full(D, -W_STAR)):
            lo, hi = w - half, w + half
            top = max(lq.o(x) for x in lo + rng.random((2000, D)) * (hi - lo))
            assert lq.M(lo, hi) - top < ratio * (const.M(lo, hi) - top)


def test_data_are_two_mirrored_halves_about_w_star():
    D, N = 3, 400
    target = robust_regression(D, N, seed=7)
    assert target.data.shape == (N, D + 1) and target.data.dtype == np.float64
    x, y = target.data[:, :D], target.data[:, D]
    assert np.array_equal(x[: N // 2], x[N // 2 :])
    assert np.array_equal(y[N // 2 :], -y[: N // 2])
    noise = y[: N // 2] - x[: N // 2] @ np.full(D, W_STAR)
    assert np.std(noise) == pytest.approx(0.1, rel=0.2)
    assert np.array_equal(regression_data(D, N, 7)[0], x)
    assert not np.array_equal(regression_data(D, N, 8)[0], x)
    assert np.all(target.lo == -10.0) and np.all(target.hi == 10.0)
    # o is symmetric: the modes +-w* are equally high.
    w = np.full(D, W_STAR)
    assert target.o(w) == pytest.approx(target.o(-w), rel=1e-12)
    assert target.o(w) > target.o(np.zeros(D)) + 50.0


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"D": 0}, "D = 0 is invalid"),
        ({"D": True}, "D = True is invalid"),
        ({"N": 0}, "N = 0 is invalid"),
        ({"N": 5}, "N = 5 is invalid; valid: an even integer"),
        ({"N": 4.0}, "N = 4.0 is invalid"),
        ({"bound": "linear"}, "bound = 'linear' is invalid; valid: constant, linear-quadratic"),
        ({"seed": -2}, "seed = -2 is invalid"),
        (
            {"D": MAX_D_LINEAR_QUADRATIC + 1, "bound": "linear-quadratic"},
            f"valid: D <= {MAX_D_LINEAR_QUADRATIC}",
        ),
    ],
)
def test_bad_arguments_name_the_parameter_value_and_valid_choices(kwargs, needle):
    with pytest.raises(ValueError, match=needle):
        robust_regression(**{"D": 2, "N": 10, "bound": "constant", **kwargs})


def test_numba_compiles_log_lik_and_bounds_to_the_same_values():
    rng = np.random.default_rng(3)
    for bound in BOUNDS:
        target = robust_regression(2, 30, bound, seed=2)
        compiled_bound = numba.njit(target.bound)
        for lo, hi in _boxes(rng, 2)[::6]:
            assert compiled_bound(lo, hi, target.data) == pytest.approx(
                target.M(lo, hi), rel=1e-13, abs=1e-13
            )
    compiled = numba.njit(target.log_lik)
    for w in rng.uniform(-10.0, 10.0, (20, 2)):
        assert compiled(w, target.data) == pytest.approx(target.o(w), rel=1e-13)


@pytest.mark.parametrize("bound", BOUNDS)
@pytest.mark.parametrize("D", [1, 2])
def test_astar_reference_and_numba_agree_draw_for_draw(bound, D):
    target = robust_regression(D, 10, bound, seed=5)
    ref = reference.astar(target, 60, np.random.default_rng(9))
    num = fast.astar(target, 60, np.random.default_rng(9))
    assert np.array_equal(ref.values, num.values)
    assert np.array_equal(ref.extras["gumbel_max"], num.extras["gumbel_max"])
    for key in ("draw_evals", "bound_evals"):
        assert np.array_equal(ref.extras[key], num.extras[key])


@pytest.mark.parametrize("bound", BOUNDS)
def test_astar_draws_follow_the_quadrature_posterior_in_one_dimension(bound):
    target = robust_regression(1, 20, bound, seed=4)
    draws = fast.astar(target, 1500, np.random.default_rng(2))
    assert stats.kstest(draws.values, target.cdf).pvalue > 1e-3
    # Both modes, equally often (the posterior is symmetric).
    assert stats.binomtest(int(np.sum(draws.values > 0)), draws.values.size).pvalue > 1e-3
    gumbel = stats.gumbel_r(loc=target.log_normaliser)
    assert stats.kstest(draws.extras["gumbel_max"], gumbel.cdf).pvalue > 1e-3
