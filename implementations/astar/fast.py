"""Numba kernels for A* sampling and rejection, and thin wrappers with the reference's signatures.

The kernels consume the Generator in the reference's order. The normal CDF and its inverse are
scipy's own C functions (``scipy.special.cython_special``), called through ctypes, so the
reference's ``scipy.special.ndtr``/``ndtri`` and these agree bit for bit. A target's
``log_lik`` and ``bound`` are compiled from the same source the reference calls.

A*'s kernel keeps the bound partition as a binary tree in arrays (``reference.Box``): reset
for every draw, or kept across the draws of one call with ``reuse``.

Nothing here is cached on disk: Numba cannot cache a function that calls a ctypes pointer or
takes another compiled function as an argument, so each process compiles on its first call.
"""

from __future__ import annotations

import ctypes
import functools
import math
from collections.abc import Callable

import numpy as np
from numba import njit
from numba.extending import get_cython_function_address

from harness.spec import Draws
from harness.targets.box_probes import compiled
from implementations.astar import reference
from implementations.gumbel.fast import _heap_pop, _heap_push, _log, _trunc_gumbel
from implementations.minibatch_gibbs.fast import _poisson_count


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
def _log_mass(proposal, origin, lo, hi):
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
def _sample_1d(proposal, lo, hi, j, u):
    code, a, b = int(proposal[j, 0]), proposal[j, 1], proposal[j, 2]
    if code == 0:
        return a + b * _normal_inside((lo[j] - a) / b, (hi[j] - a) / b, u)
    if code == 1:
        return lo[j] + u * (hi[j] - lo[j])
    return lo[j] - math.log1p(u * math.expm1(-b * (hi[j] - lo[j]))) / b


@njit(cache=False)
def _sample_in(proposal, lo, hi, rng, out):
    for j in range(lo.size):
        out[j] = _sample_1d(proposal, lo, hi, j, rng.random())


@njit(cache=False)
def _longest_side(lo, hi):
    """The side a box splits along: the longest, the first of ties (the reference's argmax)."""
    j = 0
    for i in range(1, lo.size):
        if hi[i] - lo[i] > hi[j] - lo[j]:
            j = i
    return j


@njit(cache=False)
def _grow(a):
    """``a`` with twice the rows (1-D or 2-D), its rows kept."""
    out = np.empty((2 * a.shape[0],) + a.shape[1:], dtype=a.dtype)  # noqa: RUF005 (Numba)
    out[: a.shape[0]] = a
    return out


#: ``reference._share`` compiled from its own source (plain arithmetic, no NumPy calls).
_share = njit(cache=False)(reference._share)


@njit(cache=False)
def astar_kernel(box_lo, box_hi, proposal, data, log_lik, bound, extra_draws, reuse, n, rng):
    d = box_lo.size
    values = np.empty((n, d))
    gumbels = np.empty(n)
    liks = np.zeros(n, dtype=np.int64)
    bnds = np.zeros(n, dtype=np.int64)
    # The bound partition, a binary tree (reference.Box): box b has the proposal mass t_nu[b],
    # the bound t_m[b] (its own once t_own[b]) and the children t_kid[b], t_kid[b] + 1 (-1: a
    # leaf). Without reuse it restarts from the root box for every draw.
    tcap = 64
    t_lo = np.empty((tcap, d))
    t_hi = np.empty((tcap, d))
    t_nu = np.empty(tcap)
    t_m = np.empty(tcap)
    t_own = np.zeros(tcap, dtype=np.bool_)
    t_kid = np.empty(tcap, dtype=np.int64)
    boxes = 0
    # Queue nodes: priority -(G + M), push order, Gumbel G, location (leaves only), box.
    cap = 64
    neg = np.empty(cap)
    seq = np.empty(cap, dtype=np.int64)
    g_ = np.empty(cap)
    x_ = np.empty((cap, d))
    b_ = np.empty(cap, dtype=np.int64)
    heap = np.empty(cap, dtype=np.int64)
    best = np.empty(d)
    x_k = np.empty(d)
    log_root = _log_mass(proposal, box_lo, box_lo, box_hi)  # the same root for every draw
    for k in range(n):
        fresh = boxes == 0 or not reuse
        if fresh:
            t_lo[0] = box_lo
            t_hi[0] = box_hi
            t_nu[0] = log_root
            t_kid[0] = -1
            boxes = 1
        g_[0] = log_root - _log(rng.standard_exponential())
        if t_kid[0] < 0:
            _sample_in(proposal, box_lo, box_hi, rng, x_[0])
        if fresh:
            t_m[0] = bound(box_lo, box_hi, data)
            t_own[0] = True
            bnds[k] += 1
        b_[0] = 0
        neg[0] = -(g_[0] + t_m[0])
        seq[0] = 0
        size = _heap_push(heap, 0, neg, seq, 0)
        used = 1
        lower = -math.inf
        while size > 0 and lower < -neg[heap[0]]:
            p, size = _heap_pop(heap, size, neg, seq)
            b = b_[p]
            g = g_[p]
            left = t_kid[b]
            heir = -1  # a split leaf's children are both truncated below its last G
            if left < 0:  # a leaf: evaluate, draw more pairs (extra_draws), split at x_[p]
                lb = g + log_lik(x_[p], data)
                liks[k] += 1
                if lower < lb:
                    lower = lb
                    best[:] = x_[p]
                if extra_draws > 0.0:
                    if lower < g + t_m[b]:
                        count = _poisson_count(rng, extra_draws)
                        while count > 0 and lower < g + t_m[b]:
                            g = _trunc_gumbel(t_nu[b], g, rng.standard_exponential())
                            _sample_in(proposal, t_lo[b], t_hi[b], rng, x_k)
                            lb = g + log_lik(x_k, data)
                            liks[k] += 1
                            if lower < lb:
                                lower = lb
                                best[:] = x_k
                            count -= 1
                    if lower >= g + t_m[b]:
                        continue  # the rest of box b cannot beat LB
                if boxes + 2 > tcap:
                    tcap *= 2
                    t_lo, t_hi, t_nu, t_m = _grow(t_lo), _grow(t_hi), _grow(t_nu), _grow(t_m)
                    t_own, t_kid = _grow(t_own), _grow(t_kid)
                left = boxes
                boxes += 2
                t_kid[b] = left
                j = _longest_side(t_lo[b], t_hi[b])
                for c in range(left, left + 2):
                    t_lo[c] = t_lo[b]
                    t_hi[c] = t_hi[b]
                    t_m[c] = t_m[b]
                    t_own[c] = False
                    t_kid[c] = -1
                t_hi[left, j] = x_[p, j]
                t_lo[left + 1, j] = x_[p, j]
                for c in range(left, left + 2):
                    t_nu[c] = _log_mass(proposal, box_lo, t_lo[c], t_hi[c])
            elif rng.random() < _share(t_nu[left], t_nu[left + 1]):  # split in an earlier draw
                heir = left
            else:
                heir = left + 1
            for c in range(left, left + 2):
                if t_nu[c] == -math.inf:
                    continue
                if used + 1 >= cap:
                    cap *= 2
                    neg, seq, g_, x_ = _grow(neg), _grow(seq), _grow(g_), _grow(x_)
                    b_, heap = _grow(b_), _grow(heap)
                s = used
                if c == heir:
                    g_[s] = g
                else:
                    g_[s] = _trunc_gumbel(t_nu[c], g, rng.standard_exponential())
                if t_kid[c] < 0:
                    _sample_in(proposal, t_lo[c], t_hi[c], rng, x_[s])
                if lower < g_[s] + t_m[c] and not t_own[c]:  # the inherited bound may prune c
                    t_m[c] = bound(t_lo[c], t_hi[c], data)
                    t_own[c] = True
                    bnds[k] += 1
                if lower < g_[s] + t_m[c]:
                    b_[s] = c
                    neg[s] = -(g_[s] + t_m[c])
                    seq[s] = s
                    size = _heap_push(heap, size, neg, seq, s)
                    used += 1
        values[k] = best
        gumbels[k] = lower
    return values, gumbels, liks, bnds


@njit(cache=False)
def drill_down_kernel(box_lo, box_hi, proposal, data, log_lik, bound, mode, n, rng):
    values = np.empty((n, 1))
    gumbels = np.empty(n)
    liks = np.zeros(n, dtype=np.int64)
    bnds = np.zeros(n, dtype=np.int64)
    lo = np.empty(1)
    hi = np.empty(1)
    x = np.empty(1)
    best = np.empty(1)
    log_root = _log_mass(proposal, box_lo, box_lo, box_hi)
    for k in range(n):
        lo[0], hi[0] = box_lo[0], box_hi[0]
        g = log_root - _log(rng.standard_exponential())
        _sample_in(proposal, lo, hi, rng, x)
        lower = g + log_lik(x, data)
        best[0] = x[0]
        liks[k] = 1
        while True:
            if mode < x[0]:
                hi[0] = x[0]
            else:
                lo[0] = x[0]
            log_c = _log_mass(proposal, box_lo, lo, hi)
            if log_c == -math.inf:
                break
            g = _trunc_gumbel(log_c, g, rng.standard_exponential())
            _sample_in(proposal, lo, hi, rng, x)
            bnds[k] += 1
            if lower >= g + bound(lo, hi, data):
                break
            lb = g + log_lik(x, data)
            liks[k] += 1
            if lower < lb:
                lower = lb
                best[0] = x[0]
        values[k] = best
        gumbels[k] = lower
    return values, gumbels, liks, bnds


@njit(cache=False)
def os_star_kernel(
    box_lo, box_hi, proposal, data, log_lik, bound, strategy, refine_prob, reuse, n, rng
):
    d = box_lo.size
    values = np.empty((n, d))
    gumbels = np.empty(n)
    liks = np.zeros(n, dtype=np.int64)
    bnds = np.zeros(n, dtype=np.int64)
    cap = 64
    p_lo = np.empty((cap, d))
    p_hi = np.empty((cap, d))
    log_nu = np.empty(cap)
    m_ = np.empty(cap)
    cum = np.empty(cap)
    x = np.empty(d)
    log_root = _log_mass(proposal, box_lo, box_lo, box_hi)
    size = 0
    for k in range(n):
        if size == 0 or not reuse:  # the pieces restart from the box, or persist (reuse)
            p_lo[0] = box_lo
            p_hi[0] = box_hi
            log_nu[0] = log_root
            m_[0] = bound(box_lo, box_hi, data)
            bnds[k] = 1
            size = 1
        time = 0.0
        while True:
            top = -math.inf
            for i in range(size):
                top = max(top, log_nu[i] + m_[i])
            acc = 0.0
            for i in range(size):
                acc += math.exp(log_nu[i] + m_[i] - top)
                cum[i] = acc
            v = rng.random() * cum[size - 1]
            j = size - 1
            for i in range(size):
                if cum[i] > v:
                    j = i
                    break
            time += rng.standard_exponential() * math.exp(-(top + math.log(cum[size - 1])))
            _sample_in(proposal, p_lo[j], p_hi[j], rng, x)
            liks[k] += 1
            if math.log(1.0 - rng.random()) < log_lik(x, data) - m_[j]:
                values[k] = x
                gumbels[k] = -math.log(time)
                break
            if refine_prob < 1.0 and rng.random() >= refine_prob:
                continue
            if strategy == 2:
                j = 0
                for i in range(1, size):
                    if log_nu[i] > log_nu[j]:
                        j = i
                for i in range(d):
                    x[i] = _sample_1d(proposal, p_lo[j], p_hi[j], i, 0.5)
            if size + 1 >= cap:
                cap *= 2
                p_lo, p_hi, log_nu, m_ = _grow(p_lo), _grow(p_hi), _grow(log_nu), _grow(m_)
                cum = _grow(cum)
            # Children replace piece j in place, the later pieces move up one (the reference's
            # list order, which the pick's running sum follows).
            for i in range(size - 1, j, -1):
                p_lo[i + 1], p_hi[i + 1] = p_lo[i], p_hi[i]
                log_nu[i + 1], m_[i + 1] = log_nu[i], m_[i]
            s = _longest_side(p_lo[j], p_hi[j])
            p_lo[j + 1] = p_lo[j]
            p_hi[j + 1] = p_hi[j]
            p_hi[j, s] = x[s]
            p_lo[j + 1, s] = x[s]
            for c in (j, j + 1):
                log_nu[c] = _log_mass(proposal, box_lo, p_lo[c], p_hi[c])
                m_[c] = bound(p_lo[c], p_hi[c], data)
            bnds[k] += 2
            size += 1
    return values, gumbels, liks, bnds


@njit(cache=False)
def rejection_kernel(box_lo, box_hi, proposal, data, log_lik, bound, n, rng):
    d = box_lo.size
    values = np.empty((n, d))
    liks = np.zeros(n, dtype=np.int64)
    m = bound(box_lo, box_hi, data)
    x = np.empty(d)
    for k in range(n):
        while True:
            _sample_in(proposal, box_lo, box_hi, rng, x)
            liks[k] += 1
            if math.log(1.0 - rng.random()) < log_lik(x, data) - m:
                values[k] = x
                break
    return values, liks


#: The user's functions, as a guarded twin names them in its error.
_CALLS = {
    "log_lik": "log_lik(x, data)",
    "bound": "bound(lo, hi, data)",
    "log_lik_grad": "log_lik_grad(x, data, grad)",
}


@functools.lru_cache(maxsize=64)
def _compiled(fn: Callable, role: str = "log_lik") -> Callable:
    """The Numba version of a target's ``log_lik`` (``role``), ``bound`` or ``log_lik_grad``,
    compiled once, that stops the draw with a ValueError when the user's function returns NaN
    or +inf: a NaN compares false everywhere, so a search would otherwise loop forever. The
    reference names the point (run it to see where)."""
    inner = compiled(fn)
    message = (
        f"{_CALLS[role]} returned NaN or +inf while sampling (Numba); valid: a number or -inf "
        "(the reference implementation names where)"
    )

    @njit(cache=False)
    def checked(*args):  # pragma: no cover - compiled
        v = inner(*args)
        if v != v or v == math.inf:
            raise ValueError(message)
        return v

    return checked


def _args(target) -> tuple:
    if target.numba_problem:
        raise ValueError(
            f"target {target.name!r} is invalid for the numba implementation: "
            f"{target.numba_problem}; valid: the reference implementation"
        )
    return (
        target.lo,
        target.hi,
        target.proposal,
        target.data,
        _compiled(target.log_lik),
        _compiled(target.bound, "bound"),
    )


def _values(target, values: np.ndarray) -> np.ndarray:
    return values[:, 0] if target.d == 1 else values


def _searched(target, values, gumbels, liks, bnds) -> Draws:
    """A search's outputs as the reference returns them."""
    return Draws(
        _values(target, values),
        int(liks.sum()),
        {"gumbel_max": gumbels, "draw_evals": liks, "bound_evals": bnds},
    )


def astar(
    target,
    n: int,
    rng: np.random.Generator,
    extra_draws: float = 0.0,
    reuse: bool = False,
) -> Draws:
    kernel = astar_kernel(*_args(target), float(extra_draws), bool(reuse), n, rng)
    return _searched(target, *kernel)


def drill_down(target, n: int, rng: np.random.Generator) -> Draws:
    return _searched(target, *drill_down_kernel(*_args(target), float(target.mode), n, rng))


def os_star(
    target,
    n: int,
    rng: np.random.Generator,
    strategy: int = 1,
    refine_prob: float = 1.0,
    reuse: bool = False,
) -> Draws:
    kernel = os_star_kernel(*_args(target), int(strategy), float(refine_prob), bool(reuse), n, rng)
    return _searched(target, *kernel)


def rejection(target, n: int, rng: np.random.Generator) -> Draws:
    values, liks = rejection_kernel(*_args(target), n, rng)
    bnds = np.zeros(n, np.int64)
    bnds[0] = 1
    return Draws(
        _values(target, values), int(liks.sum()), {"draw_evals": liks, "bound_evals": bnds}
    )
