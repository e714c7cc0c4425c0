"""How far apart to keep a Markov chain's states so that a test for independent draws holds.

A chi-square or KS test on a chain assumes independent draws. Keeping every ceil(n / ESS)-th
state, with the ESS of one summary trace (the log density), is not enough, for two reasons:

- at a lag of tau = n / ESS an AR(1)-like trace is still correlated by about
  ((tau - 1) / (tau + 1))^tau ~ e^-2 ~ 0.14, which inflates the statistic by about
  (1 + r) / (1 - r) in that direction;
- a chi-square sums squared deviations over every direction spanned by its cells, so it is as
  correlated as the slowest function of the state. That is the chain's second eigenfunction
  (tau 8.3 for random-scan Gibbs on fg-random-n4-D2), which the log density (tau ~6.8) and
  every single cell indicator (max tau ~5.0) underestimate.

:func:`thinning_lag` takes the traces of what the test counts (one indicator per cell of a
chi-square; indicators of lying below a few quantiles, plus the value, for a KS), adds their
slowest linear combination (:func:`slowest_linear_combination`), takes the largest integrated
time tau_max = n / bulk ESS (arviz-stats) over them, and keeps every lag-th state, the lag at
which an AR(1) with integrated time tau_max is correlated by at most ``target_correlation``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from harness.gates.mcmc import array_stats

#: Default correlation allowed between consecutive kept states in the slowest direction. At 0.02
#: the chi-square's size is within ~4% of alpha at 0.05 (~8% at 0.001) on the tiny factor graphs
#: (exact spectra); 0.05 leaves 10-25% excess, 0.01 keeps ~15% fewer states for ~2% less.
TARGET_CORRELATION = 0.02


@dataclass(frozen=True)
class Thinning:
    """A thinning rule's outcome: keep every ``lag``-th state.

    ``ess_min`` is the smallest bulk ESS over the observables, ``tau_max = n / ess_min`` the
    largest integrated autocorrelation time, and ``which`` the row of the observable that set
    it: k (one past the last row) for the slowest linear combination, -1 when every observable
    was constant (nothing to thin for).
    """

    lag: int
    ess_min: float
    tau_max: float
    which: int

    def kept(self, n: int) -> int:
        """How many of ``n`` states ``states[::lag]`` keeps."""
        return -(-n // self.lag)


def ar1_lag(tau: float, target_correlation: float = TARGET_CORRELATION) -> int:
    """The smallest lag at which an AR(1) with integrated autocorrelation time ``tau`` is
    correlated by at most ``target_correlation``; 1 when tau <= 1 (independent or antithetic).

    tau = (1 + rho) / (1 - rho) for an AR(1), so rho = (tau - 1) / (tau + 1) and the lag is
    ceil(log(target) / log(rho)).
    """
    if not 0.0 < target_correlation < 1.0:
        raise ValueError(f"target_correlation = {target_correlation!r}; valid: 0 < it < 1")
    if not tau > 1.0:  # also catches NaN: nothing to go on, so no thinning beyond the default
        return 1
    if math.isinf(tau):
        raise ValueError("tau is infinite: the chain never mixes")
    rho = (tau - 1.0) / (tau + 1.0)
    # The small slack keeps float noise (log ratios a hair above an integer) from adding a lag.
    return max(1, math.ceil(math.log(target_correlation) / math.log(rho) - 1e-9))


def thinning_lag(
    observables: np.ndarray,
    target_correlation: float = TARGET_CORRELATION,
    slowest_combination: bool = True,
) -> Thinning:
    """Thin by the slowest observable: keep every ``lag``-th state (see the module docstring).

    ``observables`` has shape (k, n): k traces of length n along the chain, e.g.
    :func:`state_indicators` for a chi-square over cells, :func:`quantile_indicators` for a KS.
    Constant traces (a cell never or always visited) carry no autocorrelation and are skipped.
    With ``slowest_combination`` the trace of their slowest linear combination joins them
    (what the chi-square is most correlated along; without it the rule undershoots, see the
    module docstring). The integrated time of each trace is n / bulk ESS (rank-normalised,
    split chain, arviz-stats); tau_max is the largest, and the lag is :func:`ar1_lag` of it.

    Taking a maximum of noisy estimates errs long: on independent draws tau_max is ~1.1-1.3,
    so the lag is 2, as ceil(n / ESS) already was whenever ESS < n.
    """
    x = np.asarray(observables, dtype=np.float64)
    if x.ndim == 1:
        x = x[None, :]
    if x.ndim != 2 or x.shape[1] < 4:
        raise ValueError(f"observables must have shape (k, n >= 4), got {x.shape}")
    n = x.shape[1]
    varying = np.flatnonzero(np.ptp(x, axis=1) > 0.0)
    if varying.size == 0:
        return Thinning(lag=1, ess_min=float(n), tau_max=1.0, which=-1)
    rows = x[varying]
    if slowest_combination and varying.size >= 2:
        rows = np.vstack([rows, slowest_linear_combination(rows)])
        varying = np.append(varying, x.shape[0])
    ess = np.asarray(
        array_stats().ess(rows[:, None, :], chain_axis=-2, draw_axis=-1, method="bulk"),
        dtype=np.float64,
    ).reshape(-1)
    # A non-finite estimate (too few changes to estimate from) counts as no independence at all:
    # the lag then keeps a single state, and the test fails for want of draws, never silently.
    ess = np.where(np.isfinite(ess), ess, 1.0)
    worst = int(np.argmin(ess))
    ess_min = max(float(ess[worst]), 1.0)
    tau_max = n / ess_min
    lag = min(n, ar1_lag(tau_max, target_correlation))
    return Thinning(lag=lag, ess_min=ess_min, tau_max=tau_max, which=int(varying[worst]))


def slowest_linear_combination(observables: np.ndarray, rel_tol: float = 1e-10) -> np.ndarray:
    """The trace of the linear combination of ``observables`` (k, n) with the largest lag-1
    autocorrelation: the top solution of C1 v = lambda C0 v (C0 the covariance, C1 the
    symmetrised lag-1 covariance), as in time-lagged independent component analysis.

    Why: a chi-square sums squared means over every direction in the span of its cell
    indicators, so it is as correlated as the slowest direction, and for a reversible chain on
    enumerated states that direction is the second eigenfunction, which no single indicator
    (nor the log density) need be. Directions C0 cannot resolve (indicators summing to one)
    are dropped before solving.
    """
    y = np.asarray(observables, dtype=np.float64)
    y = y - y.mean(axis=1, keepdims=True)
    n = y.shape[1]
    s, u = np.linalg.eigh(y @ y.T / n)
    keep = s > rel_tol * s.max()
    whiten = u[:, keep] / np.sqrt(s[keep])
    c1 = y[:, :-1] @ y[:, 1:].T / (n - 1)
    _, vecs = np.linalg.eigh(whiten.T @ (0.5 * (c1 + c1.T)) @ whiten)
    return (whiten @ vecs[:, -1]) @ y


def state_indicators(indices: np.ndarray, size: int, max_cells: int = 64) -> np.ndarray:
    """One indicator trace per cell 0..size-1 of a chain of cell ``indices``: the observables of
    a chi-square over those cells, shape (cells, n), dtype bool. An index outside 0..size-1
    (e.g. -1 from ``chain_state_indices`` for a state off the domain) is in no cell.

    Past ``max_cells`` cells, the ``max_cells - 1`` most visited keep their own row and the rest
    share one: the slowest-combination step costs O(cells^2 n), and rarely visited cells carry
    little of the chi-square's variance (their expected counts are pooled anyway).
    """
    idx = np.asarray(indices, dtype=np.int64)
    idx = np.where((idx >= 0) & (idx < size), idx, -1)
    if size > max_cells:
        visits = np.bincount(idx[idx >= 0], minlength=size)
        top = np.argsort(visits, kind="stable")[::-1][: max_cells - 1]
        row = np.full(size, max_cells - 1, dtype=np.int64)
        row[top] = np.arange(top.size)
        idx, size = np.where(idx >= 0, row[idx], -1), max_cells
    return idx[None, :] == np.arange(size)[:, None]


def quantile_indicators(
    values: np.ndarray, quantiles: np.ndarray, include_value: bool = True
) -> np.ndarray:
    """The observables of a KS test: indicators of ``values <= q`` for each q in ``quantiles``
    (of the truth, e.g. its deciles), plus the values themselves when ``include_value``.

    The KS statistic is a sup over the empirical CDF, so its autocorrelation is that of the
    indicators at the points where the CDF is read; the value itself guards the tails.
    """
    v = np.asarray(values, dtype=np.float64)
    rows = [(v <= q).astype(np.float64) for q in np.asarray(quantiles, dtype=np.float64)]
    if include_value:
        rows.append(v)
    return np.stack(rows)
