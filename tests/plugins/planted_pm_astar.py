"""Planted bugs in PM-A* (004_b270422b62f00607.txt, Alg. 1): mistakes a careful implementer
makes. Each must fail `harness verify`; the gate-quality measurement counts them with the other
families'. (The third planted bug of the family, a tree that answers with a stale maximum after
a delete, cannot change the law of a draw; tests/implementations/astar/test_gumbel_tree.py holds
it against the selection gate instead.)"""

import heapq
import math

import numpy as np

import harness
from harness.spec import Check
from implementations.astar import gumbel_tree as gt
from implementations.astar.audit import split
from implementations.shared.reference import gumbel_below

PROBLEM = "pm-mixture"


def _buggy_search(target, rng, estimate_as_bound=False, truncate=True):
    """PM-A* with one particle a region and the global bound, as the reference, with a bug."""
    lik = 0
    lo, hi = target.lo.copy(), target.hi.copy()
    m = target.M(lo, hi)
    fl, it, meta, free, stack = gt.tree_new(1024)
    regions, alive, heap = [], [], []

    def add(lo, hi, log_nu, g, x, y):
        k = len(regions)
        slot = gt.tree_insert(
            fl, it, meta, free, stack, g + y, log_nu + y, log_nu - g, rng.random(), k
        )
        regions.append((lo, hi, g, x, slot))
        alive.append(True)
        heapq.heappush(heap, (-(g + m), k))

    log_nu = target.log_mass(lo, hi)
    g = gumbel_below(log_nu, math.inf, rng.standard_exponential())
    x = target.sample_in(lo, hi, rng.random(target.d))
    y = target.o(x)
    best_g, best = g + y, x
    lik += 1
    add(lo, hi, log_nu, g, x, y)
    while True:
        while heap and not alive[heap[0][1]]:
            heapq.heappop(heap)
        if not heap or best_g >= -heap[0][0]:
            break
        v, slot = gt.tree_draw(fl, it, meta, rng.standard_exponential(), rng.random())
        if estimate_as_bound and best_g >= v:
            break  # the bug: a Monte-Carlo estimate of the largest Gumbel left is no bound
        k = int(it[slot, gt.OWNER])
        s_lo, s_hi, g, x, own = regions[k]
        alive[k] = False
        gt.tree_delete(fl, it, meta, free, stack, own)
        if best_g >= g + m:
            continue
        for c_lo, c_hi in split(s_lo, s_hi, x):
            c_nu = target.log_mass(c_lo, c_hi)
            if c_nu == -math.inf:
                continue
            # The other bug: the child's Gumbel forgets it lies below its parent's.
            g_c = gumbel_below(c_nu, g if truncate else math.inf, rng.standard_exponential())
            x_c = target.sample_in(c_lo, c_hi, rng.random(target.d))
            y_c = target.o(x_c)
            lik += 1
            if best_g < g_c + y_c:
                best_g, best = g_c + y_c, x_c
            if best_g < g_c + m:
                add(c_lo, c_hi, c_nu, g_c, x_c, y_c)
    return best, best_g, lik


def _draws(target, n, rng, **bug):
    out = [_buggy_search(target, rng, **bug) for _ in range(n)]
    values = np.array([o[0] for o in out])
    return harness.Draws(
        values[:, 0] if target.d == 1 else values,
        sum(o[2] for o in out),
        {"gumbel_max": np.array([o[1] for o in out])},
    )


def estimate_as_bound(target, n, rng):
    """Bug: the search stops once its best value beats the tree's draw of the largest estimated
    Gumbel left, a Monte-Carlo estimate used as if it were an upper bound.

    Caught by: ks, ks-gumbel-max"""
    return _draws(target, n, rng, estimate_as_bound=True)


def untruncated_child(target, n, rng):
    """Bug: a child's Gumbel is drawn as Gumbel(log Q(C)), not truncated below its parent's.

    Caught by: ks, ks-gumbel-max"""
    return _draws(target, n, rng, truncate=False)


for _name, _fn in (
    ("planted-pm-astar-estimate-as-bound", estimate_as_bound),
    ("planted-pm-astar-untruncated-child", untruncated_child),
):
    harness.register(
        harness.AlgorithmSpec(
            name=_name,
            family="planted:astar",
            paper="planted bug",
            guarantee="exact",
            target_kinds=("box-density",),
            implementations={"reference": _fn},
            splittable=False,
            summary=_fn.__doc__,
            checks=(Check(problems=(PROBLEM,)),),
        )
    )
