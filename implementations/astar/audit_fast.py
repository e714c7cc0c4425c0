"""Numba twins of :mod:`implementations.astar.audit`: the frontier and bound-report rows the
compiled searches keep, and the run-to-completion continuation, consuming the audit Generator in
the reference's order so both builds agree bit for bit.

Rows: a frontier node is ``[draw, lo (d), hi (d), x (d), v, state]`` (x unused unless MAX_AT);
a computed bound is ``[draw, lo (d), hi (d), M]``, the layout :func:`audit.pack` reads. The
searches only append rows; :func:`complete_all` continues every draw afterwards, in draw order,
from a Generator of its own (the reference continues each draw as it stops: the same draws,
since the continuation reads the frontier and changes nothing the later draws use). Kept out of
the search kernels, it compiles only when an audit runs.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from implementations.astar import audit
from implementations.astar.box_fast import (
    call_bound,
    call_log_lik,
    grow,
    log_mass,
    longest_side,
    sample_in,
)
from implementations.shared.fast import heap_pop, heap_push, trunc_gumbel_from_exponential

# NumPy integers, not Python ints: Numba types a Python int constant as a literal (``0`` is
# ``Literal[int](0)``) and compiles each helper it reaches once more for it. The kernels start
# their counters at ``np.int64(0)`` for the same reason.
MAX_AT, MAX, BELOW = np.int64(audit.MAX_AT), np.int64(audit.MAX), np.int64(audit.BELOW)

#: ``audit.excess`` compiled from its own source.
excess = njit(cache=False)(audit.excess)


@njit(cache=True)
def _box_row(rows, size, k, lo, hi):
    """Row ``size`` (the array grown when full) opened with draw k and the box [lo, hi]; returns
    the array."""
    if size == rows.shape[0]:
        rows = grow(rows)
    d = lo.size
    rows[size, 0] = k
    rows[size, 1 : 1 + d] = lo
    rows[size, 1 + d : 1 + 2 * d] = hi
    return rows


@njit(cache=True)
def front_add(fr, size, k, lo, hi, x, v, state):
    """Frontier row ``size`` of draw k (the array grown when full); returns the array and the
    new size."""
    fr = _box_row(fr, size, k, lo, hi)
    d = lo.size
    fr[size, 1 + 2 * d : 1 + 3 * d] = x
    fr[size, 1 + 3 * d] = v
    fr[size, 2 + 3 * d] = state
    return fr, size + 1


@njit(cache=True)
def bound_add(bl, size, k, lo, hi, m):
    """Bound-report row ``size``: draw k's bound m on [lo, hi]."""
    bl = _box_row(bl, size, k, lo, hi)
    bl[size, 1 + 2 * lo.size] = m
    return bl, size + 1


@njit(cache=True)
def _push(nodes, neg, seq, heap, used, hsize, lo, hi, x, v, state, priority):
    """Node ``used`` (a frontier row) into the continuation's heap by -priority, then by push
    order, as the reference's heapq tuples order them."""
    if used == nodes.shape[0]:
        nodes, neg, seq, heap = grow(nodes), grow(neg), grow(seq), grow(heap)
    nodes, _ = front_add(nodes, used, np.int64(0), lo, hi, x, v, state)
    neg[used] = -priority
    seq[used] = used
    hsize = heap_push(heap, hsize, neg, seq, used)
    return nodes, neg, seq, heap, used + 1, hsize


@njit(cache=True)
def complete(fr, start, stop, lower, box_lo, proposal, data, log_lik, bound, rng, cap):
    """``audit.complete`` on the frontier rows fr[start:stop]: (best, capped, lik, bnd)."""
    d = box_lo.size
    ncap = max(16, 2 * (stop - start))
    nodes = np.empty((ncap, 3 * d + 3))
    neg = np.empty(ncap)
    seq = np.empty(ncap, dtype=np.int64)
    heap = np.empty(ncap, dtype=np.int64)
    w = np.empty((6, d))  # six work vectors, rows of one block (indexed: see pm_fast)
    lo, hi, x, c_lo, c_hi, x_c = w[0], w[1], w[2], w[3], w[4], w[5]
    best = lower
    lik = bnd = expanded = 0
    used = hsize = np.int64(0)
    for i in range(start, stop):
        lo[:] = fr[i, 1 : 1 + d]
        hi[:] = fr[i, 1 + d : 1 + 2 * d]
        x[:] = fr[i, 1 + 2 * d : 1 + 3 * d]
        v = fr[i, 1 + 3 * d]
        state = int(fr[i, 2 + 3 * d])
        if state == BELOW and log_mass(proposal, box_lo, lo, hi) == -math.inf:
            continue
        m = call_bound(bound, lo, hi, data)
        bnd += 1
        if best < v + m:
            nodes, neg, seq, heap, used, hsize = _push(
                nodes, neg, seq, heap, used, hsize, lo, hi, x, v, state, v + m
            )
    capped = False
    while hsize > 0 and best < -neg[heap[0]]:
        if expanded == cap:
            capped = True
            break
        p, hsize = heap_pop(heap, hsize, neg, seq)
        expanded += 1
        lo[:] = nodes[p, 1 : 1 + d]
        hi[:] = nodes[p, 1 + d : 1 + 2 * d]
        x[:] = nodes[p, 1 + 2 * d : 1 + 3 * d]
        v = nodes[p, 1 + 3 * d]
        state = int(nodes[p, 2 + 3 * d])
        if state == BELOW:  # the largest point left in the box: TruncGumbel(log nu, v)
            v = trunc_gumbel_from_exponential(
                log_mass(proposal, box_lo, lo, hi), v, rng.standard_exponential()
            )
        if state != MAX_AT:
            sample_in(proposal, lo, hi, rng, x)
        lb = v + call_log_lik(log_lik, x, data)
        lik += 1
        if best < lb:
            best = lb
        j = longest_side(lo, hi)
        for side in range(2):
            c_lo[:] = lo
            c_hi[:] = hi
            if side == 0:
                c_hi[j] = x[j]
            else:
                c_lo[j] = x[j]
            c_nu = log_mass(proposal, box_lo, c_lo, c_hi)
            if c_nu == -math.inf:
                continue
            g_c = trunc_gumbel_from_exponential(c_nu, v, rng.standard_exponential())
            sample_in(proposal, c_lo, c_hi, rng, x_c)
            m_c = call_bound(bound, c_lo, c_hi, data)
            bnd += 1
            if best < g_c + m_c:
                nodes, neg, seq, heap, used, hsize = _push(
                    nodes, neg, seq, heap, used, hsize, c_lo, c_hi, x_c, g_c, MAX_AT, g_c + m_c
                )
    return best, capped, lik, bnd


@njit(cache=True)
def complete_all(fr, size, lowers, box_lo, proposal, data, log_lik, bound, rng, cap):
    """Every draw's continuation from its frontier rows (contiguous, in draw order): columns
    best, capped, likelihood and bound evaluations, one row a draw."""
    n = lowers.size
    out = np.zeros((n, 4))
    start = np.int64(0)
    for k in range(n):
        stop = start
        while stop < size and fr[stop, 0] == k:
            stop += 1
        best, capped, lik, bnd = complete(
            fr, start, stop, lowers[k], box_lo, proposal, data, log_lik, bound, rng, cap
        )
        out[k, 0] = best
        out[k, 1] = capped
        out[k, 2] = lik
        out[k, 3] = bnd
        start = stop
    return out


def extras(args, arng, report, lowers, fr, fr_size, gaps, bl, bl_size) -> dict[str, np.ndarray]:
    """The kernels' rows as :func:`audit.pack` returns the reference's. ``args``: the kernels'
    first six (box, proposal, data, compiled log_lik and bound); ``arng``: the audit's Generator
    (``audit.audit_generator`` of the sampler's, made before the search drew from it), or None
    without an audit."""
    box_lo, _, proposal, data, log_lik, bound = args
    n = lowers.size
    out = np.zeros((n, 4))
    if arng is not None:
        out = complete_all(
            fr, fr_size, lowers, box_lo, proposal, data, log_lik, bound, arng, audit.AUDIT_CAP
        )
    return audit.pack(
        box_lo.size,
        arng is not None,
        report,
        lowers,
        out[:, 0].copy(),
        out[:, 1] != 0.0,
        out[:, 2].astype(np.int64),
        out[:, 3].astype(np.int64),
        gaps,
        bl[:bl_size],
    )
