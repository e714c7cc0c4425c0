"""Where two streams of draws first part: block digests, then the first differing draw.

The reference and the Numba version of a sampler, run on one seed, must return the same stream
draw for draw (DESIGN.md, Contracts). Comparing the streams block by block through a digest of
each block's bytes finds the first block that differs without holding both streams' values
side by side in the comparison; only that block is then read draw by draw. The report names the
draw: "first difference at draw 777 of 20000" (draws counted from 0).
"""

from __future__ import annotations

import hashlib

import numpy as np

#: Draws per digested block.
BLOCK = 1024


def block_digests(values: np.ndarray, block: int = BLOCK) -> list[str]:
    """SHA-256 (16 hex digits) of each block of ``block`` draws (rows) of ``values``, with the
    dtype and shape of a row mixed in, so equal bytes of another layout never match."""
    arr = np.ascontiguousarray(values)
    head = f"{arr.dtype.str}{arr.shape[1:]}".encode()
    return [
        hashlib.sha256(head + arr[k : k + block].tobytes()).hexdigest()[:16]
        for k in range(0, max(arr.shape[0], 1), block)
    ]


def _rows_differ(a: np.ndarray, b: np.ndarray, rtol: float) -> np.ndarray:
    """Per draw (row), whether ``a`` and ``b`` differ (within ``rtol`` for floats)."""
    if rtol > 0.0 and np.issubdtype(a.dtype, np.floating):
        differ = ~np.isclose(a, b, rtol=rtol, atol=0.0, equal_nan=True)
    else:
        differ = (a != b) & ~((a != a) & (b != b))  # NaN equals NaN: both drew the same
    return differ.reshape(a.shape[0], -1).any(axis=1)


def first_difference(a: np.ndarray, b: np.ndarray, rtol: float = 0.0) -> int | None:
    """The first draw at which streams ``a`` and ``b`` differ (bit for bit, or beyond ``rtol``
    for floats); None when they agree over every draw. Streams of other dtypes, row shapes or
    lengths differ at the first draw the shorter one lacks, or at 0."""
    a, b = np.asarray(a), np.asarray(b)
    if a.ndim == 0 or b.ndim == 0 or a.shape[1:] != b.shape[1:] or a.dtype != b.dtype:
        return 0
    common = min(a.shape[0], b.shape[0])
    if rtol == 0.0:
        da, db = block_digests(a[:common]), block_digests(b[:common])
        blocks = [k for k, (x, y) in enumerate(zip(da, db, strict=True)) if x != y]
    else:
        blocks = list(range(len(block_digests(a[:common]))))
    for k in blocks:
        lo, hi = k * BLOCK, min(common, (k + 1) * BLOCK)
        rows = _rows_differ(a[lo:hi], b[lo:hi], rtol)
        if rows.any():
            return lo + int(np.argmax(rows))
    return None if a.shape[0] == b.shape[0] else common


def difference_text(a: np.ndarray, b: np.ndarray, rtol: float = 0.0) -> str | None:
    """``"first difference at draw 777 of 20000"``, or None when the streams agree."""
    if np.ndim(a) == 0 or (k := first_difference(a, b, rtol)) is None:
        return None  # a single value has no first draw to name
    n = np.asarray(a).shape[0]
    return f"first difference at draw {k} of {n}"
