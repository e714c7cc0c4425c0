"""A* sampling, its variants and its rejection baselines, written to be read against
001_78ff986a3d316097.txt (Alg. 2, Sec. 4 and 5).

Randomness, in this order, so a compiled version can consume the same draws: a node's Gumbel
takes one ``standard_exponential()``, then its location (leaves only) one ``random()`` a
coordinate; expanding a box split in an earlier draw takes one ``random()`` for the heir before
its children's draws; extra draws at a popped leaf take their Poisson count's arrivals, then per
pair a Gumbel and a location. A rejection proposal takes ``random()`` a coordinate, then
``random()`` for the accept test; OS* (pick ``random()``, arrival ``standard_exponential()``,
location, accept test) takes one more ``random()`` after a rejection when it refines with a
probability below 1."""

from __future__ import annotations

import heapq
import itertools
import math
from dataclasses import dataclass

import numpy as np

from harness.spec import Draws
from implementations.astar import gumbel_tree as gt
from implementations.gumbel.reference import trunc_gumbel_from_exponential
from implementations.minibatch_gibbs.reference import poisson_count


def _split(lo: np.ndarray, hi: np.ndarray, x: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """Split [lo, hi] at x along its longest side, infinite sides first, the lowest index on a
    tie (001, Sec. 6: the rule of every experiment)."""
    j = int(np.argmax(hi - lo))
    left_hi, right_lo = hi.copy(), lo.copy()
    left_hi[j] = right_lo[j] = x[j]
    return [(lo, left_hi), (right_lo, hi)]


def _node(target, lo, hi, upper: float, rng: np.random.Generator) -> tuple[float, np.ndarray]:
    """G ~ TruncGumbel(log nu(B), upper) (Gumbel(log nu(B)) when upper = inf) and X ~ nu(. | B)
    (001, Alg. 1 and 2)."""
    log_nu = target.log_mass(lo, hi)
    e = rng.standard_exponential()
    if upper == math.inf:
        g = log_nu - math.log(e)
    else:
        g = trunc_gumbel_from_exponential(log_nu, upper, e)
    return g, target.sample_in(lo, hi, rng.random(target.d))


def _share(log_a: float, log_b: float) -> float:
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


def _gumbel(log_nu: float, upper: float, rng: np.random.Generator) -> float:
    """Gumbel(log_nu) truncated below ``upper`` (untruncated when upper = inf), one Exp(1)."""
    e = rng.standard_exponential()
    if upper == math.inf:
        return log_nu - math.log(e)
    return trunc_gumbel_from_exponential(log_nu, upper, e)


def _location(target, box: Box, rng: np.random.Generator) -> np.ndarray | None:
    """X ~ nu(. | B) for a leaf (one uniform a coordinate); a split box needs none."""
    if box.children is not None:
        return None
    return target.sample_in(box.lo, box.hi, rng.random(target.d))


def astar_one(
    target, rng: np.random.Generator, extra_draws: float = 0.0, root: Box | None = None
) -> tuple[np.ndarray, float, int, int, Box]:
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
    the earlier draws. With ``root = None`` the search starts from the whole box and is exactly
    Alg. 2 (with extra_draws = 0 it consumes the same draws as before the variants existed).
    """
    lik = bnd = 0
    lower, best = -math.inf, None
    fresh = root is None
    if fresh:
        lo, hi = target.lo.copy(), target.hi.copy()
        root = Box(lo, hi, target.log_mass(lo, hi), math.nan)
    g = _gumbel(root.log_nu, math.inf, rng)
    x = _location(target, root, rng)
    if fresh:
        root.m, root.own = target.M(root.lo, root.hi), True
        bnd += 1
    order = itertools.count()  # ties in priority go to the earlier push
    queue = [(-(g + root.m), next(order), g, x, root)]
    while queue and lower < -queue[0][0]:
        _, _, g, x, box = heapq.heappop(queue)
        heir = None
        if box.children is None:
            lb = g + target.o(x)
            lik += 1
            if lower < lb:
                lower, best = lb, x
            if extra_draws > 0.0:
                if lower < g + box.m:
                    for _ in range(poisson_count(extra_draws, rng)):
                        if lower >= g + box.m:
                            break
                        g = _gumbel(box.log_nu, g, rng)
                        x_k = target.sample_in(box.lo, box.hi, rng.random(target.d))
                        lb = g + target.o(x_k)
                        lik += 1
                        if lower < lb:
                            lower, best = lb, x_k
                if lower >= g + box.m:
                    continue  # every point of B left lies below g + M(B) <= LB
            box.children = tuple(
                Box(c_lo, c_hi, target.log_mass(c_lo, c_hi), box.m)
                for c_lo, c_hi in _split(box.lo, box.hi, x)
            )
        else:
            left, right = box.children
            heir = left if rng.random() < _share(left.log_nu, right.log_nu) else right
        for child in box.children:
            if child.log_nu == -math.inf:
                continue  # C is empty
            g_c = g if child is heir else _gumbel(child.log_nu, g, rng)
            x_c = _location(target, child, rng)
            if lower < g_c + child.m and not child.own:  # the parent's bound may prune C
                child.m, child.own = target.M(child.lo, child.hi), True
                bnd += 1
            if lower < g_c + child.m:
                heapq.heappush(queue, (-(g_c + child.m), next(order), g_c, x_c, child))
    return best, lower, lik, bnd, root


def astar(
    target,
    n: int,
    rng: np.random.Generator,
    extra_draws: float = 0.0,
    reuse: bool = False,
) -> Draws:
    """n independent draws by A* sampling (001, Alg. 2), one search each; with ``reuse`` every
    search starts from the bound partition the earlier ones refined (001, Sec. 4), kept within
    this call only."""
    values = np.empty((n, target.d))
    gumbels, liks, bnds = np.empty(n), np.empty(n, np.int64), np.empty(n, np.int64)
    root = None
    for k in range(n):
        values[k], gumbels[k], liks[k], bnds[k], tree = astar_one(target, rng, extra_draws, root)
        if reuse:
            root = tree
    return _packed(target, values, gumbels, liks, bnds)


def drill_down_one(target, rng: np.random.Generator) -> tuple[np.ndarray, float, int, int]:
    """One exact draw by A* for a unimodal o in 1-D, without a queue (001, Sec. 4, "drill
    down"; notes-astar.md Sec. 4).

    At every split at X the child away from the mode has o monotone with its maximum o(X) at X,
    and its Gumbels lie below the parent's G: its upper bound is below G + o(X) <= LB, so it is
    pruned without a draw. The search keeps the child holding the mode, and stops, as A* does,
    once LB beats that child's G + M(C).
    """
    lo, hi = target.lo.copy(), target.hi.copy()
    g, x = _node(target, lo, hi, math.inf, rng)
    lower, best = g + target.o(x), x
    lik, bnd = 1, 0
    while True:
        lo, hi = lo.copy(), hi.copy()
        if target.mode < x[0]:
            hi[0] = x[0]
        else:
            lo[0] = x[0]
        if target.log_mass(lo, hi) == -math.inf:
            break  # nothing left on the mode's side
        g, x = _node(target, lo, hi, g, rng)
        bnd += 1
        if lower >= g + target.M(lo, hi):
            break
        lb = g + target.o(x)
        lik += 1
        if lower < lb:
            lower, best = lb, x
    return best, lower, lik, bnd


def _packed(target, values, gumbels, liks, bnds) -> Draws:
    """A search's outputs: the draws, their Gumbel maxima and per-draw evaluation counts."""
    return Draws(
        values[:, 0] if target.d == 1 else values,
        int(liks.sum()),
        {"gumbel_max": gumbels, "draw_evals": liks, "bound_evals": bnds},
    )


def _searches(one, target, n: int, rng: np.random.Generator) -> Draws:
    values = np.empty((n, target.d))
    gumbels, liks, bnds = np.empty(n), np.empty(n, np.int64), np.empty(n, np.int64)
    for k in range(n):
        values[k], gumbels[k], liks[k], bnds[k] = one(target, rng)
    return _packed(target, values, gumbels, liks, bnds)


def drill_down(target, n: int, rng: np.random.Generator) -> Draws:
    """n independent draws by A* drill-down (001, Sec. 4); needs a 1-D target with a mode."""
    return _searches(drill_down_one, target, n, rng)


#: OS* refinement (001, Sec. 6.4; notes-astar.md Sec. 7): 1 splits the rejected point's piece at
#: that point (the analogue of A*), 2 splits the piece of largest proposal mass at its median.
OS_STAR_STRATEGIES = (1, 2)


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
) -> tuple[np.ndarray, float, int, int, list]:
    """One exact draw by piecewise-constant OS* (001, Sec. 5; notes-astar.md Sec. 7), and the
    pieces it leaves behind.

    Pieces (B_j, log nu(B_j), M_j) partition the box. Each proposal picks piece j with
    probability proportional to nu(B_j) exp(M_j), draws X ~ nu(. | B_j) and accepts with
    probability exp(o(X) - M_j); a rejection refines the pieces (with probability
    ``refine_prob`` only, one extra uniform when below 1: 001 Sec. 6.4 and Fig. 3 refine on 10% to
    100% of rejections) and proposes afresh. Proposals arrive as a Poisson process of rate
    sum_j nu(B_j) exp(M_j) that thinning turns into one of rate Z, so -log of the accepted
    arrival time is a Gumbel(log Z) draw. Given ``pieces`` (001, Sec. 4, reuse), the draw starts
    from them and refines them in place: any envelope M_j >= o is a valid proposal, so the draw
    is exact given the past and independent of it; only its cost depends on the earlier draws.
    """
    lik, bnd, time = 0, 0, 0.0
    if pieces is None:
        lo, hi = target.lo.copy(), target.hi.copy()
        pieces = [(lo, hi, target.log_mass(lo, hi), target.M(lo, hi))]
        bnd += 1
    while True:
        j, log_rate = _pick([log_nu + m for _, _, log_nu, m in pieces], rng.random())
        time += rng.standard_exponential() * math.exp(-log_rate)
        p_lo, p_hi, _, m = pieces[j]
        x = target.sample_in(p_lo, p_hi, rng.random(target.d))
        lik += 1
        if math.log(1.0 - rng.random()) < target.o(x) - m:
            return x, -math.log(time), lik, bnd, pieces
        if refine_prob < 1.0 and rng.random() >= refine_prob:
            continue  # propose again from the same pieces
        if strategy == 2:
            j = int(np.argmax([log_nu for _, _, log_nu, _ in pieces]))
            p_lo, p_hi = pieces[j][0], pieces[j][1]
            x = target.sample_in(p_lo, p_hi, np.full(target.d, 0.5))  # the median
        children = [
            (c_lo, c_hi, target.log_mass(c_lo, c_hi), target.M(c_lo, c_hi))
            for c_lo, c_hi in _split(p_lo, p_hi, x)
        ]
        bnd += 2
        pieces[j : j + 1] = children


def os_star(
    target,
    n: int,
    rng: np.random.Generator,
    strategy: int = 1,
    refine_prob: float = 1.0,
    reuse: bool = False,
) -> Draws:
    """n independent draws by OS*: the pieces reset for every draw (001, Sec. 6.3), or with
    ``reuse`` persist across the n draws of this call (001, Sec. 6.4, Fig. 3 right)."""
    values = np.empty((n, target.d))
    gumbels, liks, bnds = np.empty(n), np.empty(n, np.int64), np.empty(n, np.int64)
    pieces = None
    for k in range(n):
        values[k], gumbels[k], liks[k], bnds[k], kept = os_star_one(
            target, rng, strategy, refine_prob, pieces
        )
        if reuse:
            pieces = kept
    return _packed(target, values, gumbels, liks, bnds)


def rejection(target, n: int, rng: np.random.Generator) -> Draws:
    """Rejection sampling from the proposal with the global bound M = M(box) (001, Sec. 5):
    accept X with probability exp(o(X) - M)."""
    m = target.M(target.lo, target.hi)
    values = np.empty((n, target.d))
    liks = np.zeros(n, np.int64)
    for k in range(n):
        while True:
            x = target.sample_in(target.lo, target.hi, rng.random(target.d))
            liks[k] += 1
            if math.log(1.0 - rng.random()) < target.o(x) - m:
                values[k] = x
                break
    bnds = np.zeros(n, np.int64)
    bnds[0] = 1  # the one global bound, computed before the first draw
    return Draws(
        values[:, 0] if target.d == 1 else values,
        int(liks.sum()),
        {"draw_evals": liks, "bound_evals": bnds},
    )


#: How the next region is picked (004_b270422b62f00607.txt): probability matching on
#: Monte-Carlo estimates (Alg. 1, Eq. 4), the largest Gumbel (A* without a bound, Alg. 3), or the
#: largest G + M with each region's bound (A* in Alg. 1's form, the experiments' yardstick).
SELECTIONS = ("probability-matching", "max-gumbel", "max-bound")
#: What the exact stop compares with: the one bound of the whole box, or each region's own.
STOP_BOUNDS = ("global", "regions")
#: PM-A*'s Monte-Carlo estimator of a region's Gumbel value (Eq. 3): draws from the prior
#: restricted to the region, or the points of a gradient ascent on o inside it (Sec. 5.3).
ESTIMATORS = ("prior", "trajectory")


def trajectory(target, lo, hi, x, y, points: int, step: float):
    """004 Sec. 5.3's estimator, read as written ("importance sampling over the trajectory" of
    the optimiser A* uses for its bounds): ``points`` points x_0 = x(S), x_{t+1} = x_t + step *
    grad o / |grad o| clipped into the box, each weighted by the proposal's density q(x_t),
    self-normalised (004 names no other density). Returns the points' o values, log weights and
    the likelihood evaluations spent (one a gradient, one for each new point's o)."""
    ys, log_q = [y], [target.log_proposal(x)]
    lik = 0
    grad = np.empty(target.d)
    x_t = x.copy()
    for _ in range(points - 1):
        target.log_lik_grad(x_t, target.data, grad)
        lik += 1
        norm2 = 0.0
        for j in range(target.d):  # a plain running sum (NumPy's sum pairs terms otherwise)
            norm2 += grad[j] * grad[j]
        norm = math.sqrt(norm2)
        if norm > 0.0 and math.isfinite(norm):
            scale = step / norm
            for j in range(target.d):
                x_t[j] = min(max(x_t[j] + scale * grad[j], lo[j]), hi[j])
        ys.append(target.o(x_t))
        lik += 1
        log_q.append(target.log_proposal(x_t))
    total = -math.inf
    for lq in log_q:
        total = gt._lse(total, lq)
    return ys, [lq - total for lq in log_q], lik


def pm_search_one(
    target,
    rng: np.random.Generator,
    select: str = "probability-matching",
    particles: int = 1,
    horizon: int = 0,
    stop_bound: str = "global",
    estimator: str = "prior",
    step: float = 0.1,
) -> tuple[np.ndarray, float, int, int, int, bool, np.ndarray]:
    """One draw by A* sampling with probability matching (004, Alg. 1) or without a bound
    (004, Alg. 3): the sample, its Gumbel value, the likelihood and bound evaluations, the
    regions expanded, whether the exact stop was reached, and the best Gumbel value after each
    of the first ``horizon`` expansions.

    Every region S of the collection carries its Gumbel G(S) ~ TG(log Q(S), L(S)) and its point
    x(S) ~ Q(. | S), drawn when S is made; G(S) + o(x(S)) is a candidate for the maximum (lines
    10-16). Expanding S splits it at x(S) along its longest side (001's rule), and each child C
    gets L(C) = G(S) (line 9). Which S to expand:
    - ``max-gumbel`` (Alg. 3): the largest G(S). 004 writes "maximum L"; the Gumbels left in S
      lie below G(S), the L of S's children, so this is A* with one constant bound for every
      region, the algorithm Sec. 3 says A* degenerates to;
    - ``max-bound``: the largest G(S) + M(S) with each region's own bound, A* sampling (001,
      Alg. 2) with every point evaluated when its region is made, as Alg. 1 does;
    - ``probability-matching`` (Alg. 1 with Eq. 3 and 4): S with the probability that its
      estimate Ĝ_P(S) is the largest, drawn in O(log m) from the balanced tree
      (:mod:`gumbel_tree`). The estimator is the prior's (Sec. 5.3.2's fair setting): ``particles``
      draws Y_i = o(x_i), x_i ~ Q(. | S), weight 1 / particles each, the first being x(S)
      itself (no extra likelihood evaluation at particles = 1). Each particle is TG(log(w_i
      Q(S)) + Y_i, G(S) + Y_i): truncated at G(S), below which S's unexplored Gumbels lie, where
      Eq. 3 writes L(S), the level S's own Gumbel was drawn under. With ``estimator =
      "trajectory"`` the particles are instead :func:`trajectory`'s points (Sec. 5.3).

    The selection rule never changes the law of what is drawn, only the order in which the
    top-down construction is unrolled (001, Sec. 4). So the search is exact when it stops as A*
    does: once the best value beats G(S) + M for every region left, with M the bound of the whole
    box (``global``, one bound evaluation: for Alg. 3, rejection sampling's cost) or of each
    region (``regions``, one bound evaluation a region made). A region that cannot beat the best
    value is dropped when made and when picked. With ``horizon`` > 0 the search also stops after
    that many expansions (004's experiments run for a fixed time) and is then no longer exact.
    """
    if select != "probability-matching":
        # The heap that stops the search also selects: by G + M, M global or per region.
        stop_bound = "global" if select == "max-gumbel" else "regions"
    d = target.d
    lik = bnd = 0
    lo, hi = target.lo.copy(), target.hi.copy()
    m_all = target.M(lo, hi)
    bnd += 1
    log_nu = target.log_mass(lo, hi)
    g = _gumbel(log_nu, math.inf, rng)
    x = target.sample_in(lo, hi, rng.random(d))
    y = target.o(x)
    best_g, best = g + y, x
    lik += 1
    regions: list[tuple] = []  # (lo, hi, log_nu, G, x, M, tree slots)
    alive: list[bool] = []
    heap: list[tuple[float, int]] = []  # (-(G + M), index): ties go to the earlier region
    tree = gt.tree_new(max(16, 4 * particles))
    pm = select == "probability-matching"

    def add(lo, hi, log_nu, g, x, y, m):
        """Region made: into the stop heap, and its particles into the tree (Alg. 1, line 18)."""
        nonlocal lik, tree
        k = len(regions)
        slots = []
        if pm:
            if estimator == "trajectory":
                ys, log_ws, spent = trajectory(target, lo, hi, x, y, particles, step)
                lik += spent
            else:
                ys = [y]
                for _ in range(particles - 1):
                    ys.append(target.o(target.sample_in(lo, hi, rng.random(d))))
                    lik += 1
                log_ws = [-math.log(particles)] * particles
            for y_i, log_w_i in zip(ys, log_ws, strict=True):
                log_w = log_nu + log_w_i
                fl, it, meta, free, stack = tree
                if gt.tree_full(fl, meta):
                    fl, it, free = gt.tree_grow(fl, it, free)
                    tree = fl, it, meta, free, stack
                slot = gt.tree_insert(
                    fl, it, meta, free, stack, g + y_i, log_w + y_i, log_w - g, rng.random(), k
                )
                slots.append(slot)
        regions.append((lo, hi, log_nu, g, x, m, slots))
        alive.append(True)
        heapq.heappush(heap, (-(g + m), k))

    def drop(k):
        alive[k] = False
        fl, it, meta, free, stack = tree
        for slot in regions[k][6]:
            gt.tree_delete(fl, it, meta, free, stack, slot)

    add(lo, hi, log_nu, g, x, y, m_all)
    trace = np.full(horizon, np.nan)
    expanded, exact = 0, False
    while True:
        while heap and not alive[heap[0][1]]:
            heapq.heappop(heap)
        if not heap or best_g >= -heap[0][0]:
            exact = True
            break
        if horizon and expanded == horizon:
            break
        if pm:
            fl, it, meta, _, _ = tree
            _, slot = gt.tree_draw(fl, it, meta, rng.standard_exponential(), rng.random())
            k = int(it[slot, gt.OWNER])
        else:
            k = heapq.heappop(heap)[1]
        s_lo, s_hi, _, g, x, m, _ = regions[k]
        drop(k)
        if best_g >= g + m:
            continue  # S was beaten after it was made: nothing in it can win
        for c_lo, c_hi in _split(s_lo, s_hi, x):
            c_nu = target.log_mass(c_lo, c_hi)
            if c_nu == -math.inf:
                continue  # C is empty
            g_c = _gumbel(c_nu, g, rng)
            x_c = target.sample_in(c_lo, c_hi, rng.random(d))
            y_c = target.o(x_c)
            lik += 1
            if best_g < g_c + y_c:
                best_g, best = g_c + y_c, x_c
            m_c = m_all
            if stop_bound == "regions":
                m_c = target.M(c_lo, c_hi)
                bnd += 1
            if best_g < g_c + m_c:
                add(c_lo, c_hi, c_nu, g_c, x_c, y_c, m_c)
        if expanded < horizon:
            trace[expanded] = best_g
        expanded += 1
    return best, best_g, lik, bnd, expanded, exact, trace


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
) -> Draws:
    """n independent draws by :func:`pm_search_one`; the extras add each draw's expansions,
    whether it stopped exactly, and (with a horizon) its best Gumbel value after each expansion
    (NaN after an exact stop)."""
    values = np.empty((n, target.d))
    gumbels, liks, bnds = np.empty(n), np.empty(n, np.int64), np.empty(n, np.int64)
    expanded, exact = np.empty(n, np.int64), np.empty(n, np.bool_)
    traces = np.empty((n, horizon))
    for k in range(n):
        values[k], gumbels[k], liks[k], bnds[k], expanded[k], exact[k], traces[k] = pm_search_one(
            target, rng, select, particles, horizon, stop_bound, estimator, step
        )
    return search_draws(target, values, gumbels, liks, bnds, expanded, exact, traces)


def search_draws(target, values, gumbels, liks, bnds, expanded, exact, traces) -> Draws:
    """The searches' outputs as both builds return them: the draws, their Gumbel values and
    costs, then expansions, exact stops and (with a horizon) the traces."""
    draws = _packed(target, values, gumbels, liks, bnds)
    draws.extras.update({"expanded": expanded, "exact_stop": exact})
    if traces.shape[1]:
        draws.extras["trace"] = traces
    return draws


def pm_astar(
    target, n, rng, particles=1, horizon=0, stop_bound="global", estimator="prior", step=0.1
) -> Draws:
    """PM-A* (004, Alg. 1): probability matching over Monte-Carlo estimates."""
    return pm_search(
        target, n, rng, "probability-matching", particles, horizon, stop_bound, estimator, step
    )


def astar_nobound(target, n, rng, horizon=0) -> Draws:
    """A* sampling without a bound (004, Alg. 3, Appx. D): the region with the largest Gumbel;
    its exact stop uses the one bound of the whole box."""
    return pm_search(target, n, rng, "max-gumbel", 1, horizon)
