"""Truncated Gaussian mixture with tied means (003_07f92522b9b1c588.txt, Sec. 4.3, Fig. 3).

003 Sec. 4.3 (after Welling and Teh): x1 ~ N(0, 10), x2 ~ N(0, 1), y_i ~ 1/2 N(x1, 2) + 1/2
N(x1 + x2, 2), data drawn at (x1, x2) = (0, 1), posterior truncated to [-6, 6]^2, N = 1e6,
"L = 1581.14 for this model". As a continuous factor graph on the pair (x1, x2): one MIXTURE
factor per datum and one QUADRATIC factor holding both priors, each shifted by its infimum over
the box so that 0 <= phi <= M_phi (see :mod:`harness.targets.continuous_factor_graph`).

**Tempering (our choice; 003 does not say how L = 1581.14 arises).** Untempered, the data
factors' ranges sum to about 1.4e7 at N = 1e6, four orders of magnitude above 003's L
(notes-minibatch-gibbs.md, "Truncated GMM": not found). We temper every likelihood factor by one
constant tau, pi(x) ∝ p(x) prod_i p(y_i | x)^tau (a power posterior; the prior is not tempered),
with tau chosen so that L = M_prior + tau sum_i R_i equals the requested L (1581.14) exactly up to
rounding, R_i = sup - inf over the box of log p(y_i | x). tau N = N_eff is the number of untempered
data points the posterior is worth (about 110, whatever N); both are in ``target.meta``.

Bounds, per datum, in g(u, w) = log(exp(-q (y - u)^2) + exp(-q (y - u - w)^2)), q = 1/(2 sigma_y^2),
u = x1, w = x2 (log p(y | x) up to a constant):

* sup: each exponent is largest when its mean (u, resp. u + w) is nearest y, the first over
  [a, b], the second over [2a, 2b]; the log-sum of those two maxima is an upper bound, attained on
  [-6, 6]^2 (u = clip(y), w = clip(y - u)).
* inf: g has no interior local minimum (its gradient vanishes only at u = u + w = y, the maximum).
  On an edge x1 = const only the second mean moves, so the minimum is at a corner. On an edge
  x2 = w0 both means move together: g is then a symmetric two-bump mixture in u with centres y and
  y - w0, whose only interior critical points are the bumps and their midpoint y - w0/2. So the inf
  is the least of g at the four corners and at the two midpoints (when inside the box); the tests
  check this against a dense grid. (On [-6, 6]^2 with sigma_y^2 = 2 a corner wins for every y in
  [-30, 30]; the midpoints matter for other boxes.)

Rounding: the inf is lowered and the sup raised by ``MARGIN`` so that no rounded phi leaves
[0, M_phi] (a looser bound keeps Poisson-Gibbs exact; it changes L by ~1e-6 at N = 1e6).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from harness.spec import Param, finite_number
from harness.targets.continuous_factor_graph import (
    MIXTURE,
    QUADRATIC,
    ContinuousFactorGraphTarget,
    factor_value,
)

SIGMA1_SQ = 10.0
SIGMA2_SQ = 1.0
SIGMA_Y_SQ = 2.0
TRUE_X = (0.0, 1.0)
BOX = (-6.0, 6.0)
#: 003 Sec. 4.3: "L = 1581.14 for this model".
PAPER_L = 1581.14
PAPER_N = 1_000_000
MARGIN = 1e-9


def mixture_data(n: int, rng: np.random.Generator, x: tuple[float, float] = TRUE_X) -> np.ndarray:
    """n data y_i ~ 1/2 N(x1, sigma_y^2) + 1/2 N(x1 + x2, sigma_y^2) (003 Sec. 4.3)."""
    n = Param("n", 1, int, low=1, doc="number of data").check(n)
    second = rng.random(n) < 0.5
    mean = np.where(second, x[0] + x[1], x[0])
    return mean + math.sqrt(SIGMA_Y_SQ) * rng.standard_normal(n)


def _g(y: np.ndarray, q: float, u: np.ndarray, w: np.ndarray) -> np.ndarray:
    return np.logaddexp(-q * (y - u) ** 2, -q * (y - u - w) ** 2)


def loglik_range(y: np.ndarray, q: float, a: float, b: float) -> tuple[np.ndarray, np.ndarray]:
    """(inf, sup) over [a, b]^2 of g(u, w) for each datum (module docstring), unpadded."""
    y = np.asarray(y, dtype=np.float64)
    d1 = y - np.clip(y, a, b)
    d2 = y - np.clip(y, 2 * a, 2 * b)
    sup = np.logaddexp(-q * d1 * d1, -q * d2 * d2)
    cands = [_g(y, q, u, w) for u in (a, b) for w in (a, b)]
    for w0 in (a, b):
        um = y - 0.5 * w0
        inside = (um >= a) & (um <= b)
        cands.append(np.where(inside, _g(y, q, np.clip(um, a, b), w0), np.inf))
    return np.min(cands, axis=0), sup


def gaussian_mixture_target(
    y: np.ndarray,
    L: float = PAPER_L,
    a: float = BOX[0],
    b: float = BOX[1],
    name: str | None = None,
) -> ContinuousFactorGraphTarget:
    """The (tempered) truncated mixture posterior on [a, b]^2 with data ``y`` and local maximum
    energy ``L`` (module docstring); ``target.meta`` holds tau, N_eff = tau N and the untempered
    range sum."""
    y = np.asarray(y, dtype=np.float64)
    if y.ndim != 1 or y.size == 0:
        raise ValueError(f"y has shape {y.shape}; valid: a non-empty 1-D array of data")
    if not np.isfinite(y).all():
        raise ValueError("y holds a non-finite value; valid: finite data")
    for label, v in (("a", a), ("b", b), ("L", L)):
        finite_number(label).check(v)
    if not a < b:
        raise ValueError(f"domain [a, b] = [{a!r}, {b!r}]; valid: a < b")
    # Folded prior -x1^2 / (2 s1) - x2^2 / (2 s2), shifted by its inf (a corner) to be >= 0.
    c1, c2 = -0.5 / SIGMA1_SQ, -0.5 / SIGMA2_SQ
    far = max(a * a, b * b)
    near = 0.0 if a <= 0.0 <= b else min(a * a, b * b)
    c0 = -(c1 * far + c2 * far) + MARGIN
    m_prior = c0 + c1 * near + c2 * near + MARGIN
    if not L > m_prior:
        raise ValueError(f"L = {L!r}; valid: a number > M_prior = {m_prior!r} (the prior's range)")
    q = 0.5 / SIGMA_Y_SQ
    g_inf, g_sup = loglik_range(y, q, float(a), float(b))
    g0 = g_inf - MARGIN
    R = (g_sup + MARGIN) - g0
    range_sum = math.fsum(R.tolist())
    tau = (L - m_prior) / range_sum
    n = y.size
    coefs = np.empty((n + 1, 4))
    coefs[:n, 0] = y
    coefs[:n, 1] = q
    coefs[:n, 2] = tau
    coefs[:n, 3] = g0
    coefs[n] = (c0, c1, c2, 0.0)
    M = np.append(tau * R, m_prior)
    types = np.full(n + 1, MIXTURE, dtype=np.int64)
    types[n] = QUADRATIC
    scopes = np.zeros((n + 1, 2), dtype=np.int64)
    scopes[:, 1] = 1
    meta = {
        "tau": tau,
        "n_data": int(n),
        "n_eff": tau * n,
        "m_prior": m_prior,
        "untempered_L": m_prior + range_sum,
        "requested_L": float(L),
    }
    return ContinuousFactorGraphTarget(
        2, float(a), float(b), scopes, coefs, M, name=name or f"gaussian-mixture-N{n}",
        meta=meta, types=types,
    )  # fmt: skip


_factor = njit(cache=True)(factor_value)


@njit(cache=True)
def _energy_at(types, coefs, u, w, out):
    for p in range(u.size):
        acc = 0.0
        for f in range(types.size):
            acc += _factor(types[f], coefs[f, 0], coefs[f, 1], coefs[f, 2], coefs[f, 3], u[p], w[p])
        out[p] = acc


def energy(target: ContinuousFactorGraphTarget, x1: np.ndarray, x2: np.ndarray) -> np.ndarray:
    """U(x1, x2) = sum of all factors at each point (compiled; every factor is on (x1, x2))."""
    if target.n_vars != 2 or np.any(target.scopes != np.array([0, 1])):
        raise ValueError("energy() needs a target whose factors all sit on (x1, x2) = (0, 1)")
    u = np.ascontiguousarray(x1, dtype=np.float64).ravel()
    w = np.ascontiguousarray(x2, dtype=np.float64).ravel()
    if u.shape != w.shape:
        raise ValueError(f"x1 and x2 have {u.size} and {w.size} points; valid: the same number")
    out = np.empty(u.size)
    _energy_at(target.types, target.coefs, u, w, out)
    return out.reshape(np.shape(x1))


def posterior_bins(
    target: ContinuousFactorGraphTarget, n_bins: int, n_points: int
) -> tuple[np.ndarray, float, tuple[float, float]]:
    """pi of each of n_bins x n_bins equal boxes of the domain, by tensor Gauss-Legendre with
    n_points nodes per box side; also max U over the nodes and the node where it is reached."""
    n_bins = Param("n_bins", 1, int, low=1).check(n_bins)
    n_points = Param("n_points", 1, int, low=1).check(n_points)
    t, wt = np.polynomial.legendre.leggauss(n_points)
    edges = np.linspace(target.a, target.b, n_bins + 1)
    h = np.diff(edges)
    pts = (edges[:-1, None] + 0.5 * h[:, None] * (t[None, :] + 1.0)).ravel()
    w1 = (0.5 * h[:, None] * wt[None, :]).ravel()
    X1, X2 = np.meshgrid(pts, pts, indexing="ij")
    U = energy(target, X1, X2)
    top = float(U.max())
    where = np.unravel_index(int(np.argmax(U)), U.shape)
    mass = np.exp(U - top) * w1[:, None] * w1[None, :]
    mass = mass.reshape(n_bins, n_points, n_bins, n_points).sum(axis=(1, 3))
    return mass / mass.sum(), top, (float(X1[where]), float(X2[where]))
