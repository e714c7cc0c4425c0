"""The run-to-completion audit and the bound report of the A* family's searches, written to be
read against 001_78ff986a3d316097.txt (Alg. 1 and 2, Sec. 4) and 004_b270422b62f00607.txt
(Alg. 1 and 3); ``audit_fast.py`` compiles the same steps for the Numba searches.

**Audit** (``audit=True``). A search with an exact stop (A*, drill-down, PM-A*, A* without a
bound) ends with a best value LB and a *frontier*: every part of the box whose Gumbel-process
points it has not evaluated. A frontier node is a box B, a value v and a state:

- ``MAX_AT``: B's largest Gumbel is v at a drawn point x whose o(x) is not yet evaluated (a
  queued or pruned A* node);
- ``MAX``: B's largest Gumbel is v, its location not drawn (a box split in an earlier draw of a
  reused partition): given the maximum, its location is X ~ nu(. | B) (001, Alg. 1);
- ``BELOW``: every point of B not yet evaluated lies below v (a region whose own point was
  evaluated and that was beaten, pruned or left, drill-down's discarded side).

:func:`complete` continues from the frontier by A* sampling (001, Alg. 2) with the *target's*
bound M(B), never the sampler's, and a Generator of its own (:func:`audit_generator`: the
sampler's draws, costs and final Generator state stay those of ``audit=False``). It ends once
LB >= v + M(B) for every node left: nothing left can beat the result. After an exact stop every
frontier node has v + M'(B) <= LB for the valid bound M' the search used (drill-down: o's
maximum on a discarded side, at its split point), so no point left exceeds LB (floating-point
addition is monotone); the continuation may expand a node whose target bound is looser, but
finds nothing better: an exact search changes no answer, deterministically. A search that
stopped early gets the answer of the same random numbers run to completion. Each continuation
is capped at :data:`AUDIT_CAP` expansions (reported, never silently passed).

**Bound report** (``report_bounds=True``). The search reports every bound it computed (box and
value, with its draw) and, per draw, the largest relative excess (o(x) - M) / (1 + |M|) over the
points it evaluated, M the bound it held for the point's region; a valid bound keeps it <= 0.
"""

from __future__ import annotations

import heapq
import math
from typing import Any, NamedTuple

import numpy as np

from implementations.shared.reference import trunc_gumbel_from_exponential

#: Frontier states (see the module docstring); the compiled searches use the same codes.
MAX_AT, MAX, BELOW = 0, 1, 2
#: Expansions one continuation may spend before it reports a cap hit (a search whose bound is
#: the target's needs none: its frontier is beaten already; the built-in searches' 200-seed
#: runs never came near it).
AUDIT_CAP = 10_000


class Node(NamedTuple):
    """A frontier node: box [lo, hi], value v, the drawn point (MAX_AT only) and the state."""

    lo: np.ndarray
    hi: np.ndarray
    value: float
    x: np.ndarray | None
    state: int


class Completion(NamedTuple):
    """One continuation: the best value it ends with (>= LB), whether it hit the cap, and the
    likelihood and bound evaluations and expansions it spent."""

    best: float
    capped: bool
    lik: int
    bnd: int
    expanded: int


def audit_generator(rng: np.random.Generator) -> np.random.Generator:
    """The continuation's own Generator: ``rng``'s bit generator jumped ahead (PCG64 and the
    others that jump: 2^127 steps or more), so the audit consumes none of ``rng``'s draws; a
    bit generator that cannot jump seeds one from a copy of its state."""
    bits = rng.bit_generator
    if hasattr(bits, "jumped"):
        return np.random.Generator(bits.jumped())
    copy = type(bits)()
    copy.state = bits.state
    return np.random.Generator(np.random.PCG64(int(copy.random_raw())))


def excess(o: float, m: float) -> float:
    """(o - m) / (1 + |m|): how far o(x) exceeds the bound m, relative to m's size (<= 0 for a
    valid bound; -inf where o = -inf, inf where m = -inf < o). Compiled as it is by the Numba
    searches, so both builds report the same number."""
    if o == -math.inf:
        return -math.inf
    if m == -math.inf:
        return math.inf
    return (o - m) / (1.0 + abs(m))


def _gumbel_below(log_nu: float, upper: float, rng: np.random.Generator) -> float:
    return trunc_gumbel_from_exponential(log_nu, upper, rng.standard_exponential())


def split(lo: np.ndarray, hi: np.ndarray, x: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """Split [lo, hi] at x along its longest side, infinite sides first, the lowest index on a
    tie (001, Sec. 6: the rule of every experiment; the searches split so too)."""
    j = int(np.argmax(hi - lo))
    left_hi, right_lo = hi.copy(), lo.copy()
    left_hi[j] = right_lo[j] = x[j]
    return [(lo, left_hi), (right_lo, hi)]


def complete(
    target: Any,
    nodes: list[Node],
    lower: float,
    rng: np.random.Generator,
    cap: int = AUDIT_CAP,
) -> Completion:
    """A* sampling (001, Alg. 2) from the frontier ``nodes`` with the target's bound, until
    LB >= v + M(B) for every node left or ``cap`` expansions. Nodes are loaded in order, each
    with one bound evaluation (a BELOW node of no proposal mass is dropped unbounded); ties in
    priority go to the earlier push, as in the searches."""
    d = target.d
    heap: list[tuple[float, int, np.ndarray, np.ndarray, float, Any, int]] = []
    best, lik, bnd, expanded, count = lower, 0, 0, 0, 0
    for lo, hi, v, x, state in nodes:
        if state == BELOW and target.log_mass(lo, hi) == -math.inf:
            continue
        m = target.M(lo, hi)
        bnd += 1
        if best < v + m:
            heapq.heappush(heap, (-(v + m), count, lo, hi, v, x, state))
            count += 1
    capped = False
    while heap and best < -heap[0][0]:
        if expanded == cap:
            capped = True
            break
        _, _, lo, hi, v, x, state = heapq.heappop(heap)
        expanded += 1
        if state == BELOW:  # the largest point left in B: TruncGumbel(log nu(B), v)
            v = _gumbel_below(target.log_mass(lo, hi), v, rng)
        if state != MAX_AT:
            x = target.sample_in(lo, hi, rng.random(d))
        lb = v + target.o(x)
        lik += 1
        if best < lb:
            best = lb
        for c_lo, c_hi in split(lo, hi, x):
            c_nu = target.log_mass(c_lo, c_hi)
            if c_nu == -math.inf:
                continue
            g_c = _gumbel_below(c_nu, v, rng)
            x_c = target.sample_in(c_lo, c_hi, rng.random(d))
            m_c = target.M(c_lo, c_hi)
            bnd += 1
            if best < g_c + m_c:
                heapq.heappush(heap, (-(g_c + m_c), count, c_lo, c_hi, g_c, x_c, MAX_AT))
                count += 1
    return Completion(best, capped, lik, bnd, expanded)


class SearchLog:
    """What one call's searches keep for the audit and the bound report (reference builds).

    The searches call :meth:`bound` for every bound they compute, :meth:`point` for every
    point they evaluate inside a bounded region, :meth:`left` for every frontier node and
    :meth:`end` once a draw stops. Local to one call: a mutable record, not a result.
    """

    def __init__(
        self, target: Any, n: int, rng: np.random.Generator, audit: bool, report: bool
    ) -> None:
        self.target, self.audit, self.report = target, audit, report
        self.rng = audit_generator(rng) if audit else None
        self.nodes: list[Node] = []
        self.k, self.gap = 0, -math.inf
        self.gaps = np.full(n, -math.inf)
        self.boxes: list[list[float]] = []  # rows [draw, lo, hi, M], as the Numba builds keep
        self.results: list[Completion] = []
        self.lowers: list[float] = []

    def bound(self, lo: np.ndarray, hi: np.ndarray, m: float) -> None:
        if self.report:
            self.boxes.append([float(self.k), *lo.tolist(), *hi.tolist(), m])

    def point(self, o: float, m: float) -> None:
        if self.report:
            e = excess(o, m)
            if e > self.gap:
                self.gap = e

    def left(self, lo: np.ndarray, hi: np.ndarray, v: float, x: Any, state: int) -> None:
        if self.audit:
            self.nodes.append(Node(lo, hi, v, x, state))

    def end(self, lower: float) -> None:
        """The draw stopped with best value ``lower``: continue it (audit), keep its gap."""
        if self.audit:
            self.results.append(complete(self.target, self.nodes, lower, self.rng))
            self.lowers.append(lower)
            self.nodes = []
        if self.report:
            self.gaps[self.k] = self.gap
            self.gap = -math.inf
        self.k += 1

    def extras(self) -> dict[str, np.ndarray]:
        """The call's audit and bound-report extras (:func:`pack`)."""
        results = self.results
        return pack(
            self.target.d,
            self.audit,
            self.report,
            np.array(self.lowers, dtype=np.float64),
            np.array([r.best for r in results], dtype=np.float64),
            np.array([r.capped for r in results], dtype=np.bool_),
            np.array([r.lik for r in results], dtype=np.int64),
            np.array([r.bnd for r in results], dtype=np.int64),
            self.gaps,
            np.array(self.boxes, dtype=np.float64).reshape(len(self.boxes), 2 * self.target.d + 2),
        )


def pack(
    d: int,
    audit: bool,
    report: bool,
    lowers: np.ndarray,
    best: np.ndarray,
    capped: np.ndarray,
    lik: np.ndarray,
    bnd: np.ndarray,
    gaps: np.ndarray,
    boxes: np.ndarray,
) -> dict[str, np.ndarray]:
    """The extras both builds return: with ``audit``, per draw whether the continuation found a
    better value (``audit_changed``), hit the cap, its best value and its likelihood and bound
    evaluations (apart from ``evals``); with ``report``, per draw the largest excess of o over
    the held bound (``bound_gap``), and per bound computed (rows ``[draw, lo, hi, M]`` of
    ``boxes``) its draw, box and value."""
    out: dict[str, np.ndarray] = {}
    if audit:
        out.update(
            audit_changed=best > lowers,
            audit_capped=capped.astype(np.bool_),
            audit_gumbel=best,
            audit_evals=lik.astype(np.int64),
            audit_bound_evals=bnd.astype(np.int64),
        )
    if report:
        out.update(
            bound_gap=gaps,
            bound_draw=boxes[:, 0].astype(np.int64),
            bound_lo=np.ascontiguousarray(boxes[:, 1 : 1 + d]),
            bound_hi=np.ascontiguousarray(boxes[:, 1 + d : 1 + 2 * d]),
            bound_m=np.ascontiguousarray(boxes[:, 1 + 2 * d]),
        )
    return out
