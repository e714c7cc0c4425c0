"""Numba kernels for the racing family, and thin wrappers with the reference's signatures.

Each kernel consumes the Generator in the order of ``reference.py`` (Exp(1) noise, then one
``random`` double per Fisher-Yates step) and sums in the same order, so both return identical
samples, evaluation counts, extras and final Generator states.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from implementations.racing.bounds import b_normal, doubling_schedule
from implementations.racing.reference import (
    LIL_A_NUMERATOR,
    LIL_BETA,
    LIL_DELTA_DIVISOR,
    pack_draws,
)

KAPPA = 7.0 / 3.0 + 3.0 / math.sqrt(2.0)


@njit(cache=True)
def _log(e):
    if e > 0.0:
        return math.log(e)
    return -math.inf


@njit(cache=True)
def _ebs(delta, n, sigma, C, N):
    """B_EBS of 000, Eq. 6, in the operation order of ``bounds.ebs_bound``."""
    log_term = math.log(5.0 / delta)
    if n <= N / 2:
        rho = 1.0 - (n - 1) / N
    else:
        rho = (1.0 - n / N) * (1.0 + 1.0 / n)
    return sigma * math.sqrt(2.0 * rho * log_term / n) + KAPPA * C * log_term / n


@njit(cache=True)
def _noise(f0, N, rng, eps, offset):
    for i in range(f0.size):
        eps[i] = -_log(rng.standard_exponential())
        offset[i] = (f0[i] + eps[i]) / N


@njit(cache=True)
def _exact_argmax(lf, f0, eps):
    D, N = lf.shape
    best = 0
    top = -math.inf
    for i in range(D):
        acc = 0.0
        for n in range(N):
            acc += lf[i, n]
        total = acc + f0[i] + eps[i]
        if total > top or i == 0:
            top = total
            best = i
    return best


@njit(cache=True)
def _draw_index(perm, swaps, j, rng):
    N = perm.size
    r = min(j + int(rng.random() * (N - j)), N - 1)
    tmp = perm[j]
    perm[j] = perm[r]
    perm[r] = tmp
    swaps[j] = r
    return perm[j]


@njit(cache=True)
def _undo(perm, swaps, used):
    for j in range(used - 1, -1, -1):
        r = swaps[j]
        tmp = perm[j]
        perm[j] = perm[r]
        perm[r] = tmp


@njit(cache=True)
def _lil_bound(s, t, N, scale, d, beta):
    mean = s / t
    if t == N:
        return mean
    if t == 1:
        return math.inf
    inner = math.log(math.log(t) / d)
    return mean + (1.0 + beta) * math.sqrt(2.0 * scale * scale * max(inner, 0.0) / t)


@njit(cache=True)
def _lil_ucb_kernel(lf, f0, scale, n, rng, d, a, beta, exact_answer):
    D, N = lf.shape
    perm = np.empty((D, N), dtype=np.int64)
    for i in range(D):
        for j in range(N):
            perm[i, j] = j
    swaps = np.zeros((D, N), dtype=np.int64)
    values = np.empty(n, dtype=np.int64)
    draw_evals = np.empty(n, dtype=np.int64)
    max_pulls = np.empty(n, dtype=np.int64)
    stopped = np.empty(n, dtype=np.bool_)
    exact = np.empty(n, dtype=np.int64)
    eps = np.empty(D)
    offset = np.empty(D)
    pulls = np.empty(D, dtype=np.int64)
    sums = np.empty(D)
    ucb = np.empty(D)
    for k in range(n):
        _noise(f0, N, rng, eps, offset)
        for i in range(D):
            pulls[i] = 0
            sums[i] = 0.0
        for i in range(D):
            idx = _draw_index(perm[i], swaps[i], pulls[i], rng)
            sums[i] += lf[i, idx] + offset[i]
            pulls[i] += 1
        for i in range(D):
            ucb[i] = _lil_bound(sums[i], pulls[i], N, scale[i], d, beta)
        total = D
        while True:
            h = 0
            for i in range(1, D):
                if ucb[i] > ucb[h]:
                    h = i
            if pulls[h] == N:
                x = h
                break
            idx = _draw_index(perm[h], swaps[h], pulls[h], rng)
            sums[h] += lf[h, idx] + offset[h]
            pulls[h] += 1
            total += 1
            ucb[h] = _lil_bound(sums[h], pulls[h], N, scale[h], d, beta)
            if pulls[h] >= 1.0 + a * (total - pulls[h]):
                x = 0
                for i in range(1, D):
                    if pulls[i] > pulls[x]:
                        x = i
                break
        most = 0
        for i in range(D):
            most = max(most, pulls[i])
        values[k] = x
        draw_evals[k] = total
        max_pulls[k] = most
        stopped[k] = most < N
        if exact_answer:
            exact[k] = _exact_argmax(lf, f0, eps)
        for i in range(D):
            _undo(perm[i], swaps[i], pulls[i])
    return values, draw_evals, max_pulls, stopped, exact


@njit(cache=True)
def _racing_kernel(
    lf, f0, n, rng, schedule, B, delta_stage, C_all, is_normal, pairwise, exact_answer
):
    D, N = lf.shape
    perm = np.arange(N)
    swaps = np.zeros(N, dtype=np.int64)
    R = np.empty((D, N))
    alive = np.empty(D, dtype=np.int64)
    mu = np.empty(D)
    sig = np.empty(D)
    g = np.empty(D)
    eps = np.empty(D)
    offset = np.empty(D)
    values = np.empty(n, dtype=np.int64)
    draw_evals = np.empty(n, dtype=np.int64)
    max_pulls = np.empty(n, dtype=np.int64)
    stopped = np.empty(n, dtype=np.bool_)
    exact = np.empty(n, dtype=np.int64)
    for k in range(n):
        _noise(f0, N, rng, eps, offset)
        na = D
        for i in range(D):
            alive[i] = i
        used = 0
        spent = 0
        for s in range(schedule.size):
            T = schedule[s]
            for j in range(used, T):
                _draw_index(perm, swaps, j, rng)
            for q in range(na):
                i = alive[q]
                for j in range(used, T):
                    R[i, j] = lf[i, perm[j]] + offset[i]
            spent += na * (T - used)
            used = T
            best = 0
            for q in range(na):
                i = alive[q]
                acc = 0.0
                for j in range(T):
                    acc += R[i, j]
                mu[q] = acc / T
                if mu[q] > mu[best]:
                    best = q
            if T == N:
                alive[0] = alive[best]
                na = 1
                break
            xi = alive[best]
            for q in range(na):
                i = alive[q]
                acc = 0.0
                if pairwise:
                    gap = mu[best] - mu[q]
                    for j in range(T):
                        c = (R[xi, j] - R[i, j]) - gap
                        acc += c * c
                else:
                    for j in range(T):
                        c = R[i, j] - mu[q]
                        acc += c * c
                sig[q] = math.sqrt(acc / T)
                if is_normal:
                    g[q] = sig[q] / math.sqrt(T) * math.sqrt(1.0 - (T - 1) / (N - 1)) * B
                else:
                    c_range = C_all[xi] + C_all[i] if pairwise else C_all[i]
                    g[q] = _ebs(delta_stage, T, sig[q], c_range, N)
            m = 0
            for q in range(na):
                threshold = g[q] if pairwise else g[best] + g[q]
                if mu[best] - mu[q] <= threshold:
                    alive[m] = alive[q]
                    m += 1
            na = m
            if na == 1:
                break
        values[k] = alive[0]
        draw_evals[k] = spent
        max_pulls[k] = used
        stopped[k] = used < N
        if exact_answer:
            exact[k] = _exact_argmax(lf, f0, eps)
        _undo(perm, swaps, used)
    return values, draw_evals, max_pulls, stopped, exact


def _pack(out, exact_answer, N, D):
    values, draw_evals, max_pulls, stopped, exact = out
    return pack_draws(values, draw_evals, max_pulls, stopped, exact if exact_answer else None, N, D)


def lil_ucb(target, n, rng, delta=0.1, exact_answer=False):
    D, N = target.log_factors.shape
    out = _lil_ucb_kernel(
        target.log_factors,
        target.log_f0,
        target.reward_range / 2.0,
        n,
        rng,
        delta / LIL_DELTA_DIVISOR,
        1.0 + LIL_A_NUMERATOR / D,
        LIL_BETA,
        exact_answer,
    )
    return _pack(out, exact_answer, N, D)


def _racing(target, n, rng, delta, m1, is_normal, variance, exact_answer):
    D, N = target.log_factors.shape
    pairwise = variance == "pairwise"
    d_prime = D - 1 if pairwise else D
    schedule = doubling_schedule(N, m1).astype(np.int64)
    B = b_normal(delta / d_prime, N, m1) if (is_normal and N > m1) else 0.0
    delta_stage = delta / d_prime / max(schedule.size - 1, 1)
    out = _racing_kernel(
        target.log_factors,
        target.log_f0,
        n,
        rng,
        schedule,
        B,
        delta_stage,
        target.reward_range,
        is_normal,
        pairwise,
        exact_answer,
    )
    return _pack(out, exact_answer, N, D)


def racing_ebs(target, n, rng, delta=0.1, m1=2, variance="pairwise", exact_answer=False):
    return _racing(target, n, rng, delta, m1, False, variance, exact_answer)


def racing_normal(target, n, rng, delta=0.1, m1=50, variance="pairwise", exact_answer=False):
    return _racing(target, n, rng, delta, m1, True, variance, exact_answer)


KERNELS = {
    "lil-ucb": (_lil_ucb_kernel,),
    "racing-ebs": (_racing_kernel,),
    "racing-normal": (_racing_kernel,),
}
