"""Planted bugs in A* sampling's stop and bound (001_78ff986a3d316097.txt, Alg. 2) that change
the answer of 1% of the draws or fewer: the marginal KS tests and the Gumbel maxima cannot see
them at the quick level, the run-to-completion audit and the sampler's own bound can. Both
declare ``audit`` and ``report_bounds`` as the built-in searches do, and continue their draws on
the true target through ``implementations.astar.audit`` (what a plugin's search would call)."""

import dataclasses
import heapq
import itertools
import math

import numpy as np

import harness
from harness.spec import Check, Param
from implementations.astar.audit import MAX_AT, SearchLog, split
from implementations.astar.reference import astar_logged
from implementations.shared.reference import gumbel_below

#: Points a side of the invented bound's grid: the bound misses a peak between them.
GRID = 17
PARAMS = (Param("audit", False, bool), Param("report_bounds", False, bool))


def _stale_search(target, rng, log):
    """A* with every child bounded (Alg. 2), whose stop test reads the queue before a push."""
    lo, hi = target.lo.copy(), target.hi.copy()
    g = gumbel_below(target.log_mass(lo, hi), math.inf, rng.standard_exponential())
    x = target.sample_in(lo, hi, rng.random(target.d))
    m = target.M(lo, hi)
    log.bound(lo, hi, m)
    order = itertools.count()
    queue = [(-(g + m), next(order), g, x, lo, hi, m)]
    lower, best, lik = -math.inf, None, 0
    while queue:
        _, _, g, x, lo, hi, m = heapq.heappop(queue)
        o = target.o(x)
        log.point(o, m)
        lik += 1
        if lower < g + o:
            lower, best = g + o, x
        for c_lo, c_hi in split(lo, hi, x):
            top = -queue[0][0] if queue else math.inf  # the bug: read before this child's push
            c_nu = target.log_mass(c_lo, c_hi)
            if c_nu == -math.inf:
                continue
            g_c = gumbel_below(c_nu, g, rng.standard_exponential())
            x_c = target.sample_in(c_lo, c_hi, rng.random(target.d))
            m_c = target.M(c_lo, c_hi)
            log.bound(c_lo, c_hi, m_c)
            if lower < g_c + m_c:
                heapq.heappush(queue, (-(g_c + m_c), next(order), g_c, x_c, c_lo, c_hi, m_c))
            else:
                log.left(c_lo, c_hi, g_c, x_c, MAX_AT)
        if lower >= top:
            break
    for _, _, g, x, lo, hi, _ in sorted(queue, key=lambda node: node[1]):
        log.left(lo, hi, g, x, MAX_AT)
    log.end(lower)
    return best, lower, lik


def stale_stop(target, n, rng, audit=False, report_bounds=False):
    """Bug: the stop test reads the top of the queue inside the loop over the popped node's
    children, before each child is pushed, so its last reading misses the last child: the
    search stops while that child could still beat its best value.

    On pm-mixture 0.7% of draws stop early (139 of 20000 change their answer when run to
    completion); the bounds are the target's, so own-bound passes.

    Caught by: run-to-completion"""
    log = SearchLog(target, n, rng, audit, report_bounds)
    out = [_stale_search(target, rng, log) for _ in range(n)]
    values = np.array([o[0] for o in out])
    liks = np.array([o[2] for o in out], dtype=np.int64)
    return harness.Draws(
        values[:, 0] if target.d == 1 else values,
        int(liks.sum()),
        {"gumbel_max": np.array([o[1] for o in out]), "draw_evals": liks, **log.extras()},
    )


def _grid_bound(target):
    """M(B) as the largest o on a grid of GRID points a side: the ends of a finite side, the
    proposal's quantiles (i + 1/2) / GRID inside the box on an infinite one. Exact where o is
    monotone on B, short of the maximum where a peak lies between two grid points."""

    def bound(lo, hi, data):
        axes = []
        for j in range(target.d):
            if math.isfinite(lo[j]) and math.isfinite(hi[j]):
                axes.append(np.linspace(lo[j], hi[j], GRID))
                continue
            u = np.full(target.d, 0.5)
            side = []
            for i in range(GRID):
                u[j] = (i + 0.5) / GRID
                side.append(target.sample_in(lo, hi, u)[j])
            axes.append(np.array(side))
        grid = np.stack([a.ravel() for a in np.meshgrid(*axes, indexing="ij")], axis=1)
        return max(float(target.log_lik(p, data)) for p in grid)

    return bound


def invented_bound(target, n, rng, audit=False, report_bounds=False):
    """Bug: M(B) is taken as the largest o on a grid of the box (17 points a side) instead of
    the target's bound: a valid bound where o is monotone, short of it where a box holds a peak.

    On clutter-D1 0.85% of draws (85 of 10000) are pruned or stopped short of their answer, so
    the total variation is at most that; the target's own bound is valid, so bound-validity
    passes.

    Caught by: own-bound, run-to-completion"""
    invented = dataclasses.replace(target, bound=_grid_bound(target))
    log = SearchLog(target, n, rng, audit, report_bounds)  # the audit continues on the truth
    return astar_logged(invented, n, rng, 0.0, False, log)


for _name, _fn, _problem in (
    ("planted-search-stale-stop", stale_stop, "pm-mixture"),
    ("planted-search-invented-bound", invented_bound, "clutter-D1"),
):
    harness.register(
        harness.AlgorithmSpec(
            name=_name,
            family="planted:astar",
            paper="planted bug",
            guarantee="exact",
            target_kinds=("box-density",),
            implementations={"reference": _fn},
            params=PARAMS,
            splittable=False,
            summary=_fn.__doc__,
            checks=(Check(problems=(_problem,)),),
        )
    )
