"""Numba kernels for PM-A* and A* without a bound (004_b270422b62f00607.txt, Alg. 1 and 3), the
balanced tree compiled from its reference source, the selection benchmark's loops, and thin
wrappers with the reference's (:mod:`implementations.astar.pm_reference`) signatures. The
box-density helpers (proposal mass, sampling, splits) are those of
:mod:`implementations.astar.box_fast`, the audit's rows those of ``audit_fast``.
"""

from __future__ import annotations

import math
import types

import numpy as np
from numba import njit

from harness.spec import Draws
from implementations.astar import audit_fast as af
from implementations.astar import gumbel_tree, pm_reference
from implementations.astar.audit import audit_generator
from implementations.astar.box_fast import (
    call_bound,
    call_log_lik,
    call_log_lik_grad,
    grow,
    log_mass,
    longest_side,
    no_grad,
    sample_in,
    user_function,
)
from implementations.astar.fast import draw_arrays, kernel_args
from implementations.shared.fast import (
    heap_pop,
    heap_push,
    log_or_minus_inf,
    trunc_gumbel_from_exponential,
)


def _compile_module(module) -> types.SimpleNamespace:
    """Every function ``module`` defines, compiled from its own source, each calling the others'
    compiled versions (the reference runs the same source uncompiled)."""
    namespace = dict(vars(module))
    names = [
        name
        for name, fn in vars(module).items()
        if isinstance(fn, types.FunctionType) and fn.__module__ == module.__name__
    ]
    for name in names:
        fn = namespace[name]
        plain = types.FunctionType(fn.__code__, namespace, name, fn.__defaults__)
        namespace[name] = njit(cache=False)(plain)
    return types.SimpleNamespace(**{name: namespace[name] for name in names})


tree = _compile_module(gumbel_tree)
_tree_new, _tree_grow, _tree_full = tree.tree_new, tree.tree_grow, tree.tree_full
_tree_insert, _tree_delete, _tree_draw = tree.tree_insert, tree.tree_delete, tree.tree_draw
_draw_linear = tree.draw_linear
_OWNER = gumbel_tree.OWNER


@njit(cache=True)
def _log_density(proposal, origin, x):
    """The proposal's log density i(x), coordinates added in order (reference.log_proposal)."""
    total = 0.0
    for j in range(x.size):
        code, a, b = int(proposal[j, 0]), proposal[j, 1], proposal[j, 2]
        if code == 0:
            z = (x[j] - a) / b
            total += -0.5 * z * z - math.log(b) - 0.5 * math.log(2.0 * math.pi)
        elif code == 1:
            total += -math.log(b - a)
        else:
            total += math.log(b) - b * (x[j] - origin[j])
    return total


_LSE = tree.lse


@njit(cache=True)
def pm_search_kernel(
    box_lo,
    box_hi,
    proposal,
    data,
    log_lik,
    bound,
    log_lik_grad,
    select,
    particles,
    horizon,
    regions_m,
    estimator,
    step,
    audit,
    report,
    n,
    rng,
):
    """pm_reference.pm_search_one for n draws; ``select`` 0, 1, 2 = probability-matching,
    max-gumbel, max-bound (pm_reference.SELECTIONS order); ``regions_m``: per-region bounds;
    ``estimator`` 0, 1 = prior, trajectory (pm_reference.ESTIMATORS); ``audit`` and ``report``
    keep the frontier and bound rows (audit_fast)."""
    d = box_lo.size
    values, gumbels, liks, bnds, gaps, bl, fr = draw_arrays(n, d, audit, report)
    expanded = np.zeros(n, dtype=np.int64)
    exact = np.zeros(n, dtype=np.bool_)
    traces = np.full((n, horizon), np.nan)
    bl_size = fr_size = np.int64(0)  # not a literal 0: see audit_fast.MAX_AT
    pm = select == 0
    if not pm:
        regions_m = select == 2
    log_w_shift = math.log(particles)
    # Work vectors, rows of one block; indexed rather than unpacked, which would give 'A'
    # (any-layout) views and a second compile of every helper that the search shares with A*.
    w = np.empty((6, d))
    best, x_c, x_p, grad, c_lo, c_hi = w[0], w[1], w[2], w[3], w[4], w[5]
    ys, log_ws = np.empty((2, particles))
    for k in range(n):
        cap = 64
        r_lo = np.empty((cap, d))
        r_hi = np.empty((cap, d))
        r_nu = np.empty(cap)
        r_g = np.empty(cap)
        r_x = np.empty((cap, d))
        r_m = np.empty(cap)
        r_alive = np.zeros(cap, dtype=np.bool_)
        r_slots = np.empty((cap, particles), dtype=np.int64)
        neg = np.empty(cap)
        seq = np.empty(cap, dtype=np.int64)
        heap = np.empty(cap, dtype=np.int64)
        size = used = np.int64(0)
        fl, it, meta, free, stack = _tree_new(max(16, 4 * particles))
        m_all = call_bound(bound, box_lo, box_hi, data)
        bnds[k] += 1
        if report:
            bl, bl_size = af.bound_add(bl, bl_size, k, box_lo, box_hi, m_all)
        log_nu = log_mass(proposal, box_lo, box_lo, box_hi)
        g = log_nu - log_or_minus_inf(rng.standard_exponential())
        sample_in(proposal, box_lo, box_hi, rng, x_c)
        y = call_log_lik(log_lik, x_c, data)
        if report:
            gaps[k] = max(gaps[k], af.excess(y, m_all))
        best_g = g + y
        best[:] = x_c
        liks[k] += 1
        # The root's region, then every child region that survives, is added below by the same
        # steps (the reference's ``add``): lo, hi in c_lo, c_hi, its point in x_c.
        c_lo[:] = box_lo
        c_hi[:] = box_hi
        c_nu, g_c, y_c, m_c = log_nu, g, y, m_all
        parent = -1
        side = 2
        root = True
        n_exp = 0
        while True:
            if root or side < 2:
                if not root:
                    # Child ``side`` of region ``parent``, split at its point.
                    s = longest_side(r_lo[parent], r_hi[parent])
                    c_lo[:] = r_lo[parent]
                    c_hi[:] = r_hi[parent]
                    if side == 0:
                        c_hi[s] = r_x[parent, s]
                    else:
                        c_lo[s] = r_x[parent, s]
                    side += 1
                    c_nu = log_mass(proposal, box_lo, c_lo, c_hi)
                    if c_nu == -math.inf:
                        continue
                    g_c = trunc_gumbel_from_exponential(
                        c_nu, r_g[parent], rng.standard_exponential()
                    )
                    sample_in(proposal, c_lo, c_hi, rng, x_c)
                    y_c = call_log_lik(log_lik, x_c, data)
                    liks[k] += 1
                    if best_g < g_c + y_c:
                        best_g = g_c + y_c
                        best[:] = x_c
                    m_c = m_all
                    if regions_m:
                        m_c = call_bound(bound, c_lo, c_hi, data)
                        bnds[k] += 1
                        if report:
                            bl, bl_size = af.bound_add(bl, bl_size, k, c_lo, c_hi, m_c)
                    if report:
                        gaps[k] = max(gaps[k], af.excess(y_c, m_c))
                    if not best_g < g_c + m_c:
                        if audit:  # dropped when made: its points left lie below g_c
                            fr, fr_size = af.front_add(
                                fr, fr_size, k, c_lo, c_hi, x_c, g_c, af.BELOW
                            )
                        continue
                # add(region): arrays, heap, particles
                if used == cap:
                    cap *= 2
                    r_lo, r_hi, r_x, r_slots = grow(r_lo), grow(r_hi), grow(r_x), grow(r_slots)
                    r_nu, r_g, r_m = grow(r_nu), grow(r_g), grow(r_m)
                    r_alive, neg, seq, heap = grow(r_alive), grow(neg), grow(seq), grow(heap)
                r = used
                used += 1
                r_lo[r] = c_lo
                r_hi[r] = c_hi
                r_nu[r] = c_nu
                r_g[r] = g_c
                r_x[r] = x_c
                r_m[r] = m_c
                r_alive[r] = True
                if pm:
                    ys[0] = y_c
                    if estimator == 1:  # reference.trajectory
                        log_ws[0] = _log_density(proposal, box_lo, x_c)
                        x_p[:] = x_c
                        for i in range(1, particles):
                            call_log_lik_grad(log_lik_grad, x_p, data, grad)
                            liks[k] += 1
                            norm2 = 0.0
                            for j in range(d):
                                norm2 += grad[j] * grad[j]
                            norm = math.sqrt(norm2)
                            if norm > 0.0 and math.isfinite(norm):
                                scale = step / norm
                                for j in range(d):
                                    x_p[j] = min(max(x_p[j] + scale * grad[j], c_lo[j]), c_hi[j])
                            ys[i] = call_log_lik(log_lik, x_p, data)
                            liks[k] += 1
                            log_ws[i] = _log_density(proposal, box_lo, x_p)
                        total = -math.inf
                        for i in range(particles):
                            total = _LSE(total, log_ws[i])
                        for i in range(particles):
                            log_ws[i] = log_ws[i] - total
                    else:
                        for i in range(1, particles):
                            sample_in(proposal, c_lo, c_hi, rng, x_p)
                            ys[i] = call_log_lik(log_lik, x_p, data)
                            liks[k] += 1
                        for i in range(particles):
                            log_ws[i] = -log_w_shift
                    for i in range(particles):
                        log_w = c_nu + log_ws[i]
                        if _tree_full(fl, meta):
                            fl, it, free = _tree_grow(fl, it, free)
                        r_slots[r, i] = _tree_insert(
                            fl,
                            it,
                            meta,
                            free,
                            stack,
                            g_c + ys[i],
                            log_w + ys[i],
                            log_w - g_c,
                            rng.random(),
                            r,
                        )
                neg[r] = -(g_c + m_c)
                seq[r] = r
                size = heap_push(heap, size, neg, seq, r)
                root = False
                continue
            # Both children of ``parent`` are done (or the root was added): one expansion ends.
            if parent >= 0:
                if n_exp < horizon:
                    traces[k, n_exp] = best_g
                n_exp += 1
            # Pick the next region to expand.
            picked = -1
            while picked < 0:
                while size > 0 and not r_alive[heap[0]]:
                    _, size = heap_pop(heap, size, neg, seq)
                if size == 0 or best_g >= -neg[heap[0]]:
                    exact[k] = True
                    break
                if horizon > 0 and n_exp == horizon:
                    break
                if pm:
                    _, slot = _tree_draw(fl, it, meta, rng.standard_exponential(), rng.random())
                    r = it[slot, _OWNER]
                else:
                    r, size = heap_pop(heap, size, neg, seq)
                r_alive[r] = False
                if pm:
                    for i in range(particles):
                        _tree_delete(fl, it, meta, free, stack, r_slots[r, i])
                if best_g < r_g[r] + r_m[r]:
                    picked = r
                elif audit:  # beaten after it was made
                    fr, fr_size = af.front_add(
                        fr, fr_size, k, r_lo[r], r_hi[r], r_x[r], r_g[r], af.BELOW
                    )
            if picked < 0:
                break
            parent = picked
            side = 0
        values[k] = best
        gumbels[k] = best_g
        expanded[k] = n_exp
        if audit:  # the regions left, in the order they were made
            for r in range(used):
                if r_alive[r]:
                    fr, fr_size = af.front_add(
                        fr, fr_size, k, r_lo[r], r_hi[r], r_x[r], r_g[r], af.BELOW
                    )
    result = (values, gumbels, liks, bnds, expanded, exact, traces)
    return result, (fr, fr_size, gaps, bl, bl_size)


def pm_search(
    target,
    n: int,
    rng: np.random.Generator,
    select: str = "probability-matching",
    particles: int = 1,
    horizon: int = 0,
    stop_bound: str = "global",
    estimator: str = "prior",
    step: float = 0.1,
    audit: bool = False,
    report_bounds: bool = False,
) -> Draws:
    grad = (
        no_grad(target.data.ndim)
        if target.log_lik_grad is None
        else user_function(target.log_lik_grad, "log_lik_grad", target.data.ndim)
    )
    args = kernel_args(target)
    arng = audit_generator(rng) if audit else None
    (values, gumbels, liks, bnds, expanded, exact, traces), rows = pm_search_kernel(
        *args,
        grad,
        pm_reference.SELECTIONS.index(select),
        int(particles),
        int(horizon),
        stop_bound == "regions",
        pm_reference.ESTIMATORS.index(estimator),
        float(step),
        bool(audit),
        bool(report_bounds),
        n,
        rng,
    )
    draws = pm_reference.search_draws(target, values, gumbels, liks, bnds, expanded, exact, traces)
    draws.extras.update(af.extras(args, arng, bool(report_bounds), gumbels, *rows))
    return draws


pm_astar, astar_nobound, astar_pm_search = pm_reference.entries(pm_search)


@njit(cache=True)
def tree_pick_loop(fl, it, meta, free, stack, picks, rng):
    """``picks`` selection steps of PM-A* on a tree of m elements (the benchmark's unit): draw
    (max, argmax), delete the picked element and insert one in its place, so m stays fixed."""
    total = 0.0
    for _ in range(picks):
        v, slot = _tree_draw(fl, it, meta, rng.standard_exponential(), rng.random())
        b, a, c, owner = fl[slot, 0], fl[slot, 1], fl[slot, 2], it[slot, _OWNER]
        _tree_delete(fl, it, meta, free, stack, slot)
        _tree_insert(fl, it, meta, free, stack, b - 0.01, a - 0.01, c, rng.random(), owner)
        total += v
    return total


@njit(cache=True)
def linear_pick_loop(a, b, picks, rng):
    """The same picks by drawing every truncated Gumbel (004 Sec. 4.2's O(m) way)."""
    total = 0.0
    for _ in range(picks):
        v, j = _draw_linear(a, b, rng)
        a[j] -= 0.01
        b[j] -= 0.01
        total += v
    return total
