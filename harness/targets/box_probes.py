"""Probes of a box density's user functions, before any work and for the bound gate.

``log_lik`` and ``bound`` are checked at random points of boxes of the kind A* visits: a NaN or
+inf there, or a bound below ``log_lik``, is refused naming the function, the point and the
box; the functions are compiled once with Numba, and a helper Numba cannot compile is named.
A probe, not a proof: the ``bound-validity`` gate (harness.gates.box_bounds) re-checks the
boxes a run visits, and the samplers refuse a NaN they meet.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from numba import njit
from numba.core.dispatcher import Dispatcher


class ProbedBoxDensity(Protocol):
    """What the probes read of a box density (:class:`harness.targets.box_density.
    BoxDensityTarget`, which imports this module to check itself)."""

    lo: np.ndarray
    hi: np.ndarray
    data: np.ndarray
    log_lik: Callable[[np.ndarray, np.ndarray], float]
    bound: Callable[[np.ndarray, np.ndarray, np.ndarray], float]
    log_lik_grad: Callable[[np.ndarray, np.ndarray, np.ndarray], float] | None

    @property
    def d(self) -> int: ...

    def o(self, x: np.ndarray) -> float: ...

    def M(self, lo: np.ndarray, hi: np.ndarray) -> float: ...

    def log_mass(self, lo: np.ndarray, hi: np.ndarray) -> float: ...

    def sample_in(self, lo: np.ndarray, hi: np.ndarray, u: np.ndarray) -> np.ndarray: ...


@dataclass(frozen=True)
class BoundViolation:
    """A point of a box where o exceeds the box's bound: A* is inexact there (001, Sec. 4)."""

    lo: np.ndarray
    hi: np.ndarray
    bound: float
    x: np.ndarray
    o: float

    def describe(self) -> str:
        return (
            f"bound(lo, hi, data) = {self.bound:.6g} on the box [lo, hi] = "
            f"[{self.lo.tolist()}, {self.hi.tolist()}] is below o(x) = {self.o:.6g} at x = "
            f"{self.x.tolist()}"
        )


def _points_in(
    target: ProbedBoxDensity, lo: np.ndarray, hi: np.ndarray, points: int, rng: np.random.Generator
) -> list[np.ndarray]:
    """``points`` points of [lo, hi]: half from the proposal restricted to the box, half uniform
    on its finite sides (the proposal's own draws there where a side is infinite), so a box whose
    proposal mass sits at one end is still covered."""
    out = [target.sample_in(lo, hi, rng.random(target.d)) for _ in range(points - points // 2)]
    finite = np.isfinite(lo) & np.isfinite(hi)
    for _ in range(points // 2):
        x = target.sample_in(lo, hi, rng.random(target.d))
        x[finite] = lo[finite] + rng.random(int(finite.sum())) * (hi - lo)[finite]
        out.append(x)
    return out


def bound_violations(
    target: ProbedBoxDensity,
    boxes: list[tuple[np.ndarray, np.ndarray, float]],
    points: int,
    rng: np.random.Generator,
) -> tuple[int, list[BoundViolation]]:
    """o at ``points`` random points of each box (lo, hi, M) against its bound M, with a
    relative slack of 1e-9 for rounding; (points checked, violations, worst first)."""
    checked, found = 0, []
    for lo, hi, m in boxes:
        if target.log_mass(lo, hi) == -math.inf:
            continue
        for x in _points_in(target, lo, hi, points, rng):
            o = target.o(x)
            checked += 1
            if o > m + 1e-9 * (1.0 + abs(m)):
                found.append(BoundViolation(lo, hi, m, x, o))
    found.sort(key=lambda v: v.bound - v.o)
    return checked, found


def split_tree_boxes(
    target: ProbedBoxDensity, rng: np.random.Generator, depth: int = 6, leaves: int = 16
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Boxes as A* makes them (001, Sec. 6: split the longest side at a proposal draw), along
    ``leaves`` root-to-leaf paths of ``depth`` splits each: every other path keeps the child
    holding the best of four probes of o (toward a peak, where A* refines), the rest a random
    child (a spread of places). From the whole box down to small boxes."""
    boxes = [(target.lo.copy(), target.hi.copy())]
    for path in range(leaves):
        lo, hi = target.lo.copy(), target.hi.copy()
        for _ in range(depth):
            x = target.sample_in(lo, hi, rng.random(target.d))
            j = int(np.argmax(hi - lo))
            if path % 2 == 0:
                probes = [target.sample_in(lo, hi, rng.random(target.d)) for _ in range(4)]
                left = max(probes, key=target.o)[j] < x[j]
            else:
                left = rng.random() < 0.5
            lo, hi = lo.copy(), hi.copy()
            if left:
                hi[j] = x[j]
            else:
                lo[j] = x[j]
            if target.log_mass(lo, hi) == -math.inf:
                break
            boxes.append((lo, hi))
    return boxes


def check_functions(target: ProbedBoxDensity) -> None:
    """Probe the bound before any work: o at random points of boxes as A* makes them must not
    exceed it (a bound below o makes A* inexact). A probe, not a proof: the bound-validity gate
    checks the boxes a run visits."""
    rng = np.random.default_rng(20140)
    boxes = [(lo, hi, target.M(lo, hi)) for lo, hi in split_tree_boxes(target, rng, 6, 8)]
    _, found = bound_violations(target, boxes, 8, rng)
    if found:
        raise ValueError(
            f"{found[0].describe()}: invalid; valid: bound >= o(x) at every x of the box "
            "(found by probing random points of boxes A* would visit)"
        )
    if target.log_lik_grad is not None:
        for x in _points_in(target, target.lo, target.hi, 16, rng):
            grad = np.zeros(target.d)
            value = float(target.log_lik_grad(x, target.data, grad))
            if math.isnan(value) or value == math.inf or not np.all(np.isfinite(grad)):
                raise ValueError(
                    f"log_lik_grad(x, data, grad) = {value} with grad = {grad.tolist()} at x = "
                    f"{x.tolist()} is invalid; valid: a number or -inf, and a finite gradient"
                )


@functools.cache
def compiled(fn: Callable) -> Callable:
    """The Numba version of a user's function: itself when it is already compiled.

    The built-in targets' module-level functions are cached on disk like the kernels, so a
    process loads them instead of compiling them again (0.2 to 1 s each). A user's function is
    compiled in each process: Numba cannot cache one without a source file (a notebook, exec),
    and its module's globals may differ from one run to the next, while Numba freezes them.
    """
    if isinstance(fn, Dispatcher):
        return fn
    module, name = getattr(fn, "__module__", None) or "", getattr(fn, "__qualname__", "<locals>")
    ours = module.startswith("harness.") and "<locals>" not in name
    return njit(cache=ours)(fn)


def numba_problem(target: ProbedBoxDensity) -> str:
    """Why Numba cannot compile the target's functions ("" when it can), found once, when the
    target is made: an uncompiled helper surfaces here, naming the function to compile, not as
    a TypingError deep inside a sampler."""
    from numba.core.errors import NumbaError

    x = target.sample_in(target.lo, target.hi, np.full(target.d, 0.5))
    calls = [("log_lik", target.log_lik, (x, target.data))]
    calls.append(("bound", target.bound, (target.lo, target.hi, target.data)))
    if target.log_lik_grad is not None:
        calls.append(("log_lik_grad", target.log_lik_grad, (x, target.data, np.zeros(target.d))))
    for name, fn, args in calls:
        try:
            compiled(fn)(*args)
        except NumbaError as exc:
            text = str(exc)
            helper = re.search(r"Untyped global name '([^']+)'", text)
            what = (
                f"it calls {helper.group(1)!r}, which is not compiled: decorate it with @numba.njit"
                if helper
                else text.strip().splitlines()[0]
            )
            return f"Numba cannot compile {name} ({getattr(fn, '__name__', fn)}): {what}"
    return ""
