"""A* sampling, its variants and its rejection baselines, written to be read against
001_78ff986a3d316097.txt (Alg. 2, Sec. 4 and 5).

Randomness, in this order, so a compiled version can consume the same draws: a node's Gumbel
takes one ``standard_exponential()``, then its location (leaves only) one ``random()`` a
coordinate; expanding a box split in an earlier draw takes one ``random()`` for the heir before
its children's draws; extra draws at a popped leaf take their Poisson count's arrivals, then per
pair a Gumbel and a location. A rejection proposal takes ``random()`` a coordinate, then
``random()`` for the accept test; OS* (pick ``random()``, arrival ``standard_exponential()``,
location, accept test) takes one more ``random()`` after a rejection when it refines with a
probability below 1, and with strategy 4 then ``random()`` a coordinate for its split point.

``audit`` and ``report_bounds`` (:mod:`implementations.astar.audit`) have each search hand its
bounds, its evaluated points and its frontier at the stop to a ``SearchLog``; the audit draws
from a Generator of its own, so neither switch changes the draws above. PM-A* and A* without a
bound are in :mod:`implementations.astar.pm_reference`."""

from __future__ import annotations

import heapq
import itertools
import math
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from harness.spec import Draws
from implementations.astar.audit import BELOW, MAX, MAX_AT, SearchLog, split
from implementations.shared.reference import gumbel_below, poisson_count


class Search(NamedTuple):
    """One exact draw by a search: the state, its Gumbel (the best lower bound, 001 Sec. 3),
    likelihood and bound evaluations, and what the search leaves for the next draw (A*'s tree,
    OS*'s pieces; None where nothing is kept)."""

    value: np.ndarray
    gumbel: float
    liks: int
    bounds: int
    kept: Any = None


def _node(target, lo, hi, upper: float, rng: np.random.Generator) -> tuple[float, np.ndarray]:
    """G ~ TruncGumbel(log nu(B), upper) (Gumbel(log nu(B)) when upper = inf) and X ~ nu(. | B)
    (001, Alg. 1 and 2)."""
    g = gumbel_below(target.log_mass(lo, hi), upper, rng.standard_exponential())
    return g, target.sample_in(lo, hi, rng.random(target.d))


def share(log_a: float, log_b: float) -> float:
    """nu(A) / (nu(A) + nu(B)) from log nu(A) and log nu(B), without overflow (0 when A is empty,
    1 when B is)."""
    diff = log_b - log_a
    if diff >= 0.0:
        e = math.exp(-diff)
        return e / (1.0 + e)
    return 1.0 / (1.0 + math.exp(diff))


@dataclass(eq=False)
class Box:
    """A box of A*'s bound partition, a binary tree (001, Sec. 4, "A* Sampling Variants").

    ``m`` bounds o on the box: its own bound M(box) once ``own``, else the bound of the box it was
    split from (valid: the box lies inside it), until a search needs a sharper one. ``children``
    are the two halves of a split at a point drawn inside the box (``None`` while a leaf).
    """

    lo: np.ndarray
    hi: np.ndarray
    log_nu: float
    m: float
    own: bool = False
    children: tuple[Box, Box] | None = None


def _location(target, box: Box, rng: np.random.Generator) -> np.ndarray | None:
    """X ~ nu(. | B) for a leaf (one uniform a coordinate); a split box needs none."""
    if box.children is not None:
        return None
    return target.sample_in(box.lo, box.hi, rng.random(target.d))


def _visit(target, x, g: float, m: float, lower: float, best, log: SearchLog):
    """Alg. 2's evaluation of a popped point x of Gumbel value g in a box bounded by m: log o(x)
    against m, and return (LB, its argmax), raised to (g + o(x), x) when that beats LB."""
    o = target.o(x)
    log.point(o, m)
    lb = g + o
    if lower < lb:
        return lb, x
    return lower, best


def astar_one(
    target,
    rng: np.random.Generator,
    extra_draws: float = 0.0,
    root: Box | None = None,
    log: SearchLog | None = None,
) -> Search:
    """One exact draw by A* sampling (001, Alg. 2): the sample X*, its Gumbel value LB (a
    Gumbel(log Z) draw), the likelihood and bound evaluations spent, and the bound partition the
    search leaves behind (``root``, refined by its splits).

    Every queue node is a box of the partition with the maximum G of the proposal's Gumbel
    process in it. The partition is refined exactly where and when the search splits, and a
    node is split only when popped, once: so a node created in this draw is a leaf until it is
    popped, and a popped node that already has children was split in an earlier draw (only with
    ``root`` given). Popping a node:
    - a leaf: evaluate G + o(X) at its location X ~ nu(. | B) (a lower bound LB), then, with
      ``extra_draws`` > 0, 1 + Poisson(extra_draws) pairs in all, each further one the box's
      next-largest Gumbel G <- TruncGumbel(log nu(B), G) at a fresh X ~ nu(. | B) (001, Sec. 4,
      second variant: more likelihood, fewer bound evaluations). The draws stop early, and the box
      is dropped, once LB >= G + M(B): the rest of B cannot beat LB. Otherwise B splits at its
      first X; the points of B not yet drawn form its Poisson process below the last G, so each
      child C gets TruncGumbel(log nu(C), last G), independently (001, Alg. 1);
    - a box split in an earlier draw (``root`` given, 001 Sec. 4, first variant): its maximum
      lies in child L with probability nu(L) / nu(B), so one child, drawn so, inherits G (the
      heir) and the other gets TruncGumbel(log nu(C), G). Expanding costs no evaluation.
    A child enters the queue unless LB >= G_C + M, where M is its bound if known, else its
    parent's; only a child that survives its parent's bound gets its own bound computed, as in
    Alg. 2, and a partition box keeps that bound for every later draw.

    Exactness with a reused partition: descending a fixed tree by heirs and truncated Gumbels is
    the top-down construction on a fixed partition, so the leaves' maxima are independent
    Gumbel(log nu(leaf)) at independent X ~ nu(. | leaf): a fresh Gumbel process of nu, drawn
    lazily, which is what a search started from every leaf with its own fresh Gumbel would see.
    The bounds are valid whatever the partition, so A* returns that process's argmax of G + o(X),
    an exact draw (001, Sec. 4). The partition carries the earlier draws' randomness into this
    draw's cost only, never into its law: given the past the draw is exact, hence independent of
    the earlier draws. With ``root = None`` and ``extra_draws = 0`` the search starts from the
    whole box and is exactly Alg. 2.

    ``log`` (:class:`~implementations.astar.audit.SearchLog`) gets every bound computed, every
    evaluated point against its box's bound, and the frontier at the stop: the pruned children,
    the boxes dropped after extra draws, and the nodes left in the queue (in push order).
    """
    if log is None:
        log = SearchLog(target, 1, rng, False, False)
    lik = bnd = 0
    lower, best = -math.inf, None
    fresh = root is None
    if fresh:
        lo, hi = target.lo.copy(), target.hi.copy()
        root = Box(lo, hi, target.log_mass(lo, hi), math.nan)
    g = gumbel_below(root.log_nu, math.inf, rng.standard_exponential())
    x = _location(target, root, rng)
    if fresh:
        root.m, root.own = target.M(root.lo, root.hi), True
        bnd += 1
        log.bound(root.lo, root.hi, root.m)
    order = itertools.count()  # ties in priority go to the earlier push
    queue = [(-(g + root.m), next(order), g, x, root)]
    while queue and lower < -queue[0][0]:
        _, _, g, x, box = heapq.heappop(queue)
        heir = None
        if box.children is None:
            lower, best = _visit(target, x, g, box.m, lower, best, log)
            lik += 1
            if extra_draws > 0.0:
                if lower < g + box.m:
                    for _ in range(poisson_count(extra_draws, rng)):
                        if lower >= g + box.m:
                            break
                        g = gumbel_below(box.log_nu, g, rng.standard_exponential())
                        x_k = target.sample_in(box.lo, box.hi, rng.random(target.d))
                        lower, best = _visit(target, x_k, g, box.m, lower, best, log)
                        lik += 1
                if lower >= g + box.m:
                    log.left(box.lo, box.hi, g, None, BELOW)
                    continue  # every point of B left lies below g + M(B) <= LB
            box.children = tuple(
                Box(c_lo, c_hi, target.log_mass(c_lo, c_hi), box.m)
                for c_lo, c_hi in split(box.lo, box.hi, x)
            )
        else:
            left, right = box.children
            heir = left if rng.random() < share(left.log_nu, right.log_nu) else right
        for child in box.children:
            if child.log_nu == -math.inf:
                continue  # C is empty
            g_c = g if child is heir else gumbel_below(child.log_nu, g, rng.standard_exponential())
            x_c = _location(target, child, rng)
            if lower < g_c + child.m and not child.own:  # the parent's bound may prune C
                child.m, child.own = target.M(child.lo, child.hi), True
                bnd += 1
                log.bound(child.lo, child.hi, child.m)
            if lower < g_c + child.m:
                heapq.heappush(queue, (-(g_c + child.m), next(order), g_c, x_c, child))
            else:
                log.left(child.lo, child.hi, g_c, x_c, MAX if x_c is None else MAX_AT)
    for _, _, g, x, box in sorted(queue, key=lambda node: node[1]):
        log.left(box.lo, box.hi, g, x, MAX if x is None else MAX_AT)
    log.end(lower)
    return Search(best, lower, lik, bnd, root)


def astar(
    target,
    n: int,
    rng: np.random.Generator,
    extra_draws: float = 0.0,
    reuse: bool = False,
    audit: bool = False,
    report_bounds: bool = False,
) -> Draws:
    """n independent draws by A* sampling (001, Alg. 2), one search each; with ``reuse`` every
    search starts from the bound partition the earlier ones refined (001, Sec. 4), kept within
    this call only; ``audit`` and ``report_bounds`` add :mod:`audit`'s extras."""
    return astar_logged(
        target, n, rng, extra_draws, reuse, SearchLog(target, n, rng, audit, report_bounds)
    )


def astar_logged(
    target, n: int, rng: np.random.Generator, extra_draws: float, reuse: bool, log: SearchLog
) -> Draws:
    """:func:`astar` with the caller's log (whose target the audit continues on)."""
    values = np.empty((n, target.d))
    gumbels, liks, bnds = np.empty(n), np.empty(n, np.int64), np.empty(n, np.int64)
    root = None
    for k in range(n):
        values[k], gumbels[k], liks[k], bnds[k], tree = astar_one(
            target, rng, extra_draws, root, log
        )
        if reuse:
            root = tree
    return pack_search(target, values, gumbels, liks, bnds, log)


def drill_down_one(target, rng: np.random.Generator, log: SearchLog) -> Search:
    """One exact draw by A* for a unimodal o in 1-D, without a queue (001, Sec. 4, "drill
    down"; notes-astar.md Sec. 4).

    At every split at X the child away from the mode has o monotone with its maximum o(X) at X,
    and its Gumbels lie below the parent's G: its upper bound is below G + o(X) <= LB, so it is
    pruned without a draw. The search keeps the child holding the mode, and stops, as A* does,
    once LB beats that child's G + M(C). The frontier (``log``): every discarded side, below its
    parent's G, and the last child, whose maximum is drawn but not evaluated.
    """
    lo, hi = target.lo.copy(), target.hi.copy()
    g, x = _node(target, lo, hi, math.inf, rng)
    lower, best = g + target.o(x), x
    lik, bnd = 1, 0
    while True:
        away_lo, away_hi = lo.copy(), hi.copy()
        lo, hi = lo.copy(), hi.copy()
        if target.mode < x[0]:
            hi[0] = away_lo[0] = x[0]
        else:
            lo[0] = away_hi[0] = x[0]
        log.left(away_lo, away_hi, g, None, BELOW)
        if target.log_mass(lo, hi) == -math.inf:
            break  # nothing left on the mode's side
        g, x = _node(target, lo, hi, g, rng)
        bnd += 1
        m = target.M(lo, hi)
        log.bound(lo, hi, m)
        if lower >= g + m:
            log.left(lo, hi, g, x, MAX_AT)
            break
        lower, best = _visit(target, x, g, m, lower, best, log)
        lik += 1
    log.end(lower)
    return Search(best, lower, lik, bnd)


def pack_search(target, values, gumbels, liks, bnds, log: SearchLog | None = None) -> Draws:
    """A search's outputs: the draws, their Gumbel maxima and per-draw evaluation counts, and
    the log's audit and bound-report extras."""
    extras = {"gumbel_max": gumbels, "draw_evals": liks, "bound_evals": bnds}
    return Draws(
        values[:, 0] if target.d == 1 else values,
        int(liks.sum()),
        extras if log is None else {**extras, **log.extras()},
    )


def drill_down(
    target, n: int, rng: np.random.Generator, audit: bool = False, report_bounds: bool = False
) -> Draws:
    """n independent draws by A* drill-down (001, Sec. 4); needs a 1-D target with a mode."""
    log = SearchLog(target, n, rng, audit, report_bounds)
    values = np.empty((n, target.d))
    gumbels, liks, bnds = np.empty(n), np.empty(n, np.int64), np.empty(n, np.int64)
    for k in range(n):
        values[k], gumbels[k], liks[k], bnds[k], _ = drill_down_one(target, rng, log)
    return pack_search(target, values, gumbels, liks, bnds, log)


#: OS* refinement (001, Sec. 6.4; notes-astar.md Sec. 7): 1 splits the rejected point's piece at
#: that point (the analogue of A*), 2 splits the piece of largest proposal mass nu(B_j) at its
#: median. 3 is 2 under the other reading of "largest probability under the proposal": OS*'s
#: own proposal, the envelope nu(B_j) exp(M_j) it picks pieces by (001 does not say which). 4 is
#: 3 split at a fresh X ~ nu(. | B_j) instead of the median (001 Sec. 6 splits every region "at
#: the sampled X_k point"; strategy 2 has no rejected point in the piece it splits).
OS_STAR_STRATEGIES = (1, 2, 3, 4)


def _pick(log_w: list[float], u: float) -> tuple[int, float]:
    """Index j with probability proportional to exp(log_w[j]), by inversion of u, and the log of
    the total weight (a running sum, as the compiled version adds)."""
    top = max(log_w)
    # math.exp, not np.exp: NumPy's vectorised exp may differ from libm's by an ulp.
    cum = np.cumsum([math.exp(v - top) for v in log_w])
    j = int(min(np.searchsorted(cum, u * cum[-1], side="right"), len(cum) - 1))
    return j, top + math.log(cum[-1])


def os_star_one(
    target,
    rng: np.random.Generator,
    strategy: int = 1,
    refine_prob: float = 1.0,
    pieces: list | None = None,
    log: SearchLog | None = None,
) -> Search:
    """One exact draw by piecewise-constant OS* (001, Sec. 5; notes-astar.md Sec. 7), and the
    pieces it leaves behind.

    Pieces (B_j, log nu(B_j), M_j) partition the box. Each proposal picks piece j with
    probability proportional to nu(B_j) exp(M_j), draws X ~ nu(. | B_j) and accepts with
    probability exp(o(X) - M_j); a rejection refines the pieces (with probability
    ``refine_prob`` only, one extra uniform when below 1: 001 Sec. 6.4 and Fig. 3 refine on 10% to
    100% of rejections) by ``strategy`` (:data:`OS_STAR_STRATEGIES`) and proposes afresh.
    Proposals arrive as a Poisson process of rate sum_j nu(B_j) exp(M_j) that thinning turns
    into one of rate Z, so -log of the accepted arrival time is a Gumbel(log Z) draw. Given
    ``pieces`` (001, Sec. 4, reuse), the draw starts from them and refines them in place: any
    envelope M_j >= o is a valid proposal, so the draw is exact given the past and independent
    of it; only its cost depends on the earlier draws.
    ``log`` gets every piece's bound and every proposal against its piece's bound.
    """
    if log is None:
        log = SearchLog(target, 1, rng, False, False)
    lik, bnd, time = 0, 0, 0.0
    if pieces is None:
        lo, hi = target.lo.copy(), target.hi.copy()
        pieces = [(lo, hi, target.log_mass(lo, hi), target.M(lo, hi))]
        bnd += 1
        log.bound(lo, hi, pieces[0][3])
    while True:
        j, log_rate = _pick([log_nu + m for _, _, log_nu, m in pieces], rng.random())
        time += rng.standard_exponential() * math.exp(-log_rate)
        p_lo, p_hi, _, m = pieces[j]
        x = target.sample_in(p_lo, p_hi, rng.random(target.d))
        lik += 1
        o = target.o(x)
        log.point(o, m)
        if math.log(1.0 - rng.random()) < o - m:
            log.end(-math.log(time))
            return Search(x, -math.log(time), lik, bnd, pieces)
        if refine_prob < 1.0 and rng.random() >= refine_prob:
            continue  # propose again from the same pieces
        if strategy != 1:  # the first piece of largest mass (ties: the earlier piece)
            mass = [log_nu + (0.0 if strategy == 2 else m) for _, _, log_nu, m in pieces]
            j = int(np.argmax(mass))
            p_lo, p_hi = pieces[j][0], pieces[j][1]
            u = rng.random(target.d) if strategy == 4 else np.full(target.d, 0.5)  # or the median
            x = target.sample_in(p_lo, p_hi, u)
        children = [
            (c_lo, c_hi, target.log_mass(c_lo, c_hi), target.M(c_lo, c_hi))
            for c_lo, c_hi in split(p_lo, p_hi, x)
        ]
        bnd += 2
        for c_lo, c_hi, _, m_c in children:
            log.bound(c_lo, c_hi, m_c)
        pieces[j : j + 1] = children


def os_star(
    target,
    n: int,
    rng: np.random.Generator,
    strategy: int = 1,
    refine_prob: float = 1.0,
    reuse: bool = False,
    report_bounds: bool = False,
) -> Draws:
    """n independent draws by OS*: the pieces reset for every draw (001, Sec. 6.3), or with
    ``reuse`` persist across the n draws of this call (001, Sec. 6.4, Fig. 3 right). No audit:
    the stop is the first acceptance of a thinned Poisson process, and every later arrival
    comes later, so nothing is left that could beat it."""
    log = SearchLog(target, n, rng, False, report_bounds)
    values = np.empty((n, target.d))
    gumbels, liks, bnds = np.empty(n), np.empty(n, np.int64), np.empty(n, np.int64)
    pieces = None
    for k in range(n):
        values[k], gumbels[k], liks[k], bnds[k], kept = os_star_one(
            target, rng, strategy, refine_prob, pieces, log
        )
        if reuse:
            pieces = kept
    return pack_search(target, values, gumbels, liks, bnds, log)


def rejection(target, n: int, rng: np.random.Generator, report_bounds: bool = False) -> Draws:
    """Rejection sampling from the proposal with the global bound M = M(box) (001, Sec. 5):
    accept X with probability exp(o(X) - M). ``report_bounds`` reports M (with the first draw)
    and each draw's proposals against it."""
    log = SearchLog(target, n, rng, False, report_bounds)
    m = target.M(target.lo, target.hi)
    log.bound(target.lo, target.hi, m)
    values = np.empty((n, target.d))
    liks = np.zeros(n, np.int64)
    for k in range(n):
        while True:
            x = target.sample_in(target.lo, target.hi, rng.random(target.d))
            liks[k] += 1
            o = target.o(x)
            log.point(o, m)
            if math.log(1.0 - rng.random()) < o - m:
                values[k] = x
                break
        log.end(math.nan)
    bnds = np.zeros(n, np.int64)
    bnds[0] = 1  # the one global bound, computed before the first draw
    return Draws(
        values[:, 0] if target.d == 1 else values,
        int(liks.sum()),
        {"draw_evals": liks, "bound_evals": bnds, **log.extras()},
    )
