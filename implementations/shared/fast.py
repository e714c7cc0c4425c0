"""Numba twins of the :mod:`implementations.shared.reference` primitives that compiled kernels
call, under the same names and signatures (``lane_sums`` and ``gumbel_noise`` have none: each
kernel folds them into its own loop; ``poisson_count`` is the reference's source, compiled), and
the array heap of the compiled searches (the references use ``heapq``).

Each twin does the reference's arithmetic in the same order with libm's scalars, and consumes
the Generator through the same methods, so both builds return identical values and leave the
Generator in the same state.
"""

from __future__ import annotations

import math

from numba import njit

from implementations.shared import reference


@njit(cache=True)
def log_or_minus_inf(u):
    """reference.log_or_minus_inf: log(u), -inf at u = 0."""
    if u > 0.0:
        return math.log(u)
    return -math.inf


@njit(cache=True)
def trunc_gumbel_from_exponential(phi, b, e):
    """reference.trunc_gumbel_from_exponential: TruncGumbel(phi, b) by inversion of E ~ Exp(1)
    (001_78ff986a3d316097.txt, footnote 1)."""
    log_e = log_or_minus_inf(e)
    c = phi - b
    if log_e >= c:
        return phi - log_e - math.log1p(_ratio(c, e, log_e))
    return b - math.log1p(_ratio(-c, 1.0 / e if e > 0.0 else math.inf, -log_e))


@njit(cache=True)
def _ratio(c, e, log_e):
    if -700.0 < c < 700.0 and 0.0 < e < math.inf:
        return math.exp(c) / e
    return math.exp(c - log_e)


@njit(cache=True)
def gumbel_below(phi, upper, e):
    """reference.gumbel_below: Gumbel(phi) truncated below ``upper`` (untruncated at +inf),
    given E ~ Exp(1) (001_78ff986a3d316097.txt, Alg. 1)."""
    if upper == math.inf:
        return phi - log_or_minus_inf(e)
    return trunc_gumbel_from_exponential(phi, upper, e)


poisson_count = njit(cache=True)(reference.poisson_count)


# A binary min-heap of slot numbers in heap[0:size], ordered by (neg_g[slot], seq[slot]): the
# order of the references' heapq tuples (-priority, push order, ...), ties to the earlier push.


@njit(cache=True)
def _heap_less(neg_g, seq, a, b):
    return neg_g[a] < neg_g[b] or (neg_g[a] == neg_g[b] and seq[a] < seq[b])


@njit(cache=True)
def heap_push(heap, size, neg_g, seq, slot):
    """Push ``slot`` (its keys already in neg_g and seq); returns the new size."""
    heap[size] = slot
    i = size
    while i > 0:
        parent = (i - 1) // 2
        if _heap_less(neg_g, seq, heap[i], heap[parent]):
            heap[i], heap[parent] = heap[parent], heap[i]
            i = parent
        else:
            break
    return size + 1


@njit(cache=True)
def heap_pop(heap, size, neg_g, seq):
    """Pop the least slot; returns (slot, new size)."""
    top = heap[0]
    size -= 1
    heap[0] = heap[size]
    i = 0
    while True:
        left = 2 * i + 1
        if left >= size:
            break
        child = left
        if left + 1 < size and _heap_less(neg_g, seq, heap[left + 1], heap[left]):
            child = left + 1
        if _heap_less(neg_g, seq, heap[child], heap[i]):
            heap[i], heap[child] = heap[child], heap[i]
            i = child
        else:
            break
    return top, size
