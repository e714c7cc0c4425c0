"""Numba kernels for FlyMC and the regular-MCMC baselines, and thin wrappers with the
reference's signatures (``reference.py`` says what each step does; this file repeats its draws
and sums in the same order, so the two agree to the last bit).

The likelihood caches of the current theta and its proposal are two slots of arrays with a
version stamp per datum: a new proposal bumps its slot's version, which empties the slot in
O(1). The implicit z step scans the dark part of the bright/dark permutation in place instead of
copying it (a brightening swaps only positions at or before the scan, so the scan reads the
list as it was): O(bright + q_db N) per iteration, not O(N).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from harness.spec import Chain
from harness.targets.glm_kernels import (
    collapsed_grad_log_bound,
    collapsed_log_bound,
    grad_log_bound_one,
    grad_log_lik_one,
    grad_log_lik_total,
    grad_log_prior_value,
    log_bound_one,
    log_l_tilde,
    log_lik_one,
    log_lik_total,
    log_prior_value,
)
from implementations.firefly.reference import (
    MAX_SHRINKS,
    NO_CANDIDATE,
    THETA_STEPS,
    bind_theta_step,
    start,
)
from implementations.shared.fast import log_or_minus_inf

MH, MALA, SLICE = 0, 1, 2


@njit(cache=True)
def _evaluate(data, theta, slot, n, ll, lb, gg, stamp, ver, grads, q, work):
    """Datum n at the theta of ``slot``, unless cached there (one query); ``work``: scratch
    arrays of length K and D."""
    if stamp[slot, n] == ver[slot]:
        return
    model, X, t, nu, bq, bl, bc = data
    y, gl = work
    ll[slot, n] = log_lik_one(model, X, t, nu, theta, n, y)
    lb[slot, n] = log_bound_one(model, X, t, bq, bl, bc, theta, n, y)
    if grads:
        # gg[slot, n] = grad log L_n - grad log B_n, through the cache's row of this datum
        rows = gg[slot]
        grad_log_lik_one(model, X, t, nu, theta, n, y, rows, n)
        for j in range(theta.size):
            gl[j] = rows[n, j]
        grad_log_bound_one(model, X, t, bq, bl, bc, theta, n, y, rows, n)
        for j in range(theta.size):
            rows[n, j] = gl[j] - rows[n, j]
    stamp[slot, n] = ver[slot]
    q[0] += 1


@njit(cache=True)
def _log_density(data, bounds, flymc, thetas, slot, cache, arr, count, grads, q, work):
    """log p(theta, z) (FlyMC) or log p(theta | data) (regular, memoised per slot)."""
    ll, lb, gg, stamp, ver, lp, lp_ver, glp = cache
    quad, lin, const, prior_sd = bounds
    theta = thetas[slot]
    if flymc:
        for i in range(count):
            _evaluate(data, theta, slot, arr[i], ll, lb, gg, stamp, ver, grads, q, work)
        total = log_prior_value(theta, prior_sd) + collapsed_log_bound(quad, lin, const, theta)
        for i in range(count):
            n = arr[i]
            total += log_l_tilde(ll[slot, n], lb[slot, n])
        return total
    if lp_ver[slot] != ver[slot]:
        model, X, t, nu = data[0], data[1], data[2], data[3]
        q[0] += X.shape[0]
        lp[slot] = log_prior_value(theta, prior_sd) + log_lik_total(model, X, t, nu, theta)
        if grads:
            gp = np.empty(theta.size)
            gl = np.empty(theta.size)
            grad_log_prior_value(theta, prior_sd, gp)
            grad_log_lik_total(model, X, t, nu, theta, gl)
            for j in range(theta.size):
                glp[slot, j] = gp[j] + gl[j]
        lp_ver[slot] = ver[slot]
    return lp[slot]


@njit(cache=True)
def _grad(bounds, flymc, thetas, slot, cache, arr, count, out):
    """The gradient of the density at ``slot`` (after :func:`_log_density` there)."""
    ll, lb, gg, glp = cache[0], cache[1], cache[2], cache[7]
    quad, lin, prior_sd = bounds[0], bounds[1], bounds[3]
    theta = thetas[slot]
    if not flymc:
        for j in range(theta.size):
            out[j] = glp[slot, j]
        return
    gp = np.empty(theta.size)
    gb = np.empty(theta.size)
    grad_log_prior_value(theta, prior_sd, gp)
    collapsed_grad_log_bound(quad, lin, theta, gb)
    for j in range(theta.size):
        out[j] = gp[j] + gb[j]
    for i in range(count):
        n = arr[i]
        denom = -math.expm1(-(ll[slot, n] - lb[slot, n]))
        for j in range(theta.size):
            out[j] = out[j] + gg[slot, n, j] / denom


@njit(cache=True)
def _log_langevin_proposal(to, frm, grad, step):
    h = 0.5 * step * step
    s = 0.0
    for j in range(to.size):
        diff = to[j] - frm[j] - h * grad[j]
        s += diff * diff
    return -s / (2.0 * step * step)


@njit(cache=True)
def _brighten(arr, tab, count, n):
    i, j = tab[n], count
    a, b = arr[i], arr[j]
    arr[i], arr[j] = b, a
    tab[a], tab[b] = j, i
    return count + 1


@njit(cache=True)
def _darken(arr, tab, count, n):
    count -= 1
    i, j = tab[n], count
    a, b = arr[i], arr[j]
    arr[i], arr[j] = b, a
    tab[a], tab[b] = j, i
    return count


@njit(cache=True)
def _geometric_skip(q_db, rng):
    if q_db >= 1.0:
        return 0
    u = rng.random()
    if u == 0.0:
        return NO_CANDIDATE
    return math.floor(math.log(u) / math.log1p(-q_db))


@njit(cache=True)
def chain_kernel(
    data,
    bounds,
    theta0,
    n_steps,
    rng,
    flymc,
    theta_step,
    step,
    implicit,
    q_db,
    fraction,
    theta_fixed,
):
    """One chain: reference.flymc (``flymc``) or reference.regular, step for step."""
    X = data[1]
    N, D = X.shape[0], theta0.size
    grads = theta_step == MALA
    thetas = np.empty((2, D))
    thetas[0] = theta0
    G = N if (grads and flymc) else 1
    cache = (
        np.empty((2, N)),
        np.empty((2, N)),
        np.empty((2, G, D if grads else 1)),
        np.full((2, N), -1, dtype=np.int64),
        np.zeros(2, dtype=np.int64),
        np.empty(2),
        np.full(2, -1, dtype=np.int64),
        np.empty((2, D)),
    )
    ver = cache[4]
    work = (np.empty(D // X.shape[1]), np.empty(D))
    arr = np.arange(N)
    tab = np.arange(N)
    # np.int64, not literal 0s: Numba would compile every helper they reach once more.
    count = np.int64(0)
    q = np.zeros(1, dtype=np.int64)
    c = np.int64(0)
    g_cur = np.empty(D)
    g_prop = np.empty(D)
    d = np.empty(D)
    bright_list = np.empty(N, dtype=np.int64)
    bright_steps = np.zeros(N if theta_fixed else 0, dtype=np.int64)
    darkenings = np.zeros(N if theta_fixed else 0, dtype=np.int64)
    ll, lb = cache[0], cache[1]
    if theta_fixed:
        for n in range(N):
            _evaluate(data, thetas[c], c, n, ll, lb, cache[2], cache[3], ver, grads, q, work)
        for n in range(N):
            if rng.random() < -math.expm1(lb[c, n] - ll[c, n]):
                count = _brighten(arr, tab, count, n)
    values = np.empty((n_steps, D))
    per_step = np.empty(n_steps, dtype=np.int64)
    bright = np.empty(n_steps, dtype=np.int64)
    accepted = np.zeros(n_steps, dtype=np.bool_)
    for i in range(n_steps):
        before = q[0]
        if not theta_fixed:
            p = 1 - c
            if theta_step == MH:
                ver[p] += 1
                for j in range(D):
                    thetas[p, j] = thetas[c, j] + step * rng.standard_normal()
                log_u = log_or_minus_inf(rng.random())
                lp_prop = _log_density(
                    data, bounds, flymc, thetas, p, cache, arr, count, grads, q, work
                )
                lp_cur = _log_density(
                    data, bounds, flymc, thetas, c, cache, arr, count, grads, q, work
                )
                if log_u < lp_prop - lp_cur:
                    c = p
                    accepted[i] = True
            elif theta_step == MALA:
                lp_cur = _log_density(
                    data, bounds, flymc, thetas, c, cache, arr, count, grads, q, work
                )
                _grad(bounds, flymc, thetas, c, cache, arr, count, g_cur)
                h = 0.5 * step * step
                ver[p] += 1
                for j in range(D):
                    thetas[p, j] = thetas[c, j] + h * g_cur[j] + step * rng.standard_normal()
                log_u = log_or_minus_inf(rng.random())
                lp_prop = _log_density(
                    data, bounds, flymc, thetas, p, cache, arr, count, grads, q, work
                )
                _grad(bounds, flymc, thetas, p, cache, arr, count, g_prop)
                log_ratio = (
                    lp_prop
                    - lp_cur
                    + _log_langevin_proposal(thetas[c], thetas[p], g_prop, step)
                    - _log_langevin_proposal(thetas[p], thetas[c], g_cur, step)
                )
                if log_u < log_ratio:
                    c = p
                    accepted[i] = True
            else:
                for j in range(D):
                    d[j] = rng.standard_normal()
                norm = 0.0
                for j in range(D):
                    norm += d[j] * d[j]
                norm = math.sqrt(norm)
                for j in range(D):
                    d[j] = d[j] / norm
                log_y = (
                    _log_density(data, bounds, flymc, thetas, c, cache, arr, count, grads, q, work)
                    - rng.standard_exponential()
                )
                lo = -step * rng.random()
                hi = lo + step
                for _ in range(MAX_SHRINKS):
                    s = lo + (hi - lo) * rng.random()
                    ver[p] += 1
                    for j in range(D):
                        thetas[p, j] = thetas[c, j] + s * d[j]
                    lp = _log_density(
                        data, bounds, flymc, thetas, p, cache, arr, count, grads, q, work
                    )
                    if lp > log_y:
                        c = p
                        accepted[i] = True
                        break
                    if s < 0.0:
                        lo = s
                    else:
                        hi = s
        if flymc:
            if implicit:
                old = count
                for k in range(old):
                    bright_list[k] = arr[k]
                log_q = math.log(q_db)
                for k in range(old):
                    n = bright_list[k]
                    if log_or_minus_inf(rng.random()) < log_q - log_l_tilde(ll[c, n], lb[c, n]):
                        count = _darken(arr, tab, count, n)
                        if theta_fixed:
                            darkenings[n] += 1
                pos = _geometric_skip(q_db, rng)
                while pos < N - old:
                    n = arr[old + pos]
                    _evaluate(
                        data, thetas[c], c, n, ll, lb, cache[2], cache[3], ver, grads, q, work
                    )
                    if log_or_minus_inf(rng.random()) < log_l_tilde(ll[c, n], lb[c, n]) - log_q:
                        count = _brighten(arr, tab, count, n)
                    pos += 1 + _geometric_skip(q_db, rng)
            else:
                for _ in range(math.ceil(N * fraction)):
                    n = min(int(rng.random() * N), N - 1)
                    _evaluate(
                        data, thetas[c], c, n, ll, lb, cache[2], cache[3], ver, grads, q, work
                    )
                    now = rng.random() < -math.expm1(lb[c, n] - ll[c, n])
                    if now != (tab[n] < count):
                        if now:
                            count = _brighten(arr, tab, count, n)
                        else:
                            count = _darken(arr, tab, count, n)
                            if theta_fixed:
                                darkenings[n] += 1
            if theta_fixed:
                for k in range(count):
                    bright_steps[arr[k]] += 1
        for j in range(D):
            values[i, j] = thetas[c, j]
        per_step[i] = q[0] - before
        bright[i] = count
    return values, per_step, bright, accepted, bright_steps, darkenings, q[0]


def _chain(target, n_steps, rng, x0, flymc, theta_step, step, z=("implicit", 0.5, 0.1, False)):
    """chain_kernel on ``target`` from ``x0``; ``z``: (z_update, q_db, resample_fraction,
    theta_fixed), read only by FlyMC."""
    z_update, q_db, fraction, theta_fixed = z
    return chain_kernel(
        (target.code, target.X, target.t, float(target.nu), target.bq, target.bl, target.bc),
        (target.quad, target.lin, float(target.const), float(target.prior_sd)),
        start(target, x0),
        n_steps,
        rng,
        flymc,
        THETA_STEPS.index(theta_step),
        float(step),
        z_update == "implicit",
        float(q_db),
        float(fraction),
        bool(theta_fixed),
    )


def flymc(
    target,
    n_steps,
    rng,
    x0=None,
    theta_step="mh",
    step=0.1,
    z_update="implicit",
    q_db=0.1,
    resample_fraction=0.1,
    theta_fixed=False,
):
    """reference.flymc, compiled."""
    z = (z_update, q_db, resample_fraction, theta_fixed)
    values, per_step, bright, accepted, bright_steps, darkenings, total = _chain(
        target, n_steps, rng, x0, True, theta_step, step, z
    )
    extras = {"draw_evals": per_step, "bright": bright, "accepted": accepted}
    if theta_fixed:
        extras.update(bright_steps=bright_steps, darkenings=darkenings)
    return Chain(values, int(total), extras)


def regular(target, n_steps, rng, x0=None, theta_step="mh", step=0.1):
    """reference.regular, compiled."""
    values, per_step, _, accepted, _, _, total = _chain(
        target, n_steps, rng, x0, False, theta_step, step
    )
    return Chain(values, int(total), {"draw_evals": per_step, "accepted": accepted})


flymc_mh, flymc_mala, flymc_slice = (bind_theta_step(flymc, s, "flymc") for s in THETA_STEPS)
rwmh, mala, slice_sampler = (bind_theta_step(regular, s, "regular") for s in THETA_STEPS)
