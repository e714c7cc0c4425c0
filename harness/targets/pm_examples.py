"""The two 1-D box densities of 004_b270422b62f00607.txt: the bimodal mixture of Sec. 5.1
(Fig. 2a, with a quadrature ground truth) and the counter-example of Sec. 3 (Fig. 1, 2b), where
A*'s bound points at a region of tiny mass; and 004 Sec. 5.3's SGD estimate that its A* uses in
place of a bound on clutter and logistic regression (:func:`with_sgd_bound`)."""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable

import numpy as np
from numba import njit

from harness.targets.box_density import CLUTTER_W, BoxDensityTarget, box_density, clutter_point
from harness.targets.glm_kernels import sigmoid_neg
from harness.targets.logistic_box import GAMMA_B, o_at_w

_LOG_2 = math.log(2.0)
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)


def _mixture_log_lik(x: np.ndarray, data: np.ndarray) -> float:
    """o = log(N(x; -2, 1) + 2 N(x; 2, 1)) - log N(x; 0, 2): each term's log ratio to the
    proposal is -(3/8) x^2 + m x - m^2 / 2 + log 2."""
    t = x[0]
    if t * t == math.inf:  # x = +-inf or |x| > 1.3e154: both terms are -inf, so o is too
        return -math.inf
    a = -0.375 * t * t - 2.0 * t - 2.0 + _LOG_2
    b = -0.375 * t * t + 2.0 * t - 2.0 + _LOG_2 + _LOG_2
    top = max(a, b)
    return top + math.log(math.exp(a - top) + math.exp(b - top))


def _mixture_log_lik_grad(x: np.ndarray, data: np.ndarray, grad: np.ndarray) -> float:
    """o and do/dx: the terms' slopes -(3/4) x -+ 2, weighted by their shares."""
    t = x[0]
    if t * t == math.inf:  # o is -inf (see _mixture_log_lik); the slope is the larger term's
        grad[0] = -0.75 * t + (2.0 if t > 0.0 else -2.0)
        return -math.inf
    a = -0.375 * t * t - 2.0 * t - 2.0 + _LOG_2
    b = -0.375 * t * t + 2.0 * t - 2.0 + _LOG_2 + _LOG_2
    top = max(a, b)
    ea, eb = math.exp(a - top), math.exp(b - top)
    grad[0] = (ea * (-0.75 * t - 2.0) + eb * (-0.75 * t + 2.0)) / (ea + eb)
    return top + math.log(ea + eb)


def _mixture_bound(lo: np.ndarray, hi: np.ndarray, data: np.ndarray) -> float:
    """Each term's log ratio is concave with its peak at 4 m / 3: clip the peak into the box and
    add the two maxima (an upper bound of the sum)."""
    t_a = min(max(-8.0 / 3.0, lo[0]), hi[0])
    t_b = min(max(8.0 / 3.0, lo[0]), hi[0])
    if t_a * t_a == math.inf:  # the box lies beyond |x| = 1.3e154 (t_a = t_b), where o is -inf
        return -math.inf
    a = -0.375 * t_a * t_a - 2.0 * t_a - 2.0 + _LOG_2
    b = -0.375 * t_b * t_b + 2.0 * t_b - 2.0 + _LOG_2 + _LOG_2
    top = max(a, b)
    return top + math.log(math.exp(a - top) + math.exp(b - top))


def bimodal_mixture() -> BoxDensityTarget:
    """004 Sec. 5.1: p(x) proportional to N(x; -2, 1) + 2 N(x; 2, 1) with proposal Q = N(0, 2).

    The paper writes phi_P = -log(...), which is not normalisable; the sign is read as a typo.
    "N(0, 2)" is read as standard deviation 2 (004 writes N(x; m, 1.0), where sd and variance
    agree); log Z = log 3 either way."""
    return box_density(
        [-math.inf],
        [math.inf],
        [("normal", 0.0, 2.0)],
        _mixture_log_lik,
        _mixture_bound,
        np.zeros((1, 1)),
        name="pm-mixture",
        log_lik_grad=_mixture_log_lik_grad,
    )


#: 004 Sec. 3: the spike's height 1e400 and half-width 0.5e-405 lie outside double precision;
#: 1e100 and 0.5e-105 keep its mass 1e-5 and a log height (230) far above the main mode's ratio.
SPIKE_LOG_HEIGHT, SPIKE_HALF_WIDTH, SPIKE_SHARE = 100.0 * math.log(10.0), 0.5e-105, 1e-5


def _counter_log_lik(x: np.ndarray, data: np.ndarray) -> float:
    """o = log((1 - 1e-5) N(x; -5, 1) + 1[0 < |x| <= h] H) - log N(x; 5, 1); the Normals' log
    ratio is -10 x. The point 0 itself is left out of the spike: inversion of N(5, 1) lands on
    exactly 0.0 once a box around it is narrower than the doubles near 5 can resolve (1e-15), and
    would fake a spike of mass H * 1e-15 there."""
    t = x[0]
    base = math.log1p(-SPIKE_SHARE) - 10.0 * t
    if abs(t) > SPIKE_HALF_WIDTH or t == 0.0:
        return base
    spike = SPIKE_LOG_HEIGHT + 0.5 * (t - 5.0) ** 2 + _HALF_LOG_2PI
    top = max(base, spike)
    return top + math.log(math.exp(base - top) + math.exp(spike - top))


def _counter_bound(lo: np.ndarray, hi: np.ndarray, data: np.ndarray) -> float:
    """The Normals' ratio falls in x (largest at lo); the spike's ratio is largest at the spike
    point farthest from 5, when the box meets the spike."""
    base = math.log1p(-SPIKE_SHARE) - 10.0 * lo[0]
    if hi[0] < -SPIKE_HALF_WIDTH or lo[0] > SPIKE_HALF_WIDTH:
        return base
    t = max(lo[0], -SPIKE_HALF_WIDTH)
    spike = SPIKE_LOG_HEIGHT + 0.5 * (t - 5.0) ** 2 + _HALF_LOG_2PI
    top = max(base, spike)
    return top + math.log(math.exp(base - top) + math.exp(spike - top))


def counter_example() -> BoxDensityTarget:
    """004 Sec. 3: on (-10, 10), p(x) proportional to (1 - 1e-5) N(x; -5, 1) plus a spike of mass
    1e-5 at 0, with proposal Q = N(5, 1). A*'s bound is largest on regions around the spike,
    which almost never holds the maximum."""
    return box_density(
        [-10.0],
        [10.0],
        [("normal", 5.0, 1.0)],
        _counter_log_lik,
        _counter_bound,
        np.zeros((1, 1)),
        name="pm-counter-example",
    )


# 004 Sec. 5.3's A* "bound": "we exploit the standard stochastic gradient descent (SGD)
# algorithm to calculate the bound function, max_{x in S} sum_i log p(y_i | x)", its settings
# tuned for A* (footnote 2) but not given. SGD's value is a point's o, at most the box's maximum:
# an estimate from below, not a bound. Our reading, fixed before any run: projected SGD in the
# box's own coordinates from the box's middle (the prior mean clipped into an infinite side, as
# logistic_box's tangent bound starts), minibatches in a fixed cyclic order (so the value is a
# function of the box, as a bound is), step eta0 / sqrt(1 + t) on the minibatch's mean gradient,
# then o at the last point (one full evaluation).
SGD_STEPS, SGD_BATCH = 100, 10


@njit(cache=True)
def _sgd_clutter(lo: np.ndarray, hi: np.ndarray, data: np.ndarray, steps: int, batch: int) -> float:
    """SGD's estimate of max o over the box for box_density.clutter: each point pulls theta
    towards itself by its inlier responsibility (curvature at most about 1: eta0 = 1)."""
    n, d = data.shape[0], data.shape[1]
    theta, g = np.empty(d), np.empty(d)
    for j in range(d):
        finite = lo[j] > -math.inf and hi[j] < math.inf
        theta[j] = 0.5 * (lo[j] + hi[j]) if finite else min(max(0.0, lo[j]), hi[j])
    inlier_norm = math.log(CLUTTER_W) - d * _HALF_LOG_2PI
    i = 0
    for t in range(steps):
        for j in range(d):
            g[j] = 0.0
        for _ in range(batch):
            point = clutter_point(data[i], theta)
            sq = 0.0
            for j in range(d):
                sq += (data[i, j] - theta[j]) ** 2
            r = math.exp(inlier_norm - 0.5 * sq - point)
            for j in range(d):
                g[j] += r * (data[i, j] - theta[j])
            i = (i + 1) % n
        eta = 1.0 / (batch * math.sqrt(1.0 + t))
        for j in range(d):
            theta[j] = min(max(theta[j] + eta * g[j], lo[j]), hi[j])
    total = 0.0
    for i in range(n):
        total += clutter_point(data[i], theta)
    return total


@njit(cache=True)
def _sgd_logistic(
    lo: np.ndarray, hi: np.ndarray, data: np.ndarray, steps: int, batch: int
) -> float:
    """SGD's estimate of max o over the box for logistic_box, in the coordinates of its tangent
    bound's ascent (w = s v, s = 1/sqrt(alpha)) and from the same start; eta0 is that ascent's
    safe step at the start, for the mean of the data's terms."""
    n, dim = data.shape[0], data.shape[1] - 1
    lv, hv = lo[1:], hi[1:]
    smin = 1.0 / math.sqrt(hi[0]) if hi[0] > 0.0 else math.inf
    smax = 1.0 / math.sqrt(lo[0]) if lo[0] > 0.0 else math.inf
    if hi[0] < math.inf:
        s = 1.0 / math.sqrt(0.5 * (lo[0] + hi[0]))
    else:
        s = 1.0 / math.sqrt(lo[0] + 1.0 / GAMMA_B)
    s = min(max(s, smin), smax)
    v, gw = np.empty(dim), np.empty(dim)
    for k in range(dim):
        finite = lv[k] > -math.inf and hv[k] < math.inf
        v[k] = 0.5 * (lv[k] + hv[k]) if finite else min(max(0.0, lv[k]), hv[k])
    sq = 0.0
    for i in range(n):
        for k in range(dim):
            sq += data[i, k] ** 2
    eta0 = 4.0 / (s * s * sq / n + 1.0)
    i = 0
    for t in range(steps):
        for k in range(dim):
            gw[k] = 0.0
        for _ in range(batch):
            y = data[i, dim]
            z = 0.0
            for k in range(dim):
                z += data[i, k] * v[k]
            r = y * sigmoid_neg(y * s * z)
            for k in range(dim):
                gw[k] += r * data[i, k]
            i = (i + 1) % n
        eta = eta0 / (batch * math.sqrt(1.0 + t))
        gs = 0.0
        for k in range(dim):
            gs += gw[k] * v[k]
        s_new = min(max(s + eta * gs, smin), smax)
        for k in range(dim):
            v[k] = min(max(v[k] + eta * s * gw[k], lv[k]), hv[k])
        s = s_new
    w = np.empty(dim)
    for k in range(dim):
        w[k] = s * v[k]
    return o_at_w(w, data, gw)


@functools.cache
def _sgd_bound(kind: str, steps: int, batch: int, offset: float) -> Callable:
    """The compiled bound(lo, hi, data) of one SGD setting (steps, batch are compile-time
    constants); ``offset`` is added to its value (see :func:`with_sgd_bound`)."""
    kernel = _sgd_clutter if kind == "clutter" else _sgd_logistic

    @njit(cache=False)
    def bound(lo: np.ndarray, hi: np.ndarray, data: np.ndarray) -> float:  # pragma: no cover
        return kernel(lo, hi, data, steps, batch) + offset

    return bound


SGD_KINDS = ("clutter", "logistic")


def with_sgd_bound(
    target: BoxDensityTarget,
    kind: str,
    steps: int = SGD_STEPS,
    batch: int = SGD_BATCH,
    offset: float = 0.0,
) -> BoxDensityTarget:
    """``target`` (box_density.clutter or logistic_box's) with 004 Sec. 5.3's SGD estimate of
    max o in place of its bound. A* on it selects by G + estimate and stops, as 004 Sec. 2.2's A*
    does, once its best value beats every region's G + estimate: early, and not exact, where the
    estimate falls short. A large ``offset`` keeps the selection order and removes that stop (a
    diagnostic: the order alone). box_density's bound probe would refuse a non-bound, so the
    target is copied with only the bound replaced."""
    if kind not in SGD_KINDS:
        raise ValueError(f"kind = {kind!r} is invalid; valid: {', '.join(SGD_KINDS)}")
    for name, value in (("steps", steps), ("batch", batch)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} = {value!r} is invalid; valid: an integer >= 1")
    if not math.isfinite(offset) or offset < 0:
        raise ValueError(f"offset = {offset!r} is invalid; valid: a finite number >= 0")
    bound = _sgd_bound(kind, steps, min(batch, target.data.shape[0]), float(offset))
    return dataclasses.replace(target, bound=bound, name=f"{target.name}-sgd{steps}x{batch}")
