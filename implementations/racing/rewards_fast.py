"""Alg. 1's rewards as the race kernels read them (000_26bed7cc1ef3ab92.txt): a precomputed
matrix by index, or likelihood terms computed from data (``discrete-likelihood``), filled
block by block; and the sums of squares in the eight-lane order of
``implementations.shared.reference.lane_sums``. Compiled helpers of ``fast.py``'s race kernel.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from harness.targets.likelihood_terms import KIND as LIKELIHOOD
from harness.targets.likelihood_terms import link_term, log_term

#: ``source[0]`` of a race whose rewards are read from a precomputed matrix.
PRECOMPUTED = -1
_NO_MATRIX = np.empty((0, 0))
_NO_VECTOR = np.empty(0)
_NO_MATRIX.setflags(write=False)
_NO_VECTOR.setflags(write=False)


def reward_source(target) -> tuple:
    """The rewards of a discrete target as the kernels read them: (model, lT, X, y, theta, nu,
    scale). A precomputed matrix is read by index, lT[n, i] (all arms of one index share a
    cache line); a ``discrete-likelihood`` target computes l[i, n] from its data."""
    if target.kind == LIKELIHOOD:
        return (target.model_code, _NO_MATRIX, target.X, target.y, target.theta,
                target.nu, target.scale)  # fmt: skip
    return (PRECOMPUTED, target.log_factors_by_index, _NO_MATRIX, _NO_VECTOR, _NO_MATRIX,
            1.0, 1.0)  # fmt: skip


@njit(cache=True, inline="always")
def _reward(source, i, n):
    model, lT, X, y, theta, nu, scale = source
    if model == PRECOMPUTED:
        return lT[n, i]
    return log_term(model, X, y, theta, nu, scale, i, n)


#: Indices whose data a race gathers into a contiguous block before computing their rewards.
BLOCK = 256


@njit(cache=True, inline="always")
def fill_rewards(source, perm, start, stop, alive, na, offset, R, total, xb, yb):
    """R[i, j] = l[i, perm[j]] + offset[i] for the alive arms and j in [start, stop); total[i]
    adds them in j order (the reference's left-to-right sum).

    Block by block, each alive arm runs over the block with its total in a register. A
    precomputed matrix is read index-major: lT[n] holds every arm's reward at n in one cache
    line, which the first arm brings in for the rest. Computed rewards first gather the data
    (x_n, y_n) of the block's random indices into xb/yb in a tight loop, whose independent
    reads the processor overlaps, so the arms run over contiguous data.
    """
    model, lT, X, y, theta, nu, scale = source
    if model == PRECOMPUTED:
        for b0 in range(start, stop, BLOCK):
            b1 = min(b0 + BLOCK, stop)
            for q in range(na):
                i = alive[q]
                acc = total[i]
                o = offset[i]
                for j in range(b0, b1):
                    r = lT[perm[j], i] + o
                    R[i, j] = r
                    acc += r
                total[i] = acc
        return
    P = X.shape[1]
    for b0 in range(start, stop, BLOCK):
        b1 = min(b0 + BLOCK, stop)
        for j in range(b0, b1):
            n = perm[j]
            for p in range(P):
                xb[j - b0, p] = X[n, p]
            yb[j - b0] = y[n]
        for q in range(na):
            i = alive[q]
            acc = total[i]
            o = offset[i]
            for j in range(b0, b1):
                z = 0.0
                for p in range(P):
                    z += xb[j - b0, p] * theta[i, p]
                r = link_term(model, z, yb[j - b0], nu, scale) + o
                R[i, j] = r
                acc += r
            total[i] = acc


@njit(cache=True, inline="always")
def lane_squares(R, x, i, centre, T):
    """sum_j c_j^2 over j < T in shared.reference.lane_sums' order, c_j = (R[x, j] - R[i, j])
    - centre (pairwise, x >= 0) or R[i, j] - centre (marginal, x = -1)."""
    a0 = a1 = a2 = a3 = a4 = a5 = a6 = a7 = 0.0
    full = T - T % 8
    for j in range(0, full, 8):
        if x >= 0:
            c0 = (R[x, j] - R[i, j]) - centre
            c1 = (R[x, j + 1] - R[i, j + 1]) - centre
            c2 = (R[x, j + 2] - R[i, j + 2]) - centre
            c3 = (R[x, j + 3] - R[i, j + 3]) - centre
            c4 = (R[x, j + 4] - R[i, j + 4]) - centre
            c5 = (R[x, j + 5] - R[i, j + 5]) - centre
            c6 = (R[x, j + 6] - R[i, j + 6]) - centre
            c7 = (R[x, j + 7] - R[i, j + 7]) - centre
        else:
            c0 = R[i, j] - centre
            c1 = R[i, j + 1] - centre
            c2 = R[i, j + 2] - centre
            c3 = R[i, j + 3] - centre
            c4 = R[i, j + 4] - centre
            c5 = R[i, j + 5] - centre
            c6 = R[i, j + 6] - centre
            c7 = R[i, j + 7] - centre
        a0 += c0 * c0
        a1 += c1 * c1
        a2 += c2 * c2
        a3 += c3 * c3
        a4 += c4 * c4
        a5 += c5 * c5
        a6 += c6 * c6
        a7 += c7 * c7
    # The last T % 8 <= 7 go to lanes 0 .. 6, as j % 8 says.
    for j in range(full, T):
        c = (R[x, j] - R[i, j]) - centre if x >= 0 else R[i, j] - centre
        lane = j - full
        if lane == 0:
            a0 += c * c
        elif lane == 1:
            a1 += c * c
        elif lane == 2:
            a2 += c * c
        elif lane == 3:
            a3 += c * c
        elif lane == 4:
            a4 += c * c
        elif lane == 5:
            a5 += c * c
        else:
            a6 += c * c
    return ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7))


@njit(cache=True)
def exact_argmax_source(source, f0, eps, D, N):
    """reference.exact_argmax: each arm's N rewards summed left to right, by index."""
    acc = np.zeros(D)
    for n in range(N):
        for i in range(D):
            acc[i] += _reward(source, i, n)
    best = 0
    top = -math.inf
    for i in range(D):
        total = acc[i] + f0[i] + eps[i]
        if total > top or i == 0:
            top = total
            best = i
    return best
