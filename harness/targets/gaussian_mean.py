"""The mean of a 1-D Gaussian from N observations, for comparing bounding strategies in A*
sampling (001_78ff986a3d316097.txt, Sec. 6.2, Fig. 2b).

theta ~ N(0, 2^2) is the proposal i; y_n ~ N(theta*, 1) with theta* drawn from that prior; o(theta)
= sum_n log N(y_n; theta, 1). Three bounds of o over a box [lo, hi], all sums of per-point
bounds of the concave terms f_n(theta) = log N(y_n; theta, 1):

- "constant": sum_n max_box f_n, each term's max at y_n clipped into the box (as clutter);
- "linear": per point the tangent of f_n at a_n = y_n clipped into the box (the point where the
  constant bound takes the term's max), the lines summed and maximised over the box;
- "tight": the quadratic per-point bounds are f_n themselves, so their sum is o and its max over
  the box is o at the sample mean clipped into the box.

Expanding every term around its own maximiser a_n makes the three agree for N = 1 (001, Sec. 6.2:
"all bound types are equivalent when each expands around the same point"), gives tight <=
linear <= constant on every box (a tangent at a_n never exceeds f_n(a_n) on the box: its slope
y_n - a_n points out of the box or is 0), and keeps the linear bound finite on infinite boxes
with no fallback: on [lo, inf) every a_n >= y_n, so every slope is <= 0 and the summed line is
largest at lo; on (-inf, hi] the mirror; on the whole line every slope is 0.

With ``sums=True`` the same o and bounds are computed from the sorted deviations d_n = y_n - c
(c the sample mean) and their prefix sums, O(log N) an evaluation instead of O(N): sum over
d_n < a of (a - d_n)^2 = k a^2 - 2 a P1[k] + P2[k] with k = #{d_n < a}, and likewise above a box.
The evaluation counts A* records are the same; only the arithmetic differs (rounding of order
1e-16 N, against the probe's relative slack of 1e-9), so the study of larger N (up to 1e7) is
cheap (harness.experiments.astar_bounds).

The posterior is Gaussian (normal prior times normal likelihood): :func:`gaussian_mean_posterior`
is the exact ground truth, log Z included.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numba import njit
from scipy import stats

from harness.targets.box_density import NORMAL, BoxDensityTarget, box_density

#: The prior (proposal) N(0, 2^2): the clutter experiment's prior (001 Sec. 6.1, sd 2 as in the
#: authors' code), wide enough that the posterior at N = 1 already differs from the prior, and
#: theta* drawn from it lies within a few units of 0.
PRIOR_MEAN, PRIOR_SD = 0.0, 2.0
BOUNDS = ("constant", "linear", "tight")
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)


@njit(cache=True)
def _term(y: float, theta: float) -> float:
    """f_n(theta) = log N(y_n; theta, 1)."""
    r = y - theta
    return -0.5 * r * r - _HALF_LOG_2PI


@njit(cache=True)
def _clip(v: float, lo: float, hi: float) -> float:
    return min(max(v, lo), hi)


@njit(cache=True)
def _sum_terms(y: np.ndarray, theta: float) -> float:
    total = 0.0
    for n in range(y.size):
        total += _term(y[n], theta)
    return total


@njit(cache=True)
def _constant(y: np.ndarray, lo: float, hi: float) -> float:
    total = 0.0
    for n in range(y.size):
        total += _term(y[n], _clip(y[n], lo, hi))
    return total


@njit(cache=True)
def _tangents_at(y: np.ndarray, lo: float, hi: float, theta: float) -> float:
    """sum_n of the tangent of f_n at a_n = clip(y_n) evaluated at theta (a finite point of the
    box): f_n(a_n) + (y_n - a_n)(theta - a_n), since f_n'(a) = y_n - a."""
    total = 0.0
    for n in range(y.size):
        a = _clip(y[n], lo, hi)
        total += _term(y[n], a) + (y[n] - a) * (theta - a)
    return total


@njit(cache=True)
def _tight(y: np.ndarray, lo: float, hi: float) -> float:
    """o is a concave parabola with its max at the sample mean: its max over the box is o there,
    or at the end nearest to it."""
    mean = 0.0
    for n in range(y.size):
        mean += y[n]
    return _sum_terms(y, _clip(mean / y.size, lo, hi))


def _max_at_ends(tangents_at: Callable, flat: Callable) -> Callable:
    """The linear bound over [lo, hi] from ``tangents_at(data, lo, hi, theta)``, the summed
    tangents at theta: a line's max is at an end; an infinite end is never it (see the module
    docstring), and on the whole line every slope is 0, so the sum is ``flat(data, lo, hi)``."""

    @njit(cache=False)
    def linear(data: np.ndarray, lo: float, hi: float) -> float:
        if math.isfinite(lo) and math.isfinite(hi):
            return max(tangents_at(data, lo, hi, lo), tangents_at(data, lo, hi, hi))
        if math.isfinite(lo):
            return tangents_at(data, lo, hi, lo)
        if math.isfinite(hi):
            return tangents_at(data, lo, hi, hi)
        return flat(data, lo, hi)

    return linear


def _on_theta(o: Callable) -> Callable:
    """The target's ``log_lik(x, data)`` from a scalar ``o(data, theta)`` (d = 1)."""

    def log_lik(x: np.ndarray, data: np.ndarray) -> float:
        return o(data, x[0])

    return log_lik


def _on_box(bound: Callable) -> Callable:
    """The target's ``bound(lo, hi, data)`` from a scalar ``bound(data, lo, hi)`` (d = 1)."""

    def box_bound(lo: np.ndarray, hi: np.ndarray, data: np.ndarray) -> float:
        return bound(data, lo[0], hi[0])

    return box_bound


# The summed layout: data[0, :N] the sorted deviations d, data[0, N] the centre c, data[1] and
# data[2] the prefix sums P1[k] = sum_{i<k} d_i and P2[k] = sum_{i<k} d_i^2 (k = 0..N).


@njit(cache=True)
def _below(data: np.ndarray, a: float) -> tuple[float, float]:
    """(sum, sum of squares) of (a - d_n) over d_n < a; (0, 0) for a = -inf."""
    if not a > -math.inf:
        return 0.0, 0.0
    n = data.shape[1] - 1
    k = np.searchsorted(data[0, :n], a)
    return k * a - data[1, k], k * a * a - 2.0 * a * data[1, k] + data[2, k]


@njit(cache=True)
def _above(data: np.ndarray, b: float) -> tuple[float, float]:
    """(sum, sum of squares) of (d_n - b) over d_n > b; (0, 0) for b = inf."""
    if not b < math.inf:
        return 0.0, 0.0
    n = data.shape[1] - 1
    k = np.searchsorted(data[0, :n], b, side="right")
    s1, s2, m = data[1, n] - data[1, k], data[2, n] - data[2, k], n - k
    return s1 - m * b, s2 - 2.0 * b * s1 + m * b * b


@njit(cache=True)
def _summed_o(data: np.ndarray, theta: float) -> float:
    """o(theta) = -1/2 sum (d_n - t)^2 - N/2 log 2 pi, t = theta - c."""
    n = data.shape[1] - 1
    t = theta - data[0, n]
    return -0.5 * (n * t * t - 2.0 * t * data[1, n] + data[2, n]) - n * _HALF_LOG_2PI


@njit(cache=True)
def _summed_constant(data: np.ndarray, lo: float, hi: float) -> float:
    n = data.shape[1] - 1
    c = data[0, n]
    return -0.5 * (_below(data, lo - c)[1] + _above(data, hi - c)[1]) - n * _HALF_LOG_2PI


@njit(cache=True)
def _summed_tangents_at(data: np.ndarray, lo: float, hi: float, theta: float) -> float:
    """:func:`_tangents_at` from the sums: the points below the box add -(a - d)^2 / 2 +
    (d - a)(t - a), those above -(d - b)^2 / 2 + (d - b)(t - b), those inside nothing."""
    n = data.shape[1] - 1
    c = data[0, n]
    a, b, t = lo - c, hi - c, theta - c
    low1, low2 = _below(data, a)
    up1, up2 = _above(data, b)
    total = -0.5 * (low2 + up2) - n * _HALF_LOG_2PI
    if low1 > 0.0:
        total -= low1 * (t - a)
    if up1 > 0.0:
        total += up1 * (t - b)
    return total


@njit(cache=True)
def _summed_tight(data: np.ndarray, lo: float, hi: float) -> float:
    n = data.shape[1] - 1
    return _summed_o(data, _clip(data[0, n] + data[1, n] / n, lo, hi))


def summed(y: np.ndarray) -> np.ndarray:
    """The summed layout of the observations ``y`` (see above)."""
    c = float(np.mean(y))
    d = np.sort(y - c)
    out = np.zeros((3, y.size + 1))
    out[0, :-1], out[0, -1] = d, c
    np.cumsum(d, out=out[1, 1:])
    np.cumsum(d * d, out=out[2, 1:])
    return out


def observations(data: np.ndarray) -> tuple[int, float, float]:
    """(N, sum y, sum (y - ybar)^2) of a target's data in either layout."""
    if data.ndim == 1:
        return data.size, float(np.sum(data)), float(np.sum((data - np.mean(data)) ** 2))
    n = data.shape[1] - 1
    s1, s2 = float(data[1, n]), float(data[2, n])
    return n, n * float(data[0, n]) + s1, s2 - s1 * s1 / n


_BOUND_FUNCTIONS = {
    "constant": _on_box(_constant),
    "linear": _on_box(_max_at_ends(_tangents_at, _constant)),
    "tight": _on_box(_tight),
}
_SUMMED_BOUNDS = {
    "constant": _on_box(_summed_constant),
    "linear": _on_box(_max_at_ends(_summed_tangents_at, _summed_constant)),
    "tight": _on_box(_summed_tight),
}
_LOG_LIK, _SUMMED_LOG_LIK = _on_theta(_sum_terms), _on_theta(_summed_o)


def _observations(N: int, seed: int) -> tuple[float, np.ndarray]:
    """theta* ~ the prior, then y_n ~ N(theta*, 1), from one seeded Generator."""
    rng = np.random.default_rng(seed)
    theta = PRIOR_MEAN + PRIOR_SD * rng.standard_normal()
    return float(theta), theta + rng.standard_normal(N)


def gaussian_mean(N: int, bound: str, seed: int = 0, sums: bool = False) -> BoxDensityTarget:
    """The posterior of a Gaussian mean theta given N observations (001, Sec. 6.2): proposal
    i = N(0, 2^2) on the whole line, o(theta) = sum_n log N(y_n; theta, 1), and ``bound`` one of
    "constant", "linear" or "tight" (the module docstring gives each). o is unimodal with its
    max at the sample mean, declared as the mode (so drill-down applies too). ``sums``: the same
    data, o and bounds, evaluated from sorted data and prefix sums (O(log N) each)."""
    if isinstance(N, bool) or not isinstance(N, int) or N < 1:
        raise ValueError(f"N = {N!r} is invalid; valid: an integer >= 1")
    if not isinstance(bound, str) or bound not in _BOUND_FUNCTIONS:
        raise ValueError(f"bound = {bound!r} is invalid; valid: {', '.join(BOUNDS)}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed = {seed!r} is invalid; valid: an integer >= 0")
    if not isinstance(sums, bool):
        raise ValueError(f"sums = {sums!r} is invalid; valid: True or False")
    _, y = _observations(N, seed)
    return box_density(
        [-math.inf],
        [math.inf],
        [("normal", PRIOR_MEAN, PRIOR_SD)],
        _SUMMED_LOG_LIK if sums else _LOG_LIK,
        (_SUMMED_BOUNDS if sums else _BOUND_FUNCTIONS)[bound],
        summed(y) if sums else y,
        name=f"gaussian-mean-N{N}-{bound}" + ("-sums" if sums else ""),
        mode=float(np.mean(y)),
    )


@dataclass(frozen=True)
class GaussianPosterior:
    """The exact posterior N(mean, sd^2) of theta, and log Z = log of the integral of
    exp(i + o) (the evidence), the location of A*'s Gumbel maxima."""

    mean: float
    sd: float
    log_z: float

    def cdf(self, x: np.ndarray) -> np.ndarray:
        return stats.norm.cdf(np.asarray(x, dtype=np.float64), self.mean, self.sd)


def gaussian_mean_posterior(target: BoxDensityTarget) -> GaussianPosterior:
    """Conjugate normal-normal update of a :func:`gaussian_mean` target's prior (its normal
    proposal) by its N observations of unit variance: precision 1/s0^2 + N, mean
    (m0/s0^2 + sum y) / precision. With S = sum (y_n - ybar)^2, o = -N/2 log 2 pi - S/2 -
    N/2 (theta - ybar)^2, and the prior's integral against the last factor is
    sqrt(2 pi / N) N(ybar; m0, s0^2 + 1/N), which gives log Z."""
    (code, m0, s0) = target.proposal[0]
    if target.d != 1 or int(code) != NORMAL or target.data.ndim not in (1, 2):
        raise ValueError(f"target {target.name!r} is invalid; valid: a gaussian_mean target")
    n, total, spread = observations(target.data)
    precision = 1.0 / s0**2 + n
    mean = (m0 / s0**2 + total) / precision
    ybar = total / n
    log_z = (
        -n * _HALF_LOG_2PI
        - 0.5 * spread
        + 0.5 * math.log(2.0 * math.pi / n)
        + float(stats.norm.logpdf(ybar, m0, math.sqrt(s0**2 + 1.0 / n)))
    )
    return GaussianPosterior(mean, 1.0 / math.sqrt(precision), log_z)
