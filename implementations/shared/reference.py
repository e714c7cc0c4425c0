"""Sampling primitives several families share: the readable NumPy/``math`` versions.

Read against:
- 000_26bed7cc1ef3ab92.txt, Sec. 2.1 (Gumbel-max, Eq. 2, footnote 1: eps = -log E, E ~ Exp(1));
- 001_78ff986a3d316097.txt, footnote 1 (truncated Gumbel by inversion) and Alg. 1 (a block's
  maximum, truncated below its parent's).

``fast.py`` holds the Numba twins under the same names. Both builds agree bit for bit because
the scalar transcendental functions come from ``math`` (libm, which Numba calls too), never from
NumPy's SIMD ``np.log``/``np.exp``, which can differ in the last bit.
"""

from __future__ import annotations

import math

import numpy as np

#: Independent partial sums a row is split into: one dependent add per term (the left-to-right
#: order) runs at the add's latency, 8 interleaved ones at the memory's speed.
LANES = 8


def lane_sums(rows: np.ndarray) -> np.ndarray:
    """The sum of each row in the lane order: lane l sums entries l, l + 8, ... left to right,
    then the lanes pair up as ((0 + 1) + (2 + 3)) + ((4 + 5) + (6 + 7))."""
    D, N = rows.shape
    full, tail = divmod(N, LANES)
    lanes = np.zeros((D, LANES))
    if full:
        # Row d as blocks of 8: lane l's running sum down the blocks is entries l, l + 8, ...
        # added left to right (cumsum accumulates in order, unlike np.sum's pairwise tree).
        # Assigned, not added to the zeros, so that a lane of -0.0 stays -0.0.
        lanes[:] = np.cumsum(rows[:, : full * LANES].reshape(D, full, LANES), axis=1)[:, -1]
    lanes[:, :tail] += rows[:, full * LANES :]
    pairs = [lanes[:, 2 * j] + lanes[:, 2 * j + 1] for j in range(LANES // 2)]
    return (pairs[0] + pairs[1]) + (pairs[2] + pairs[3])


def log_or_minus_inf(u: float) -> float:
    """log(u), -inf at u = 0 (``random()`` and ``standard_exponential()`` can return exactly 0;
    ``math.log`` would raise)."""
    return math.log(u) if u > 0.0 else -math.inf


def gumbel_noise(size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` independent Gumbel(0, 1) draws eps = -log E, E ~ Exp(1) (000, footnote 1)."""
    return np.array([-log_or_minus_inf(e) for e in rng.standard_exponential(size)])


def trunc_gumbel_from_exponential(phi: float, b: float, e: float) -> float:
    """TruncGumbel(phi, b) by inversion, given E ~ Exp(1) (001, footnote 1).

    The CDF exp(-exp(-(g - phi))) / exp(-exp(-(b - phi))) = exp(-E) inverts to
    G = phi - log(E + exp(phi - b)). Evaluated as a log-add-exp that keeps the larger term
    outside the log1p, so both tails stay accurate:
    - b << phi (exp(phi - b) dominates): G = b - log1p(E exp(b - phi)), which resolves G to an
      ulp of b instead of overflowing or cancelling;
    - b >> phi (E dominates): G = phi - log E - log1p(exp(phi - b) / E).
    """
    log_e = log_or_minus_inf(e)
    c = phi - b
    if log_e >= c:
        return phi - log_e - math.log1p(_ratio(c, e, log_e))
    return b - math.log1p(_ratio(-c, 1.0 / e if e > 0.0 else math.inf, -log_e))


def _ratio(c: float, e: float, log_e: float) -> float:
    """exp(c) / e <= 1, without the ulp(log e)-sized error of exp(c - log e) when possible."""
    if -700.0 < c < 700.0 and 0.0 < e < math.inf:
        return math.exp(c) / e
    return math.exp(c - log_e)


def gumbel_below(phi: float, upper: float, e: float) -> float:
    """Gumbel(phi) truncated below ``upper``, given E ~ Exp(1): the maximum of a block of mass
    exp(phi) under its parent's maximum ``upper`` (001, Alg. 1); ``upper = +inf`` gives the
    untruncated phi - log E."""
    if upper == math.inf:
        return phi - log_or_minus_inf(e)
    return trunc_gumbel_from_exponential(phi, upper, e)


def poisson_count(rate: float, rng: np.random.Generator) -> int:
    """A Poisson(rate) draw as the number of unit-rate arrivals before ``rate``.

    Exact, and it costs one Exp(1) per arrival plus one, so O(rate), the order of the minibatch
    it sizes. Used instead of ``Generator.poisson`` because Numba's compiled ``poisson`` was
    seen to leave NumPy's stream here (same state and rate: 0 vs 14 at rate 11.24), while
    ``standard_exponential`` matches bit for bit.
    """
    n = 0
    t = rng.standard_exponential()
    while t < rate:
        n += 1
        t += rng.standard_exponential()
    return n
