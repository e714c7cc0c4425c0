"""The CUDA kernels behind :mod:`implementations.gumbel.cuda` (numba-cuda).

Imported only when a ``cuda`` draw is asked for: numba-cuda is an optional dependency. The
kernels name ``cuda`` as this module's global, which numba-cuda's simulator needs in order to
stand in for the device (``NUMBA_ENABLE_CUDASIM=1``).
"""

from __future__ import annotations

import math

from numba import cuda, float64

from harness.targets.likelihood_terms import log_term
from implementations.shared.cuda_kernels import THREADS, tree_sum

term = cuda.jit(device=True)(log_term)


@cuda.jit(device=True)
def block_reduce(acc, mag, sums, mags, out, out_abs, k, i, c):
    # Thread 0 writes the block's partial sums.
    tree_sum(acc, mag, sums, mags)
    if cuda.threadIdx.x == 0:
        out[k, i, c] = sums[0]
        out_abs[k, i, c] = mags[0]


@cuda.jit
def stored_sums(log_factors, chunk, out, out_abs):
    """Block (i, c, k): draw k's partial sum of row i over chunk c of the stored factors."""
    i, c, k = cuda.blockIdx.x, cuda.blockIdx.y, cuda.blockIdx.z
    sums = cuda.shared.array(THREADS, float64)
    mags = cuda.shared.array(THREADS, float64)
    lo = c * chunk
    hi = min(lo + chunk, log_factors.shape[1])
    acc = 0.0
    mag = 0.0
    for n in range(lo + cuda.threadIdx.x, hi, THREADS):
        v = log_factors[i, n]
        acc += v
        mag += abs(v)
    block_reduce(acc, mag, sums, mags, out, out_abs, k, i, c)


@cuda.jit
def computed_sums(model, X, y, theta, nu, scale, chunk, out, out_abs):
    """As ``stored_sums``, each term l[i, n] computed from (x_n, y_n, theta_i)."""
    i, c, k = cuda.blockIdx.x, cuda.blockIdx.y, cuda.blockIdx.z
    sums = cuda.shared.array(THREADS, float64)
    mags = cuda.shared.array(THREADS, float64)
    lo = c * chunk
    hi = min(lo + chunk, X.shape[0])
    acc = 0.0
    mag = 0.0
    for n in range(lo + cuda.threadIdx.x, hi, THREADS):
        v = term(model, X, y, theta, nu, scale, i, n)
        acc += v
        mag += abs(v)
    block_reduce(acc, mag, sums, mags, out, out_abs, k, i, c)


@cuda.jit(device=True)
def row(partial, partial_abs, log_f0, k, i):
    s = 0.0
    m = 0.0
    for c in range(partial.shape[2]):
        s += partial[k, i, c]
        m += partial_abs[k, i, c]
    return s + log_f0[i], m + abs(log_f0[i])


@cuda.jit
def pick_max(partial, partial_abs, log_f0, expo, values, gmax, margin, mag):
    """Block k: argmax_i log p~(i) - log E_ki (000, Eq. 2), first index on ties, as
    fast.gumbel_max_kernel; also the gap to the runner-up and the two rows' sum |l|."""
    k = cuda.blockIdx.x
    t = cuda.threadIdx.x
    D = log_f0.shape[0]
    best = cuda.shared.array(THREADS, float64)
    second = cuda.shared.array(THREADS, float64)
    where = cuda.shared.array(THREADS, float64)
    size = cuda.shared.array(THREADS, float64)
    b1, b2, bi, bm = -math.inf, -math.inf, -1.0, 0.0
    for i in range(t, D, THREADS):
        s, m = row(partial, partial_abs, log_f0, k, i)
        e = expo[k, i]
        v = s - (math.log(e) if e > 0.0 else -math.inf)
        if v > b1 or bi < 0.0:
            b2 = b1
            b1, bi = v, float(i)
        elif v > b2:
            b2 = v
        bm = max(bm, m)
    best[t], second[t], where[t], size[t] = b1, b2, bi, bm
    cuda.syncthreads()
    s = THREADS // 2
    while s > 0:
        if t < s and where[t + s] >= 0.0:
            o1, o2, oi = best[t + s], second[t + s], where[t + s]
            if where[t] < 0.0 or o1 > best[t] or (o1 == best[t] and oi < where[t]):
                second[t] = max(best[t], o2)
                best[t], where[t] = o1, oi
            else:
                second[t] = max(second[t], o1)
            size[t] = max(size[t], size[t + s])
        cuda.syncthreads()
        s //= 2
    if t == 0:
        values[k] = int(where[0])
        gmax[k] = best[0]
        margin[k] = best[0] - second[0]
        mag[k] = size[0]


@cuda.jit
def invert_cdf(partial, partial_abs, log_f0, u, F, values, margin, mag):
    """Thread k: the first x with F(x) >= u F(D) (000, Sec. 2.1), F the running sums of
    exp(log p~ - max) left to right as fast._cdf_block; margin in log-mass units."""
    k = cuda.grid(1)
    if k >= values.shape[0]:
        return
    D = log_f0.shape[0]
    top = -math.inf
    big = 0.0
    for i in range(D):
        s, m = row(partial, partial_abs, log_f0, k, i)
        F[k, i] = s
        top = max(top, s)
        big = max(big, m)
    acc = 0.0
    for i in range(D):
        acc += math.exp(F[k, i] - top)
        F[k, i] = acc
    v = u[k] * acc
    lo, hi = 0, D
    while lo < hi:
        mid = (lo + hi) // 2
        if F[k, mid] < v:
            lo = mid + 1
        else:
            hi = mid
    x = lo
    # Distance of v from the steps either side of x, relative to F(D): a log-scale margin.
    below = F[k, x - 1] if x > 0 else 0.0
    values[k] = x
    margin[k] = min(v - below, F[k, x] - v) / acc
    mag[k] = big
