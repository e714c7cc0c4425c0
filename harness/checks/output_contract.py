"""The output contract: what a sampler must return before any statistic reads it.

A call asked for ``n`` draws (or chain steps) returns exactly ``n`` of them, as a numpy array of
the dtype and state shape its target kind declares (:func:`declared_output`), finite and inside
the target's domain, with an evaluation count (DESIGN.md, Contracts). ``harness verify`` checks
each call's output here before its gates run and records a breach as a failed ``contract``
verdict; the pytest plugin's checks (:mod:`harness.testing`) refuse a breach with the same one
line. A gate fed a wrong-shaped or NaN output would crash deep in numpy or, worse, pass.
"""

from __future__ import annotations

import math
import numbers
import sys
import traceback
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from harness.gates.result import GateResult
from harness.spec import Chain, Draws

GATE = "contract"
#: Kinds whose draws are integer states 0..D-1.
STATE_KINDS = ("discrete", "discrete-ragged", "discrete-likelihood", "factor-graph")
#: A real draw may sit this far outside its closed domain (relative to the bound): a truncated
#: law's inverse CDF rounds, and its gates clip there anyway.
SLACK = 1e-9


@dataclass(frozen=True)
class Declared:
    """What one call's values must be: integers or reals, the shape of one draw, and the
    closed domain [lo, hi] of every coordinate (scalars or one bound per coordinate)."""

    integer: bool
    state_shape: tuple[int, ...] = ()
    lo: Any = -math.inf
    hi: Any = math.inf

    def describe(self, n: int) -> str:
        kind = "an integer array" if self.integer else "a float array"
        lo, hi = np.min(self.lo), np.max(self.hi)
        if self.integer:
            where = f"states {int(lo)}..{int(hi)}"
        elif math.isinf(lo) and math.isinf(hi):
            where = "finite"
        else:
            where = f"finite, in [{_num(self.lo)}, {_num(self.hi)}]"
        return f"{kind} of shape {(n, *self.state_shape)}, {where}"


def _num(bound: Any) -> str:
    values = np.atleast_1d(np.asarray(bound, dtype=np.float64))
    if values.size == 1 or np.all(values == values[0]):
        return f"{values[0]:g}"
    return "(" + ", ".join(f"{v:g}" for v in values) + ")"


def states(count: int) -> Declared:
    """Integer states 0..count-1, one per draw."""
    return Declared(True, (), 0, int(count) - 1)


def reals() -> Declared:
    """Finite real numbers, one per draw."""
    return Declared(False)


def declared_output(target: Any) -> Declared | None:
    """The output a sampler of ``target``'s kind returns; None for a kind that declares none
    (a plugin's own kind: its gates, if any, read what they need)."""
    kind = getattr(target, "kind", None)
    if kind in STATE_KINDS:
        shape = (int(target.n_vars),) if kind == "factor-graph" else ()
        return Declared(True, shape, 0, int(target.D) - 1)
    if kind in ("continuous-1d", "posterior-1d"):
        lo, hi = getattr(target, "support", (-math.inf, math.inf))
        return Declared(False, (), float(lo), float(hi))
    if kind == "box-density":
        d = int(target.d)
        lo, hi = np.asarray(target.lo, dtype=np.float64), np.asarray(target.hi, dtype=np.float64)
        return Declared(False, () if d == 1 else (d,), lo, hi)
    if kind == "factor-graph-continuous":
        return Declared(False, (int(target.n_vars),), float(target.a), float(target.b))
    if kind == "glm-posterior":
        return Declared(False, (int(target.D),))
    return None


def _got(values: Any) -> str:
    """A short description of what came back (type, dtype, shape, a few entries)."""
    if isinstance(values, np.ndarray):
        entries = np.array2string(values.ravel(), threshold=6, edgeitems=3, separator=", ")
        return f"{values.dtype} array of shape {values.shape} {entries}"
    if isinstance(values, list | tuple):
        return f"a {type(values).__name__} of {len(values)} entries"
    text = repr(values)
    return f"{type(values).__name__} {text if len(text) <= 60 else text[:57] + '...'}"


def _first(mask: np.ndarray) -> int:
    """The draw (row) of the first True in ``mask``."""
    flat = int(np.argmax(mask.reshape(mask.shape[0], -1).any(axis=1)))
    return flat


def values_breach(values: Any, n: int, declared: Declared) -> str | None:
    """One line saying how ``values`` break ``declared`` for ``n`` draws; None when they keep
    it. The checks run in the order a reader would fix them: type, dtype, count, shape, finite,
    domain."""
    expected = f"expected {declared.describe(n)}"
    if not isinstance(values, np.ndarray):
        return f"{expected}; got {_got(values)}"
    dtype_ok = (
        np.issubdtype(values.dtype, np.integer)
        if declared.integer
        else np.issubdtype(values.dtype, np.floating)
    )
    if not dtype_ok:
        return f"{expected}; got {_got(values)}"
    if values.ndim == 0 or values.shape[0] != n:
        count = "no" if values.ndim == 0 else values.shape[0]
        return f"{expected}; got {count} draws when asked for {n} ({_got(values)})"
    if values.shape[1:] != declared.state_shape:
        return f"{expected}; got {_got(values)}"
    if not declared.integer and not np.all(finite := np.isfinite(values)):
        k = _first(~finite)
        bad = int(values.size - np.count_nonzero(finite))
        return f"{expected}; got {bad} NaN or infinite values, first at draw {k}: {values[k]}"
    lo = np.asarray(declared.lo, dtype=np.float64)
    hi = np.asarray(declared.hi, dtype=np.float64)
    if not declared.integer:  # finite bounds get a rounding slack; infinite ones need none
        lo = np.where(np.isfinite(lo), lo - SLACK * np.maximum(1.0, np.abs(lo)), lo)
        hi = np.where(np.isfinite(hi), hi + SLACK * np.maximum(1.0, np.abs(hi)), hi)
    outside = (values < lo) | (values > hi)
    if np.any(outside):
        k = _first(outside)
        return (
            f"{expected}; got {int(np.count_nonzero(outside))} values outside the domain, "
            f"first at draw {k}: {values[k]}"
        )
    return None


def output_breach(target: Any, out: Any, n: int) -> str | None:
    """How one call's return value ``out`` (asked for ``n`` draws on ``target``) breaks the
    output contract, in one line; None when it keeps it."""
    if not isinstance(out, Draws | Chain):
        return f"expected harness.Draws(values, evals) or harness.Chain; got {_got(out)}"
    evals = out.evals
    if isinstance(evals, bool) or not isinstance(evals, numbers.Integral) or evals < 0:
        return (
            f"expected evals, the count of likelihood evaluations (an integer >= 0); got {evals!r}"
        )
    if not isinstance(out.extras, Mapping):
        return f"expected extras, a mapping of name to array; got {_got(out.extras)}"
    declared = declared_output(target)
    if declared is None:
        return None
    breach = values_breach(out.values, n, declared)
    return None if breach is None else f"values: {breach}"


def contract_result(breach: str | None, n: int, alpha: float) -> GateResult:
    """The ``contract`` verdict of one call: a breach fails it, with the breach as detail."""
    detail = breach or "exactly n draws of the declared dtype and shape, finite, in the domain"
    return GateResult.of_bound(
        GATE, float(breach is not None), breach is None, n, 0.0, "any breach", alpha, detail=detail
    )


def _library(filename: str) -> bool:
    """A frame of the harness itself, of an installed package or of Python's own library."""
    path = Path(filename).resolve()
    harness_dir = Path(__file__).resolve().parents[1]
    roots = {Path(p).resolve() for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    return (
        filename.startswith("<")
        or harness_dir in path.parents
        or "site-packages" in path.parts
        or any(root in path.parents for root in roots)
    )


def where_raised(exc: BaseException) -> str:
    """``file:line in function`` of the innermost frame of ``exc`` that is the user's (not the
    harness's, nor an installed library's): where to look. Empty when there is none."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if not _library(f.filename)]
    if not frames:
        return ""
    last = frames[-1]
    path = Path(last.filename)
    try:
        shown = str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:  # outside the working directory: the path as Python knows it
        shown = str(path)
    return f"{shown}:{last.lineno} in {last.name}"


def raised_text(exc: BaseException) -> str:
    """One line for a sampler that raised: the exception and where, in the user's code."""
    text = f"{type(exc).__name__}: {exc}".strip().replace("\n", " ")[:400]
    where = where_raised(exc)
    return f"{text} (raised at {where})" if where else text
