"""Gibbs and Poisson-minibatching Gibbs on discrete factor graphs, in plain Python/NumPy.

Written to be read against 003_07f92522b9b1c588.txt: ``gibbs`` is Alg. 1 (random scan),
``poisson_gibbs`` is Alg. 2 with the auxiliary counts s_phi ~ Poisson(lam M_phi / L + phi(x)) drawn
in expected O(lam + L) time as in Statement 1 (see notes-minibatch-gibbs.md, Sec. 1 and 6).

Every scalar is a Python float and every sum runs left to right, so ``fast.py`` (Numba, the same
draws in the same order, libm's exp/log1p) returns the same bits.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from harness.spec import Chain
from harness.targets.factor_graph import FactorGraphTarget


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


def check_lam(lam: float) -> float:
    if isinstance(lam, bool) or not isinstance(lam, int | float) or not (0 < lam < math.inf):
        raise ValueError(f"parameter 'lam' = {lam!r} is invalid; valid: a number in (0, inf)")
    return float(lam)


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
    B = int(rng.poisson((c + 1.0) * float(target.m_sum[i])))
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
    target: FactorGraphTarget, n_steps: int, rng: np.random.Generator, x0: Any = None
) -> Chain:
    """Random-scan Gibbs (003, Alg. 1); D |A[i]| factor evaluations per step."""
    x = initial_state(target, x0)
    values = np.empty((n_steps, target.n_vars), dtype=np.int64)
    per_step = np.empty(n_steps, dtype=np.int64)
    for t in range(n_steps):
        per_step[t] = gibbs_step(target, x, rng)
        values[t] = x
    return Chain(values, int(target.D * per_step.sum()), {"factors_per_step": per_step})


def poisson_gibbs(
    target: FactorGraphTarget,
    n_steps: int,
    rng: np.random.Generator,
    x0: Any = None,
    lam: float = 10.0,
) -> Chain:
    """Poisson-Gibbs (003, Alg. 2). Evaluations per step: B (one per proposed draw, for the
    thinning test at the current x) + D |S| (the minibatch energy at every value).

    extras: ``factors_per_step`` = |S| (distinct factors with s_phi > 0), ``draws_per_step`` = B,
    ``kept_per_step`` = sum_phi s_phi (expectation sum_{A[i]} lam M_phi / L + phi(x) <= lam + L).
    """
    lam = check_lam(lam)
    x = initial_state(target, x0)
    values = np.empty((n_steps, target.n_vars), dtype=np.int64)
    stats = np.empty((3, n_steps), dtype=np.int64)
    for t in range(n_steps):
        stats[:, t] = poisson_gibbs_step(target, x, lam, rng)
        values[t] = x
    evals = int(target.D * stats[0].sum() + stats[1].sum())
    extras = {"factors_per_step": stats[0], "draws_per_step": stats[1], "kept_per_step": stats[2]}
    return Chain(values, evals, extras)
