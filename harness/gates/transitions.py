"""Transition consistency: does the code step as its declared exact kernel says?

The invariance gate checks the transition matrix P that a spec declares (``exact_kernel``); a
sampler whose code differs from that declaration passes it. This gate binds the two: from the
sampler's own chain, the observed next states of every visited state s are counted and compared
with the declared row P[s] (P^thin when the chain keeps every thin-th state).

By the Markov property, given the visits to s the next states are independent draws from the
row, so the per-state Pearson statistics are asymptotically independent chi-squares (Anderson
and Goodman 1957). Each row's cells are pooled to expected counts >= 5 (as the exactness gate
does); a transition the declared kernel forbids (P[s, j] = 0, observed anyway) gives that state
p = 0. Two tests share alpha (Bonferroni, so the gate's p-value is twice the smaller):

- per state, Holm across the tested states: localises a bug that shows in a few rows;
- the sum of the per-state statistics, chi-square with the summed degrees of freedom: the
  power against a small bug spread over every row (a tempered conditional, a stale value),
  which no single row resolves.

Detectable: with Cohen's w_s = sqrt(sum_j (Q[s, j] - P[s, j])^2 / P[s, j]) of row s over its
pooled cells, the sum's noncentrality is sum_s N_s w_s^2 (N_s visits), so it detects with power
0.8 a visit-weighted RMS w = sqrt(sum_s N_s w_s^2 / sum_s N_s) (reported as ``detectable``);
the detail adds the single-row w the Holm test detects at the most and least visited states.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from harness.gates.exactness import chisquare_detectable, pool_cells
from harness.gates.multiple import holm
from harness.gates.result import GateResult
from harness.spec import Param

THIN = Param("thin", 1, int, low=1)
#: A state is tested when its visits leave at least two pooled cells with expected count >= 5.
MIN_EXPECTED = 5.0


def chain_state_indices(states: np.ndarray, D: int) -> np.ndarray:
    """Index of each row of ``states`` (n_steps, n_vars) in the enumeration of {0..D-1}^n_vars
    with variable 0 most significant (``FactorGraphTarget.states`` / ``state_index``).
    A row with a value outside 0..D-1 gets -1."""
    X = np.asarray(states, dtype=np.int64)
    if X.ndim != 2:
        raise ValueError(f"states has shape {X.shape}; valid: (n_steps, n_vars)")
    inside = np.all((X >= 0) & (X < D), axis=1)
    idx = np.full(X.shape[0], -1, dtype=np.int64)
    if inside.any():
        idx[inside] = np.ravel_multi_index(tuple(X[inside].T), (D,) * X.shape[1])
    return idx


def _row_test(counts: np.ndarray, row: np.ndarray) -> tuple[float, float, int] | None:
    """(statistic, p, pooled cells) of one state's next-state counts against its row, or None
    when too few visits leave two pooled cells."""
    visits = float(counts.sum())
    forbidden = (row <= 0.0) & (counts > 0)
    if forbidden.any():
        return math.inf, 0.0, int(np.count_nonzero(row > 0.0)) + 1
    support = row > 0.0
    expected = visits * row[support]
    labels = pool_cells(expected, MIN_EXPECTED)
    bins = int(labels.max()) + 1
    if bins < 2:
        return None
    obs = np.bincount(labels, weights=counts[support], minlength=bins)
    exp = np.bincount(labels, weights=expected, minlength=bins)
    exp *= obs.sum() / exp.sum()
    stat, p = stats.chisquare(obs, exp)
    return float(stat), float(p), bins


def transition_consistency(
    indices: np.ndarray, P: np.ndarray, alpha: float, thin: int = 1, err: float = 0.0
) -> GateResult:
    """Observed one-step transitions of a chain against the declared kernel ``P``.

    ``indices`` are the chain's states as indices into P's state order (values[t] is the state
    after step t, e.g. from :func:`chain_state_indices`; -1 marks a state outside the space,
    which fails the gate). ``thin``: the chain kept every thin-th state, so consecutive kept
    states are P^thin apart. ``err`` is the declared kernel's stated entrywise error; it is
    reported beside the detectable effect (a w far above ``err`` is not moved by it).
    """
    idx = np.asarray(indices, dtype=np.int64)
    P = np.asarray(P, dtype=np.float64)
    thin = THIN.check(thin)
    if P.ndim != 2 or P.shape[0] != P.shape[1]:
        raise ValueError(f"P has shape {P.shape}; valid: a square transition matrix")
    if idx.ndim != 1 or idx.size < 2:
        raise ValueError(f"indices has shape {idx.shape}; valid: (n_steps >= 2,)")
    S = P.shape[0]
    n = int(idx.size - 1)
    measure = "visit-weighted RMS Cohen's w of the rows, sqrt(sum_s N_s w_s^2 / sum_s N_s)"
    outside = (idx < 0) | (idx >= S)
    if outside.any():
        return GateResult.of_test(
            "transition-consistency",
            math.inf,
            0.0,
            alpha,
            n,
            math.nan,
            measure,
            detail=f"{int(outside.sum())} states outside the {S} enumerated states",
        )
    K = np.linalg.matrix_power(P, thin) if thin > 1 else P
    counts = np.zeros((S, S))
    np.add.at(counts, (idx[:-1], idx[1:]), 1.0)
    visits = counts.sum(axis=1)
    tested: list[tuple[int, float, float, int]] = []
    for s in np.flatnonzero(visits):
        res = _row_test(counts[s], K[s])
        if res is not None:
            tested.append((int(s), *res))
    untested = int(np.count_nonzero(visits)) - len(tested)
    if not tested:
        return GateResult.of_test(
            "transition-consistency",
            0.0,
            1.0,
            alpha,
            n,
            math.nan,
            measure,
            detail=f"no state visited often enough to test ({untested} visited)",
        )
    kernel = "P" if thin == 1 else f"P^{thin}"
    return _combined(tested, visits, untested, alpha, n, measure, kernel, err)


def _combined(
    tested: list[tuple[int, float, float, int]],
    visits: np.ndarray,
    untested: int,
    alpha: float,
    n: int,
    measure: str,
    kernel: str,
    err: float,
) -> GateResult:
    """One verdict from the tested rows ``(state, chi2, p, cells)``: the smaller p of the rows'
    Holm minimum and the summed chi-square, doubled (Bonferroni over the two)."""
    p = np.array([t[2] for t in tested])
    _, adjusted = holm(p, alpha / 2.0)
    p_rows = float(adjusted.min())
    # The omnibus: the rows' statistics are asymptotically independent, so their sum is
    # chi-square with the summed degrees of freedom (power against a bug spread over many rows).
    total = float(sum(t[1] for t in tested))
    df = int(sum(t[3] - 1 for t in tested))
    p_sum = 0.0 if math.isinf(total) else float(stats.chi2.sf(total, df))
    p_gate = min(1.0, 2.0 * min(p_rows, p_sum))
    m = len(tested)
    n_tested = int(sum(visits[t[0]] for t in tested))
    worst = int(np.argmin(p))
    s_w, stat_w, _, bins_w = tested[worst]
    most = max(tested, key=lambda t: visits[t[0]])
    least = min(tested, key=lambda t: visits[t[0]])
    det_sum = chisquare_detectable(n_tested, df + 1, alpha / 2.0)
    det_most = chisquare_detectable(int(visits[most[0]]), most[3], alpha / (2.0 * m))
    det_least = chisquare_detectable(int(visits[least[0]]), least[3], alpha / (2.0 * m))
    detail = (
        f"{m} states against rows of {kernel}: sum chi2 = {total:.1f} on {df} df "
        f"(p = {p_sum:.3g}); per state, Holm: worst state {s_w} ({int(visits[s_w])} visits, "
        f"{bins_w} pooled cells) chi2 = {stat_w:.1f}, p = {p[worst]:.3g}, adjusted "
        f"{p_rows:.3g}; one row detectable at w {det_most:.3g} ({int(visits[most[0]])} visits) "
        f"to {det_least:.3g} ({int(visits[least[0]])}); declared kernel error {err:.3g}"
        + (f"; {untested} rarely visited states untested" if untested else "")
    )
    return GateResult.of_test(
        "transition-consistency", total, p_gate, alpha, n, det_sum, measure, detail=detail
    )
