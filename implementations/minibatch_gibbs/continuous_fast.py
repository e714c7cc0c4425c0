"""Numba kernel for the six continuous samplers of ``continuous_reference.py``, and wrappers with
the same signatures.

One kernel serves all six (``method`` 0/1/2 = rejection/its/da, ``poisson`` 0/1), so there is a
single compiled signature. It consumes the Generator exactly as the reference does (integers for
i; poisson, then three randoms per proposed count; then two randoms per rejection proposal, or one
for the CDF inversion and one for the MH test), reads the same Chebyshev cosine table, and sums in
the same order, so both return identical chains, counts and Generator states.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import njit

from harness.spec import Chain
from harness.targets.continuous_factor_graph import ContinuousFactorGraphTarget, factor_value
from implementations.minibatch_gibbs.continuous_reference import (
    BISECTION_STEPS,
    METHODS,
    cheb_plan,
    check_budget,
    check_degree,
    initial_state,
    pack_chain,
    samplers,
)
from implementations.minibatch_gibbs.reference import check_positive
from implementations.shared.fast import poisson_count

# The reference's own scalar function, compiled: one source for the factor formulas.
_factor = njit(cache=True)(factor_value)


@njit(cache=True)
def _phi(factors, pos, other, coefs, types, slot, x, v):
    f = factors[slot]
    o = x[other[slot]]
    if pos[slot] == 0:
        return _factor(types[f], coefs[f, 0], coefs[f, 1], coefs[f, 2], coefs[f, 3], v, o)
    return _factor(types[f], coefs[f, 0], coefs[f, 1], coefs[f, 2], coefs[f, 3], o, v)


@njit(cache=True)
def _energy(
    v, start, stop, poisson, factors, pos, other, coefs, types, M, L, lam, x, counts, distinct,
    nd,
):  # fmt: skip
    acc = 0.0
    if poisson:
        for j in range(nd):
            k = distinct[j]
            m = M[factors[start + k]]
            ph = _phi(factors, pos, other, coefs, types, start + k, x, v)
            acc += float(counts[k]) * math.log1p(L * ph / (lam * m))
    else:
        for slot in range(start, stop):
            acc += _phi(factors, pos, other, coefs, types, slot, x, v)
    return acc


@njit(cache=True)
def _coefficients(f, table, out):
    N = f.size
    for j in range(N):
        acc = 0.0
        for q in range(N):
            acc += f[q] * table[j, q]
        out[j] = acc * 2.0 / N
    out[0] = out[0] * 0.5


@njit(cache=True)
def _clenshaw(c, n, t):
    b1 = 0.0
    b2 = 0.0
    for j in range(n - 1, 0, -1):
        tmp = c[j] + 2.0 * t * b1 - b2
        b2 = b1
        b1 = tmp
    return c[0] + t * b1 - b2


@njit(cache=True)
def _lift(c, n):
    s = 0.0
    for j in range(1, n):
        s += abs(c[j])
    if c[0] < s:
        c[0] = s


@njit(cache=True)
def _integral(c, n, C):
    # C has n + 1 entries; c is read as zero beyond n - 1 (as the reference's padding)
    c2 = c[2] if n > 2 else 0.0
    C[1] = c[0] - 0.5 * c2
    for j in range(2, n + 1):
        lo = c[j - 1]
        hi = c[j + 1] if j + 1 < n else 0.0
        C[j] = (lo - hi) / (2.0 * j)
    acc = 0.0
    for j in range(1, n + 1):
        if j % 2 == 0:
            acc += C[j]
        else:
            acc += -C[j]
    C[0] = -acc


@njit(cache=True)
def _invert(C, n, u, steps):
    goal = u * _clenshaw(C, n, 1.0)
    lo = -1.0
    hi = 1.0
    for _ in range(steps):
        mid = 0.5 * (lo + hi)
        if _clenshaw(C, n, mid) <= goal:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


@njit(cache=True)
def _kernel(
    method, poisson, mh, indptr, factors, pos, other, coefs, types, M, m_sum, a_prob, a_idx, L,
    lam, a, b, tm, table_m, tk, table_k, x, n_steps, rng, values, stats, bisect, max_prop,
    use_envelope, envelope,
):  # fmt: skip
    n = x.size
    width = 0
    for i in range(n):
        width = max(width, indptr[i + 1] - indptr[i])
    counts = np.zeros(max(width, 1), dtype=np.int64)
    distinct = np.empty(max(width, 1), dtype=np.int64)
    mid = 0.5 * (a + b)
    half = 0.5 * (b - a)
    nm = tm.size
    nk = tk.size
    vm = np.empty(nm)
    for j in range(nm):
        vm[j] = mid + half * tm[j]
    E = np.empty(nm)
    f = np.empty(max(nm, nk))
    cE = np.empty(nm)
    c = np.empty(max(nm, nk))
    C = np.empty(max(nm, nk) + 1)
    cl = lam / L
    for step in range(n_steps):
        i = rng.integers(0, n)
        start = indptr[i]
        stop = indptr[i + 1]
        K = stop - start
        B = 0
        nd = np.int64(0)  # not a literal 0: Numba would compile _energy for it too
        kept = 0
        if poisson:
            B = poisson_count((cl + 1.0) * m_sum[i], rng)
            xi = x[i]
            for _ in range(B):  # Statement 1: split the envelope process, then thin it
                kk = min(int(rng.random() * K), K - 1)
                if rng.random() >= a_prob[start + kk]:
                    kk = a_idx[start + kk]
                m = M[factors[start + kk]]
                base = cl * m
                if rng.random() * (base + m) < base + _phi(
                    factors, pos, other, coefs, types, start + kk, x, xi
                ):
                    if counts[kk] == 0:
                        distinct[nd] = kk
                        nd += 1
                    counts[kk] += 1
                    kept += 1
        wid = nd if poisson else K
        n_energy = 0
        if method == 0:
            if use_envelope:
                top = envelope
            elif poisson:
                top = float(kept) * math.log1p(L / lam)
            else:
                top = m_sum[i]
            while True:
                v = a + (b - a) * rng.random()
                e = _energy(
                    v, start, stop, poisson, factors, pos, other, coefs, types, M, L, lam, x,
                    counts, distinct, nd,
                )  # fmt: skip
                n_energy += 1
                if rng.random() < math.exp(e - top):
                    x[i] = v
                    stats[5, step] = 1
                    break
                if n_energy == max_prop:
                    break
            stats[2, step] = n_energy
        else:
            for j in range(nm):
                E[j] = _energy(
                    vm[j], start, stop, poisson, factors, pos, other, coefs, types, M, L, lam,
                    x, counts, distinct, nd,
                )  # fmt: skip
            n_energy += nm
            top = E[0]
            for j in range(nm):
                top = max(top, E[j])
            if method == 1:
                for j in range(nm):
                    f[j] = math.exp(E[j] - top)
                _coefficients(f[:nm], table_m, c)
                nc = nm
            else:
                for j in range(nm):
                    f[j] = E[j] - top
                _coefficients(f[:nm], table_m, cE)
                for j in range(nk):
                    f[j] = math.exp(_clenshaw(cE, nm, tk[j]))
                _coefficients(f[:nk], table_k, c)
                nc = nk
            _lift(c, nc)
            _integral(c, nc, C)
            t_new = _invert(C, nc + 1, rng.random(), bisect)
            v = min(max(mid + half * t_new, a), b)
            if mh:
                xo = x[i]
                t_old = min(max((xo - mid) / half, -1.0), 1.0)
                t_new = min(max((v - mid) / half, -1.0), 1.0)
                e_new = _energy(
                    v, start, stop, poisson, factors, pos, other, coefs, types, M, L, lam, x,
                    counts, distinct, nd,
                )  # fmt: skip
                e_old = _energy(
                    xo, start, stop, poisson, factors, pos, other, coefs, types, M, L, lam, x,
                    counts, distinct, nd,
                )  # fmt: skip
                n_energy += 2
                ratio = math.exp(e_new - e_old) * _clenshaw(c, nc, t_old)
                if rng.random() * _clenshaw(c, nc, t_new) < ratio:
                    x[i] = v
                    stats[2, step] = 1
            else:
                x[i] = v
                stats[2, step] = 1
        for j in range(nd):
            counts[distinct[j]] = 0
        stats[0, step] = wid
        stats[1, step] = B + wid * n_energy
        stats[3, step] = B
        stats[4, step] = kept
        values[step] = x


def run(
    target: ContinuousFactorGraphTarget,
    n_steps: int,
    rng: np.random.Generator,
    x0: Any,
    method: str,
    poisson: bool,
    lam: float = 1.0,
    m: int = 3,
    k: int = 10,
    mh: bool = True,
    max_proposals: int = 0,
    envelope: float | None = None,
) -> Chain:
    """Compiled ``continuous_reference.run``; same arguments, same output."""
    code = METHODS[method]
    if poisson:
        lam = check_positive(lam, "lam")
    m = check_degree("m", m)
    k = check_degree("k", k)
    max_proposals, envelope = check_budget(max_proposals, envelope)
    x = initial_state(target, x0)
    tm, table_m = cheb_plan(m)
    tk, table_k = cheb_plan(k)
    values = np.empty((n_steps, target.n_vars))
    stats = np.zeros((6, n_steps), dtype=np.int64)
    g = target
    use_envelope = envelope is not None
    _kernel(
        code, int(poisson), bool(mh), g.adj_indptr, g.adj_factors, g.adj_pos, g.adj_other,
        g.coefs, g.types, g.M, g.m_sum, g.alias_prob, g.alias_idx, g.L, float(lam), g.a, g.b,
        tm, table_m, tk, table_k, x, n_steps, rng, values, stats, BISECTION_STEPS,
        max_proposals, use_envelope, float(envelope) if use_envelope else 0.0,
    )  # fmt: skip
    return pack_chain(values, stats, code, poisson, max_proposals > 0 or use_envelope)


gibbs_rejection, pg_rejection, gibbs_its, pgits, gibbs_da, pgda = samplers(run, "compiled")

KERNELS = (_kernel,)
