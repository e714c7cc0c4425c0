"""Numba helpers of the box densities the A* family samples (``harness.targets.box_density``):
the proposal's mass and draws restricted to a box, the split side, array growth. Shared by the
searches (``fast.py``, ``pm_fast.py``) and the audit (``audit_fast.py``).

The normal CDF and its inverse are scipy's own C functions (``scipy.special.cython_special``),
called through ctypes, so the reference's ``scipy.special.ndtr``/``ndtri`` and these agree bit
for bit. Nothing here is cached on disk: Numba cannot cache a function that calls a ctypes
pointer.
"""

from __future__ import annotations

import ctypes
import math
from collections.abc import Callable

import numpy as np
from numba import njit
from numba.extending import get_cython_function_address


def _special(*names: str) -> Callable[[float], float]:
    """A double -> double function of scipy.special.cython_special (fused ones carry a prefix)."""
    for name in names:
        try:
            address = get_cython_function_address("scipy.special.cython_special", name)
        except ValueError:
            continue
        return ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_double)(address)
    raise ImportError(f"scipy.special.cython_special has none of {names}")


_ndtr = _special("ndtr", "__pyx_fuse_1ndtr")
_ndtri = _special("ndtri")


@njit(cache=False)
def _log_diff_ndtr(a, b):
    if a > 0.0:
        a, b = -b, -a
    if b <= 0.0:
        if b > a:
            return math.log(_ndtr(b) - _ndtr(a))
        return -math.inf
    return math.log1p(-(_ndtr(a) + _ndtr(-b)))


@njit(cache=False)
def _normal_inside(a, b, u):
    sign = 1.0
    if a > 0.0:
        a, b, u, sign = -b, -a, 1.0 - u, -1.0
    lo = _ndtr(a)
    if b <= 0.0:
        return sign * _ndtri(lo + u * (_ndtr(b) - lo))
    mass = 1.0 - lo - _ndtr(-b)
    v = u * mass
    if v <= 0.5 - lo:
        return sign * _ndtri(lo + v)
    return -sign * _ndtri(_ndtr(-b) + (mass - v))


@njit(cache=False)
def log_mass(proposal, origin, lo, hi):
    total = 0.0
    for j in range(lo.size):
        code, a, b = int(proposal[j, 0]), proposal[j, 1], proposal[j, 2]
        if code == 0:
            total += _log_diff_ndtr((lo[j] - a) / b, (hi[j] - a) / b)
        elif code == 1:
            total += math.log(hi[j] - lo[j]) - math.log(b - a) if hi[j] > lo[j] else -math.inf
        elif hi[j] <= lo[j]:
            total += -math.inf
        else:
            total += -b * (lo[j] - origin[j]) + math.log(-math.expm1(-b * (hi[j] - lo[j])))
    return total


@njit(cache=False)
def sample_1d(proposal, lo, hi, j, u):
    code, a, b = int(proposal[j, 0]), proposal[j, 1], proposal[j, 2]
    if code == 0:
        return a + b * _normal_inside((lo[j] - a) / b, (hi[j] - a) / b, u)
    if code == 1:
        return lo[j] + u * (hi[j] - lo[j])
    return lo[j] - math.log1p(u * math.expm1(-b * (hi[j] - lo[j]))) / b


@njit(cache=False)
def sample_in(proposal, lo, hi, rng, out):
    for j in range(lo.size):
        out[j] = sample_1d(proposal, lo, hi, j, rng.random())


@njit(cache=False)
def longest_side(lo, hi):
    """The side a box splits along: the longest, the first of ties (the reference's argmax)."""
    j = 0
    for i in range(1, lo.size):
        if hi[i] - lo[i] > hi[j] - lo[j]:
            j = i
    return j


@njit(cache=False)
def grow(a):
    """``a`` with twice the rows (1-D or 2-D), its rows kept."""
    out = np.empty((2 * a.shape[0],) + a.shape[1:], dtype=a.dtype)  # noqa: RUF005 (Numba)
    out[: a.shape[0]] = a
    return out
