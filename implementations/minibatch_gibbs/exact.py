"""Exact transition matrices of Gibbs and Poisson-Gibbs on tiny factor graphs (003, Alg. 1-2).

``gibbs_matrix`` is exact. ``poisson_gibbs_matrix`` is the expectation over the auxiliary counts
s of Alg. 2's conditional, E_s[rho_s(v)] with s_phi ~ Poisson(lam M_phi / L + phi(x)); each s_phi
is enumerated up to the smallest cutoff K_phi with P(s_phi > K_phi) <= ``tail``. The mass left
out for one (x, i) is at most sum_phi P(s_phi > K_phi) =: tau(x, i); it is put on the diagonal so
rows stay stochastic, which moves every entry of P by at most tau = max tau(x, i) (returned as
``truncation_bound``). Hence |pi P - pi| and |pi_x P_xy - pi_y P_yx| move by at most 2 tau.

``variant`` plants the bugs a correct invariance check must reject: ``"no-phi-rate"`` draws
s_phi without its phi(x) part; ``"no-multiplicity"`` sums the energy over {phi : s_phi > 0},
ignoring the multiplicity s_phi.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.stats import poisson

from harness.targets.factor_graph import FactorGraphTarget
from implementations.minibatch_gibbs.reference import check_positive

VARIANTS = ("correct", "no-phi-rate", "no-multiplicity")


@dataclass(frozen=True)
class ExactKernel:
    """A transition matrix over ``target.states()`` and the bound on its truncation error."""

    P: np.ndarray
    truncation_bound: float


def _local_energies(target: FactorGraphTarget, x: np.ndarray, i: int) -> np.ndarray:
    """phi(x with x(i) = v) for phi in A[i] (rows) and v in 0..D-1 (columns)."""
    rows = []
    for slot in range(int(target.adj_indptr[i]), int(target.adj_indptr[i + 1])):
        f = int(target.adj_factors[slot])
        other = int(x[target.adj_other[slot]])
        t = target.tables[f]
        rows.append(t[:, other] if target.adj_pos[slot] == 0 else t[other, :])
    return np.array(rows).reshape(-1, target.D)


def _local_bounds(target: FactorGraphTarget, i: int) -> np.ndarray:
    """M_phi for phi in A[i], in CSR order."""
    return target.M[target.adj_factors[target.adj_indptr[i] : target.adj_indptr[i + 1]]]


def _softmax_rows(U: np.ndarray) -> np.ndarray:
    w = np.exp(U - U.max(axis=-1, keepdims=True))
    return w / w.sum(axis=-1, keepdims=True)


def _move_targets(target: FactorGraphTarget, x: np.ndarray, i: int) -> np.ndarray:
    """State indices of x with x(i) = v for v in 0..D-1."""
    y = np.repeat(x[None, :], target.D, axis=0)
    y[:, i] = np.arange(target.D)
    return np.ravel_multi_index(tuple(y.T), (target.D,) * target.n_vars)


def gibbs_matrix(target: FactorGraphTarget) -> np.ndarray:
    """Random-scan Gibbs: P(x, x^{i<-v}) = (1/n) rho_i(v | x) summed over i (003, Alg. 1)."""
    states = target.states()
    P = np.zeros((states.shape[0], states.shape[0]))
    for a, x in enumerate(states):
        for i in range(target.n_vars):
            rho = _softmax_rows(_local_energies(target, x, i).sum(axis=0))
            np.add.at(P[a], _move_targets(target, x, i), rho / target.n_vars)
    return P


def _cutoff(rate: float, tail: float) -> int:
    K = int(poisson.isf(tail, rate))
    while poisson.sf(K, rate) > tail:
        K += 1
    return K


def _poisson_grid(rates: np.ndarray, tail: float) -> tuple[np.ndarray, np.ndarray, float]:
    """Every s with s_phi <= K_phi (P(s_phi > K_phi) <= tail), its Poisson weight, and tau."""
    cut = [_cutoff(float(r), tail) for r in rates]
    tau = float(sum(poisson.sf(K, r) for K, r in zip(cut, rates, strict=True)))
    grids = np.meshgrid(*[np.arange(K + 1) for K in cut], indexing="ij")
    s = np.stack([g.ravel() for g in grids], axis=1).astype(np.float64)
    weight = np.ones(s.shape[0])
    for f, r in enumerate(rates):
        weight *= poisson.pmf(s[:, f], r)
    return s, weight, tau


def _expected_conditional(
    rates: np.ndarray, coef: np.ndarray, tail: float, multiplicity: bool
) -> tuple[np.ndarray, float]:
    """E_s[softmax_v(sum_phi s_phi coef[phi, v])] over the truncated Poisson grid, and tau."""
    s, weight, tau = _poisson_grid(rates, tail)
    mult = s if multiplicity else np.minimum(s, 1.0)
    rho = _softmax_rows(mult @ coef)
    return weight @ rho, tau


#: A single-site move at state x and site i, given M_phi of A[i] and the local energies: the
#: probabilities of x -> x^{i<-v} for every v (the 1/n of the site's choice included), and tau.
Move = Callable[[np.ndarray, int, np.ndarray, np.ndarray], tuple[np.ndarray, float]]


def _single_site_kernel(target: FactorGraphTarget, move: Move, clip: bool = False) -> ExactKernel:
    """P over ``target.states()`` from every (x, i)'s move; the mass a row misses (the truncated
    s-mass, <= tau, and the rejections) stays put. ``clip`` keeps the diagonal >= 0 where sums of
    acceptance probabilities can exceed 1 by rounding."""
    states = target.states()
    P = np.zeros((states.shape[0], states.shape[0]))
    worst = 0.0
    for a, x in enumerate(states):
        for i in range(target.n_vars):
            row, tau = move(x, i, _local_bounds(target, i), _local_energies(target, x, i))
            worst = max(worst, tau)
            np.add.at(P[a], _move_targets(target, x, i), row)
        if clip:
            P[a, a] = max(P[a, a] + 1.0 - P[a].sum(), 0.0)
        else:
            P[a, a] += 1.0 - P[a].sum()
    return ExactKernel(P, worst)


def poisson_gibbs_matrix(
    target: FactorGraphTarget, lam: float, tail: float = 1e-15, variant: str = "correct"
) -> ExactKernel:
    """003, Alg. 2 averaged over s (see the module docstring for the truncation bound)."""
    if variant not in VARIANTS:
        raise ValueError(f"variant = {variant!r}; valid: one of {', '.join(VARIANTS)}")
    check_positive(lam, "lam")

    def move(x: np.ndarray, i: int, M: np.ndarray, phis: np.ndarray) -> tuple[np.ndarray, float]:
        rates = lam * M / target.L
        if variant != "no-phi-rate":
            rates = rates + phis[:, int(x[i])]
        coef = np.log1p(target.L * phis / (lam * M[:, None]))
        rho, tau = _expected_conditional(
            rates, coef, tail, multiplicity=variant != "no-multiplicity"
        )
        return rho / target.n_vars, tau

    return _single_site_kernel(target, move)


# --- Poisson-MH and MGPMH (exact chains on x alone); MIN-Gibbs and DoubleMIN carry a continuous
# estimate in their state, so they have no finite matrix here and are checked by long runs.


def metropolis_matrix(target: FactorGraphTarget) -> np.ndarray:
    """Plain single-site MH with Poisson-MH's proposal: i uniform, v uniform over the D - 1 other
    values, accept min(1, exp(U(y) - U(x))). Thm. 2's comparison chain."""
    q = 1.0 / (target.n_vars * (target.D - 1))

    def move(x: np.ndarray, i: int, M: np.ndarray, phis: np.ndarray) -> tuple[np.ndarray, float]:
        U = phis.sum(axis=0)
        acc = np.minimum(1.0, np.exp(U - U[int(x[i])]))
        acc[int(x[i])] = 0.0
        return q * acc, 0.0

    return _single_site_kernel(target, move).P


def poisson_mh_matrix(target: FactorGraphTarget, lam: float, tail: float = 1e-15) -> ExactKernel:
    """Single-site Poisson-MH averaged over s ~ Poisson(lam M_phi / L + phi(x)) on A[i].

    Each acceptance probability lies in [0, 1], so the truncated s-mass (<= tau) moves every entry
    by at most tau; the missing mass goes to the diagonal (as in ``poisson_gibbs_matrix``). At
    large lam the acceptance sums can exceed 1 by rounding (~1e-14): the diagonal is clipped at 0
    so the matrix stays stochastic, its row sum then off by that rounding only.
    """
    check_positive(lam, "lam")
    q = 1.0 / (target.n_vars * (target.D - 1))

    def move(x: np.ndarray, i: int, M: np.ndarray, phis: np.ndarray) -> tuple[np.ndarray, float]:
        cur = int(x[i])
        s, weight, tau = _poisson_grid(lam * M / target.L + phis[:, cur], tail)
        coef = np.log1p(target.L * phis / (lam * M[:, None]))
        Us = s @ coef  # (grid, D)
        acc = weight @ np.minimum(1.0, np.exp(Us - Us[:, cur : cur + 1]))
        acc[cur] = 0.0
        return q * acc, tau

    return _single_site_kernel(target, move, clip=True)


def mgpmh_matrix(target: FactorGraphTarget, lam: float, tail: float = 1e-15) -> ExactKernel:
    """MGPMH averaged over its local minibatch s ~ Poisson(lam M_phi / L) on A[i]: for each s,
    P(x -> x^v) = min(rho_s(v), exp(U(x^v) - U(x)) rho_s(x(i))) for v != x(i) (an independence MH
    on x(i)). The truncation moves every entry by at most tau, as above."""
    check_positive(lam, "lam")

    def move(x: np.ndarray, i: int, M: np.ndarray, phis: np.ndarray) -> tuple[np.ndarray, float]:
        cur = int(x[i])
        s, weight, tau = _poisson_grid(lam * M / target.L, tail)
        rho = _softmax_rows(s @ (target.L * phis / (lam * M[:, None])))
        U = phis.sum(axis=0)
        taken = np.minimum(rho, np.exp(U - U[cur])[None, :] * rho[:, cur : cur + 1])
        prob = weight @ taken
        prob[cur] = 0.0
        return prob / target.n_vars, tau

    return _single_site_kernel(target, move)
