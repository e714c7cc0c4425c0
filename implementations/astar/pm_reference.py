"""PM-A* and A* sampling without a bound (004_b270422b62f00607.txt, Alg. 1 and 3), written to be
read against the paper; ``pm_fast.py`` runs the same steps compiled. Box-density helpers (splits,
Gumbels) are those of :mod:`implementations.astar.reference`; the audit and the bound report
those of :mod:`implementations.astar.audit`."""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from harness.spec import Draws
from implementations.astar import gumbel_tree as gt
from implementations.astar.audit import BELOW, SearchLog, split
from implementations.astar.reference import pack_search
from implementations.shared.reference import gumbel_below

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
        total = gt.lse(total, lq)
    return ys, [lq - total for lq in log_q], lik


class Settings(NamedTuple):
    """How :func:`pm_search_one` searches (:func:`pm_search`'s parameters of the same names)."""

    select: str = "probability-matching"
    particles: int = 1
    horizon: int = 0
    stop_bound: str = "global"
    estimator: str = "prior"
    step: float = 0.1


class PMSearch(NamedTuple):
    """One PM-A* draw: :class:`~implementations.astar.reference.Search`'s first four fields,
    the regions expanded, whether the exact stop was reached, and the best Gumbel value after
    each of the first ``horizon`` expansions."""

    value: np.ndarray
    gumbel: float
    liks: int
    bounds: int
    expanded: int
    exact: bool
    trace: np.ndarray


def pm_search_one(
    target, rng: np.random.Generator, settings: Settings, log: SearchLog | None = None
) -> PMSearch:
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

    ``log`` (:class:`~implementations.astar.audit.SearchLog`) gets every bound, every candidate
    point against its region's bound, and the frontier: each region made and never expanded
    (dropped when made, beaten when picked, or left at the stop), whose points not yet
    evaluated lie below its G(S).
    """
    select, particles, horizon, stop_bound, estimator, step = settings
    if log is None:
        log = SearchLog(target, 1, rng, False, False)
    if select != "probability-matching":
        # The heap that stops the search also selects: by G + M, M global or per region.
        stop_bound = "global" if select == "max-gumbel" else "regions"
    d = target.d
    lik = bnd = 0
    lo, hi = target.lo.copy(), target.hi.copy()
    m_all = target.M(lo, hi)
    bnd += 1
    log.bound(lo, hi, m_all)
    log_nu = target.log_mass(lo, hi)
    g = gumbel_below(log_nu, math.inf, rng.standard_exponential())
    x = target.sample_in(lo, hi, rng.random(d))
    y = target.o(x)
    log.point(y, m_all)
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
            log.left(s_lo, s_hi, g, None, BELOW)
            continue  # S was beaten after it was made: nothing in it can win
        for c_lo, c_hi in split(s_lo, s_hi, x):
            c_nu = target.log_mass(c_lo, c_hi)
            if c_nu == -math.inf:
                continue  # C is empty
            g_c = gumbel_below(c_nu, g, rng.standard_exponential())
            x_c = target.sample_in(c_lo, c_hi, rng.random(d))
            y_c = target.o(x_c)
            lik += 1
            if best_g < g_c + y_c:
                best_g, best = g_c + y_c, x_c
            m_c = m_all
            if stop_bound == "regions":
                m_c = target.M(c_lo, c_hi)
                bnd += 1
                log.bound(c_lo, c_hi, m_c)
            log.point(y_c, m_c)
            if best_g < g_c + m_c:
                add(c_lo, c_hi, c_nu, g_c, x_c, y_c, m_c)
            else:
                log.left(c_lo, c_hi, g_c, None, BELOW)
        if expanded < horizon:
            trace[expanded] = best_g
        expanded += 1
    for k, (r_lo, r_hi, _, r_g, _, _, _) in enumerate(regions):
        if alive[k]:
            log.left(r_lo, r_hi, r_g, None, BELOW)
    log.end(best_g)
    return PMSearch(best, best_g, lik, bnd, expanded, exact, trace)


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
    """n independent draws by :func:`pm_search_one`; the extras add each draw's expansions,
    whether it stopped exactly, (with a horizon) its best Gumbel value after each expansion (NaN
    after an exact stop), and the audit's and the bound report's (:mod:`audit`)."""
    values = np.empty((n, target.d))
    gumbels, liks, bnds = np.empty(n), np.empty(n, np.int64), np.empty(n, np.int64)
    expanded, exact = np.empty(n, np.int64), np.empty(n, np.bool_)
    traces = np.empty((n, horizon))
    log = SearchLog(target, n, rng, audit, report_bounds)
    for k in range(n):
        values[k], gumbels[k], liks[k], bnds[k], expanded[k], exact[k], traces[k] = pm_search_one(
            target, rng, Settings(select, particles, horizon, stop_bound, estimator, step), log
        )
    draws = search_draws(target, values, gumbels, liks, bnds, expanded, exact, traces)
    draws.extras.update(log.extras())
    return draws


def search_draws(target, values, gumbels, liks, bnds, expanded, exact, traces) -> Draws:
    """The searches' outputs as both builds return them: the draws, their Gumbel values and
    costs, then expansions, exact stops and (with a horizon) the traces."""
    draws = pack_search(target, values, gumbels, liks, bnds)
    draws.extras.update({"expanded": expanded, "exact_stop": exact})
    if traces.shape[1]:
        draws.extras["trace"] = traces
    return draws


class Entries(NamedTuple):
    """A build's public entries, each over that build's ``pm_search``."""

    pm_astar: Callable[..., Draws]
    astar_nobound: Callable[..., Draws]
    astar_pm_search: Callable[..., Draws]


def entries(search: Callable[..., Draws]) -> Entries:
    """PM-A*, A* without a bound and A* over ``search``: this module's :func:`pm_search`, or
    ``pm_fast.pm_search`` for the compiled build (the same signatures in both)."""

    def pm_astar(
        target,
        n,
        rng,
        particles=1,
        horizon=0,
        stop_bound="global",
        estimator="prior",
        step=0.1,
        audit=False,
        report_bounds=False,
    ) -> Draws:
        """PM-A* (004, Alg. 1): probability matching over Monte-Carlo estimates."""
        return search(
            target,
            n,
            rng,
            "probability-matching",
            particles,
            horizon,
            stop_bound,
            estimator,
            step,
            audit,
            report_bounds,
        )

    def astar_nobound(target, n, rng, horizon=0, audit=False, report_bounds=False) -> Draws:
        """A* sampling without a bound (004, Alg. 3, Appx. D): the region with the largest
        Gumbel; its exact stop uses the one bound of the whole box."""
        return search(
            target, n, rng, "max-gumbel", 1, horizon, "global", "prior", 0.1, audit, report_bounds
        )

    def astar_pm_search(target, n, rng, horizon=0, audit=False, report_bounds=False) -> Draws:
        """A* sampling (001, Alg. 2) in this search, 004's A* baseline (Sec. 5): the region with
        the largest bound; its exact stop uses each new region's own bound."""
        return search(
            target, n, rng, "max-bound", 1, horizon, "regions", "prior", 0.1, audit, report_bounds
        )

    return Entries(pm_astar, astar_nobound, astar_pm_search)


pm_astar, astar_nobound, astar_pm_search = entries(pm_search)
