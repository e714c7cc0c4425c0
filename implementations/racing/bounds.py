"""Uncertainty bounds for racing with a finite reward population.

Read against 000_26bed7cc1ef3ab92.txt:
- Sec. 3.3 / Alg. 1: the doubling schedule T^(t) = m1 2^(t-1) capped at N,
  t* = ceil(log2(N / m1)) + 1;
- Eq. 6: the empirical Bernstein-Serfling bound B_EBS (``ebs_bound``);
- Eq. 5, Corollary 4 / Eq. 8, Remark 5, Eq. 9: the constant B_Normal solving E(B) = delta
  (``b_normal``), computed by deterministic quadrature rather than by Monte Carlo.

The paper's lookup table (Appx. B) was not available; ``b_normal`` reproduces the Monte Carlo
sanity table of notes-racing-appendix.md, section A, to its two decimals.
"""

from __future__ import annotations

import functools
import math
import numbers
from collections.abc import Iterable

import numpy as np
from scipy.optimize import brentq
from scipy.special import ndtr, roots_legendre
from scipy.stats import norm

KAPPA = 7.0 / 3.0 + 3.0 / math.sqrt(2.0)
"""kappa of Eq. 6 (000_26bed7cc1ef3ab92.txt), evaluated exactly as written here."""

# Lower end of the quadrature grid for the standardized walk: mass below it is ~1e-33.
_Z_LOW = -12.0
# Gauss-Legendre nodes per unit of z. The kernels have width >= 1/sqrt(2) (see _look_ratios),
# and 3 nodes per unit already agree with 32 to ~1e-14 relative; 6 leaves a margin.
_NODES_PER_UNIT = 6.0
_MIN_NODES = 64
# Below this delta, phi(B) nears the double underflow range; there the union bound over looks is
# exact to double precision (pairwise overlaps are ~sf(0.41 B) relative), so use it instead.
_BONFERRONI_BELOW = 1e-250
_XTOL = 1e-10
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def _as_int(name: str, value: object, low: int, high: int | None = None, rng: str = "") -> int:
    """``value`` as an int in [low, high], else ValueError naming the parameter and range."""
    valid = rng or (f">= {low}" if high is None else f"in [{low}, {high}]")
    # bool is an Integral subclass, but True as a size is a bug, not a 1.
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer {valid}; got {value!r}")
    out = int(value)
    if out < low or (high is not None and out > high):
        raise ValueError(f"{name} must be an integer {valid}; got {value!r}")
    return out


def _as_delta(delta: object) -> float:
    if isinstance(delta, bool | np.bool_) or not isinstance(delta, numbers.Real):
        raise ValueError(f"delta must be a real number in (0, 1); got {delta!r}")
    out = float(delta)
    if not 0.0 < out < 1.0:  # also rejects nan
        raise ValueError(f"delta must be a real number in (0, 1); got {delta!r}")
    return out


def doubling_schedule(N: int, m1: int) -> np.ndarray:
    """Cumulative sample sizes T^(t) = min(m1 2^(t-1), N), t = 1..t* (000, Sec. 3.3, Alg. 1).

    t* = ceil(log2(N / m1)) + 1 and the last entry is N; for m1 >= N the schedule is [N].
    Built by integer doubling, so no float log2 rounding can add or drop a stage.
    """
    N = _as_int("N", N, 1)
    m1 = _as_int("m1", m1, 1)
    out = []
    T = m1
    while T < N:
        out.append(T)
        T *= 2
    out.append(N)
    return np.asarray(out, dtype=np.int64)


def _look_ratios(N: int, m1: int) -> np.ndarray:
    """corr(Z_{t-1}, Z_t) = sqrt(V_t / V_{t-1}) for the looks t = 2..t*-1.

    V_t = (1/T_t)(1 - (T_t - 1)/(N - 1)) is the variance of the mean of T_t unit-variance draws
    without replacement (000, Remark 5), and Cov(mean_s, mean_t) = V_t for s < t (Eq. 8), so the
    standardized means Z_t form a Gaussian AR(1) chain. Every look before t* doubles T, hence
    V_t / V_{t-1} < 1/2 and each transition has conditional sd sqrt(1 - r^2) > 1/sqrt(2).
    """
    T = doubling_schedule(N, m1)[:-1].astype(np.float64)
    V = (1.0 / T) * (1.0 - (T - 1.0) / (N - 1.0))
    return np.sqrt(V[1:] / V[:-1])


@functools.lru_cache(maxsize=64)
def _gauss_legendre(n: int) -> tuple[np.ndarray, np.ndarray]:
    # scipy's banded eigensolver: numpy's leggauss (dense eigvalsh) is slow and erratic at n ~ 400.
    x, w = roots_legendre(n)
    x.flags.writeable = False
    w.flags.writeable = False
    return x, w


def _crossing_probability(
    B: float, ratios: np.ndarray, nodes_per_unit: float = _NODES_PER_UNIT
) -> float:
    """E(B) = P(exists t < t*: Z_t > B) for the Gaussian walk (000, Eq. 5 with Eq. 8-9).

    Summed as P(Z_1 > B) + sum_t P(Z_t > B, Z_s <= B for s < t): the sub-density of "not yet
    crossed" is carried on Gauss-Legendre nodes on [-12, B], and each first-crossing term is the
    integral of that sub-density against the transition's upper tail. Every term is a sum of
    positive parts, so tiny E(B) keeps its relative accuracy (no 1 - P(never crossed)).
    """
    # Rounded up to a multiple of 16 so that nearby B reuse the cached nodes.
    n = max(_MIN_NODES, 16 * math.ceil((B - _Z_LOW) * nodes_per_unit / 16))
    x, w = _gauss_legendre(n)
    half = 0.5 * (B - _Z_LOW)
    z = _Z_LOW + half * (x + 1.0)
    w = half * w
    density = _INV_SQRT_2PI * np.exp(-0.5 * z * z)  # Z_1 ~ N(0, 1), restricted to z <= B
    total = float(ndtr(-B))
    for k, r in enumerate(ratios):
        s = math.sqrt(1.0 - r * r)
        fw = density * w
        # Z_t | Z_{t-1} = y ~ N(r y, s^2): first crossing from y has probability sf((B - r y)/s).
        total += float(fw @ ndtr((r * z - B) / s))
        if k + 1 < len(ratios):
            u = (z[:, None] - r * z[None, :]) / s
            density = (np.exp(-0.5 * u * u) * (_INV_SQRT_2PI / s)) @ fw
    return total


def _solve_b_normal(delta: float, N: int, m1: int) -> float:
    """B_Normal(delta) for validated arguments; see ``b_normal``."""
    ratios = _look_ratios(N, m1)
    looks = len(doubling_schedule(N, m1)) - 1
    if looks == 0:
        return 0.0
    lo = float(norm.isf(delta))
    if looks == 1:
        return lo
    log_delta = math.log(delta)
    log_looks = math.log(looks)
    if delta < _BONFERRONI_BELOW:
        hi = math.sqrt(2.0 * (log_looks - log_delta))  # logsf(hi) < -hi^2/2 <= log(delta/looks)
        return float(brentq(lambda b: norm.logsf(b) + log_looks - log_delta, lo, hi, xtol=_XTOL))

    # One look alone gives E >= delta at lo; the union bound gives E <= delta at hi.
    hi = float(norm.isf(delta / looks))

    def excess(b: float) -> float:
        return math.log(_crossing_probability(b, ratios)) - log_delta

    f_lo, f_hi = excess(lo), excess(hi)
    # Either end can touch the root within rounding (hi does as delta -> 0).
    if f_lo <= 0.0:
        return lo
    if f_hi >= 0.0:
        return hi
    return float(brentq(excess, lo, hi, xtol=_XTOL))


_b_normal_cached = functools.lru_cache(maxsize=1024)(_solve_b_normal)


def b_normal(delta: float, N: int, m1: int) -> float:
    """B_Normal(delta): the root of E(B) = delta (000_26bed7cc1ef3ab92.txt, Eq. 5, 8, 9).

    With the doubling schedule and V_t of Remark 5, Z_t = mu~_t / sqrt(V_t), t < t*, is a
    Gaussian walk (Corollary 4 / Eq. 8) and E(B) = P(exists t < t*: Z_t > B). E is computed by
    quadrature (``_crossing_probability``) and inverted with brentq to |dB| ~ 1e-10.

    t* == 1 (m1 == N) has no look before T = N, where G_Normal of Eq. 9 is 0 through its factor
    (1 - (T-1)/(N-1)); B is then defined as 0.0. One look (t* == 2) gives norm.isf(delta).

    Results are cached per (delta, N, m1) after validation; ``b_normal.cache_clear()`` empties
    the cache. Raises ValueError unless 0 < delta < 1, N is an integer >= 2 and m1 is an
    integer with 1 <= m1 <= N (bool is rejected).
    """
    delta = _as_delta(delta)
    N = _as_int("N", N, 2)
    m1 = _as_int("m1", m1, 1, N, rng=f"with 1 <= m1 <= N (N = {N})")
    return _b_normal_cached(delta, N, m1)


b_normal.cache_clear = _b_normal_cached.cache_clear  # type: ignore[attr-defined]
b_normal.cache_info = _b_normal_cached.cache_info  # type: ignore[attr-defined]


def b_normal_table(
    deltas: Iterable[float], settings: Iterable[tuple[int, int]]
) -> list[dict[str, float | int]]:
    """Rows {N, m1, looks, delta, B} of B_Normal for each (N, m1) in ``settings`` and delta.

    looks = t* - 1 is the number of stages at which Eq. 5 can fail (000, Eq. 5, 9).
    """
    deltas = list(deltas)
    rows: list[dict[str, float | int]] = []
    for N, m1 in settings:
        looks = len(doubling_schedule(N, m1)) - 1
        for delta in deltas:
            B = b_normal(delta, N, m1)
            rows.append({"N": int(N), "m1": int(m1), "looks": looks, "delta": delta, "B": B})
    return rows


def ebs_bound(delta: float, n: int, sigma: float, C: float, N: int) -> float:
    """B_EBS(delta, n, sigma, C) of 000_26bed7cc1ef3ab92.txt, Eq. 6 (n >= 1, n <= N).

    No validation: this runs in hot loops. The Numba kernel must copy this operation order
    to agree bit for bit (Python evaluates * and / left to right):
        log_term = math.log(5.0 / delta)
        rho = 1.0 - (n - 1) / N                      if n <= N / 2
              (1.0 - n / N) * (1.0 + 1.0 / n)        otherwise
        return sigma * math.sqrt(2.0 * rho * log_term / n) + KAPPA * C * log_term / n
    with KAPPA = 7.0 / 3.0 + 3.0 / math.sqrt(2.0). Integer n, N below 2^53 convert exactly.
    """
    log_term = math.log(5.0 / delta)
    if n <= N / 2:
        rho = 1.0 - (n - 1) / N
    else:
        rho = (1.0 - n / N) * (1.0 + 1.0 / n)
    return sigma * math.sqrt(2.0 * rho * log_term / n) + KAPPA * C * log_term / n
