"""A* sampling and its rejection baseline, written to be read against 001_78ff986a3d316097.txt.

Randomness, in this order, so a compiled version can consume the same draws: a node's Gumbel
takes one ``standard_exponential()``, then its location one ``random()`` a coordinate; a
rejection proposal takes ``random()`` a coordinate, then ``random()`` for the accept test.
"""

from __future__ import annotations

import heapq
import math

import numpy as np

from harness.spec import Draws
from implementations.gumbel.reference import trunc_gumbel_from_exponential


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


def astar_one(target, rng: np.random.Generator) -> tuple[np.ndarray, float, int, int]:
    """One exact draw by A* sampling (001, Alg. 2): the sample X*, its Gumbel value LB
    (a Gumbel(log Z) draw), and the likelihood and bound evaluations spent."""
    lik = bnd = 0
    lower, best = -math.inf, None
    lo, hi = target.lo.copy(), target.hi.copy()
    g, x = _node(target, lo, hi, math.inf, rng)
    m = target.M(lo, hi)
    bnd += 1
    queue = [(-(g + m), 0, g, m, x, lo, hi)]
    count = 1
    while queue and lower < -queue[0][0]:
        _, _, g, m, x, lo, hi = heapq.heappop(queue)
        lb = g + target.o(x)
        lik += 1
        if lower < lb:
            lower, best = lb, x
        for c_lo, c_hi in _split(lo, hi, x):
            if target.log_mass(c_lo, c_hi) == -math.inf:
                continue  # C is empty
            g_c, x_c = _node(target, c_lo, c_hi, g, rng)
            if lower < g_c + m:  # the parent's bound may already prune C
                m_c = target.M(c_lo, c_hi)
                bnd += 1
                if lower < g_c + m_c:
                    heapq.heappush(queue, (-(g_c + m_c), count, g_c, m_c, x_c, c_lo, c_hi))
                    count += 1
    return best, lower, lik, bnd


def astar(target, n: int, rng: np.random.Generator) -> Draws:
    """n independent draws by A* sampling (001, Alg. 2), one search each."""
    return _searches(astar_one, target, n, rng)


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


def _searches(one, target, n: int, rng: np.random.Generator) -> Draws:
    values = np.empty((n, target.d))
    gumbels, liks, bnds = np.empty(n), np.empty(n, np.int64), np.empty(n, np.int64)
    for k in range(n):
        values[k], gumbels[k], liks[k], bnds[k] = one(target, rng)
    return Draws(
        values[:, 0] if target.d == 1 else values,
        int(liks.sum()),
        {"gumbel_max": gumbels, "draw_evals": liks, "bound_evals": bnds},
    )


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
    target, rng: np.random.Generator, strategy: int = 1
) -> tuple[np.ndarray, float, int, int]:
    """One exact draw by piecewise-constant OS* (001, Sec. 5; notes-astar.md Sec. 7).

    Pieces (B_j, M_j) partition the box. Each proposal picks piece j with probability
    proportional to nu(B_j) exp(M_j), draws X ~ nu(. | B_j) and accepts with probability
    exp(o(X) - M_j); a rejection refines the pieces and proposes afresh. Proposals arrive as a
    Poisson process of rate sum_j nu(B_j) exp(M_j) that thinning turns into one of rate Z, so
    -log of the accepted arrival time is a Gumbel(log Z) draw.
    """
    lo, hi = target.lo.copy(), target.hi.copy()
    pieces = [(lo, hi, target.log_mass(lo, hi), target.M(lo, hi))]
    lik, bnd, time = 0, 1, 0.0
    while True:
        j, log_rate = _pick([log_nu + m for _, _, log_nu, m in pieces], rng.random())
        time += rng.standard_exponential() * math.exp(-log_rate)
        p_lo, p_hi, _, m = pieces[j]
        x = target.sample_in(p_lo, p_hi, rng.random(target.d))
        lik += 1
        if math.log(1.0 - rng.random()) < target.o(x) - m:
            return x, -math.log(time), lik, bnd
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


def os_star(target, n: int, rng: np.random.Generator, strategy: int = 1) -> Draws:
    """n independent draws by OS*, the pieces reset for every draw (001, Sec. 6.3)."""
    return _searches(lambda t, r: os_star_one(t, r, strategy), target, n, rng)


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
