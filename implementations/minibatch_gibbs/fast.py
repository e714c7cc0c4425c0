"""Numba kernels for Gibbs and Poisson-Gibbs, and thin wrappers with the reference's signatures.

Each kernel consumes the Generator exactly as ``reference.py`` does (integers for i, Exp(1)
arrivals for B, random for the alias draw and the thinning test, random for the conditional) and
sums in the same order, so both return identical chains, evaluation counts, extras and Generator
states.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import njit

from harness.spec import Chain
from harness.targets.factor_graph import FactorGraphTarget
from implementations.minibatch_gibbs.prefetch import prefetch
from implementations.minibatch_gibbs.reference import (
    check_positive,
    global_alias,
    pack_double_min_gibbs,
    pack_mgpmh,
    pack_poisson_gibbs,
    pack_poisson_mh,
    start_chain,
)
from implementations.shared.fast import poisson_count


@njit(cache=True)
def _site_scratch(indptr):
    """Per-slot counts (zero) and the list of distinct slots, sized for the largest A[i]."""
    width = 0
    for i in range(indptr.size - 1):
        width = max(width, indptr[i + 1] - indptr[i])
    return np.zeros(width, dtype=np.int64), np.empty(width, dtype=np.int64)


@njit(cache=True)
def _count(counts, distinct, nd, k):
    """s_k += 1, listing k on its first count; returns the new number of distinct slots."""
    if counts[k] == 0:
        distinct[nd] = k
        nd += 1
    counts[k] += 1
    return nd


@njit(cache=True)
def _alias_draw(prob, alias, start, K, rng):
    """One index of prob[start:start + K]'s alias table: a uniform slot, then its alias test."""
    k = min(int(rng.random() * K), K - 1)
    if rng.random() >= prob[start + k]:
        k = alias[start + k]
    return k


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
def _gibbs_kernel(indptr, factors, pos, other, tables, D, x, n_steps, rng, thin, values, per_step):
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
        if (t + 1) % thin == 0:
            values[t // thin] = x


#: Records of at most this many doubles (3 cache lines: D <= 4) are prefetched whole.
_WHOLE = 24


@njit(cache=True)
def _prefetch_record(rec, W, j):
    """Slot j's record: whole when small (one wave of reads per proposal), else only its header
    (a step needs 2 of a large record's lines; the table row follows once x(other) is read)."""
    r = j * W
    if W <= _WHOLE:
        for q in range(0, W, 8):  # 8 doubles = one 64-byte line
            prefetch(rec, r + q)
        prefetch(rec, r + W - 1)
    else:
        prefetch(rec, r)
        prefetch(rec, r + 3)


@njit(cache=True)
def _draw_proposals(rec, W, start, K, B, rng, slots, u_alias, u_test, o):
    """Statement 1's three uniforms for each of the B proposals on A[i], in the reference's order
    (slot, alias test, thinning test), into slots/u_alias/u_test[o:o + B]; each slot's record is
    prefetched as soon as the slot is known."""
    for b in range(o, o + B):
        j = start + min(int(rng.random() * K), K - 1)
        _prefetch_record(rec, W, j)
        slots[b] = j
        u_alias[b] = rng.random()
        u_test[b] = rng.random()


@njit(cache=True)
def _aim_proposals(rec, W, D, start, B, x, slots, u_alias, o):
    """The alias tests of drawn proposals, prefetching the records of taken aliases and, for a
    large record, the table row T[x(other)] at the current x (a hint: if x(other) changes
    before the test, the test reads another row, at the cost of a miss)."""
    for b in range(o, o + B):
        r = slots[b] * W
        if u_alias[b] >= rec[r]:
            slots[b] = start + int(rec[r + 1])
            _prefetch_record(rec, W, slots[b])
            r = slots[b] * W
        if W > _WHOLE:
            row = r + 4 + x[int(rec[r + 3])] * D
            prefetch(rec, row)
            prefetch(rec, row + D - 1)


@njit(cache=True)
def _thin_proposals(rec, W, D, c, start, B, xi, x, slots, u_test, o, counts, distinct):
    """The thinning tests of aimed proposals at the current x, in proposal order (003, Alg. 2 /
    Statement 1). Fills counts/distinct, returns (|S|, sum s)."""
    nd = np.int64(0)  # not a literal 0, here and below: Numba compiles a callee again for one
    kept = 0
    for b in range(o, o + B):
        r = slots[b] * W
        m = rec[r + 2]
        base = c * m
        if u_test[b] * (base + m) < base + rec[r + 4 + x[int(rec[r + 3])] * D + xi]:
            nd = _count(counts, distinct, nd, slots[b] - start)
            kept += 1
    return nd, kept


@njit(cache=True)
def _grown(a, cap, new_cap):
    """A scratch array of three parts of cap entries, each part widened to new_cap."""
    b = np.empty(3 * new_cap, dtype=a.dtype)
    for q in range(3):
        b[q * new_cap : q * new_cap + cap] = a[q * cap : (q + 1) * cap]
    return b


@njit(cache=True)
def _poisson_gibbs_kernel(indptr, rec, m_sum, L, lam, D, x, n_steps, rng, thin, values, stats):
    """003, Alg. 2 with Statement 1's counts, on ``target.slot_records``, pipelined over steps.

    No draw depends on x (i; B from m_sum[i]; per proposal the slot, alias and thinning
    uniforms; the conditional's uniform), so iteration t draws step t + 2, in the reference's
    order (the stream is consumed step after step), runs the alias tests of step t + 1 and
    then runs step t: its thinning tests and U_s(v) = sum_S s_phi log(1 + L phi / (lam M_phi))
    at every v. The random reads of a step's records (one per proposal; the graph is far larger
    than the caches at degree 1000) thus overlap each other and two steps of work.
    """
    n = x.size
    W = 4 + D * D
    U = np.empty(D)
    counts, distinct = _site_scratch(indptr)
    c = lam / L
    cap = np.int64(64)
    slots = np.empty(3 * cap, dtype=np.int64)  # [(t % 3) * cap, ...): step t's proposals
    u_alias = np.empty(3 * cap)
    u_test = np.empty(3 * cap)
    i_of = np.zeros(3, dtype=np.int64)
    B_of = np.zeros(3, dtype=np.int64)
    u_of = np.zeros(3)
    for t in range(-2, n_steps):
        if t + 2 < n_steps:
            p = (t + 2) % 3
            i = rng.integers(0, n)
            B = poisson_count((c + 1.0) * m_sum[i], rng)
            if B > cap:
                slots = _grown(slots, cap, 2 * B)
                u_alias = _grown(u_alias, cap, 2 * B)
                u_test = _grown(u_test, cap, 2 * B)
                cap = 2 * B
            start = indptr[i]
            K = indptr[i + 1] - start
            _draw_proposals(rec, W, start, K, B, rng, slots, u_alias, u_test, p * cap)
            i_of[p], B_of[p], u_of[p] = i, B, rng.random()
        if 0 <= t + 1 < n_steps:
            p = (t + 1) % 3
            _aim_proposals(rec, W, D, indptr[i_of[p]], B_of[p], x, slots, u_alias, p * cap)
        if t < 0:
            continue
        p = t % 3
        i, B = i_of[p], B_of[p]
        start = indptr[i]
        nd, kept = _thin_proposals(
            rec, W, D, c, start, B, x[i], x, slots, u_test, p * cap, counts, distinct
        )
        # Each U[v] sums over S in the reference's order; S outer reads each record once.
        U[:] = 0.0
        for j in range(nd):
            k = distinct[j]
            r = (start + k) * W
            m = rec[r + 2]
            s = float(counts[k])
            row = r + 4 + x[int(rec[r + 3])] * D
            for v in range(D):
                U[v] += s * math.log1p(L * rec[row + v] / (lam * m))
        x[i] = _sample_softmax(U, u_of[p])
        for j in range(nd):
            counts[distinct[j]] = 0
        stats[0, t] = nd
        stats[1, t] = B
        stats[2, t] = kept
        if (t + 1) % thin == 0:
            values[t // thin] = x


def _graph(target: FactorGraphTarget) -> tuple[np.ndarray, ...]:
    return (target.adj_indptr, target.adj_factors, target.adj_pos, target.adj_other, target.tables)


def gibbs(
    target: FactorGraphTarget,
    n_steps: int,
    rng: np.random.Generator,
    x0: Any = None,
    thin: int = 1,
) -> Chain:
    """Random-scan Gibbs (003, Alg. 1), compiled; same output as ``reference.gibbs``."""
    thin, x, values = start_chain(target, n_steps, x0, thin)
    per_step = np.empty(n_steps, dtype=np.int64)
    _gibbs_kernel(*_graph(target), target.D, x, n_steps, rng, thin, values, per_step)
    return Chain(values, int(target.D * per_step.sum()), {"factors_per_step": per_step})


def poisson_gibbs(
    target: FactorGraphTarget,
    n_steps: int,
    rng: np.random.Generator,
    x0: Any = None,
    lam: float = 10.0,
    thin: int = 1,
) -> Chain:
    """Poisson-Gibbs (003, Alg. 2), compiled; same output as ``reference.poisson_gibbs``."""
    lam = check_positive(lam, "lam")
    thin, x, values = start_chain(target, n_steps, x0, thin)
    stats = np.empty((3, n_steps), dtype=np.int64)
    _poisson_gibbs_kernel(
        target.adj_indptr, target.slot_records, target.m_sum, target.L, lam, target.D, x,
        n_steps, rng, thin, values, stats,
    )  # fmt: skip
    return pack_poisson_gibbs(target, values, stats)


# --- Poisson-MH and the De Sa et al. 2018 baselines; draw order as in reference.py ---


@njit(cache=True)
def _poisson_counts(
    factors, pos, other, tables, M, a_prob, a_idx, c, start, K, B, i, x, rng, counts, distinct
):  # fmt: skip
    """Statement 1 on A[i] given B: fills counts/distinct, returns (|S|, sum s)."""
    nd = np.int64(0)
    kept = 0
    for _ in range(B):
        k = _alias_draw(a_prob, a_idx, start, K, rng)
        m = M[factors[start + k]]
        base = c * m
        if rng.random() * (base + m) < base + _phi_at(
            factors, pos, other, tables, start + k, x, x[i]
        ):
            nd = _count(counts, distinct, nd, k)
            kept += 1
    return nd, kept


@njit(cache=True)
def _global_estimate(scopes, tables, M, g_prob, g_idx, psi, lam, x, i, u, rng):
    F = M.size
    B = poisson_count(lam, rng)
    acc = 0.0
    for _ in range(B):
        f = _alias_draw(g_prob, g_idx, np.int64(0), F, rng)
        a, b = scopes[f, 0], scopes[f, 1]
        xa = u if a == i else x[a]
        xb = u if b == i else x[b]
        acc += math.log1p(psi * tables[f, xa, xb] / (lam * M[f]))
    return acc, B


@njit(cache=True)
def _poisson_mh_kernel(
    indptr, factors, pos, other, tables, M, m_sum, a_prob, a_idx, L, lam, D, x, n_steps, rng,
    thin, values, stats,
):  # fmt: skip
    n = x.size
    counts, distinct = _site_scratch(indptr)
    c = lam / L
    for t in range(n_steps):
        i = rng.integers(0, n)
        cur = x[i]
        v = rng.integers(0, D - 1)
        if v >= cur:
            v += 1
        start = indptr[i]
        K = indptr[i + 1] - start
        B = poisson_count((c + 1.0) * m_sum[i], rng)
        nd, kept = _poisson_counts(
            factors, pos, other, tables, M, a_prob, a_idx, c, start, K, B, i, x, rng, counts,
            distinct,
        )  # fmt: skip
        u_new = 0.0
        u_cur = 0.0
        for j in range(nd):
            k = distinct[j]
            m = M[factors[start + k]]
            s = float(counts[k])
            u_new += s * math.log1p(
                L * _phi_at(factors, pos, other, tables, start + k, x, v) / (lam * m)
            )
            u_cur += s * math.log1p(
                L * _phi_at(factors, pos, other, tables, start + k, x, cur) / (lam * m)
            )
        accepted = rng.random() < math.exp(min(0.0, u_new - u_cur))
        if accepted:
            x[i] = v
        for j in range(nd):
            counts[distinct[j]] = 0
        stats[0, t] = nd
        stats[1, t] = B
        stats[2, t] = kept
        stats[3, t] = 1 if accepted else 0
        if (t + 1) % thin == 0:
            values[t // thin] = x


@njit(cache=True)
def _min_gibbs_kernel(
    scopes, tables, M, g_prob, g_idx, psi, lam, D, x, n_steps, rng, thin, values, per_step
):
    n = x.size
    U = np.empty(D)
    eps, first = _global_estimate(
        scopes, tables, M, g_prob, g_idx, psi, lam, x, np.int64(-1), np.int64(0), rng
    )
    for t in range(n_steps):
        i = rng.integers(0, n)
        draws = 0
        for u in range(D):
            if u == x[i]:
                U[u] = eps
            else:
                e, b = _global_estimate(scopes, tables, M, g_prob, g_idx, psi, lam, x, i, u, rng)
                U[u] = e
                draws += b
        v = _sample_softmax(U, rng.random())
        x[i] = v
        eps = U[v]
        per_step[t] = draws
        if (t + 1) % thin == 0:
            values[t // thin] = x
    return first


@njit(cache=True)
def _local_proposal(
    factors, pos, other, tables, M, m_sum, a_prob, a_idx, L, lam, D, start, K, i, x, rng, counts,
    distinct, eps,
):  # fmt: skip
    """MGPMH's proposal energies into eps; returns (|S|, B). See reference.local_proposal."""
    B = poisson_count(lam / L * m_sum[i], rng)
    nd = np.int64(0)
    for _ in range(B):
        nd = _count(counts, distinct, nd, _alias_draw(a_prob, a_idx, start, K, rng))
    for v in range(D):
        acc = 0.0
        for j in range(nd):
            k = distinct[j]
            m = M[factors[start + k]]
            ph = _phi_at(factors, pos, other, tables, start + k, x, v)
            acc += float(counts[k]) * (L * ph / (lam * m))
        eps[v] = acc
    for j in range(nd):
        counts[distinct[j]] = 0
    return nd, B


@njit(cache=True)
def _local_energy(factors, pos, other, tables, start, stop, x, v):
    acc = 0.0
    for slot in range(start, stop):
        acc += _phi_at(factors, pos, other, tables, slot, x, v)
    return acc


@njit(cache=True)
def _mgpmh_kernel(
    indptr, factors, pos, other, tables, M, m_sum, a_prob, a_idx, L, lam, D, x, n_steps, rng,
    thin, values, stats,
):  # fmt: skip
    n = x.size
    counts, distinct = _site_scratch(indptr)
    eps = np.empty(D)
    for t in range(n_steps):
        i = rng.integers(0, n)
        start, stop = indptr[i], indptr[i + 1]
        nd, B = _local_proposal(
            factors, pos, other, tables, M, m_sum, a_prob, a_idx, L, lam, D, start, stop - start,
            i, x, rng, counts, distinct, eps,
        )  # fmt: skip
        cur = x[i]
        v = _sample_softmax(eps, rng.random())
        u = rng.random()
        exact = 0
        accepted = 1
        if v != cur:
            exact = stop - start
            d_new = _local_energy(factors, pos, other, tables, start, stop, x, v)
            d_cur = _local_energy(factors, pos, other, tables, start, stop, x, cur)
            log_a = (d_new - d_cur) + (eps[cur] - eps[v])
            accepted = 1 if u < math.exp(min(0.0, log_a)) else 0
            if accepted == 1:
                x[i] = v
        stats[0, t] = nd
        stats[1, t] = B
        stats[2, t] = exact
        stats[3, t] = accepted
        if (t + 1) % thin == 0:
            values[t // thin] = x


@njit(cache=True)
def _double_min_kernel(
    indptr, factors, pos, other, tables, M, m_sum, a_prob, a_idx, L, lam, D, scopes, g_prob,
    g_idx, psi, lam2, x, n_steps, rng, thin, values, stats,
):  # fmt: skip
    n = x.size
    counts, distinct = _site_scratch(indptr)
    rho = np.empty(D)
    eps, first = _global_estimate(
        scopes, tables, M, g_prob, g_idx, psi, lam2, x, np.int64(-1), np.int64(0), rng
    )
    for t in range(n_steps):
        i = rng.integers(0, n)
        start, stop = indptr[i], indptr[i + 1]
        nd, B = _local_proposal(
            factors, pos, other, tables, M, m_sum, a_prob, a_idx, L, lam, D, start, stop - start,
            i, x, rng, counts, distinct, rho,
        )  # fmt: skip
        cur = x[i]
        v = _sample_softmax(rho, rng.random())
        eps_y, b2 = _global_estimate(scopes, tables, M, g_prob, g_idx, psi, lam2, x, i, v, rng)
        log_a = (eps_y - eps) + (rho[cur] - rho[v])
        accepted = 1 if rng.random() < math.exp(min(0.0, log_a)) else 0
        if accepted == 1:
            x[i] = v
            eps = eps_y
        stats[0, t] = nd
        stats[1, t] = B
        stats[2, t] = b2
        stats[3, t] = accepted
        if (t + 1) % thin == 0:
            values[t // thin] = x
    return first


def _local(target: FactorGraphTarget) -> tuple[Any, ...]:
    return (
        *_graph(target), target.M, target.m_sum, target.alias_prob, target.alias_idx, target.L,
    )  # fmt: skip


def _local_chain(
    kernel: Any, target: FactorGraphTarget, n_steps: int, rng: np.random.Generator, x0: Any,
    lam: float, thin: int,
) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Run a single-site kernel on a local minibatch (``_poisson_mh_kernel``, ``_mgpmh_kernel``:
    the same arguments); returns the kept states and the four rows of per-step statistics."""
    lam = check_positive(lam, "lam")
    thin, x, values = start_chain(target, n_steps, x0, thin)
    stats = np.empty((4, n_steps), dtype=np.int64)
    kernel(*_local(target), lam, target.D, x, n_steps, rng, thin, values, stats)
    return values, stats


def poisson_mh(
    target: FactorGraphTarget,
    n_steps: int,
    rng: np.random.Generator,
    x0: Any = None,
    lam: float = 10.0,
    thin: int = 1,
) -> Chain:
    """Poisson-MH, single site, compiled; same output as ``reference.poisson_mh``."""
    return pack_poisson_mh(*_local_chain(_poisson_mh_kernel, target, n_steps, rng, x0, lam, thin))


def min_gibbs(
    target: FactorGraphTarget,
    n_steps: int,
    rng: np.random.Generator,
    x0: Any = None,
    lam: float = 10.0,
    thin: int = 1,
) -> Chain:
    """MIN-Gibbs, compiled; same output as ``reference.min_gibbs``."""
    lam = check_positive(lam, "lam")
    thin, x, values = start_chain(target, n_steps, x0, thin)
    g_prob, g_idx = global_alias(target)
    per_step = np.empty(n_steps, dtype=np.int64)
    first = _min_gibbs_kernel(
        target.scopes, target.tables, target.M, g_prob, g_idx, target.psi, lam, target.D, x,
        n_steps, rng, thin, values, per_step,
    )  # fmt: skip
    return Chain(values, int(first + per_step.sum()), {"factors_per_step": per_step})


def mgpmh(
    target: FactorGraphTarget,
    n_steps: int,
    rng: np.random.Generator,
    x0: Any = None,
    lam: float = 10.0,
    thin: int = 1,
) -> Chain:
    """MGPMH, compiled; same output as ``reference.mgpmh``."""
    values, stats = _local_chain(_mgpmh_kernel, target, n_steps, rng, x0, lam, thin)
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
    """DoubleMIN-Gibbs, compiled; same output as ``reference.double_min_gibbs``."""
    lam = check_positive(lam, "lam")
    lam2 = check_positive(lam2, "lam2")
    thin, x, values = start_chain(target, n_steps, x0, thin)
    g_prob, g_idx = global_alias(target)
    stats = np.empty((4, n_steps), dtype=np.int64)
    first = _double_min_kernel(
        *_local(target), lam, target.D, target.scopes, g_prob, g_idx, target.psi, lam2, x,
        n_steps, rng, thin, values, stats,
    )  # fmt: skip
    return pack_double_min_gibbs(target, values, stats, first)


#: Each spec's kernels, by spec name.
KERNELS = {
    "gibbs": (_gibbs_kernel,),
    "poisson-gibbs": (_poisson_gibbs_kernel,),
    "poisson-mh": (_poisson_mh_kernel,),
    "min-gibbs": (_min_gibbs_kernel,),
    "mgpmh": (_mgpmh_kernel,),
    "double-min-gibbs": (_double_min_kernel,),
}
