"""Gibbs and Poisson-minibatching Gibbs on discrete factor graphs, in plain Python/NumPy.

Written to be read against 003_07f92522b9b1c588.txt: ``gibbs`` is Alg. 1 (random scan),
``poisson_gibbs`` is Alg. 2 with the auxiliary counts s_phi ~ Poisson(lam M_phi / L + phi(x)) drawn
in expected O(lam + L) time as in Statement 1 (see notes-minibatch-gibbs.md, Sec. 1 and 6).

Every scalar is a Python float and every sum runs left to right, so ``fast.py`` (Numba, the same
draws in the same order, libm's exp/log1p) returns the same bits.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from harness.spec import Chain, Param, finite_number
from harness.targets.factor_graph import FactorGraphTarget, alias_table
from implementations.shared.reference import poisson_count


def initial_state(target: FactorGraphTarget, x0: Any = None) -> np.ndarray:
    """x0, checked, as a fresh int64 array; all zeros when not given (no draw is spent)."""
    if x0 is None:
        return np.zeros(target.n_vars, dtype=np.int64)
    x = np.array(x0)
    if x.shape != (target.n_vars,) or not np.issubdtype(x.dtype, np.integer):
        raise ValueError(
            f"x0 has shape {x.shape} and dtype {x.dtype}; valid: {target.n_vars} integers"
        )
    if np.any((x < 0) | (x >= target.D)):
        raise ValueError(f"x0 = {x.tolist()}; valid: values in 0..{target.D - 1}")
    return x.astype(np.int64)


def check_thin(thin: int, n_steps: int) -> int:
    """``thin``: keep every thin-th state (the step costs stay per step). A full trajectory
    copies n values per step; thinning by about n keeps a step's cost O(lam + L) (Statement 1)."""
    thin = Param("thin", 1, int, low=1).check(thin)
    if thin > max(n_steps, 1):
        raise ValueError(f"thin = {thin} > n_steps = {n_steps}; valid: 1 <= thin <= n_steps")
    return int(thin)


def start_chain(
    target: FactorGraphTarget, n_steps: int, x0: Any, thin: int
) -> tuple[int, np.ndarray, np.ndarray]:
    """Every chain wrapper's opening: ``thin`` checked (:func:`check_thin`), the start state x
    (:func:`initial_state`, a copy) and the array of the kept states."""
    thin = check_thin(thin, n_steps)
    x = initial_state(target, x0)
    return thin, x, np.empty((n_steps // thin, target.n_vars), dtype=np.int64)


def run_steps(
    step: Callable[..., Any],
    rows: int,
    target: FactorGraphTarget,
    n_steps: int,
    x0: Any,
    thin: int,
    *args: Any,
) -> tuple[np.ndarray, np.ndarray]:
    """A chain of ``step(target, x, *args)`` (which updates x and returns ``rows`` counts) from
    :func:`start_chain`: the kept states and the counts, one column per step."""
    thin, x, values = start_chain(target, n_steps, x0, thin)
    stats = np.empty((rows, n_steps), dtype=np.int64)
    for t in range(n_steps):
        stats[:, t] = step(target, x, *args)
        if (t + 1) % thin == 0:
            values[t // thin] = x
    return values, stats


def phi_at(target: FactorGraphTarget, slot: int, x: np.ndarray, v: int) -> float:
    """The factor at CSR position ``slot`` of A[i], evaluated at x with x(i) replaced by v."""
    f = int(target.adj_factors[slot])
    other = int(x[target.adj_other[slot]])
    if target.adj_pos[slot] == 0:
        return float(target.tables[f, v, other])
    return float(target.tables[f, other, v])


def sample_softmax(U: list[float], u: float) -> int:
    """v with probability exp(U_v) / sum_w exp(U_w), by inversion of one uniform u."""
    top = U[0]
    for e in U:
        top = max(top, e)
    w = [math.exp(e - top) for e in U]
    total = 0.0
    for e in w:  # left to right (Python's sum() may compensate)
        total += e
    t = u * total
    acc = 0.0
    for v, e in enumerate(w):
        acc += e
        if t < acc:
            return v
    return len(U) - 1


def gibbs_step(target: FactorGraphTarget, x: np.ndarray, rng: np.random.Generator) -> int:
    """003, Alg. 1 (one iteration): every factor in A[i] at every value v. Returns |A[i]|."""
    i = int(rng.integers(0, target.n_vars))
    start, stop = int(target.adj_indptr[i]), int(target.adj_indptr[i + 1])
    U = []
    for v in range(target.D):
        acc = 0.0
        for slot in range(start, stop):
            acc += phi_at(target, slot, x, v)
        U.append(acc)
    x[i] = sample_softmax(U, rng.random())
    return stop - start


def poisson_counts(
    target: FactorGraphTarget, i: int, x: np.ndarray, lam: float, rng: np.random.Generator
) -> tuple[dict[int, int], int]:
    """s_phi ~ Poisson(lam M_phi / L + phi(x)) independently for phi in A[i] (Statement 1).

    One total B ~ Poisson((lam / L + 1) sum_{A[i]} M_phi) over the envelope rates
    (lam / L + 1) M_phi; each of the B draws picks phi with P ∝ M_phi from the variable's alias
    table and is kept with probability (lam M_phi / L + phi(x)) / (lam M_phi / L + M_phi).
    Splitting and thinning a Poisson process leave independent Poisson counts of the thinned
    rates. Returns {local index of phi in A[i]: s_phi > 0} in first-kept order, and B (each
    proposed draw evaluates its factor once).
    """
    start = int(target.adj_indptr[i])
    K = int(target.adj_indptr[i + 1]) - start
    c = lam / target.L
    B = poisson_count((c + 1.0) * float(target.m_sum[i]), rng)
    counts: dict[int, int] = {}
    for _ in range(B):
        k = min(int(rng.random() * K), K - 1)
        if rng.random() >= target.alias_prob[start + k]:
            k = int(target.alias_idx[start + k])
        m = float(target.M[target.adj_factors[start + k]])
        base = c * m
        if rng.random() * (base + m) < base + phi_at(target, start + k, x, int(x[i])):
            counts[k] = counts.get(k, 0) + 1
    return counts, B


def poisson_gibbs_step(
    target: FactorGraphTarget, x: np.ndarray, lam: float, rng: np.random.Generator
) -> tuple[int, int, int]:
    """003, Alg. 2 (one iteration). Returns (|S| distinct factors, B proposed draws, sum s)."""
    i = int(rng.integers(0, target.n_vars))
    start = int(target.adj_indptr[i])
    counts, B = poisson_counts(target, i, x, lam, rng)
    L = target.L
    U = []
    for v in range(target.D):
        acc = 0.0
        for k, s in counts.items():
            m = float(target.M[target.adj_factors[start + k]])
            acc += s * math.log1p(L * phi_at(target, start + k, x, v) / (lam * m))
        U.append(acc)
    x[i] = sample_softmax(U, rng.random())
    return len(counts), B, sum(counts.values())


def gibbs(
    target: FactorGraphTarget,
    n_steps: int,
    rng: np.random.Generator,
    x0: Any = None,
    thin: int = 1,
) -> Chain:
    """Random-scan Gibbs (003, Alg. 1); D |A[i]| factor evaluations per step."""
    values, stats = run_steps(gibbs_step, 1, target, n_steps, x0, thin, rng)
    per_step = stats[0]
    return Chain(values, int(target.D * per_step.sum()), {"factors_per_step": per_step})


def poisson_gibbs(
    target: FactorGraphTarget,
    n_steps: int,
    rng: np.random.Generator,
    x0: Any = None,
    lam: float = 10.0,
    thin: int = 1,
) -> Chain:
    """Poisson-Gibbs (003, Alg. 2). Evaluations per step: B (one per proposed draw, for the
    thinning test at the current x) + D |S| (the minibatch energy at every value).

    extras: ``factors_per_step`` = |S| (distinct factors with s_phi > 0), ``draws_per_step`` = B,
    ``kept_per_step`` = sum_phi s_phi (expectation sum_{A[i]} lam M_phi / L + phi(x) <= lam + L).
    """
    lam = check_positive(lam, "lam")
    values, stats = run_steps(poisson_gibbs_step, 3, target, n_steps, x0, thin, lam, rng)
    return pack_poisson_gibbs(target, values, stats)


# --- Poisson-MH (003 Sec. 2 / supplement) and the De Sa et al. 2018 baselines (003 Table 1) ---


def check_positive(value: float, name: str) -> float:
    """A size parameter (``lam``, ``lam2``) must be a finite number > 0."""
    return finite_number(name, above=0.0).check(value)


def propose_other(D: int, current: int, rng: np.random.Generator) -> int:
    """Uniform over the D - 1 values other than ``current`` (a symmetric proposal)."""
    k = int(rng.integers(0, D - 1))
    return k + 1 if k >= current else k


def poisson_mh_step(
    target: FactorGraphTarget, x: np.ndarray, lam: float, rng: np.random.Generator
) -> tuple[int, int, int, int]:
    """Poisson-MH (notes Sec. 7) with a single-site proposal on x(i).

    Factors outside A[i] cancel in the acceptance ratio, so the Poisson counts are drawn on A[i]
    only (rates lam M_phi / L + phi(x), Statement 1); pi(x(i) | x_-i, s) ∝ exp(U_s(x(i))) then
    makes the MH step on U_s exact. Returns (|S|, B, sum s, accepted).
    """
    i = int(rng.integers(0, target.n_vars))
    cur = int(x[i])
    v = propose_other(target.D, cur, rng)
    counts, B = poisson_counts(target, i, x, lam, rng)
    start = int(target.adj_indptr[i])
    L = target.L
    u_new = 0.0
    u_cur = 0.0
    for k, s in counts.items():
        m = float(target.M[target.adj_factors[start + k]])
        u_new += s * math.log1p(L * phi_at(target, start + k, x, v) / (lam * m))
        u_cur += s * math.log1p(L * phi_at(target, start + k, x, cur) / (lam * m))
    accepted = rng.random() < math.exp(min(0.0, u_new - u_cur))
    if accepted:
        x[i] = v
    return len(counts), B, sum(counts.values()), int(accepted)


def poisson_mh(
    target: FactorGraphTarget,
    n_steps: int,
    rng: np.random.Generator,
    x0: Any = None,
    lam: float = 10.0,
    thin: int = 1,
) -> Chain:
    """Poisson-MH, single site. Evaluations per step: B (thinning tests) + 2 |S| (U_s at the
    current and the proposed value).

    extras: ``factors_per_step`` = |S|, ``draws_per_step`` = B, ``kept_per_step`` = sum s,
    ``accepted`` (0/1).
    """
    lam = check_positive(lam, "lam")
    return pack_poisson_mh(*run_steps(poisson_mh_step, 4, target, n_steps, x0, thin, lam, rng))


def global_alias(target: FactorGraphTarget) -> tuple[np.ndarray, np.ndarray]:
    """Alias table over all factors with P(phi) ∝ M_phi (the global minibatches of MIN-Gibbs)."""
    prob, alias = alias_table(target.M.tolist())
    return np.array(prob, dtype=np.float64), np.array(alias, dtype=np.int64)


def global_estimate(
    target: FactorGraphTarget,
    x: np.ndarray,
    i: int,
    u: int,
    lam: float,
    table: tuple[np.ndarray, np.ndarray],
    rng: np.random.Generator,
) -> tuple[float, int]:
    """eps = sum_phi s_phi log(1 + Psi phi(y) / (lam M_phi)) at y = x with y(i) = u (i = -1: y = x).

    s_phi ~ Poisson(lam M_phi / Psi), drawn as B ~ Poisson(lam) alias draws ∝ M_phi (notes Sec. 1,
    no thinning: the rates do not depend on the state); E[exp(eps)] = exp(U(y)). Returns (eps, B);
    each draw evaluates one factor, duplicates included.
    """
    prob, alias = table
    F = target.n_factors
    psi = target.psi
    B = poisson_count(lam, rng)
    acc = 0.0
    for _ in range(B):
        f = min(int(rng.random() * F), F - 1)
        if rng.random() >= prob[f]:
            f = int(alias[f])
        a, b = int(target.scopes[f, 0]), int(target.scopes[f, 1])
        xa = u if a == i else int(x[a])
        xb = u if b == i else int(x[b])
        m = float(target.M[f])
        acc += math.log1p(psi * float(target.tables[f, xa, xb]) / (lam * m))
    return acc, B


def min_gibbs(
    target: FactorGraphTarget,
    n_steps: int,
    rng: np.random.Generator,
    x0: Any = None,
    lam: float = 10.0,
    thin: int = 1,
) -> Chain:
    """MIN-Gibbs (De Sa et al. 2018; notes Sec. 2): the state carries eps, an exp-unbiased estimate
    of U(x); each step draws a fresh global minibatch for every value u != x(i), keeps the stored
    eps for x(i) and samples v ∝ exp(eps_v). Exact (x-marginal of the augmented law is pi).

    evals = the initial minibatch + all minibatch draws. extras: ``factors_per_step`` = factor
    evaluations in the step (sum of the D - 1 minibatch sizes).
    """
    lam = check_positive(lam, "lam")
    thin, x, values = start_chain(target, n_steps, x0, thin)
    table = global_alias(target)
    per_step = np.empty(n_steps, dtype=np.int64)
    eps, first = global_estimate(target, x, -1, 0, lam, table, rng)
    for t in range(n_steps):
        i = int(rng.integers(0, target.n_vars))
        U = []
        draws = 0
        for u in range(target.D):
            if u == x[i]:
                U.append(eps)
            else:
                e, b = global_estimate(target, x, i, u, lam, table, rng)
                U.append(e)
                draws += b
        v = sample_softmax(U, rng.random())
        x[i] = v
        eps = U[v]
        per_step[t] = draws
        if (t + 1) % thin == 0:
            values[t // thin] = x
    return Chain(values, int(first + per_step.sum()), {"factors_per_step": per_step})


def local_proposal(
    target: FactorGraphTarget, i: int, x: np.ndarray, lam: float, rng: np.random.Generator
) -> tuple[list[float], int, int]:
    """MGPMH's proposal energies (notes Sec. 3): s_phi ~ Poisson(lam M_phi / L) on A[i], independent
    of x(i), and eps_u = sum_phi s_phi L phi(x with x(i) = u) / (lam M_phi) (the linear, unbiased
    energy estimate; any estimator keeps the MH step exact). Returns (eps, |S|, B).
    """
    start = int(target.adj_indptr[i])
    K = int(target.adj_indptr[i + 1]) - start
    L = target.L
    B = poisson_count(lam / L * float(target.m_sum[i]), rng)
    counts: dict[int, int] = {}
    for _ in range(B):
        k = min(int(rng.random() * K), K - 1)
        if rng.random() >= target.alias_prob[start + k]:
            k = int(target.alias_idx[start + k])
        counts[k] = counts.get(k, 0) + 1
    eps = []
    for v in range(target.D):
        acc = 0.0
        for k, s in counts.items():
            m = float(target.M[target.adj_factors[start + k]])
            acc += s * (L * phi_at(target, start + k, x, v) / (lam * m))
        eps.append(acc)
    return eps, len(counts), B


def local_energy(target: FactorGraphTarget, i: int, x: np.ndarray, v: int) -> float:
    """sum_{phi in A[i]} phi(x with x(i) = v), left to right over the CSR slots."""
    acc = 0.0
    for slot in range(int(target.adj_indptr[i]), int(target.adj_indptr[i + 1])):
        acc += phi_at(target, slot, x, v)
    return acc


def mgpmh(
    target: FactorGraphTarget,
    n_steps: int,
    rng: np.random.Generator,
    x0: Any = None,
    lam: float = 10.0,
    thin: int = 1,
) -> Chain:
    """MGPMH (De Sa et al. 2018; notes Sec. 3): propose v ∝ exp(eps_v) from a local minibatch,
    accept with min(1, exp(U(y) - U(x)) rho(x(i)) / rho(v)), U(y) - U(x) exact over A[i]. Exact.

    Evaluations: D |S| for the proposal + 2 |A[i]| for the exact difference (skipped when
    v = x(i), which is always accepted). extras: ``factors_per_step`` = |S|, ``draws_per_step`` = B,
    ``exact_per_step`` = |A[i]| or 0, ``accepted`` (0/1; v = x(i) counts as accepted).
    """
    lam = check_positive(lam, "lam")
    thin, x, values = start_chain(target, n_steps, x0, thin)
    stats = np.empty((4, n_steps), dtype=np.int64)
    for t in range(n_steps):
        i = int(rng.integers(0, target.n_vars))
        eps, nd, B = local_proposal(target, i, x, lam, rng)
        cur = int(x[i])
        v = sample_softmax(eps, rng.random())
        u = rng.random()  # drawn even when v = x(i), so the stream does not depend on v
        exact = 0
        accepted = 1
        if v != cur:
            exact = int(target.adj_indptr[i + 1] - target.adj_indptr[i])
            log_a = (local_energy(target, i, x, v) - local_energy(target, i, x, cur)) + (
                eps[cur] - eps[v]
            )
            accepted = int(u < math.exp(min(0.0, log_a)))
            if accepted:
                x[i] = v
        stats[:, t] = (nd, B, exact, accepted)
        if (t + 1) % thin == 0:
            values[t // thin] = x
    return pack_mgpmh(target, values, stats)


def double_min_gibbs(
    target: FactorGraphTarget,
    n_steps: int,
    rng: np.random.Generator,
    x0: Any = None,
    lam: float = 10.0,
    lam2: float = 100.0,
    thin: int = 1,
) -> Chain:
    """DoubleMIN-Gibbs (De Sa et al. 2018; notes Sec. 4): MGPMH's proposal (``lam``), then a
    pseudo-marginal MH step on a fresh global estimate eps_y (``lam2``, as in MIN-Gibbs) against
    the stored eps. Exact. The proposal y = x also refreshes eps (still a valid pseudo-marginal
    move, and it keeps the draw pattern fixed).

    evals = initial second minibatch + D |S| + second minibatch sizes. extras:
    ``factors_per_step`` = |S|, ``draws_per_step`` = B, ``second_per_step`` = second minibatch size,
    ``accepted`` (0/1).
    """
    lam = check_positive(lam, "lam")
    lam2 = check_positive(lam2, "lam2")
    thin, x, values = start_chain(target, n_steps, x0, thin)
    table = global_alias(target)
    stats = np.empty((4, n_steps), dtype=np.int64)
    eps, first = global_estimate(target, x, -1, 0, lam2, table, rng)
    for t in range(n_steps):
        i = int(rng.integers(0, target.n_vars))
        rho, nd, B = local_proposal(target, i, x, lam, rng)
        cur = int(x[i])
        v = sample_softmax(rho, rng.random())
        eps_y, b2 = global_estimate(target, x, i, v, lam2, table, rng)
        log_a = (eps_y - eps) + (rho[cur] - rho[v])
        accepted = int(rng.random() < math.exp(min(0.0, log_a)))
        if accepted:
            x[i] = v
            eps = eps_y
        stats[:, t] = (nd, B, b2, accepted)
        if (t + 1) % thin == 0:
            values[t // thin] = x
    return pack_double_min_gibbs(target, values, stats, first)


# --- One place for each chain's cost model and extras (the Numba wrappers call these too) ---


def pack_poisson_gibbs(target: FactorGraphTarget, values: np.ndarray, stats: np.ndarray) -> Chain:
    """stats rows: |S|, B, sum s. Cost: B thinning tests + D |S| minibatch energies."""
    evals = int(target.D * stats[0].sum() + stats[1].sum())
    extras = {"factors_per_step": stats[0], "draws_per_step": stats[1], "kept_per_step": stats[2]}
    return Chain(values, evals, extras)


def pack_poisson_mh(values: np.ndarray, stats: np.ndarray) -> Chain:
    """stats rows: |S|, B, sum s, accepted. Cost: B thinning tests + 2 |S| (two values)."""
    evals = int(2 * stats[0].sum() + stats[1].sum())
    names = ("factors_per_step", "draws_per_step", "kept_per_step", "accepted")
    return Chain(values, evals, dict(zip(names, stats, strict=True)))


def pack_mgpmh(target: FactorGraphTarget, values: np.ndarray, stats: np.ndarray) -> Chain:
    """stats rows: |S|, B, exact-correction factors, accepted. Cost: D |S| + 2 exact."""
    evals = int(target.D * stats[0].sum() + 2 * stats[2].sum())
    names = ("factors_per_step", "draws_per_step", "exact_per_step", "accepted")
    return Chain(values, evals, dict(zip(names, stats, strict=True)))


def pack_double_min_gibbs(
    target: FactorGraphTarget, values: np.ndarray, stats: np.ndarray, first: int
) -> Chain:
    """stats rows: |S|, B, second minibatch, accepted. Cost: the initial estimate + D |S| +
    the second minibatch."""
    evals = int(first + target.D * stats[0].sum() + stats[2].sum())
    names = ("factors_per_step", "draws_per_step", "second_per_step", "accepted")
    return Chain(values, evals, dict(zip(names, stats, strict=True)))
