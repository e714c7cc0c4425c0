"""Host side shared by the ``cuda`` builds: whether the kernels can run here, and the bound on
what summation order can change in a sum computed on the device.

A device cannot sum in the Numba kernels' order at memory speed: a block reduces its slice as a
tree, and the host adds the blocks' partial sums. Each ``cuda`` build therefore reports, beside
its outputs, a ``margin`` (how far a decision was from going the other way) and a
``tolerance`` from :func:`tolerance`, and ``harness.gates.device_agreement`` allows a
difference from the Numba build only where the margin is within it.
"""

from __future__ import annotations

import numpy as np

from harness.devices import cuda_unavailable

EPS = 2.0**-53


def require() -> None:
    """Raise RuntimeError naming the reason where this machine cannot run ``cuda`` kernels."""
    reason = cuda_unavailable()
    if reason is not None:
        raise RuntimeError(f"the cuda implementation cannot run here: {reason}")


def split_row(N: int, blocks: int, min_chunk: int) -> tuple[int, int]:
    """(chunk, chunks): N terms in at most ``blocks`` chunks of at least ``min_chunk`` terms
    (one chunk where N is smaller), each summed by one block; the last chunk may be shorter."""
    chunks = max(1, min(blocks, -(-N // min_chunk)))
    chunk = -(-N // chunks)
    return chunk, -(-N // chunk)


def tolerance(N: int, chunks: int, magnitude: np.ndarray | float) -> np.ndarray | float:
    """Summation-order bound on |cuda - numba| for a value whose terms have sum |l| =
    ``magnitude``: each order's error is at most (terms - 1) eps sum |l| (Higham, recursive and
    pairwise summation both within it), two orders twice that, plus the log and exp's ulps."""
    terms = N + chunks + 1
    return 2.0 * terms * EPS * magnitude + 8.0 * EPS * (1.0 + magnitude)
