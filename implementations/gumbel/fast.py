"""Numba kernels for the Gumbel family, and thin wrappers with the reference's signatures.

Each kernel consumes the Generator in the same order as ``reference.py`` and sums in the same
order, so both return identical values, evaluation counts and final Generator states.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from harness.spec import Draws
from harness.targets.likelihood_terms import KIND as LIKELIHOOD
from harness.targets.likelihood_terms import log_term
from implementations.shared.fast import (
    gumbel_below,
    heap_pop,
    heap_push,
    log_or_minus_inf,
    trunc_gumbel_from_exponential,
)


@njit(cache=True, inline="always")
def _row_sum(log_factors, i):
    """reference.log_unnormalised's lane order for row i: eight independent running sums."""
    row = log_factors
    N = log_factors.shape[1]
    full = N - N % 8
    a0 = a1 = a2 = a3 = a4 = a5 = a6 = a7 = 0.0
    for n in range(0, full, 8):
        a0 += row[i, n]
        a1 += row[i, n + 1]
        a2 += row[i, n + 2]
        a3 += row[i, n + 3]
        a4 += row[i, n + 4]
        a5 += row[i, n + 5]
        a6 += row[i, n + 6]
        a7 += row[i, n + 7]
    # The last N % 8 <= 7 factors go to lanes 0 .. 6, as n % 8 says.
    left = N - full
    if left > 0:
        a0 += row[i, full]
    if left > 1:
        a1 += row[i, full + 1]
    if left > 2:
        a2 += row[i, full + 2]
    if left > 3:
        a3 += row[i, full + 3]
    if left > 4:
        a4 += row[i, full + 4]
    if left > 5:
        a5 += row[i, full + 5]
    if left > 6:
        a6 += row[i, full + 6]
    return ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7))


@njit(cache=True)
def _log_unnormalised_serial(log_factors, log_f0, out):
    for i in range(log_factors.shape[0]):
        out[i] = _row_sum(log_factors, i) + log_f0[i]


# Not cached, nor is any kernel that calls it: processes that loaded a cached kernel calling a
# parfor kernel segfaulted now and then (a fresh clone's test workers and verify's), whatever
# its signatures. So every cached kernel below is serial, and ``parallel=True`` runs uncached
# twins of the draw loops (a Python loop would add ~11 us of dispatch a draw); only a process
# that asks for parallel rows compiles them.
@njit(parallel=True)
def _log_unnormalised_parallel(log_factors, log_f0, out):
    # Rows are independent and each is summed in the same order: the values do not change.
    for i in prange(log_factors.shape[0]):
        out[i] = _row_sum(log_factors, i) + log_f0[i]


@njit(cache=True)
def _cdf_block(logp, lo, hi, F):
    """F[0:hi-lo] = running sums of exp(logp - max) over the block; returns the max."""
    m = logp[lo]
    for i in range(lo + 1, hi):
        if logp[i] > m:
            m = logp[i]
    acc = 0.0
    for i in range(lo, hi):
        acc += math.exp(logp[i] - m)
        F[i - lo] = acc
    return m


@njit(cache=True)
def _invert(F, size, u):
    """First j with F[j] >= u * F[size-1] (a lower-bound binary search)."""
    v = u * F[size - 1]
    left = 0
    right = size
    while left < right:
        mid = (left + right) // 2
        if F[mid] < v:
            left = mid + 1
        else:
            right = mid
    return left


@njit(cache=True)
def _perturbed_argmax(logp, rng):
    """(argmax_i logp[i] + G_i, its value), G_i = -log(Exp(1)) drawn in index order."""
    best = 0
    best_val = -math.inf
    for i in range(logp.shape[0]):
        val = logp[i] + (-log_or_minus_inf(rng.standard_exponential()))
        if val > best_val or i == 0:
            best = i
            best_val = val
    return best, best_val


@njit(cache=True)
def gumbel_max_kernel(log_factors, log_f0, n, rng):
    D = log_factors.shape[0]
    values = np.empty(n, dtype=np.int64)
    gmax = np.empty(n)
    logp = np.empty(D)
    for k in range(n):
        _log_unnormalised_serial(log_factors, log_f0, logp)
        values[k], gmax[k] = _perturbed_argmax(logp, rng)
    return values, gmax


@njit(cache=True, inline="always")
def _terms_row(source, out, i):
    """out[i, n] = l[i, n] for every datum n (reference.factor_matrix's row i)."""
    model, X, y, theta, nu, scale = source
    for n in range(out.shape[1]):
        out[i, n] = log_term(model, X, y, theta, nu, scale, i, n)


@njit(parallel=True)
def _terms_parallel(source, out):
    for i in prange(out.shape[0]):
        _terms_row(source, out, i)


@njit(cache=True)
def _terms_serial(source, out):
    for i in range(out.shape[0]):
        _terms_row(source, out, i)


@njit(cache=True)
def gumbel_max_terms_kernel(source, D, N, log_f0, n, rng):
    """gumbel_max_kernel on a ``discrete-likelihood`` target: each draw computes all N x D
    terms (reference.factor_matrix), then sums them in the lane order."""
    values = np.empty(n, dtype=np.int64)
    gmax = np.empty(n)
    terms = np.empty((D, N))
    logp = np.empty(D)
    for k in range(n):
        _terms_serial(source, terms)
        _log_unnormalised_serial(terms, log_f0, logp)
        values[k], gmax[k] = _perturbed_argmax(logp, rng)
    return values, gmax


@njit(cache=True)
def _inverted(logp, F, rng):
    """One draw of p ∝ exp(logp) by inverting its CDF (reference.cdf_inversion's order)."""
    D = logp.shape[0]
    _cdf_block(logp, np.int64(0), D, F)  # not a literal 0: one signature for both callers
    u = 1.0 - rng.random()
    return _invert(F, D, u)


@njit(cache=True)
def cdf_inversion_kernel(log_factors, log_f0, n, rng):
    D = log_factors.shape[0]
    values = np.empty(n, dtype=np.int64)
    logp = np.empty(D)
    F = np.empty(D)
    for k in range(n):
        _log_unnormalised_serial(log_factors, log_f0, logp)
        values[k] = _inverted(logp, F, rng)
    return values


@njit
def _gumbel_max_parallel(log_factors, log_f0, n, rng):
    """gumbel_max_kernel with each draw's row sums on all cores (uncached: see above)."""
    values = np.empty(n, dtype=np.int64)
    gmax = np.empty(n)
    logp = np.empty(log_factors.shape[0])
    for k in range(n):
        _log_unnormalised_parallel(log_factors, log_f0, logp)
        values[k], gmax[k] = _perturbed_argmax(logp, rng)
    return values, gmax


@njit
def _gumbel_max_terms_parallel(source, D, N, log_f0, n, rng):
    """gumbel_max_terms_kernel with each draw's terms and row sums on all cores (uncached)."""
    values = np.empty(n, dtype=np.int64)
    gmax = np.empty(n)
    terms = np.empty((D, N))
    logp = np.empty(D)
    for k in range(n):
        _terms_parallel(source, terms)
        _log_unnormalised_parallel(terms, log_f0, logp)
        values[k], gmax[k] = _perturbed_argmax(logp, rng)
    return values, gmax


@njit
def _cdf_inversion_parallel(log_factors, log_f0, n, rng):
    """cdf_inversion_kernel with each draw's row sums on all cores (uncached)."""
    D = log_factors.shape[0]
    values = np.empty(n, dtype=np.int64)
    logp = np.empty(D)
    F = np.empty(D)
    for k in range(n):
        _log_unnormalised_parallel(log_factors, log_f0, logp)
        values[k] = _inverted(logp, F, rng)
    return values


@njit(cache=True)
def truncated_gumbel_kernel(phi, b, n, rng):
    values = np.empty(n)
    for k in range(n):
        values[k] = trunc_gumbel_from_exponential(phi, b, rng.standard_exponential())
    return values


@njit(cache=True)
def _new_node(logp, lo, hi, upper, F, rng):
    m = _cdf_block(logp, lo, hi, F)
    log_mass = m + math.log(F[hi - lo - 1])
    g = gumbel_below(log_mass, upper, rng.standard_exponential())
    u = 1.0 - rng.random()
    return g, lo + _invert(F, hi - lo, u)


@njit(cache=True)
def top_down_kernel(log_factors, log_f0, n, depth, rng):
    D = log_factors.shape[0]
    proc_g = np.empty((n, depth))
    proc_x = np.empty((n, depth), dtype=np.int64)
    logp = np.empty(D)
    F = np.empty(D)
    # Node storage: at most 2 children per popped node, so 2 * depth + 1 slots suffice.
    cap = 2 * depth + 1
    neg_g = np.empty(cap)
    seq = np.empty(cap, dtype=np.int64)
    lo_ = np.empty(cap, dtype=np.int64)
    hi_ = np.empty(cap, dtype=np.int64)
    x_ = np.empty(cap, dtype=np.int64)
    heap = np.empty(cap, dtype=np.int64)
    for k in range(n):
        _log_unnormalised_serial(log_factors, log_f0, logp)
        g, x = _new_node(logp, np.int64(0), D, math.inf, F, rng)
        neg_g[0] = -g
        seq[0] = 0
        lo_[0] = 0
        hi_[0] = D
        x_[0] = x
        size = heap_push(heap, np.int64(0), neg_g, seq, np.int64(0))
        used = np.int64(1)
        for j in range(depth):
            slot, size = heap_pop(heap, size, neg_g, seq)
            g = -neg_g[slot]
            lo = lo_[slot]
            hi = hi_[slot]
            x = x_[slot]
            proc_g[k, j] = g
            proc_x[k, j] = x
            if j + 1 == depth:
                break
            for side in range(2):
                clo = lo if side == 0 else x + 1
                chi = x if side == 0 else hi
                if chi > clo:
                    cg, cx = _new_node(logp, clo, chi, g, F, rng)
                    neg_g[used] = -cg
                    seq[used] = used
                    lo_[used] = clo
                    hi_[used] = chi
                    x_[used] = cx
                    size = heap_push(heap, size, neg_g, seq, used)
                    used += 1
    return proc_g, proc_x


def owned(a: np.ndarray) -> np.ndarray:
    """A writable C-contiguous float64 copy of ``a``, so each kernel compiles one signature
    whatever the caller holds (targets keep read-only arrays, the likelihood kernels writable
    ones). The copy is one pass over D x N."""
    return np.array(a, dtype=np.float64, order="C")


def gumbel_max(target, n: int, rng: np.random.Generator, parallel: bool = False) -> Draws:
    D, N = target.D, target.N
    f0 = owned(target.log_f0)
    if target.kind == LIKELIHOOD:
        kernel = _gumbel_max_terms_parallel if parallel else gumbel_max_terms_kernel
        values, gmax = kernel(target.kernel_args, D, N, f0, n, rng)
    else:
        kernel = _gumbel_max_parallel if parallel else gumbel_max_kernel
        values, gmax = kernel(owned(target.log_factors), f0, n, rng)
    return Draws(values, n * N * D, {"gumbel_max": gmax})


def cdf_inversion(target, n: int, rng: np.random.Generator, parallel: bool = False) -> Draws:
    D, N = target.log_factors.shape
    kernel = _cdf_inversion_parallel if parallel else cdf_inversion_kernel
    values = kernel(owned(target.log_factors), owned(target.log_f0), n, rng)
    return Draws(values, n * N * D)


def truncated_gumbel(target, n: int, rng: np.random.Generator) -> Draws:
    return Draws(truncated_gumbel_kernel(target.phi, target.b, n, rng), 0)


def top_down(target, n: int, rng: np.random.Generator, full_process: bool = False) -> Draws:
    D, N = target.log_factors.shape
    depth = D if full_process else 1
    lf, f0 = owned(target.log_factors), owned(target.log_f0)
    proc_g, proc_x = top_down_kernel(lf, f0, n, depth, rng)
    extras = {"gumbel_max": proc_g[:, 0].copy()}
    if full_process:
        extras.update(process_values=proc_g, process_locations=proc_x)
    return Draws(proc_x[:, 0].copy(), n * N * D, extras)


KERNELS = {
    "gumbel-max": (gumbel_max_kernel, gumbel_max_terms_kernel),
    "cdf-inversion": (cdf_inversion_kernel,),
    "truncated-gumbel": (truncated_gumbel_kernel,),
    "top-down": (top_down_kernel,),
}
