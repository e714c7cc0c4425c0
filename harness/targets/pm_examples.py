"""The two 1-D box densities of 004_b270422b62f00607.txt: the bimodal mixture of Sec. 5.1
(Fig. 2a, with a quadrature ground truth) and the counter-example of Sec. 3 (Fig. 1, 2b), where
A*'s bound points at a region of tiny mass."""

from __future__ import annotations

import math

import numpy as np

from harness.targets.box_density import BoxDensityTarget, box_density

_LOG_2 = math.log(2.0)
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)


def _mixture_log_lik(x: np.ndarray, data: np.ndarray) -> float:
    """o = log(N(x; -2, 1) + 2 N(x; 2, 1)) - log N(x; 0, 2): each term's log ratio to the
    proposal is -(3/8) x^2 + m x - m^2 / 2 + log 2."""
    t = x[0]
    a = -0.375 * t * t - 2.0 * t - 2.0 + _LOG_2
    b = -0.375 * t * t + 2.0 * t - 2.0 + _LOG_2 + _LOG_2
    top = max(a, b)
    return top + math.log(math.exp(a - top) + math.exp(b - top))


def _mixture_log_lik_grad(x: np.ndarray, data: np.ndarray, grad: np.ndarray) -> float:
    """o and do/dx: the terms' slopes -(3/4) x -+ 2, weighted by their shares."""
    t = x[0]
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
