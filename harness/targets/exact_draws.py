"""Independent draws from the law of a target, to start Markov chains in it (the exact-start
invariance gate, harness/gates/exact_start.py), with the expectations such chains must keep.

Each target kind gets an :class:`ExactLaw`: ``draw(n, rng)`` returns n independent states,
``statistics(states)`` the test statistics of each state, ``truth`` their expectations under
the target, and ``error`` how far the truths or the draws' law may be off (stated so that a gate
can show it is far below what it resolves):

- ``factor-graph`` with an enumerated joint (D^n <= :data:`ENUMERABLE`): states drawn from the
  pmf by inversion; statistics the indicators 1[x_i = v] (v < D - 1) and U(x); exact truths;
- ``factor-graph-continuous`` with n_vars <= 3 and psi <= MAX_EXACT_PSI: the target's rejection
  draws (exact); truths by tensor Gauss-Legendre quadrature, error = the change from half the
  nodes;
- ``posterior-1d``: inversion of the target's quadrature CDF on a fine grid; truths the target's
  mean and sd (quadrature);
- ``glm-posterior`` with D <= 2: the log posterior at the midpoints of a tensor grid of cells
  over where the mass lies (each marginal between 1e-13 and 1 - 1e-13); a cell drawn with
  probability proportional to its midpoint density, then a uniform point inside it. The
  midpoint rule is spectrally accurate for a smooth density that vanishes at the window's edges
  (its error is estimated from every other midpoint); the draws' law is piecewise constant, so
  each coordinate's variance is too large by h_j^2 / 12 (2.8e-4 of the variance at 256 cells
  over +-7.4 sd), a term stated in ``error``. The log density (a pass over the data per state)
  is left to the end states.

Continuous statistics: every coordinate x_j, its square about the true mean (x_j - m_j)^2, the
Mahalanobis square (x - m)' C^-1 (x - m) (expectation d; the most powerful against a scale
error, which moves every coordinate's variance) and the log density where the target has one.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

#: The largest enumerated joint drawn from (as the factor-graph gates' limit).
ENUMERABLE = 4096
#: Continuous factor graphs: the most variables with quadrature truths.
MAX_CONTINUOUS_VARS = 3
#: GLM posteriors: the largest D, and grid cells per axis (D = 1, D = 2).
MAX_GRID_D = 2
GRID_CELLS = {1: 8192, 2: 256}
#: Marginal tail mass left outside the grid window on each side.
TAIL = 1e-13
#: 1-D posteriors: points of the inverse-CDF grid.
INVERSE_CDF_POINTS = 2**16 + 1
#: Gauss-Legendre nodes per axis for the continuous factor graphs' truths.
LEGENDRE_NODES = 40


@dataclass(frozen=True)
class ExactLaw:
    """Independent draws from a target and the expectations of statistics of its states.

    ``draw(n, rng)``: n states, shape (n, *state); ``statistics(states)``: shape (n, s), one
    column per name in ``names``; ``truth``: E_pi of each column; ``scale``: its sd under pi;
    ``error``: per column, |E_draws - E_pi| (exact, or its leading term) plus the truth's own
    numerical error (estimated from a coarser rule); ``headline``: the column whose detectable
    effect a gate reports, with ``headline_measure`` saying in what unit; ``method``: how the
    draws are made; ``log_density``: log pi up to a constant for rows of states, where the
    target has it (for a test of the end states' log density against fresh draws').
    """

    draw: Callable[[int, np.random.Generator], np.ndarray]
    statistics: Callable[[np.ndarray], np.ndarray]
    names: tuple[str, ...]
    truth: np.ndarray
    scale: np.ndarray
    error: np.ndarray
    headline: int
    headline_measure: str
    method: str
    log_density: Callable[[np.ndarray], np.ndarray] | None = None


def _cached(build: Callable[[Any], ExactLaw]) -> Callable[[Any], ExactLaw]:
    """``build(target)`` once per target object in a process (targets hash by identity; an
    unhashable plugin target is built every time)."""
    cached = functools.lru_cache(maxsize=8)(build)

    def get(target: Any) -> ExactLaw:
        try:
            return cached(target)
        except TypeError:
            return build(target)

    return get


# -- continuous statistics -------------------------------------------------------------------


def _continuous(
    mean: np.ndarray,
    cov: np.ndarray,
    log_density: Callable[[np.ndarray], np.ndarray] | None,
    mean_log_density: float | None,
) -> tuple[Callable[[np.ndarray], np.ndarray], tuple[str, ...], np.ndarray, np.ndarray]:
    """(statistics, names, truth, scale) of the continuous set (module docstring). The scales
    of the squares use the Gaussian value sqrt(2) var (only detectable effects read them)."""
    d = mean.size
    var = np.diag(cov).copy()
    precision = np.linalg.inv(cov) if d > 1 else None
    names = [f"x[{j}]" for j in range(d)] + [f"(x[{j}] - m)^2" for j in range(d)]
    truth = [*mean, *var]
    scale = [*np.sqrt(var), *(math.sqrt(2.0) * var)]
    if precision is not None:
        names.append("Mahalanobis (x - m)' C^-1 (x - m)")
        truth.append(float(d))
        scale.append(math.sqrt(2.0 * d))
    if log_density is not None:
        names.append("log density")
        truth.append(float(mean_log_density))
        scale.append(math.sqrt(d / 2.0))

    def statistics(states: np.ndarray) -> np.ndarray:
        x = np.asarray(states, dtype=np.float64).reshape(len(states), d)
        dev = x - mean
        cols = [x, dev * dev]
        if precision is not None:
            cols.append(np.einsum("ti,ij,tj->t", dev, precision, dev)[:, None])
        if log_density is not None:
            cols.append(np.asarray(log_density(x), dtype=np.float64)[:, None])
        return np.hstack(cols)

    return statistics, tuple(names), np.array(truth), np.array(scale)


#: What the headline statistic of a continuous law measures.
SCALE_MEASURE = "relative error of the chains' second moment about the true mean"


def _headline(d: int) -> int:
    """The Mahalanobis square for d >= 2, else (x - m)^2 (columns x_j, squares, Mahalanobis)."""
    return 2 * d if d > 1 else 1


# -- factor graphs ---------------------------------------------------------------------------


def _factor_graph(target: Any) -> ExactLaw:
    states = np.asarray(target.states())
    pmf = np.asarray(target.pmf, dtype=np.float64)
    cum = np.cumsum(pmf)
    cum /= cum[-1]
    n, D = int(target.n_vars), int(target.D)
    energy = np.asarray(target.log_unnormalised_all, dtype=np.float64)
    shape = (D,) * n

    def draw(count: int, rng: np.random.Generator) -> np.ndarray:
        idx = np.minimum(np.searchsorted(cum, rng.random(count), side="right"), cum.size - 1)
        return states[idx].copy()

    def statistics(x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=np.int64).reshape(len(x), n)
        onehot = [(x[:, i] == v).astype(np.float64) for i in range(n) for v in range(D - 1)]
        # A state off the domain (a broken kernel's) is clipped here; the end states' chi-square
        # counts it as impossible.
        idx = np.ravel_multi_index(tuple(x.T), shape, mode="clip")
        return np.column_stack([*onehot, energy[idx]])

    table = statistics(states)
    truth = pmf @ table
    scale = np.sqrt(np.maximum(pmf @ (table - truth) ** 2, 0.0))
    names = (*(f"1[x[{i}] = {v}]" for i in range(n) for v in range(D - 1)), "U(x)")
    return ExactLaw(
        draw,
        statistics,
        names,
        truth,
        scale,
        np.full(truth.size, 1e-12),
        int(np.argmax(scale[:-1])) if truth.size > 1 else 0,
        "error of a marginal probability P(x_i = v) (the most variable one)",
        f"states drawn from the enumerated joint ({pmf.size} states) by inversion",
    )


def _moment_error(
    mean: np.ndarray, cov: np.ndarray, other_mean: np.ndarray, other_cov: np.ndarray
) -> np.ndarray:
    """How far the x_j, (x_j - m_j)^2 and Mahalanobis truths built from (mean, cov) are from
    their expectations under a law with moments (other_mean, other_cov)."""
    d = mean.size
    dm = other_mean - mean
    err = [*np.abs(dm), *np.abs(np.diag(other_cov) + dm * dm - np.diag(cov))]
    if d > 1:
        precision = np.linalg.inv(cov)
        err.append(abs(float(np.trace(precision @ other_cov) + dm @ precision @ dm) - d))
    return np.array(err)


def _continuous_graph(target: Any) -> ExactLaw:
    """Rejection draws and Gauss-Legendre truths (module docstring)."""
    n, a, b = int(target.n_vars), float(target.a), float(target.b)

    def moments(nodes: int) -> tuple[np.ndarray, np.ndarray, float]:
        t, w = np.polynomial.legendre.leggauss(nodes)
        x1, w1 = a + 0.5 * (b - a) * (t + 1.0), 0.5 * (b - a) * w
        pts = np.stack(np.meshgrid(*([x1] * n), indexing="ij"), axis=-1).reshape(-1, n)
        wts = functools.reduce(np.multiply.outer, [w1] * n).ravel()
        lu = target.log_unnormalised(pts)
        p = wts * np.exp(lu - lu.max())
        p /= p.sum()
        mean = p @ pts
        cov = (pts - mean).T @ ((pts - mean) * p[:, None])
        return mean, cov, float(p @ lu)

    mean, cov, mlu = moments(LEGENDRE_NODES)
    coarse_mean, coarse_cov, coarse_mlu = moments(LEGENDRE_NODES // 2)
    stats_fn, names, truth, scale = _continuous(mean, cov, target.log_unnormalised, mlu)
    error = np.append(_moment_error(mean, cov, coarse_mean, coarse_cov), abs(mlu - coarse_mlu))
    return ExactLaw(
        lambda count, rng: np.asarray(target.exact_draws(count, rng), dtype=np.float64),
        stats_fn,
        names,
        truth,
        scale,
        error + 1e-12,
        _headline(n),
        SCALE_MEASURE,
        "the target's exact rejection draws (uniform proposals on the box, accepted with "
        f"exp(U - psi)); truths by {LEGENDRE_NODES}^{n}-node Gauss-Legendre quadrature",
        target.log_unnormalised,
    )


# -- continuous targets given by a CDF or a log density --------------------------------------


def _quantile(cdf: Callable[[np.ndarray], np.ndarray], p: float, guess: float) -> float:
    """The p-quantile of a continuous CDF, by bracketing out from ``guess`` and bisection."""
    lo, hi, step = guess - 1.0, guess + 1.0, 1.0
    for _ in range(200):
        if float(cdf(np.array([lo]))[0]) < p:
            break
        step *= 2.0
        lo -= step
    step = 1.0
    for _ in range(200):
        if float(cdf(np.array([hi]))[0]) >= p:
            break
        step *= 2.0
        hi += step
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if float(cdf(np.array([mid]))[0]) < p:
            lo = mid
        else:
            hi = mid
    return hi


def _posterior_1d(target: Any) -> ExactLaw:
    """Inversion of target.cdf on a grid over its 1e-13 .. 1 - 1e-13 quantiles: the draws'
    CDF interpolates target.cdf linearly between grid points."""
    mean, sd = float(target.mean), float(target.sd)
    lo, hi = _quantile(target.cdf, TAIL, mean), _quantile(target.cdf, 1.0 - TAIL, mean)
    grid = np.linspace(lo, hi, INVERSE_CDF_POINTS)
    F = np.maximum.accumulate(np.clip(np.asarray(target.cdf(grid), dtype=np.float64), 0, 1))
    F = (F - F[0]) / (F[-1] - F[0])
    keep = np.concatenate([[True], np.diff(F) > 0])  # np.interp needs increasing abscissae
    F, xs = F[keep], grid[keep]
    h = float(grid[1] - grid[0])

    def draw(count: int, rng: np.random.Generator) -> np.ndarray:
        return np.interp(rng.random(count), F, xs)

    # The draws' law is uniform between grid points with the CDF's increments as masses.
    dF, lo_x, hi_x = np.diff(F), xs[:-1], xs[1:]
    law_mean = float(dF @ (0.5 * (lo_x + hi_x)))
    law_var = float(dF @ ((lo_x * lo_x + lo_x * hi_x + hi_x * hi_x) / 3.0)) - law_mean**2
    mean_, cov_ = np.array([mean]), np.array([[sd * sd]])
    stats_fn, names, truth, scale = _continuous(mean_, cov_, None, None)
    error = _moment_error(mean_, cov_, np.array([law_mean]), np.array([[law_var]]))
    error = error + float(getattr(target, "quadrature_error", 0.0)) * np.abs(truth)
    return ExactLaw(
        draw,
        stats_fn,
        names,
        truth,
        scale,
        error + 1e-12,
        _headline(1),
        SCALE_MEASURE,
        f"inversion of the target's CDF on {INVERSE_CDF_POINTS} points (spacing {h:.3g})",
    )


@dataclass(frozen=True)
class Grid:
    """A density on a tensor grid of cells: per axis ``edges``; per cell (C order) its
    ``midpoints`` and normalised midpoint mass ``weight``; ``log_density`` at the midpoints."""

    edges: tuple[np.ndarray, ...]
    midpoints: np.ndarray
    weight: np.ndarray
    log_density: np.ndarray

    @property
    def widths(self) -> np.ndarray:
        return np.array([e[1] - e[0] for e in self.edges])

    def draw(self, count: int, rng: np.random.Generator) -> np.ndarray:
        """A cell by inversion of the cumulative masses, then a uniform point in it."""
        cum = np.cumsum(self.weight)
        cum /= cum[-1]
        idx = np.minimum(np.searchsorted(cum, rng.random(count), side="right"), cum.size - 1)
        cells = np.unravel_index(idx, tuple(e.size - 1 for e in self.edges))
        u = rng.random((count, len(self.edges)))
        return np.column_stack(
            [
                e[c] + (e[1] - e[0]) * u[:, j]
                for j, (e, c) in enumerate(zip(self.edges, cells, strict=True))
            ]
        )

    def expect(self, values: np.ndarray, every: int = 1) -> np.ndarray:
        """Midpoint-rule expectations of ``values`` (one row per cell), on every ``every``-th
        midpoint along each axis (every = 2: the rule of twice the spacing, for its error)."""
        shape = tuple(e.size - 1 for e in self.edges)
        keep = np.zeros(shape, dtype=bool)
        keep[tuple(slice(None, None, every) for _ in shape)] = True
        w = self.weight[keep.ravel()]
        return (w / w.sum()) @ np.asarray(values)[keep.ravel()]


def posterior_grid(target: Any, cells: int | None = None) -> Grid:
    """The log posterior of a D <= 2 target at the midpoints of ``cells``^D cells over each
    marginal's 1e-13 .. 1 - 1e-13 quantiles (found from ``target.marginal_cdf``)."""
    D = int(target.D)
    cells = cells or GRID_CELLS[D]
    edges = []
    for j in range(D):
        cdf = functools.partial(target.marginal_cdf, j)
        guess = _quantile(cdf, 0.5, 0.0)
        edges.append(
            np.linspace(_quantile(cdf, TAIL, guess), _quantile(cdf, 1 - TAIL, guess), cells + 1)
        )
    mids = [0.5 * (e[1:] + e[:-1]) for e in edges]
    pts = np.stack(np.meshgrid(*mids, indexing="ij"), axis=-1).reshape(-1, D)
    lp = np.array([target.log_posterior(p) for p in pts], dtype=np.float64)
    w = np.exp(lp - lp.max())
    return Grid(tuple(edges), pts, w / w.sum(), lp)


def _glm(target: Any) -> ExactLaw:
    grid = posterior_grid(target)
    mean, cov = _grid_moments(grid, 1)

    def log_density(x: np.ndarray) -> np.ndarray:
        return np.array([target.log_posterior(row) for row in np.asarray(x).reshape(len(x), -1)])

    # The log density costs a pass over the data per state: only the end states' KS reads it.
    stats_fn, names, truth, scale = _continuous(mean, cov, None, None)
    # The midpoint rule's error, estimated by the rule on every other midpoint; then what the
    # uniform jitter adds: h^2 / 12 to each variance (so to the squares and the Mahalanobis
    # square).
    h2 = grid.widths**2
    rule = _moment_error(mean, cov, *_grid_moments(grid, 2))
    jitter = _moment_error(mean, cov, mean, cov + np.diag(h2 / 12.0))
    return ExactLaw(
        grid.draw,
        stats_fn,
        names,
        truth,
        scale,
        rule + jitter + 1e-12,
        _headline(mean.size),
        SCALE_MEASURE,
        f"a {'x'.join(str(e.size - 1) for e in grid.edges)} grid of cells over the marginals' "
        f"{TAIL:g} tails (widths {', '.join(f'{w:.3g}' for w in grid.widths)}), a cell by its "
        "midpoint mass, then a uniform point in it",
        log_density,
    )


def _grid_moments(grid: Grid, every: int) -> tuple[np.ndarray, np.ndarray]:
    """(mean, covariance) by the midpoint rule on every ``every``-th midpoint."""
    pts = grid.midpoints
    mean = grid.expect(pts, every)
    dev = pts - mean
    outer = (dev[:, :, None] * dev[:, None, :]).reshape(len(pts), -1)
    cov = grid.expect(outer, every).reshape(pts.shape[1], pts.shape[1])
    return mean, cov


#: How to build the law of each target kind, where it exists.
BUILDERS: dict[str, Callable[[Any], ExactLaw]] = {
    "factor-graph": _cached(_factor_graph),
    "factor-graph-continuous": _cached(_continuous_graph),
    "posterior-1d": _cached(_posterior_1d),
    "glm-posterior": _cached(_glm),
}


def has_exact_law(target: Any) -> bool:
    """Whether :func:`exact_law` can draw from ``target`` (module docstring)."""
    kind = getattr(target, "kind", None)
    if kind == "factor-graph":
        return int(target.D) ** int(target.n_vars) <= ENUMERABLE
    if kind == "factor-graph-continuous":
        from harness.targets.continuous_factor_graph import MAX_EXACT_PSI

        return (
            int(target.n_vars) <= MAX_CONTINUOUS_VARS
            and float(target.psi) <= MAX_EXACT_PSI
            and callable(getattr(target, "exact_draws", None))
            and callable(getattr(target, "log_unnormalised", None))
        )
    if kind == "posterior-1d":
        return callable(getattr(target, "cdf", None))
    if kind == "glm-posterior":
        return (
            int(target.D) <= MAX_GRID_D
            and callable(getattr(target, "marginal_cdf", None))
            and callable(getattr(target, "log_posterior", None))
        )
    return False


def exact_law(target: Any) -> ExactLaw:
    """The :class:`ExactLaw` of ``target``, built once per target; ``ValueError`` where none
    exists (:func:`has_exact_law`)."""
    if not has_exact_law(target):
        raise ValueError(
            f"target {getattr(target, 'name', target)!r} of kind {getattr(target, 'kind', None)!r}"
            " has no exact law; valid: an enumerable factor graph, a continuous factor graph of "
            f"<= {MAX_CONTINUOUS_VARS} variables, a 1-D posterior, a GLM posterior of "
            f"D <= {MAX_GRID_D}"
        )
    return BUILDERS[target.kind](target)
