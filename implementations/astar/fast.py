"""Numba kernels for A* sampling and rejection, and thin wrappers with the reference's signatures.

The kernels consume the Generator in the reference's order; the box-density helpers are
``box_fast.py``'s. A target's ``log_lik`` and ``bound`` are compiled from the same source the
reference calls.

A*'s kernel keeps the bound partition as a binary tree in arrays (``reference.Box``): reset
for every draw, or kept across the draws of one call with ``reuse``. With ``audit`` and
``report`` the kernels append frontier and bound rows (``audit_fast``), which the wrappers turn
into the reference's extras, continuing the draws in ``audit_fast.complete_all``.

A target's functions enter as first-class function values (``box_fast.user_function``), so a
kernel compiles once for all targets and is cached on disk.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from harness.spec import Draws
from implementations.astar import audit_fast as af
from implementations.astar import reference
from implementations.astar.audit import audit_generator
from implementations.astar.box_fast import (
    call_bound,
    call_log_lik,
    grow,
    log_mass,
    longest_side,
    sample_1d,
    sample_in,
    user_function,
)
from implementations.shared.fast import (
    heap_pop,
    heap_push,
    log_or_minus_inf,
    poisson_count,
    trunc_gumbel_from_exponential,
)

#: ``reference.share`` compiled from its own source (plain arithmetic, no NumPy calls).
_share = njit(cache=False)(reference.share)


@njit(cache=True)
def audit_arrays(n, d, audit, report):
    """The bound report's per-draw gaps and its rows, and the frontier rows (audit_fast's
    layouts)."""
    gaps = np.full(n, -math.inf)
    bl = np.empty((64 if report else 1, 2 * d + 2))
    fr = np.empty((64 if audit else 1, 3 * d + 3))
    return gaps, bl, fr


@njit(cache=True)
def draw_arrays(n, d, audit, report):
    """Per-draw outputs of a search: values, Gumbel maxima, likelihood and bound evaluation
    counts, then ``audit_arrays``."""
    gaps, bl, fr = audit_arrays(n, d, audit, report)
    return np.empty((n, d)), np.empty(n), np.zeros(n, np.int64), np.zeros(n, np.int64), gaps, bl, fr


@njit(cache=True)
def _visit(x, g, m, lower, best, data, log_lik, gaps, liks, k, report):
    """Evaluate o at x, a point of Gumbel value g in a box bounded by m: count it, record o's
    excess over m (``report``), and return the new lower bound max(lower, g + o), copying x to
    ``best`` when g + o raises it (reference.astar_one's leaf step)."""
    o = call_log_lik(log_lik, x, data)
    if report:
        gaps[k] = max(gaps[k], af.excess(o, m))
    lb = g + o
    liks[k] += 1
    if lower < lb:
        best[:] = x
        return lb
    return lower


@njit(cache=True)
def astar_kernel(
    box_lo, box_hi, proposal, data, log_lik, bound, extra_draws, reuse, audit, report, n, rng
):
    d = box_lo.size
    values, gumbels, liks, bnds, gaps, bl, fr = draw_arrays(n, d, audit, report)
    bl_size = fr_size = np.int64(0)  # not a literal 0: see audit_fast.MAX_AT
    # The bound partition, a binary tree (reference.Box): box b has the proposal mass t_nu[b],
    # the bound t_m[b] (its own once t_own[b]) and the children t_kid[b], t_kid[b] + 1 (-1: a
    # leaf). Without reuse it restarts from the root box for every draw.
    tcap = 64
    t_lo = np.empty((tcap, d))
    t_hi = np.empty((tcap, d))
    t_nu = np.empty(tcap)
    t_m = np.empty(tcap)
    t_own = np.zeros(tcap, dtype=np.bool_)
    t_kid = np.empty(tcap, dtype=np.int64)
    boxes = 0
    # Queue nodes: priority -(G + M), push order, Gumbel G, location (leaves only), box.
    cap = 64
    neg = np.empty(cap)
    seq = np.empty(cap, dtype=np.int64)
    g_ = np.empty(cap)
    x_ = np.empty((cap, d))
    b_ = np.empty(cap, dtype=np.int64)
    heap = np.empty(cap, dtype=np.int64)
    best = np.empty(d)
    x_k = np.empty(d)
    log_root = log_mass(proposal, box_lo, box_lo, box_hi)  # the same root for every draw
    for k in range(n):
        fresh = boxes == 0 or not reuse
        if fresh:
            t_lo[0] = box_lo
            t_hi[0] = box_hi
            t_nu[0] = log_root
            t_kid[0] = -1
            boxes = 1
        g_[0] = log_root - log_or_minus_inf(rng.standard_exponential())
        if t_kid[0] < 0:
            sample_in(proposal, box_lo, box_hi, rng, x_[0])
        if fresh:
            t_m[0] = call_bound(bound, box_lo, box_hi, data)
            t_own[0] = True
            bnds[k] += 1
            if report:
                bl, bl_size = af.bound_add(bl, bl_size, k, box_lo, box_hi, t_m[0])
        b_[0] = 0
        neg[0] = -(g_[0] + t_m[0])
        seq[0] = 0
        size = heap_push(heap, np.int64(0), neg, seq, np.int64(0))
        used = np.int64(1)
        lower = -math.inf
        while size > 0 and lower < -neg[heap[0]]:
            p, size = heap_pop(heap, size, neg, seq)
            b = b_[p]
            g = g_[p]
            left = t_kid[b]
            heir = -1  # a split leaf's children are both truncated below its last G
            if left < 0:  # a leaf: evaluate, draw more pairs (extra_draws), split at x_[p]
                lower = _visit(x_[p], g, t_m[b], lower, best, data, log_lik, gaps, liks, k, report)
                if extra_draws > 0.0:
                    if lower < g + t_m[b]:
                        count = poisson_count(extra_draws, rng)
                        while count > 0 and lower < g + t_m[b]:
                            g = trunc_gumbel_from_exponential(
                                t_nu[b], g, rng.standard_exponential()
                            )
                            sample_in(proposal, t_lo[b], t_hi[b], rng, x_k)
                            lower = _visit(
                                x_k, g, t_m[b], lower, best, data, log_lik, gaps, liks, k, report
                            )
                            count -= 1
                    if lower >= g + t_m[b]:
                        if audit:
                            fr, fr_size = af.front_add(
                                fr, fr_size, k, t_lo[b], t_hi[b], t_lo[b], g, af.BELOW
                            )
                        continue  # the rest of box b cannot beat LB
                if boxes + 2 > tcap:
                    tcap *= 2
                    t_lo, t_hi, t_nu, t_m = grow(t_lo), grow(t_hi), grow(t_nu), grow(t_m)
                    t_own, t_kid = grow(t_own), grow(t_kid)
                left = boxes
                boxes += 2
                t_kid[b] = left
                j = longest_side(t_lo[b], t_hi[b])
                for c in range(left, left + 2):
                    t_lo[c] = t_lo[b]
                    t_hi[c] = t_hi[b]
                    t_m[c] = t_m[b]
                    t_own[c] = False
                    t_kid[c] = -1
                t_hi[left, j] = x_[p, j]
                t_lo[left + 1, j] = x_[p, j]
                for c in range(left, left + 2):
                    t_nu[c] = log_mass(proposal, box_lo, t_lo[c], t_hi[c])
            elif rng.random() < _share(t_nu[left], t_nu[left + 1]):  # split in an earlier draw
                heir = left
            else:
                heir = left + 1
            for c in range(left, left + 2):
                if t_nu[c] == -math.inf:
                    continue
                if used + 1 >= cap:
                    cap *= 2
                    neg, seq, g_, x_ = grow(neg), grow(seq), grow(g_), grow(x_)
                    b_, heap = grow(b_), grow(heap)
                s = used
                if c == heir:
                    g_[s] = g
                else:
                    g_[s] = trunc_gumbel_from_exponential(t_nu[c], g, rng.standard_exponential())
                if t_kid[c] < 0:
                    sample_in(proposal, t_lo[c], t_hi[c], rng, x_[s])
                if lower < g_[s] + t_m[c] and not t_own[c]:  # the inherited bound may prune c
                    t_m[c] = call_bound(bound, t_lo[c], t_hi[c], data)
                    t_own[c] = True
                    bnds[k] += 1
                    if report:
                        bl, bl_size = af.bound_add(bl, bl_size, k, t_lo[c], t_hi[c], t_m[c])
                if lower < g_[s] + t_m[c]:
                    b_[s] = c
                    neg[s] = -(g_[s] + t_m[c])
                    seq[s] = s
                    size = heap_push(heap, size, neg, seq, s)
                    used += 1
                elif audit:
                    state = af.MAX_AT if t_kid[c] < 0 else af.MAX
                    fr, fr_size = af.front_add(
                        fr, fr_size, k, t_lo[c], t_hi[c], x_[s], g_[s], state
                    )
        values[k] = best
        gumbels[k] = lower
        if audit:  # the nodes left in the queue, in push order (seq = slot)
            for s in np.sort(heap[:size]):
                state = af.MAX_AT if t_kid[b_[s]] < 0 else af.MAX
                b = b_[s]
                fr, fr_size = af.front_add(fr, fr_size, k, t_lo[b], t_hi[b], x_[s], g_[s], state)
    return values, gumbels, liks, bnds, fr, fr_size, gaps, bl, bl_size


@njit(cache=True)
def drill_down_kernel(box_lo, box_hi, proposal, data, log_lik, bound, mode, audit, report, n, rng):
    values, gumbels, liks, bnds, gaps, bl, fr = draw_arrays(n, np.int64(1), audit, report)
    bl_size = fr_size = np.int64(0)  # not a literal 0: see audit_fast.MAX_AT
    lo = np.empty(1)
    hi = np.empty(1)
    away_lo = np.empty(1)
    away_hi = np.empty(1)
    x = np.empty(1)
    best = np.empty(1)
    log_root = log_mass(proposal, box_lo, box_lo, box_hi)
    for k in range(n):
        lo[0], hi[0] = box_lo[0], box_hi[0]
        g = log_root - log_or_minus_inf(rng.standard_exponential())
        sample_in(proposal, lo, hi, rng, x)
        lower = g + call_log_lik(log_lik, x, data)
        best[0] = x[0]
        liks[k] = 1
        while True:
            away_lo[0], away_hi[0] = lo[0], hi[0]
            if mode < x[0]:
                hi[0] = away_lo[0] = x[0]
            else:
                lo[0] = away_hi[0] = x[0]
            if audit:  # the side away from the mode: its points lie below g
                fr, fr_size = af.front_add(fr, fr_size, k, away_lo, away_hi, x, g, af.BELOW)
            log_c = log_mass(proposal, box_lo, lo, hi)
            if log_c == -math.inf:
                break
            g = trunc_gumbel_from_exponential(log_c, g, rng.standard_exponential())
            sample_in(proposal, lo, hi, rng, x)
            bnds[k] += 1
            m = call_bound(bound, lo, hi, data)
            if report:
                bl, bl_size = af.bound_add(bl, bl_size, k, lo, hi, m)
            if lower >= g + m:
                if audit:
                    fr, fr_size = af.front_add(fr, fr_size, k, lo, hi, x, g, af.MAX_AT)
                break
            lower = _visit(x, g, m, lower, best, data, log_lik, gaps, liks, k, report)
        values[k] = best
        gumbels[k] = lower
    return values, gumbels, liks, bnds, fr, fr_size, gaps, bl, bl_size


@njit(cache=True)
def os_star_kernel(
    box_lo, box_hi, proposal, data, log_lik, bound, strategy, refine_prob, reuse, report, n, rng
):
    d = box_lo.size
    values, gumbels, liks, bnds, gaps, bl, _ = draw_arrays(n, d, np.bool_(False), report)
    bl_size = np.int64(0)
    cap = 64
    p_lo = np.empty((cap, d))
    p_hi = np.empty((cap, d))
    log_nu = np.empty(cap)
    m_ = np.empty(cap)
    cum = np.empty(cap)
    x = np.empty(d)
    log_root = log_mass(proposal, box_lo, box_lo, box_hi)
    size = 0
    for k in range(n):
        if size == 0 or not reuse:  # the pieces restart from the box, or persist (reuse)
            p_lo[0] = box_lo
            p_hi[0] = box_hi
            log_nu[0] = log_root
            m_[0] = call_bound(bound, box_lo, box_hi, data)
            bnds[k] = 1
            size = 1
            if report:
                bl, bl_size = af.bound_add(bl, bl_size, k, box_lo, box_hi, m_[0])
        time = 0.0
        while True:
            top = -math.inf
            for i in range(size):
                top = max(top, log_nu[i] + m_[i])
            acc = 0.0
            for i in range(size):
                acc += math.exp(log_nu[i] + m_[i] - top)
                cum[i] = acc
            v = rng.random() * cum[size - 1]
            j = size - 1
            for i in range(size):
                if cum[i] > v:
                    j = i
                    break
            time += rng.standard_exponential() * math.exp(-(top + math.log(cum[size - 1])))
            sample_in(proposal, p_lo[j], p_hi[j], rng, x)
            liks[k] += 1
            o = call_log_lik(log_lik, x, data)
            if report:
                gaps[k] = max(gaps[k], af.excess(o, m_[j]))
            if math.log(1.0 - rng.random()) < o - m_[j]:
                values[k] = x
                gumbels[k] = -math.log(time)
                break
            if refine_prob < 1.0 and rng.random() >= refine_prob:
                continue
            if strategy != 1:  # reference.OS_STAR_STRATEGIES: 3 and 4 weigh by exp(M_j) too
                j = 0
                for i in range(1, size):
                    if strategy == 2 and log_nu[i] > log_nu[j]:
                        j = i
                    elif strategy != 2 and log_nu[i] + m_[i] > log_nu[j] + m_[j]:
                        j = i
                if strategy == 4:  # a fresh point of the piece, else its median
                    sample_in(proposal, p_lo[j], p_hi[j], rng, x)
                else:
                    for i in range(d):
                        x[i] = sample_1d(proposal, p_lo[j], p_hi[j], i, 0.5)
            if size + 1 >= cap:
                cap *= 2
                p_lo, p_hi, log_nu, m_ = grow(p_lo), grow(p_hi), grow(log_nu), grow(m_)
                cum = grow(cum)
            # Children replace piece j in place, the later pieces move up one (the reference's
            # list order, which the pick's running sum follows).
            for i in range(size - 1, j, -1):
                p_lo[i + 1], p_hi[i + 1] = p_lo[i], p_hi[i]
                log_nu[i + 1], m_[i + 1] = log_nu[i], m_[i]
            s = longest_side(p_lo[j], p_hi[j])
            p_lo[j + 1] = p_lo[j]
            p_hi[j + 1] = p_hi[j]
            p_hi[j, s] = x[s]
            p_lo[j + 1, s] = x[s]
            for c in (j, j + 1):
                log_nu[c] = log_mass(proposal, box_lo, p_lo[c], p_hi[c])
                m_[c] = call_bound(bound, p_lo[c], p_hi[c], data)
                if report:
                    bl, bl_size = af.bound_add(bl, bl_size, k, p_lo[c], p_hi[c], m_[c])
            bnds[k] += 2
            size += 1
    return values, gumbels, liks, bnds, gaps, bl, bl_size


@njit(cache=True)
def rejection_kernel(box_lo, box_hi, proposal, data, log_lik, bound, report, n, rng):
    d = box_lo.size
    values = np.empty((n, d))
    liks = np.zeros(n, dtype=np.int64)
    gaps, bl, _ = audit_arrays(n, d, np.bool_(False), report)
    bl_size = np.int64(0)
    m = call_bound(bound, box_lo, box_hi, data)
    if report:
        bl, bl_size = af.bound_add(bl, bl_size, np.int64(0), box_lo, box_hi, m)
    x = np.empty(d)
    for k in range(n):
        while True:
            sample_in(proposal, box_lo, box_hi, rng, x)
            liks[k] += 1
            o = call_log_lik(log_lik, x, data)
            if report:
                gaps[k] = max(gaps[k], af.excess(o, m))
            if math.log(1.0 - rng.random()) < o - m:
                values[k] = x
                break
    return values, liks, gaps, bl, bl_size


def kernel_args(target) -> tuple:
    if target.numba_problem:
        raise ValueError(
            f"target {target.name!r} is invalid for the numba implementation: "
            f"{target.numba_problem}; valid: the reference implementation"
        )
    return (
        np.ascontiguousarray(target.lo, dtype=np.float64),
        np.ascontiguousarray(target.hi, dtype=np.float64),
        np.ascontiguousarray(target.proposal, dtype=np.float64),
        np.ascontiguousarray(target.data, dtype=np.float64),
        user_function(target.log_lik, "log_lik", target.data.ndim),
        user_function(target.bound, "bound", target.data.ndim),
    )


def _values(target, values: np.ndarray) -> np.ndarray:
    return values[:, 0] if target.d == 1 else values


def _searched(target, values, gumbels, liks, bnds, extras=None) -> Draws:
    """A search's outputs as the reference returns them (``extras``: the audit's)."""
    return Draws(
        _values(target, values),
        int(liks.sum()),
        {"gumbel_max": gumbels, "draw_evals": liks, "bound_evals": bnds, **(extras or {})},
    )


def _audited(target, args, arng, report, kernel) -> Draws:
    values, gumbels, liks, bnds, fr, fr_size, gaps, bl, bl_size = kernel
    extras = af.extras(args, arng, report, gumbels, fr, fr_size, gaps, bl, bl_size)
    return _searched(target, values, gumbels, liks, bnds, extras)


def astar(
    target,
    n: int,
    rng: np.random.Generator,
    extra_draws: float = 0.0,
    reuse: bool = False,
    audit: bool = False,
    report_bounds: bool = False,
) -> Draws:
    args = kernel_args(target)
    arng = audit_generator(rng) if audit else None
    flags = (float(extra_draws), bool(reuse), bool(audit), bool(report_bounds))
    return _audited(target, args, arng, bool(report_bounds), astar_kernel(*args, *flags, n, rng))


def drill_down(
    target, n: int, rng: np.random.Generator, audit: bool = False, report_bounds: bool = False
) -> Draws:
    args = kernel_args(target)
    arng = audit_generator(rng) if audit else None
    flags = (float(target.mode), bool(audit), bool(report_bounds))
    kernel = drill_down_kernel(*args, *flags, n, rng)
    return _audited(target, args, arng, bool(report_bounds), kernel)


def os_star(
    target,
    n: int,
    rng: np.random.Generator,
    strategy: int = 1,
    refine_prob: float = 1.0,
    reuse: bool = False,
    report_bounds: bool = False,
) -> Draws:
    report = bool(report_bounds)
    args = kernel_args(target)
    values, gumbels, liks, bnds, gaps, bl, bl_size = os_star_kernel(
        *args, int(strategy), float(refine_prob), bool(reuse), report, n, rng
    )
    extras = af.extras(args, None, report, gumbels, None, 0, gaps, bl, bl_size)
    return _searched(target, values, gumbels, liks, bnds, extras)


def rejection(target, n: int, rng: np.random.Generator, report_bounds: bool = False) -> Draws:
    report = bool(report_bounds)
    args = kernel_args(target)
    values, liks, gaps, bl, bl_size = rejection_kernel(*args, report, n, rng)
    bnds = np.zeros(n, np.int64)
    bnds[0] = 1
    extras = af.extras(args, None, report, np.zeros(n), None, 0, gaps, bl, bl_size)
    return Draws(
        _values(target, values),
        int(liks.sum()),
        {"draw_evals": liks, "bound_evals": bnds, **extras},
    )
