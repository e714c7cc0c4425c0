"""Numba kernels for Gibbs and Poisson-Gibbs, and thin wrappers with the reference's signatures.

Each kernel consumes the Generator exactly as ``reference.py`` does (integers for i, poisson for
B, random for the alias draw and the thinning test, random for the conditional) and sums in the
same order, so both return identical chains, evaluation counts, extras and Generator states.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import njit

from harness.spec import Chain
from harness.targets.factor_graph import FactorGraphTarget
from implementations.minibatch_gibbs.reference import check_lam, initial_state


@njit(cache=True)
def _phi_at(factors, pos, other, tables, slot, x, v):
    f = factors[slot]
    if pos[slot] == 0:
        return tables[f, v, x[other[slot]]]
    return tables[f, x[other[slot]], v]


@njit(cache=True)
def _sample_softmax(U, u):
    top = U[0]
    for e in U:
        top = max(top, e)
    total = 0.0
    w = np.empty(U.size)
    for v in range(U.size):
        w[v] = math.exp(U[v] - top)
        total += w[v]
    t = u * total
    acc = 0.0
    for v in range(U.size):
        acc += w[v]
        if t < acc:
            return v
    return U.size - 1


@njit(cache=True)
def _gibbs_kernel(indptr, factors, pos, other, tables, D, x, n_steps, rng, values, per_step):
    n = x.size
    U = np.empty(D)
    for t in range(n_steps):
        i = rng.integers(0, n)
        start, stop = indptr[i], indptr[i + 1]
        for v in range(D):
            acc = 0.0
            for slot in range(start, stop):
                acc += _phi_at(factors, pos, other, tables, slot, x, v)
            U[v] = acc
        x[i] = _sample_softmax(U, rng.random())
        per_step[t] = stop - start
        values[t] = x


@njit(cache=True)
def _poisson_gibbs_kernel(
    indptr, factors, pos, other, tables, M, m_sum, a_prob, a_idx, L, lam, D, x, n_steps, rng,
    values, stats,
):  # fmt: skip
    n = x.size
    U = np.empty(D)
    width = 0
    for i in range(n):
        width = max(width, indptr[i + 1] - indptr[i])
    counts = np.zeros(width, dtype=np.int64)
    distinct = np.empty(width, dtype=np.int64)
    c = lam / L
    for t in range(n_steps):
        i = rng.integers(0, n)
        start = indptr[i]
        K = indptr[i + 1] - start
        B = rng.poisson((c + 1.0) * m_sum[i])
        nd = 0
        kept = 0
        for _ in range(B):  # Statement 1: split the envelope process, then thin it
            k = min(int(rng.random() * K), K - 1)
            if rng.random() >= a_prob[start + k]:
                k = a_idx[start + k]
            m = M[factors[start + k]]
            base = c * m
            if rng.random() * (base + m) < base + _phi_at(
                factors, pos, other, tables, start + k, x, x[i]
            ):
                if counts[k] == 0:
                    distinct[nd] = k
                    nd += 1
                counts[k] += 1
                kept += 1
        for v in range(D):
            acc = 0.0
            for j in range(nd):
                k = distinct[j]
                m = M[factors[start + k]]
                ph = _phi_at(factors, pos, other, tables, start + k, x, v)
                acc += float(counts[k]) * math.log1p(L * ph / (lam * m))
            U[v] = acc
        x[i] = _sample_softmax(U, rng.random())
        for j in range(nd):
            counts[distinct[j]] = 0
        stats[0, t] = nd
        stats[1, t] = B
        stats[2, t] = kept
        values[t] = x


def _graph(target: FactorGraphTarget) -> tuple[np.ndarray, ...]:
    return (target.adj_indptr, target.adj_factors, target.adj_pos, target.adj_other, target.tables)


def gibbs(
    target: FactorGraphTarget, n_steps: int, rng: np.random.Generator, x0: Any = None
) -> Chain:
    """Random-scan Gibbs (003, Alg. 1), compiled; same output as ``reference.gibbs``."""
    x = initial_state(target, x0)
    values = np.empty((n_steps, target.n_vars), dtype=np.int64)
    per_step = np.empty(n_steps, dtype=np.int64)
    _gibbs_kernel(*_graph(target), target.D, x, n_steps, rng, values, per_step)
    return Chain(values, int(target.D * per_step.sum()), {"factors_per_step": per_step})


def poisson_gibbs(
    target: FactorGraphTarget,
    n_steps: int,
    rng: np.random.Generator,
    x0: Any = None,
    lam: float = 10.0,
) -> Chain:
    """Poisson-Gibbs (003, Alg. 2), compiled; same output as ``reference.poisson_gibbs``."""
    lam = check_lam(lam)
    x = initial_state(target, x0)
    values = np.empty((n_steps, target.n_vars), dtype=np.int64)
    stats = np.empty((3, n_steps), dtype=np.int64)
    _poisson_gibbs_kernel(
        *_graph(target), target.M, target.m_sum, target.alias_prob, target.alias_idx,
        target.L, lam, target.D, x, n_steps, rng, values, stats,
    )  # fmt: skip
    evals = int(target.D * stats[0].sum() + stats[1].sum())
    extras = {"factors_per_step": stats[0], "draws_per_step": stats[1], "kept_per_step": stats[2]}
    return Chain(values, evals, extras)


KERNELS = (_gibbs_kernel, _poisson_gibbs_kernel)
