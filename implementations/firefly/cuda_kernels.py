"""The CUDA kernel behind :mod:`implementations.firefly.cuda` (numba-cuda): the full-data
log-likelihood of a GLM posterior, sum_n log L_n(theta), in partial sums per block.

Imported only when a ``cuda`` chain is asked for. Each term is
:func:`harness.targets.glm_kernels.log_lik_one`, the function the Numba chain kernel calls,
compiled for the device. ``cuda`` is this module's global, as the simulator needs.
"""

from __future__ import annotations

from numba import cuda, float64

from harness.targets.glm_kernels import log_lik_one
from implementations.shared.cuda_kernels import THREADS, tree_sum

#: The most softmax classes a device term supports: the K logits live in a per-thread array
#: whose length must be known when the kernel compiles.
MAX_CLASSES = 16

lik = cuda.jit(device=True)(log_lik_one)


@cuda.jit
def log_lik_sums(model, X, t, nu, theta, chunk, out):
    """Block c: out[0, c] = sum of log L_n(theta) over data n in chunk c, out[1, c] = the sum
    of |log L_n(theta)| (for the summation-order tolerance)."""
    c = cuda.blockIdx.x
    sums = cuda.shared.array(THREADS, float64)
    mags = cuda.shared.array(THREADS, float64)
    logits = cuda.local.array(MAX_CLASSES, float64)
    y = logits[: theta.shape[0] // X.shape[1]]
    lo = c * chunk
    hi = min(lo + chunk, X.shape[0])
    acc = 0.0
    mag = 0.0
    for n in range(lo + cuda.threadIdx.x, hi, THREADS):
        v = lik(model, X, t, nu, theta, n, y)
        acc += v
        mag += abs(v)
    tree_sum(acc, mag, sums, mags)
    if cuda.threadIdx.x == 0:
        out[0, c] = sums[0]
        out[1, c] = mags[0]
