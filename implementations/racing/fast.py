"""Numba kernels for the racing family, and thin wrappers with the reference's signatures.

Each kernel consumes the Generator in the order of ``reference.py`` (Exp(1) noise, then one
``random`` double per Fisher-Yates step) and sums in the same order, so both return identical
samples, evaluation counts, extras and final Generator states.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from harness.spec import Chain
from implementations.racing.bounds import b_normal, doubling_schedule, ebs_bound
from implementations.racing.reference import (
    LIL_A_NUMERATOR,
    LIL_BETA,
    LIL_DELTA_DIVISOR,
    pack_draws,
)
from implementations.racing.rewards_fast import (
    BLOCK,
    exact_argmax_source,
    fill_rewards,
    lane_squares,
    reward_source,
)
from implementations.shared.fast import log_or_minus_inf

# B_EBS of 000, Eq. 6, compiled from the one definition in bounds.py (same operations, so the
# same bits as the reference).
_ebs = njit(cache=True)(ebs_bound)


@njit(cache=True)
def _draw_arrays(n):
    """A race's per-draw outputs: the winner, evaluations, largest pull count, whether it
    stopped early, and the exact argmax (filled only where asked for)."""
    i64 = np.empty(n, dtype=np.int64)
    return (
        i64,
        np.empty_like(i64),
        np.empty_like(i64),
        np.empty(n, dtype=np.bool_),
        np.empty_like(i64),
    )


@njit(cache=True)
def _noise(f0, N, rng, eps, offset):
    for i in range(f0.size):
        eps[i] = -log_or_minus_inf(rng.standard_exponential())
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
    values, draw_evals, max_pulls, stopped, exact = _draw_arrays(n)
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
    source, D, N, f0, n, rng, schedule, B, delta_stage, C_all, is_normal, pairwise, exact_answer
):
    perm = np.arange(N)
    swaps = np.zeros(N, dtype=np.int64)
    R = np.empty((D, N))
    xb = np.empty((BLOCK, source[2].shape[1]))
    yb = np.empty(BLOCK)
    alive = np.empty(D, dtype=np.int64)
    total, mu, sig, g, eps, offset = np.empty((6, D))  # per-value work vectors
    values, draw_evals, max_pulls, stopped, exact = _draw_arrays(n)
    for k in range(n):
        _noise(f0, N, rng, eps, offset)
        na = D
        for i in range(D):
            alive[i] = i
            total[i] = 0.0
        used = 0
        spent = 0
        for s in range(schedule.size):
            T = schedule[s]
            for j in range(used, T):
                _draw_index(perm, swaps, j, rng)
            fill_rewards(source, perm, used, T, alive, na, offset, R, total, xb, yb)
            spent += na * (T - used)
            used = T
            best = 0
            for q in range(na):
                mu[q] = total[alive[q]] / T
                if mu[q] > mu[best]:
                    best = q
            if T == N:
                alive[0] = alive[best]
                na = 1
                break
            xi = alive[best]
            for q in range(na):
                i = alive[q]
                if pairwise:
                    acc = lane_squares(R, xi, i, mu[best] - mu[q], T)
                else:
                    acc = lane_squares(R, -1, i, mu[q], T)
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
            exact[k] = exact_argmax_source(source, f0, eps, D, N)
        _undo(perm, swaps, used)
    return values, draw_evals, max_pulls, stopped, exact


@njit(cache=True)
def _t_term(y, theta, nu, scale):
    z = (y - theta) / scale
    return -0.5 * (nu + 1.0) * math.log1p(z * z / nu)


# reference.race_two_arms inlined on the reward array R, filled as the race reads it: a Numba
# kernel cannot call back into Python for the rewards of the indices it draws.
@njit(cache=True)
def _racing_mh_kernel(
    y,
    nu,
    scale,
    prior_mean,
    prior_sd,
    lipschitz,
    theta,
    n_steps,
    rng,
    schedule,
    B,
    delta_stage,
    spread,
    is_normal,
    exact_answer,
):
    N = y.size
    perm = np.arange(N)
    swaps = np.zeros(N, dtype=np.int64)
    R = np.empty((2, N))
    values = np.empty(n_steps)
    accepted = np.empty(n_steps, dtype=np.bool_)
    exact = np.empty(n_steps, dtype=np.bool_)
    step_evals = np.empty(n_steps, dtype=np.int64)
    stopped = np.empty(n_steps, dtype=np.bool_)
    arms = np.empty(2)
    c = np.empty(2)
    for k in range(n_steps):
        prop = theta + spread * rng.standard_normal()
        u = 1.0 - rng.random()
        arms[0] = theta
        arms[1] = prop
        z0 = (theta - prior_mean) / prior_sd
        z1 = (prop - prior_mean) / prior_sd
        c[0] = math.log(u) + -0.5 * z0 * z0
        c[1] = -0.5 * z1 * z1
        used = 0
        best = 0
        for st in range(schedule.size):
            T = schedule[st]
            for j in range(used, T):
                idx = _draw_index(perm, swaps, j, rng)
                for a in range(2):
                    R[a, j] = _t_term(y[idx], arms[a], nu, scale) + c[a] / N
            used = T
            acc0 = 0.0
            acc1 = 0.0
            for j in range(T):
                acc0 += R[0, j]
            for j in range(T):
                acc1 += R[1, j]
            mu0 = acc0 / T
            mu1 = acc1 / T
            best = 1 if mu1 > mu0 else 0
            if T == N:
                break
            gap = mu1 - mu0 if best == 1 else mu0 - mu1
            acc = 0.0
            for j in range(T):
                d = (R[best, j] - R[1 - best, j]) - gap
                acc += d * d
            sig = math.sqrt(acc / T)
            if is_normal:
                G = sig / math.sqrt(T) * math.sqrt(1.0 - (T - 1) / (N - 1)) * B
            else:
                G = _ebs(delta_stage, T, sig, 2.0 * lipschitz * abs(prop - theta), N)
            if gap > G:
                break
        accepted[k] = best == 1
        step_evals[k] = 2 * used
        stopped[k] = used < N
        if exact_answer:
            t0 = 0.0
            t1 = 0.0
            for n in range(N):
                t0 += _t_term(y[n], theta, nu, scale) + c[0] / N
            for n in range(N):
                t1 += _t_term(y[n], prop, nu, scale) + c[1] / N
            exact[k] = t1 > t0
        _undo(perm, swaps, used)
        if accepted[k]:
            theta = prop
        values[k] = theta
    return values, accepted, exact, step_evals, stopped


@njit(cache=True)
def _ragged_kernel(lf, f0, sizes, n, rng, schedules, lengths, B, exact_answer):
    D = sizes.size
    perm = np.empty(lf.shape, dtype=np.int64)
    for i in range(D):
        for j in range(sizes[i]):
            perm[i, j] = j
    swaps = np.zeros(lf.shape, dtype=np.int64)
    R = np.empty(lf.shape)
    alive = np.empty(D, dtype=np.int64)
    used = np.zeros(D, dtype=np.int64)
    total = np.empty(D)
    g = np.empty(D)
    eps = np.empty(D)
    offset = np.empty(D)
    values, draw_evals, max_pulls, stopped, exact = _draw_arrays(n)
    population = 0
    for i in range(D):
        population += sizes[i]
    for k in range(n):
        for i in range(D):
            eps[i] = -log_or_minus_inf(rng.standard_exponential())
            offset[i] = (f0[i] + eps[i]) / sizes[i]
            alive[i] = i
            used[i] = 0
        na = D
        spent = 0
        stage = 0
        while True:
            for q in range(na):
                i = alive[q]
                if stage < lengths[i]:
                    T = schedules[i, stage]
                    size = sizes[i]
                    for j in range(used[i], T):
                        r = min(j + int(rng.random() * (size - j)), size - 1)
                        tmp = perm[i, j]
                        perm[i, j] = perm[i, r]
                        perm[i, r] = tmp
                        swaps[i, j] = r
                        R[i, j] = lf[i, perm[i, j]] + offset[i]
                    spent += T - used[i]
                    used[i] = T
            best = 0
            exhausted = True
            for q in range(na):
                i = alive[q]
                acc = 0.0
                for j in range(used[i]):
                    acc += R[i, j]
                total[q] = sizes[i] * (acc / used[i])
                if total[q] > total[best]:
                    best = q
                if used[i] < sizes[i]:
                    exhausted = False
            if exhausted:
                alive[0] = alive[best]
                na = 1
                break
            for q in range(na):
                i = alive[q]
                T = used[i]
                size = sizes[i]
                if T == size:
                    g[q] = 0.0
                    continue
                acc = 0.0
                for j in range(T):
                    acc += R[i, j]
                mean = acc / T
                acc = 0.0
                for j in range(T):
                    c = R[i, j] - mean
                    acc += c * c
                sig = math.sqrt(acc / T)
                g[q] = size * sig / math.sqrt(T) * math.sqrt(1.0 - (T - 1) / (size - 1)) * B[i]
            m = 0
            for q in range(na):
                if total[best] - total[q] <= g[best] + g[q]:
                    alive[m] = alive[q]
                    m += 1
            na = m
            if na == 1:
                break
            stage += 1
        values[k] = alive[0]
        draw_evals[k] = spent
        most = 0
        for i in range(D):
            most = max(most, used[i])
        max_pulls[k] = most
        stopped[k] = spent < population
        if exact_answer:
            top = -math.inf
            for i in range(D):
                acc = 0.0
                for j in range(sizes[i]):
                    acc += lf[i, j]
                t = acc + f0[i] + eps[i]
                if t > top or i == 0:
                    top = t
                    exact[k] = i
        for i in range(D):
            for j in range(used[i] - 1, -1, -1):
                r = swaps[i, j]
                tmp = perm[i, j]
                perm[i, j] = perm[i, r]
                perm[i, r] = tmp
    return values, draw_evals, max_pulls, stopped, exact


def _pack(out, exact_answer, N, D):
    values, draw_evals, max_pulls, stopped, exact = out
    return pack_draws(values, draw_evals, max_pulls, stopped, exact if exact_answer else None, N, D)


def lil_ucb(target, n, rng, delta=0.1, exact_answer=False):
    D, N = target.log_factors.shape
    out = _lil_ucb_kernel(
        target.log_factors,
        target.log_f0,
        np.full(D, target.reward_range.max() / 2.0),
        n,
        rng,
        delta / LIL_DELTA_DIVISOR,
        1.0 + LIL_A_NUMERATOR / D,
        LIL_BETA,
        exact_answer,
    )
    return _pack(out, exact_answer, N, D)


def _racing(target, n, rng, delta, m1, is_normal, variance, exact_answer):
    D, N = target.D, target.N
    pairwise = variance == "pairwise"
    d_prime = D - 1 if pairwise else D
    schedule = doubling_schedule(N, m1).astype(np.int64)
    B = b_normal(delta / d_prime, N, m1) if (is_normal and N > m1) else 0.0
    delta_stage = delta / d_prime / max(schedule.size - 1, 1)
    out = _racing_kernel(
        reward_source(target),
        D,
        N,
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
    if target.kind == "discrete-ragged":
        return _racing_normal_ragged(target, n, rng, delta, m1, exact_answer)
    return _racing(target, n, rng, delta, m1, True, variance, exact_answer)


def _racing_normal_ragged(target, n, rng, delta, m1, exact_answer):
    sizes = np.ascontiguousarray(target.sizes, dtype=np.int64)
    D = sizes.size
    plans = [doubling_schedule(int(s), min(m1, int(s))) for s in sizes]
    lengths = np.array([p.size for p in plans], dtype=np.int64)
    schedules = np.zeros((D, int(lengths.max())), dtype=np.int64)
    for i, p in enumerate(plans):
        schedules[i, : p.size] = p
    B = np.array([b_normal(delta / D, int(s), m1) if s > m1 else 0.0 for s in sizes])
    out = _ragged_kernel(
        target.log_factors, target.log_f0, sizes, n, rng, schedules, lengths, B, exact_answer
    )
    draws = _pack(out, exact_answer, 1, 1)
    if exact_answer:
        draws.extras["exact_evals"] = np.array(n * int(sizes.sum()), dtype=np.int64)
    return draws


def racing_mh(
    target,
    n_steps,
    rng,
    x0=None,
    delta=0.05,
    m1=50,
    bound="normal",
    step=2.0,
    exact_answer=False,
):
    N = target.N
    schedule = doubling_schedule(N, m1).astype(np.int64)
    B = b_normal(delta, N, m1) if (bound == "normal" and N > m1) else 0.0
    values, accepted, exact, step_evals, stopped = _racing_mh_kernel(
        target.y,
        target.nu,
        target.scale,
        target.prior_mean,
        target.prior_sd,
        target.lipschitz,
        float(target.mean if x0 is None else x0),
        n_steps,
        rng,
        schedule,
        B,
        delta / max(schedule.size - 1, 1),
        step * target.sd,
        bound == "normal",
        exact_answer,
    )
    extras = {"accepted": accepted, "step_evals": step_evals, "stopped_early": stopped}
    if exact_answer:
        extras["exact_accept"] = exact
        extras["exact_evals"] = np.array(n_steps * 2 * N, dtype=np.int64)
    return Chain(values, int(step_evals.sum()), extras)


KERNELS = {
    "racing-mh": (_racing_mh_kernel,),
    "lil-ucb": (_lil_ucb_kernel,),
    "racing-ebs": (_racing_kernel,),
    "racing-normal": (_racing_kernel, _ragged_kernel),
}
