"""Planted bugs in racing samplers (000 Sec. 3-4): subtle negative controls for the error-rate,
decision-error and pull-bounds gates.

Each sampler is a plausible slip in Racing-Normal, Racing-EBS, lil'UCB or racing MH: a bound a
little too narrow (a tail table read at 2 delta, the finite-population factor without its square
root, a union bound or the leader's own bound dropped, the range term of the Bernstein bound
forgotten), an exact-arm rule left out, a cost counted twice. The samplers are vectorised over
draws (the law of each draw is that of 000 Alg. 1), so a verification stays fast. Races are
approximate: a bug is caught only where it pushes the error rate above delta, so each uses a
problem and delta where the correct race errs at a sizeable fraction of delta (or not at all).
The union-bound bug is the exception: no problem in the catalogue makes it err above delta.

Loaded with ``harness verify --plugin tests/plugins/planted_racing.py``.
"""

import math

import numpy as np

import harness
from harness.spec import Check, Param
from implementations.racing.bounds import KAPPA, b_normal, doubling_schedule


def _race(target, n, rng, delta, m1, bound, variant, marginal=False):
    """Alg. 1 for n independent draws, in chunks of draws at once.

    Each draw: eps ~ Gumbel, a uniform order of the N indices (without replacement), then on the
    doubling schedule the leader x = argmax mu and arm i is eliminated when mu_x - mu_i > G
    (Eq. 9, normal; Eq. 6-7, EBS) until one arm is left or T = N. G is G(sigma_{x,i}) at
    delta / (D - 1) (pairwise variances) or G(sigma_x) + G(sigma_i) at delta / D (marginal).
    """
    lf, f0 = target.log_factors, target.log_f0
    D, N = lf.shape
    schedule = doubling_schedule(N, m1)
    looks = max(schedule.size - 1, 1)
    d_pair = delta if variant == "no-union" else delta / (D if marginal else D - 1)
    if bound == "normal":
        B = b_normal(min(2.0 * d_pair, 0.5) if variant == "two-sided" else d_pair, N, m1)
    log_term = math.log(5.0 / (d_pair / looks))
    values, exact = np.empty(n, np.int64), np.empty(n, np.int64)
    draw_evals, max_pulls = np.empty(n, np.int64), np.empty(n, np.int64)
    chunk = max(1, 2_000_000 // (D * N))
    for lo in range(0, n, chunk):
        k = min(chunk, n - lo)
        rows = np.arange(k)
        eps = -np.log(rng.standard_exponential((k, D)))
        order = np.argsort(rng.random((k, N)), axis=1)
        R = lf[:, order].transpose(1, 0, 2) + ((f0 + eps) / N)[:, :, None]  # (k, D, N)
        exact[lo : lo + k] = np.argmax(np.cumsum(lf, axis=1)[:, -1] + f0 + eps, axis=1)
        alive = np.ones((k, D), dtype=bool)
        active = np.ones(k, dtype=bool)
        answer = np.zeros(k, np.int64)
        spent, used = np.zeros(k, np.int64), np.zeros(k, np.int64)
        prev = 0
        for T in schedule.tolist():
            fresh = T if variant == "stage-evals" else T - prev
            spent[active] += alive[active].sum(axis=1) * fresh
            used[active] = T
            prev = T
            mu = R[:, :, :T].mean(axis=2)
            best = np.argmax(np.where(alive, mu, -np.inf), axis=1)
            if T == N:
                answer[active] = best[active]
                break
            gap = mu[rows, best][:, None] - mu
            if marginal:
                sig = np.sqrt(((R[:, :, :T] - mu[:, :, None]) ** 2).mean(axis=2))
            else:
                diff = R[rows, best, :T][:, None, :] - R[:, :, :T]
                sig = np.sqrt(((diff - gap[:, :, None]) ** 2).mean(axis=2))
            if bound == "normal":
                fpc = 1.0 - (T - 1) / (N - 1)
                G = sig / math.sqrt(T) * (fpc if variant == "fpc-no-sqrt" else math.sqrt(fpc)) * B
            else:
                C = target.reward_range[best][:, None] + target.reward_range[None, :]
                rho = 1.0 - (T - 1) / N if T <= N / 2 else (1.0 - T / N) * (1.0 + 1.0 / T)
                G = sig * math.sqrt(2.0 * rho * log_term / T)
                if variant != "no-range":
                    G = G + KAPPA * C * log_term / T
            if marginal and variant != "no-leader-bound":
                G = G[rows, best][:, None] + G
            alive &= gap <= G
            done = active & (alive.sum(axis=1) == 1)
            answer[done] = np.argmax(alive[done], axis=1)
            active &= ~done
            if not active.any():
                break
        values[lo : lo + k], draw_evals[lo : lo + k], max_pulls[lo : lo + k] = answer, spent, used
    extras = {"draw_evals": draw_evals, "max_pulls": max_pulls, "exact": exact}
    return harness.Draws(values, int(draw_evals.sum()), extras)


def racing_normal_two_sided_b(target, n, rng, delta=0.1, exact_answer=False):
    """Bug: B_Normal read at the two-sided tail 2 delta / (D - 1) (errors doubled).

    Elimination needs the one-sided delta / (D - 1) (000 Eq. 8-9): errors 0.066 at
    delta = 0.05 (correct: 0.030).

    Caught by: error-rate"""
    return _race(target, n, rng, delta, 50, "normal", "two-sided")


def racing_normal_fpc_no_sqrt(target, n, rng, delta=0.1, exact_answer=False):
    """Bug: G_Normal's finite-population factor lacks its square root (errors x3).

    1 - (T-1)/(N-1) for its square root (000 Eq. 9), so late looks are too narrow: errors
    0.095 at delta = 0.05 (correct: 0.030).

    Caught by: error-rate"""
    return _race(target, n, rng, delta, 50, "normal", "fpc-no-sqrt")


def racing_normal_no_union(target, n, rng, delta=0.1, exact_answer=False):
    """Bug: B_Normal solved at delta, not delta / (D - 1): union bound dropped (errors x24).

    On race-normal-D10-N1000-s0.3 the correct race errs at 0.034 for delta = 0.05; without the
    union bound over the 9 rivals it errs more than delta. (On race-long-D30-N500 it errs 0.024
    at delta = 0.1, correct 0.001: within the promise, so no gate can fault it there.)

    Caught by: error-rate"""
    return _race(target, n, rng, delta, 50, "normal", "no-union")


def racing_normal_no_leader_bound(target, n, rng, delta=0.01, exact_answer=False):
    """Bug: marginal elimination drops the leader's own bound (errors 0.038).

    Arm i is eliminated when mu_x - mu_i > G(sigma_i), as if the leader's mean were exact:
    errors 0.038 at delta = 0.01 (correct: none).

    Caught by: error-rate"""
    return _race(target, n, rng, delta, 50, "normal", "no-leader-bound", marginal=True)


def racing_ebs_no_range(target, n, rng, delta=0.01, exact_answer=False):
    """Bug: Racing-EBS drops the range term of its Bernstein bound (errors 0.019).

    000 Eq. 6 without kappa C log(5 / delta) / n: the variance term alone is no bound while the
    variance rests on a handful of rewards (m1 = 4). Errors 0.019 at delta = 0.01 (correct:
    none).

    Caught by: error-rate"""
    return _race(target, n, rng, delta, 4, "ebs", "no-range")


def racing_normal_stage_evals(target, n, rng, delta=0.1, exact_answer=False):
    """Bug: each stage counts alive x T rewards, not alive x (T - T_prev) (costs up to 2.5x).

    The reused indices are counted again: draws report up to 2.5 times their cost (the law is
    exact).

    Caught by: pull-bounds"""
    return _race(target, n, rng, delta, 50, "normal", "stage-evals")


def lil_ucb_no_exact_ucb(target, n, rng, delta=0.001, exact_answer=False):
    """Bug: lil'UCB without its exact-mean rule at T_i = N (errors 0.4%).

    Adapted lil'UCB (000 Sec. 3.2) without modification 2: an arm pulled N times keeps its
    bonus, so the race stops at the first arm to reach N. Errors 0.004 at delta = 0.001
    (correct: none).

    Caught by: error-rate"""
    lf, f0 = target.log_factors, target.log_f0
    D, N = lf.shape
    scale = target.reward_range.max() / 2.0
    d, a = delta / 5.0, 1.0 + 10.0 / D
    values, exact = np.empty(n, np.int64), np.empty(n, np.int64)
    draw_evals, max_pulls = np.empty(n, np.int64), np.empty(n, np.int64)
    chunk = max(1, 2_000_000 // (D * N))
    for lo in range(0, n, chunk):
        k = min(chunk, n - lo)
        eps = -np.log(rng.standard_exponential((k, D)))
        offset = (f0 + eps) / N
        order = np.argsort(rng.random((k, D, N)), axis=2)  # each arm's own order
        exact[lo : lo + k] = np.argmax(np.cumsum(lf, axis=1)[:, -1] + f0 + eps, axis=1)
        pulls, sums = np.zeros((k, D), np.int64), np.zeros((k, D))

        def pull(r, h, pulls=pulls, sums=sums, order=order, offset=offset):
            sums[r, h] += lf[h, order[r, h, pulls[r, h]]] + offset[r, h]
            pulls[r, h] += 1

        for i in range(D):
            pull(np.arange(k), np.full(k, i))
        active = np.ones(k, dtype=bool)
        answer = np.zeros(k, np.int64)
        while active.any():
            r = np.flatnonzero(active)
            P = pulls[r]
            with np.errstate(divide="ignore"):
                inner = np.log(np.log(P) / d)
            ucb = sums[r] / P + 1.5 * np.sqrt(2.0 * scale**2 * np.maximum(inner, 0.0) / P)
            ucb[P == 1] = np.inf  # the bug: no ucb[P == N] = mean here
            h = np.argmax(ucb, axis=1)
            full = P[np.arange(r.size), h] == N
            answer[r[full]] = h[full]
            active[r[full]] = False
            r, h = r[~full], h[~full]
            pull(r, h)
            mine = pulls[r, h]
            stop = mine >= 1.0 + a * (pulls[r].sum(axis=1) - mine)
            answer[r[stop]] = np.argmax(pulls[r[stop]], axis=1)
            active[r[stop]] = False
        values[lo : lo + k], draw_evals[lo : lo + k] = answer, pulls.sum(axis=1)
        max_pulls[lo : lo + k] = pulls.max(axis=1)
    extras = {"draw_evals": draw_evals, "max_pulls": max_pulls, "exact": exact}
    return harness.Draws(values, int(draw_evals.sum()), extras)


def racing_mh_fpc_no_sqrt(target, n_steps, rng, x0=None, delta=0.01, exact_answer=False):
    """Bug: racing MH's two-arm race lacks the FPC's square root (1.7% wrong calls).

    Racing MH (000 Sec. 4) with 1 - (T-1)/(N-1) for its square root: 1.7% of accept decisions
    differ from the exact test at delta = 0.01 (correct: 0.2%).

    Caught by: decision-error"""
    y, nu, s, N = target.y, target.nu, target.scale, target.N
    m1 = 50
    schedule = doubling_schedule(N, m1).tolist()
    B = b_normal(delta, N, m1)
    theta = float(target.mean if x0 is None else x0)
    values = np.empty(n_steps)
    accepted, exact = np.empty(n_steps, dtype=bool), np.empty(n_steps, dtype=bool)
    evals = 0

    def loglik(t):
        z = (y - t) / s
        return -0.5 * (nu + 1.0) * np.log1p(z * z / nu)

    for k in range(n_steps):
        prop = theta + 2.0 * target.sd * rng.standard_normal()
        log_u = math.log(1.0 - rng.random())
        c = target.log_prior(prop) - target.log_prior(theta) - log_u
        diff = loglik(prop) - loglik(theta) + c / N  # per index: arm 2 minus arm 1
        order = rng.permutation(N)
        for T in schedule:
            d = diff[order[:T]]
            mu = d.mean()
            if T == N:
                break
            G = d.std() / math.sqrt(T) * (1.0 - (T - 1) / (N - 1)) * B
            if abs(mu) > G:
                break
        evals += 2 * T
        accepted[k] = mu > 0.0
        exact[k] = diff.sum() > 0.0
        if accepted[k]:
            theta = prop
        values[k] = theta
    return harness.Chain(values, evals, {"accepted": accepted, "exact_accept": exact})


DELTA = Param("delta", 0.1, low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
EXACT = Param("exact_answer", False, kind=bool)


def _register(name, fn, problem, delta, kinds=("discrete",), entry="draw"):
    harness.register(
        harness.AlgorithmSpec(
            name=name,
            family="planted:racing",
            paper="planted bug",
            guarantee="approximate",
            entry=entry,
            target_kinds=kinds,
            implementations={"reference": fn},
            params=(DELTA, EXACT),
            delta_param="delta",
            splittable=False,
            summary=fn.__doc__ or "",
            checks=(Check({"delta": delta, "exact_answer": True}, problems=(problem,)),),
        )
    )


D2, LONG = "race-normal-D2-N1000-s0.3", "race-long-D30-N500"
for _name, _fn, _problem, _delta in (
    ("planted-racing-normal-two-sided-b", racing_normal_two_sided_b, D2, 0.05),
    ("planted-racing-normal-fpc-no-sqrt", racing_normal_fpc_no_sqrt, D2, 0.05),
    ("planted-racing-normal-no-union", racing_normal_no_union, "race-normal-D10-N1000-s0.3", 0.05),
    ("planted-racing-normal-no-leader-bound", racing_normal_no_leader_bound, D2, 0.01),
    ("planted-racing-ebs-no-range", racing_ebs_no_range, D2, 0.01),
    ("planted-racing-normal-stage-evals", racing_normal_stage_evals, LONG, 0.1),
    ("planted-lil-ucb-no-exact-ucb", lil_ucb_no_exact_ucb, D2, 0.001),
):
    _register(_name, _fn, _problem, _delta)
_register(
    "planted-racing-mh-fpc-no-sqrt",
    racing_mh_fpc_no_sqrt,
    "studentt-posterior-N500",
    0.01,
    kinds=("posterior-1d",),
    entry="run_chain",
)
