"""Device primitives shared by the ``cuda`` builds (numba-cuda): the block size and the block's
tree sum.

Imported only when a ``cuda`` run is asked for: numba-cuda is an optional dependency. The
kernels name ``cuda`` as this module's global, which numba-cuda's simulator needs in order to
stand in for the device (``NUMBA_ENABLE_CUDASIM=1``).
"""

from __future__ import annotations

from numba import config, cuda

#: Threads per block, a power of two (the tree sum halves it). The simulator runs each thread
#: as a Python thread, so it gets 8: enough for three levels of the tree.
THREADS = 8 if config.ENABLE_CUDASIM else 128


@cuda.jit(device=True)
def tree_sum(acc, mag, sums, mags):
    """Sum every thread's ``acc`` and ``mag`` over the block as a tree in the shared arrays
    ``sums`` and ``mags`` (THREADS long); the totals are in ``sums[0]`` and ``mags[0]`` when
    it returns, for every thread. The order is fixed, so a launch repeats its bits."""
    t = cuda.threadIdx.x
    sums[t] = acc
    mags[t] = mag
    cuda.syncthreads()
    s = THREADS // 2
    while s > 0:
        if t < s:
            sums[t] += sums[t + s]
            mags[t] += mags[t + s]
        cuda.syncthreads()
        s //= 2
