"""Planted bugs in A* sampling (001, Alg. 2): mistakes a careful implementer makes. Each must
fail `harness verify`; the gate-quality measurement counts them with the other families'."""

import dataclasses
import heapq
import math

import numpy as np

import harness
from harness.spec import Check
from implementations.astar.audit import split
from implementations.astar.reference import _node, _pick, astar
from implementations.shared.reference import trunc_gumbel_from_exponential

PROBLEM = "peaky-exponential-a10"


def _buggy_search(target, rng, truncate=True, stop_on_popped=False):
    """A* as in the reference, with one of two bugs switched on."""
    lik = 0
    lower, best = -math.inf, None
    lo, hi = target.lo.copy(), target.hi.copy()
    g, x = _node(target, lo, hi, math.inf, rng)
    m = target.M(lo, hi)
    queue, count = [(-(g + m), 0, g, m, x, lo, hi)], 1
    while queue and lower < -queue[0][0]:
        _, _, g, m, x, lo, hi = heapq.heappop(queue)
        lb = g + target.o(x)
        lik += 1
        if lower < lb:
            lower, best = lb, x
        top_child = -math.inf
        for c_lo, c_hi in split(lo, hi, x):
            log_nu = target.log_mass(c_lo, c_hi)
            if log_nu == -math.inf:
                continue
            e = rng.standard_exponential()
            # The bug when truncate is off: the child's Gumbel forgets it lies below G_parent.
            g_c = trunc_gumbel_from_exponential(log_nu, g, e) if truncate else log_nu - math.log(e)
            x_c = target.sample_in(c_lo, c_hi, rng.random(target.d))
            m_c = target.M(c_lo, c_hi)
            if lower < g_c + m_c:
                heapq.heappush(queue, (-(g_c + m_c), count, g_c, m_c, x_c, c_lo, c_hi))
                count += 1
                top_child = max(top_child, g_c + m_c)
        if stop_on_popped and lower >= top_child:
            break  # the bug: the popped node's children are beaten, the rest of the queue not
    return best, lower, lik


def _draws(target, n, rng, **bug):
    out = [_buggy_search(target, rng, **bug) for _ in range(n)]
    values = np.array([o[0] for o in out])
    return harness.Draws(
        values[:, 0] if target.d == 1 else values,
        sum(o[2] for o in out),
        {"gumbel_max": np.array([o[1] for o in out])},
    )


def untruncated_children(target, n, rng):
    """Bug: a child's Gumbel is drawn as Gumbel(log nu(C)), not truncated below the parent's.

    The process is no longer a Gumbel process: maxima too large, the sample biased.

    Caught by: ks, ks-gumbel-max"""
    return _draws(target, n, rng, truncate=False)


def stop_on_popped(target, n, rng):
    """Bug: the search stops once LB beats the bounds of the popped node's children, not the
    top of the whole queue (other regions may still hold a larger G + o).

    Caught by: ks, ks-gumbel-max"""
    return _draws(target, n, rng, stop_on_popped=True)


def bound_at_centre(target, n, rng):
    """Bug: M(B) taken as o at the box's centre on finite boxes (a point value, not a bound).

    On the peaky target o falls away from 0, so boxes near 0 are bounded too low and pruned.

    Caught by: ks, ks-gumbel-max"""

    def centre(lo, hi, data):
        if np.all(np.isfinite(lo)) and np.all(np.isfinite(hi)):
            return target.log_lik(0.5 * (lo + hi), data)
        return target.bound(lo, hi, data)

    return astar(dataclasses.replace(target, bound=centre), n, rng)


def os_star_stale_bound(target, n, rng):
    """Bug: OS* picks a piece by its own fresh bound but accepts against the bound of the
    piece it was split from (stale, too high), so refined regions are under-accepted.

    Caught by: ks, ks-gumbel-max"""
    out = []
    for _ in range(n):
        lo, hi = target.lo.copy(), target.hi.copy()
        m = target.M(lo, hi)
        pieces = [(lo, hi, target.log_mass(lo, hi), m, m)]  # (..., bound, bound at creation)
        time, lik = 0.0, 0
        while True:
            j, log_rate = _pick([log_nu + m for _, _, log_nu, m, _ in pieces], rng.random())
            time += rng.standard_exponential() * math.exp(-log_rate)
            p_lo, p_hi, _, _, stale = pieces[j]
            x = target.sample_in(p_lo, p_hi, rng.random(target.d))
            lik += 1
            if math.log(1.0 - rng.random()) < target.o(x) - stale:
                out.append((x, -math.log(time), lik))
                break
            pieces[j : j + 1] = [
                (c_lo, c_hi, target.log_mass(c_lo, c_hi), target.M(c_lo, c_hi), stale)
                for c_lo, c_hi in split(p_lo, p_hi, x)
            ]
    values = np.array([o[0] for o in out])
    return harness.Draws(
        values[:, 0] if target.d == 1 else values,
        sum(o[2] for o in out),
        {"gumbel_max": np.array([o[1] for o in out])},
    )


# On the peaky target the queue never holds more than one box (o is monotone and its bounds
# tight), so a stopping bug shows only on the bimodal clutter posterior.
for _name, _fn, _problem in (
    ("planted-astar-untruncated-children", untruncated_children, PROBLEM),
    ("planted-astar-stop-on-popped", stop_on_popped, "clutter-D1"),
    ("planted-astar-bound-at-centre", bound_at_centre, PROBLEM),
    ("planted-os-star-stale-bound", os_star_stale_bound, PROBLEM),
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
            checks=(Check(problems=(_problem,)),),
        )
    )
