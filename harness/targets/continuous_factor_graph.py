"""Continuous pairwise factor graphs on [a, b]^n (003_07f92522b9b1c588.txt, Sec. 3, 4.2, 4.3).

pi(x) ∝ exp(U(x)), U(x) = sum_phi phi(x), x in [a, b]^n. Every factor touches an ordered pair of
distinct variables (u, w) = (x[scopes[f, 0]], x[scopes[f, 1]]); ``types[f]`` says which formula
its four parameters ``coefs[f] = (c0, c1, c2, c3)`` feed (:func:`factor_value`, the one scalar
function both the Python reference and, compiled, the Numba kernels call):

* ``BILINEAR`` (0, the default): c0 + c1 u + c2 w + c3 u w (003 Sec. 4.2's continuous spin
  model, beta A_ij (x_i x_j + 1));
* ``MIXTURE`` (1): the tempered log-likelihood of one datum y of 003 Sec. 4.3's two-component
  mixture with tied means, coefs = (y, q, tau, g0):
  tau (log(exp(-q (y - u)^2) + exp(-q (y - u - w)^2)) - g0), q = 1 / (2 sigma_y^2);
* ``QUADRATIC`` (2): c0 + c1 u^2 + c2 w^2 + c3 u w (Gaussian priors folded into one factor).

The bound check is exact for bilinear factors (a bilinear function on a rectangle takes its
extremes at the four corners, so 0 <= phi <= M_phi is verified there); for the other types it is
checked on a grid of the domain (their constructors derive the bounds analytically). The
adjacency (CSR), ``L``, ``psi``, ``delta`` and the alias tables over M_phi are built exactly as
in :mod:`harness.targets.factor_graph`, so the Poisson counts of Statement 1 are drawn the same
way as on discrete graphs.

Ground truth for tiny graphs (n <= 3): :meth:`bin_probabilities` integrates the joint over a grid
of boxes by tensor Gauss-Legendre quadrature, and :meth:`exact_draws` draws from the joint by
rejection against the bound exp(psi).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from harness.targets.factor_graph import (
    BETA,
    SIDE,
    PairwiseIndex,
    build_adjacency,
    check_n_vars,
    checked_scopes,
    readonly,
)

#: Quadrature / rejection ground truth only for tiny graphs.
MAX_QUADRATURE_VARS = 3
MAX_EXACT_PSI = 20.0

BILINEAR = 0
MIXTURE = 1
QUADRATIC = 2
FACTOR_TYPES = {BILINEAR: "bilinear", MIXTURE: "mixture", QUADRATIC: "quadratic"}
#: Points per side of the grid on which non-bilinear factors are checked against [0, M].
CHECK_GRID = 9
#: Factors per chunk of that check (bounds its temporary memory).
_CHECK_CHUNK = 20_000


def bilinear(c0: float, c1: float, c2: float, c3: float, u: float, w: float) -> float:
    """phi(u, w) in the one fixed evaluation order the samplers (Python and Numba) also use."""
    return c0 + c1 * u + c2 * w + c3 * u * w


def factor_value(t: int, c0: float, c1: float, c2: float, c3: float, u: float, w: float) -> float:
    """phi(u, w) of a factor of type t (see the module docstring), scalar floats only.

    Pure ``math`` code in one fixed order, so ``numba.njit`` compiles this very function for the
    kernels and both implementations return the same bits.
    """
    if t == 1:
        d1 = c0 - u
        d2 = d1 - w
        e1 = -c1 * (d1 * d1)
        e2 = -c1 * (d2 * d2)
        hi = max(e1, e2)
        lo = min(e1, e2)
        return c2 * ((hi - c3) + math.log1p(math.exp(lo - hi)))
    if t == 2:
        return c0 + c1 * u * u + c2 * w * w + c3 * u * w
    return c0 + c1 * u + c2 * w + c3 * u * w


def factor_values(types: np.ndarray, coefs: np.ndarray, u: np.ndarray, w: np.ndarray):
    """Vectorised :func:`factor_value` (for quadrature and checks; not the samplers' bits).

    ``u`` and ``w`` broadcast against the factor axis, the last one."""
    c0, c1, c2, c3 = (coefs[:, j] for j in range(4))
    out = c0 + c1 * u + c2 * w + c3 * u * w
    quad = types == QUADRATIC
    if quad.any():
        out = np.where(quad, c0 + c1 * u * u + c2 * w * w + c3 * u * w, out)
    mix = types == MIXTURE
    if mix.any():
        d1 = c0 - u
        d2 = d1 - w
        e1 = -c1 * (d1 * d1)
        e2 = -c1 * (d2 * d2)
        hi = np.maximum(e1, e2)
        val = c2 * ((hi - c3) + np.log1p(np.exp(np.minimum(e1, e2) - hi)))
        out = np.where(mix, val, out)
    return out


@dataclass(frozen=True, eq=False)
class ContinuousFactorGraphTarget(PairwiseIndex):
    """pi(x) ∝ exp(sum_f phi_f(x[scopes[f, 0]], x[scopes[f, 1]])) over [a, b]^n_vars."""

    n_vars: int
    a: float
    b: float
    scopes: np.ndarray
    coefs: np.ndarray
    M: np.ndarray
    name: str = "continuous-factor-graph"
    meta: dict = field(default_factory=dict)
    types: np.ndarray | None = None
    kind: ClassVar[str] = "factor-graph-continuous"

    def __post_init__(self) -> None:
        n = check_n_vars(self.n_vars)
        a, b = self.a, self.b
        for label, v in (("a", a), ("b", b)):
            if isinstance(v, bool) or not isinstance(v, int | float | np.number):
                raise ValueError(f"{label} = {v!r}; valid: a finite number")
            if not math.isfinite(float(v)):
                raise ValueError(f"{label} = {v!r}; valid: a finite number")
        if not float(a) < float(b):
            raise ValueError(f"domain [a, b] = [{a!r}, {b!r}]; valid: a < b")
        scopes = checked_scopes(self.scopes, n)
        coefs = np.array(self.coefs, dtype=np.float64, order="C")
        M = np.array(self.M, dtype=np.float64, order="C")
        nf = scopes.shape[0]
        if coefs.shape != (nf, 4):
            raise ValueError(f"coefs has shape {coefs.shape}; valid: {(nf, 4)} (c0, c1, c2, c3)")
        if M.shape != (nf,):
            raise ValueError(f"M has shape {M.shape}; valid: ({nf},), one bound per factor")
        if self.types is None:
            types = np.zeros(nf, dtype=np.int64)
        else:
            types = np.array(self.types, dtype=np.int64, order="C")
            if types.shape != (nf,):
                raise ValueError(f"types has shape {types.shape}; valid: ({nf},)")
            bad = ~np.isin(types, list(FACTOR_TYPES))
            if bad.any():
                f = int(np.argmax(bad))
                raise ValueError(
                    f"types[{f}] = {int(types[f])}; valid: {FACTOR_TYPES} (code: name)"
                )
        object.__setattr__(self, "n_vars", n)
        object.__setattr__(self, "a", float(a))
        object.__setattr__(self, "b", float(b))
        self._check_bounds(coefs, M, types)
        for name, arr in (("scopes", scopes), ("coefs", coefs), ("M", M), ("types", types)):
            object.__setattr__(self, name, readonly(arr))
        build_adjacency(self)

    def _check_bounds(self, coefs: np.ndarray, M: np.ndarray, types: np.ndarray) -> None:
        ok = np.isfinite(M) & (M > 0.0) & np.isfinite(coefs).all(axis=1)
        if not ok.all():
            f = int(np.argmin(ok))
            raise ValueError(
                f"factor {f}: M = {float(M[f])!r}, coefs = {coefs[f].tolist()}; "
                "valid: finite, M > 0"
            )
        corners = [(u, w) for u in (self.a, self.b) for w in (self.a, self.b)]
        for f in np.flatnonzero(types == BILINEAR).tolist():
            c, m = coefs[f].tolist(), float(M[f])
            vals = [bilinear(*c, u, w) for u, w in corners]
            if min(vals) < 0.0 or max(vals) > m:
                raise ValueError(
                    f"factor {f} ranges over [{min(vals)!r}, {max(vals)!r}] on the domain; "
                    f"valid: within [0, M[{f}]] = [0, {m!r}]"
                )
        other = np.flatnonzero(types != BILINEAR)
        if other.size == 0:
            return
        # A grid check, not a proof: constructors of these types derive M analytically.
        g = np.linspace(self.a, self.b, CHECK_GRID)
        u, w = (v.reshape(-1, 1) for v in np.meshgrid(g, g, indexing="ij"))
        for lo in range(0, other.size, _CHECK_CHUNK):
            fs = other[lo : lo + _CHECK_CHUNK]
            vals = factor_values(types[fs], coefs[fs], u, w)
            low, high = vals.min(axis=0), vals.max(axis=0)
            bad = (low < 0.0) | (high > M[fs])
            if bad.any():
                j = int(np.argmax(bad))
                f = int(fs[j])
                raise ValueError(
                    f"factor {f} ({FACTOR_TYPES[int(types[f])]}) ranges over "
                    f"[{float(low[j])!r}, {float(high[j])!r}] on a {CHECK_GRID}x{CHECK_GRID} "
                    f"grid of the domain; valid: within [0, M[{f}]] = [0, {float(M[f])!r}]"
                )

    @property
    def n_factors(self) -> int:
        return int(self.scopes.shape[0])

    def log_unnormalised(self, x: np.ndarray) -> np.ndarray:
        """U(x) for x of shape (..., n_vars) (vectorised, for quadrature and tests)."""
        x = np.asarray(x, dtype=np.float64)
        u = x[..., self.scopes[:, 0]]
        w = x[..., self.scopes[:, 1]]
        return np.sum(factor_values(self.types, self.coefs, u, w), axis=-1)

    def _check_tiny(self) -> None:
        if self.n_vars > MAX_QUADRATURE_VARS:
            raise ValueError(
                f"n_vars = {self.n_vars}; valid for quadrature ground truth: <= "
                f"{MAX_QUADRATURE_VARS}"
            )

    def bin_probabilities(self, n_bins: int = 4, n_points: int = 12) -> np.ndarray:
        """pi of each box of an n_bins^n grid over [a, b]^n (shape (n_bins,) * n), by tensor
        Gauss-Legendre with n_points nodes per box side. With bilinear factors the log-density
        is a polynomial of degree <= 2 per variable times exp, so a dozen nodes per box is exact
        to ~1e-14; other factor types need their own error check."""
        self._check_tiny()
        t, wt = np.polynomial.legendre.leggauss(n_points)
        edges = np.linspace(self.a, self.b, n_bins + 1)
        h = np.diff(edges)
        pts = (edges[:-1, None] + 0.5 * h[:, None] * (t[None, :] + 1.0)).ravel()
        w1 = (0.5 * h[:, None] * wt[None, :]).ravel()
        n = self.n_vars
        grids = np.meshgrid(*([pts] * n), indexing="ij")
        lu = self.log_unnormalised(np.stack(grids, axis=-1))
        weights = np.ones_like(lu)
        for d in range(n):
            shape = [1] * n
            shape[d] = -1
            weights = weights * w1.reshape(shape)
        mass = weights * np.exp(lu - lu.max())
        mass = mass.reshape((n_bins, n_points) * n)
        mass = mass.sum(axis=tuple(range(1, 2 * n, 2)))
        return mass / mass.sum()

    def exact_draws(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """n independent draws from pi: uniform proposals on the box, accepted with
        probability exp(U(x) - psi) (U <= psi). Expected cost exp(psi) / E[exp(U - psi)]."""
        self._check_tiny()
        if self.psi > MAX_EXACT_PSI:
            raise ValueError(f"psi = {self.psi!r}; valid for exact draws: <= {MAX_EXACT_PSI}")
        out = np.empty((0, self.n_vars))
        while out.shape[0] < n:
            x = self.a + (self.b - self.a) * rng.random((4 * n, self.n_vars))
            keep = rng.random(4 * n) < np.exp(self.log_unnormalised(x) - self.psi)
            out = np.concatenate([out, x[keep]])
        return out[:n]


def continuous_spin_target(
    A: np.ndarray, beta: float = 1.0, name: str = "continuous-spin"
) -> ContinuousFactorGraphTarget:
    """003, Sec. 4.2: U(x) = sum_{i<j} beta A_ij (x_i x_j + 1) on [0, 1]^n, one factor per pair
    with A_ij > 0; phi lies in [beta A_ij, 2 beta A_ij], so M_ij = 2 beta A_ij."""
    A = np.asarray(A, dtype=np.float64)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"A has shape {A.shape}; valid: a square interaction matrix")
    if not np.array_equal(A, A.T) or np.any(A < 0) or not np.isfinite(A).all():
        raise ValueError("A must be symmetric, finite and >= 0 (interaction strengths A_ij)")
    BETA.check(beta)
    i, j = np.nonzero(np.triu(A, k=1))
    w = beta * A[i, j]
    coefs = np.stack([w, np.zeros_like(w), np.zeros_like(w), w], axis=1)
    return ContinuousFactorGraphTarget(
        int(A.shape[0]), 0.0, 1.0, np.stack([i, j], axis=1), coefs, 2.0 * w, name=name,
        meta={"beta": beta},
    )  # fmt: skip


def continuous_spin_grid(side: int, beta: float = 1.0, scale: float = 0.4):
    """A side x side grid, fully connected, A_ij = exp(-scale ||p_i - p_j||^2). 003 does not
    state A; scale 0.4 on 20x20 reproduces its L = 13.71 (notes-minibatch-gibbs.md, Sec. 10)."""
    side = SIDE.check(side)
    p = np.indices((side, side)).reshape(2, -1).T.astype(np.float64)
    A = np.exp(-scale * ((p[:, None, :] - p[None, :, :]) ** 2).sum(axis=-1))
    np.fill_diagonal(A, 0.0)
    return continuous_spin_target(A, beta, name=f"continuous-spin-{side}x{side}-beta{beta:g}")


def tiny_continuous_graph(
    strength: float = 2.0, a: float = 0.0, b: float = 1.0
) -> ContinuousFactorGraphTarget:
    """A 3-variable triangle for quadrature tests, with factors that are not symmetric in
    (u, w) and couple with both signs, so conditionals are skewed and differ per variable."""
    s = strength
    scopes = [(0, 1), (1, 2), (0, 2)]
    # Each row: c0 + c1 u + c2 w + c3 u w, shifted per domain below to be >= 0.
    raw = [(0.0, 0.5 * s, 0.0, s), (0.0, 0.0, 0.3 * s, -s), (0.0, -0.4 * s, 0.2 * s, 0.8 * s)]
    coefs, M = [], []
    corners = [(u, w) for u in (a, b) for w in (a, b)]
    for c in raw:
        c0 = c[0] - min(bilinear(*c, u, w) for u, w in corners)
        # Re-evaluate after the shift: rounding may leave a corner a few ulps below 0.
        lo = min(bilinear(c0, *c[1:], u, w) for u, w in corners)
        c0 -= min(lo, 0.0)
        coefs.append((c0, c[1], c[2], c[3]))
        M.append(max(bilinear(c0, *c[1:], u, w) for u, w in corners))
    return ContinuousFactorGraphTarget(3, a, b, scopes, coefs, M, name=f"tiny-continuous-{s:g}")
