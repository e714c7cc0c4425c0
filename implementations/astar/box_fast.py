"""Numba helpers of the box densities the A* family samples (``harness.targets.box_density``):
the proposal's mass and draws restricted to a box, the split side, array growth, and a target's
own functions as the kernels call them. Shared by the searches (``fast.py``, ``pm_fast.py``) and
the audit (``audit_fast.py``).

The normal CDF and its inverse are scipy's own C functions (``scipy.special.cython_special``),
called as external symbols, so the reference's ``scipy.special.ndtr``/``ndtri`` and these agree
bit for bit, and a kernel that calls them can be cached on disk (a ctypes pointer in compiled
code cannot).

A target's ``log_lik``, ``bound`` and ``log_lik_grad`` enter the kernels as first-class function
values (:func:`user_function`), all of one Numba type per role: a kernel then compiles once for
every target, and its machine code is cached on disk, where a compiled function passed as an
argument would make Numba compile the kernel again for each target in each process.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import llvmlite.binding as llvm
import numpy as np
from numba import cfunc, njit, types
from numba.extending import get_cython_function_address

from harness.targets.box_probes import compiled


def _special(symbol: str, *names: str) -> types.ExternalFunction:
    """A double -> double function of scipy.special.cython_special (fused ones carry a prefix),
    registered under ``symbol`` so that cached machine code finds it again in a new process."""
    for name in names:
        try:
            address = get_cython_function_address("scipy.special.cython_special", name)
        except ValueError:
            continue
        llvm.add_symbol(symbol, address)
        return types.ExternalFunction(symbol, types.float64(types.float64))
    raise ImportError(f"scipy.special.cython_special has none of {names}")


_ndtr = _special("sampler_harness_ndtr", "ndtr", "__pyx_fuse_1ndtr")
_ndtri = _special("sampler_harness_ndtri", "ndtri")

_INVALID = (
    " returned NaN or +inf, or raised, while sampling (Numba); valid: a number or -inf (the "
    "reference implementation names where)"
)
LOG_LIK_INVALID = "log_lik(x, data)" + _INVALID
BOUND_INVALID = "bound(lo, hi, data)" + _INVALID
GRAD_INVALID = "log_lik_grad(x, data, grad)" + _INVALID


def _signature(role: str, data_ndim: int) -> types.Signature:
    """How the kernels call a target's function of ``role``; ``data`` is its float64 array."""
    # C-contiguous, as the kernels' work vectors (rows of C blocks) and a caller's arrays are:
    # a target's function then compiles once for the kernels and the reference alike.
    vector = types.Array(types.float64, 1, "C")
    data = types.Array(types.float64, data_ndim, "C")
    args = {
        "log_lik": (vector, data),
        "bound": (vector, vector, data),
        "log_lik_grad": (vector, data, vector),
    }
    return types.float64(*args[role])


@functools.lru_cache(maxsize=128)
def user_function(fn: Callable, role: str, data_ndim: int) -> Callable:
    """A target's ``log_lik``, ``bound`` or ``log_lik_grad`` (``role``) as a first-class function
    value of one type per role and data shape. An exception inside it becomes NaN, which the
    checked calls below turn into a ValueError: a compiled function value cannot raise."""
    inner = compiled(fn)

    def two(a, b):  # pragma: no cover - compiled
        try:
            return inner(a, b)
        except Exception:
            return math.nan

    def three(a, b, c):  # pragma: no cover - compiled
        try:
            return inner(a, b, c)
        except Exception:
            return math.nan

    return cfunc(_signature(role, data_ndim))(two if role == "log_lik" else three)


def no_grad(data_ndim: int) -> Callable:
    """Stands in for a target without log_lik_grad (the prior estimator never calls it)."""
    return user_function(_zero_grad, "log_lik_grad", data_ndim)


def _zero_grad(x: np.ndarray, data: np.ndarray, grad: np.ndarray) -> float:
    return 0.0


# The checked calls stop the draw when the user's function returns NaN or +inf: a NaN compares
# false everywhere, so a search would otherwise loop forever.
@njit(cache=True)
def _valid(v, role):
    if v == v and v != math.inf:
        return v
    if role == 0:
        raise ValueError(LOG_LIK_INVALID)
    if role == 1:
        raise ValueError(BOUND_INVALID)
    raise ValueError(GRAD_INVALID)


@njit(cache=True)
def call_log_lik(log_lik, x, data):
    return _valid(log_lik(x, data), np.int64(0))


@njit(cache=True)
def call_bound(bound, lo, hi, data):
    return _valid(bound(lo, hi, data), np.int64(1))


@njit(cache=True)
def call_log_lik_grad(log_lik_grad, x, data, grad):
    return _valid(log_lik_grad(x, data, grad), np.int64(2))


@njit(cache=True)
def _log_diff_ndtr(a, b):
    if a > 0.0:
        a, b = -b, -a
    if b <= 0.0:
        if b > a:
            return math.log(_ndtr(b) - _ndtr(a))
        return -math.inf
    return math.log1p(-(_ndtr(a) + _ndtr(-b)))


@njit(cache=True)
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


@njit(cache=True)
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


@njit(cache=True)
def sample_1d(proposal, lo, hi, j, u):
    code, a, b = int(proposal[j, 0]), proposal[j, 1], proposal[j, 2]
    if code == 0:
        return a + b * _normal_inside((lo[j] - a) / b, (hi[j] - a) / b, u)
    if code == 1:
        return lo[j] + u * (hi[j] - lo[j])
    return lo[j] - math.log1p(u * math.expm1(-b * (hi[j] - lo[j]))) / b


@njit(cache=True)
def sample_in(proposal, lo, hi, rng, out):
    for j in range(lo.size):
        out[j] = sample_1d(proposal, lo, hi, j, rng.random())


@njit(cache=True)
def longest_side(lo, hi):
    """The side a box splits along: the longest, the first of ties (the reference's argmax)."""
    j = 0
    for i in range(1, lo.size):
        if hi[i] - lo[i] > hi[j] - lo[j]:
            j = i
    return j


@njit(cache=True)
def grow(a):
    """``a`` with twice the rows (1-D or 2-D), its rows kept."""
    out = np.empty((2 * a.shape[0],) + a.shape[1:], dtype=a.dtype)  # noqa: RUF005 (Numba)
    # Through flat views, not ``out[:n] = a``: Numba compiles a 2-D slice assignment's
    # shape-mismatch message once a process (1.3 to 3.4 s); the 1-D one the kernels share anyway.
    out.reshape(out.size)[: a.size] = a.reshape(a.size)
    return out
