"""Discrete sampling as best-arm identification: the readable NumPy reference.

Read against 000_26bed7cc1ef3ab92.txt:
- Sec. 2.2, Eq. 3: after drawing the Gumbel noise eps_i once, the sample is the arm with the
  largest mean reward, l[i, n] = log f_n(i) + (log f_0(i) + eps_i) / N;
- Sec. 3.2: the adapted lil'UCB (per-arm sampling without replacement, exact UCB at T_i = N,
  a second stopping rule), Prop. 2;
- Sec. 3.3, Alg. 1: racing with a shared mini-batch and a doubling schedule, with the
  empirical Bernstein-Serfling bound (Eq. 6-7) or the normal bound (Eq. 9), marginal or
  pairwise variance estimates; Prop. 3;
- Sec. 4, Eq. 12: :func:`race_two_arms`, the model-free two-arm race of a racing MH test, which
  the registered ``racing-mh`` and the ARCH experiment (harness/experiments/racing_arch) share.

Bit-for-bit agreement with ``fast.py`` rests on the rules of the Gumbel family: the same draws
in the same order (Exp(1) noise first, then one ``random`` double per sampled index), sums left
to right (``np.cumsum``) except Alg. 1's sums of squares, which run in the shared eight lanes
(:func:`implementations.shared.reference.lane_sums`: one dependent add per reward would
cost a race more than reading the reward), transcendental scalars from ``math``. Elementwise
NumPy arithmetic (+, -, *, /, sqrt) is correctly rounded, so vectorising it over arms changes no
bit.

Every draw returns, besides the sample:
- ``extras["draw_evals"]``: rewards l[i, n] computed for that draw (their sum is ``evals``);
- ``extras["max_pulls"]``: the largest number of rewards taken from one arm (Prop. 2: <= N);
- ``extras["stopped_early"]``: whether the draw finished before touching all N indices;
- with ``exact_answer=True``, ``extras["exact"]``: the argmax under the same noise, whose N * D
  evaluations are counted apart in ``extras["exact_evals"]``, never in ``evals``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from harness.spec import Chain, Draws
from implementations.racing.bounds import b_normal, doubling_schedule, ebs_bound
from implementations.shared.reference import gumbel_noise, lane_sums

# Heuristic lil'UCB constants (Jamieson et al. 2014, footnote 2; notes-racing-appendix.md, E).
LIL_BETA = 0.5
LIL_A_NUMERATOR = 10.0
LIL_DELTA_DIVISOR = 5.0


def gumbel_offsets(log_f0: np.ndarray, N: int, rng: np.random.Generator) -> np.ndarray:
    """eps_i = -log E_i with E_i ~ Exp(1) (000, footnote 1); returns eps (drawn once per draw)."""
    return gumbel_noise(log_f0.size, rng)


def exact_argmax(log_factors: np.ndarray, log_f0: np.ndarray, eps: np.ndarray) -> int:
    """The answer every arm's full population gives: argmax_i log p~(i) + eps_i (000, Eq. 2)."""
    totals = np.cumsum(log_factors, axis=1)[:, -1] + log_f0 + eps
    return int(np.argmax(totals))


def draw_indices(perm: list, swaps: list, start: int, stop: int, rng: np.random.Generator) -> list:
    """Steps start..stop-1 of a Fisher-Yates shuffle: perm[j] becomes a uniform pick of perm[j:].

    Only as many steps as indices used are taken, so a draw costs O(T), not O(N); each swap is
    recorded so :func:`undo_draws` restores the identity for the next draw. The pick is
    j + floor(u (N - j)) with u ~ U[0, 1) from ``rng.random`` (one double per step, the same
    stream whether drawn one by one or as an array); its bias is below (N - j) / 2^53.
    """
    N = len(perm)
    for j, u in zip(range(start, stop), rng.random(stop - start), strict=True):
        r = min(j + int(u * (N - j)), N - 1)
        perm[j], perm[r] = perm[r], perm[j]
        swaps[j] = r
    return perm[start:stop]


def undo_draws(perm: list, swaps: list, used: int) -> None:
    for j in range(used - 1, -1, -1):
        r = swaps[j]
        perm[j], perm[r] = perm[r], perm[j]


def draw_outputs(
    n: int, exact_answer: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """Empty per-draw outputs for :func:`pack_draws`: values, draw_evals, max_pulls, stopped
    and, with ``exact_answer``, each draw's exact argmax (else None)."""
    values = np.empty(n, dtype=np.int64)
    draw_evals = np.empty(n, dtype=np.int64)
    max_pulls = np.empty(n, dtype=np.int64)
    stopped = np.empty(n, dtype=np.bool_)
    exact = np.empty(n, dtype=np.int64) if exact_answer else None
    return values, draw_evals, max_pulls, stopped, exact


def pack_draws(values, draw_evals, max_pulls, stopped, exact, N, D) -> Draws:
    extras = {
        "draw_evals": draw_evals,
        "max_pulls": max_pulls,
        "stopped_early": stopped,
    }
    if exact is not None:
        extras["exact"] = exact
        extras["exact_evals"] = np.array(exact.size * N * D, dtype=np.int64)
    return Draws(values, int(draw_evals.sum()), extras)


def lil_ucb(
    target, n: int, rng: np.random.Generator, delta: float = 0.1, exact_answer: bool = False
) -> Draws:
    """Adapted lil'UCB (000, Sec. 3.2) with the heuristic constants of Jamieson et al. (2014).

    beta = 1/2, a = 1 + 10 / D, epsilon = 0 and delta / 5. lil'UCB has one sub-Gaussian scale
    for all arms; it is C / 2 with C = max_i C_i the largest reward range (000, Sec. 5.1). A
    per-arm scale C_i / 2 breaks the bound: measured on LogNormal rewards with sigma = 1e-5, the
    answers then go wrong about 0.7% of the time at any delta, towards the arms of widest range.
    With epsilon = 0 the bonus at T_i = 1 is log(log 1) = -inf inside the root, read as an
    infinite bound (every arm is pulled once).
    The three modifications:
    1. arm i draws its rewards without replacement (its own Fisher-Yates stream);
    2. once T_i = N, UCB_i is the exact mean mu_i;
    3. stop at the original rule (T_i >= 1 + a * sum_{j != i} T_j, answer argmax_i T_i) or as
       soon as the arm with the highest UCB is exact (answer: that arm).
    Prop. 2: T_i <= N, so a draw costs at most N * D rewards.
    """
    lf, f0 = target.log_factors, target.log_f0
    D, N = lf.shape
    scale = np.full(D, target.reward_range.max() / 2.0)
    d = delta / LIL_DELTA_DIVISOR
    a = 1.0 + LIL_A_NUMERATOR / D
    perm = [list(range(N)) for _ in range(D)]
    swaps = [[0] * N for _ in range(D)]
    values, draw_evals, max_pulls, stopped, exact = draw_outputs(n, exact_answer)

    def bound(i: int, pulls: np.ndarray, sums: np.ndarray) -> float:
        mean = sums[i] / pulls[i]
        if pulls[i] == N:
            return mean
        if pulls[i] == 1:
            return math.inf
        inner = math.log(math.log(pulls[i]) / d)
        return mean + (1.0 + LIL_BETA) * math.sqrt(
            2.0 * scale[i] * scale[i] * max(inner, 0.0) / pulls[i]
        )

    for k in range(n):
        eps = gumbel_offsets(f0, N, rng)
        offset = (f0 + eps) / N
        pulls = np.zeros(D, dtype=np.int64)
        sums = np.zeros(D)

        def pull(i: int, pulls=pulls, sums=sums, offset=offset) -> None:
            t = int(pulls[i])
            (idx,) = draw_indices(perm[i], swaps[i], t, t + 1, rng)
            sums[i] += lf[i, idx] + offset[i]
            pulls[i] += 1

        for i in range(D):
            pull(i)
        ucb = np.array([bound(i, pulls, sums) for i in range(D)])
        total = D
        while True:
            h = int(np.argmax(ucb))
            if pulls[h] == N:
                x = h
                break
            pull(h)
            total += 1
            ucb[h] = bound(h, pulls, sums)
            if pulls[h] >= 1.0 + a * (total - pulls[h]):
                x = int(np.argmax(pulls))
                break
        values[k] = x
        draw_evals[k] = total
        max_pulls[k] = pulls.max()
        stopped[k] = bool(pulls.max() < N)
        if exact is not None:
            exact[k] = exact_argmax(lf, f0, eps)
        for i in range(D):
            undo_draws(perm[i], swaps[i], int(pulls[i]))
    return pack_draws(values, draw_evals, max_pulls, stopped, exact, N, D)


def racing_thresholds(
    bound: str,
    pairwise: bool,
    T: int,
    N: int,
    D: int,
    sig: np.ndarray,
    best: int,
    C: np.ndarray,
    B: float,
    delta_stage: float,
) -> np.ndarray:
    """Elimination thresholds of Alg. 1 for every alive arm at T < N.

    ``sig[j]`` is sigma_hat of arm j (marginal) or sigma_hat_{x, j} (pairwise); ``best`` is the
    position of the leader x. Normal (Eq. 9): G = sigma / sqrt(T) * (1 - (T-1)/(N-1))^(1/2) * B,
    with B = B_Normal(delta / D') already solved. EBS (Eq. 7): G = B_EBS(delta_stage, T, sigma, C)
    with delta_stage = delta / D' / (t* - 1).
    """
    if bound == "normal":
        g = sig / math.sqrt(T) * math.sqrt(1.0 - (T - 1) / (N - 1)) * B
    else:
        g = np.array(
            [ebs_bound(delta_stage, T, float(s), float(c), N) for s, c in zip(sig, C, strict=True)]
        )
    if pairwise:
        return g  # one bound on the gap of each pair (x, i), C = C_x + C_i
    return g[best] + g


def racing(
    target,
    n: int,
    rng: np.random.Generator,
    delta: float,
    m1: int,
    bound: str,
    variance: str,
    exact_answer: bool,
    solve_b: Callable[[float, int, int], float] = b_normal,
) -> Draws:
    """Racing with a finite reward population (000, Alg. 1).

    One shared mini-batch of fresh indices per stage for every surviving arm, on the doubling
    schedule T^(t) = m1 2^(t-1) capped at N (t* = ceil(log2(N / m1)) + 1 stages). After each
    stage the leader x = argmax mu_hat survives and arm i is eliminated when
    mu_hat_x - mu_hat_i > G(delta/D, sigma_x) + G(delta/D, sigma_i) (marginal) or
    > G(delta/(D-1), sigma_{x,i}) (pairwise). At T = N every mean is exact and G = 0 (Alg. 1
    requires it; Eq. 6 alone would not vanish there), so the race always ends by t*.
    ``solve_b(delta', N, m1)`` gives B_Normal; it is a parameter so that a deliberately wrong
    solver (the single-look normal quantile) can serve as a negative control.
    Rewards come from ``target.terms(arms, indices)``: read from a precomputed matrix
    (``discrete``) or computed from the data when read (``discrete-likelihood``).
    """
    f0 = target.log_f0
    D, N = target.D, target.N
    pairwise = variance == "pairwise"
    d_prime = D - 1 if pairwise else D
    schedule = doubling_schedule(N, m1)
    B = solve_b(delta / d_prime, N, m1) if (bound == "normal" and N > m1) else 0.0
    delta_stage = delta / d_prime / max(schedule.size - 1, 1)
    C_all = target.reward_range
    perm = list(range(N))
    swaps = [0] * N
    rewards = np.empty((D, N))
    values, draw_evals, max_pulls, stopped, exact = draw_outputs(n, exact_answer)
    for k in range(n):
        eps = gumbel_offsets(f0, N, rng)
        offset = (f0 + eps) / N
        alive = np.arange(D)
        used = 0
        spent = 0
        for T in schedule:
            T = int(T)
            idx = np.array(draw_indices(perm, swaps, used, T, rng))
            fresh = target.terms(alive, idx) + offset[alive, None]
            rewards[np.ix_(alive, np.arange(used, T))] = fresh
            spent += alive.size * (T - used)
            used = T
            R = rewards[alive, :T]
            mu = np.cumsum(R, axis=1)[:, -1] / T
            best = int(np.argmax(mu))
            if T == N:
                alive = alive[best : best + 1]
                break
            gap = mu[best] - mu
            if pairwise:
                centred = (R[best][None, :] - R) - gap[:, None]
                C = C_all[alive[best]] + C_all[alive]
            else:
                centred = R - mu[:, None]
                C = C_all[alive]
            sig = np.sqrt(lane_sums(centred * centred) / T)
            thresholds = racing_thresholds(bound, pairwise, T, N, D, sig, best, C, B, delta_stage)
            alive = alive[gap <= thresholds]
            if alive.size == 1:
                break
        values[k] = alive[0]
        draw_evals[k] = spent
        max_pulls[k] = used
        stopped[k] = used < N
        if exact is not None:
            exact[k] = exact_argmax(target.terms(range(D), range(N)), f0, eps)
        undo_draws(perm, swaps, used)
    return pack_draws(values, draw_evals, max_pulls, stopped, exact, N, D)


def racing_ebs(
    target,
    n: int,
    rng: np.random.Generator,
    delta: float = 0.1,
    m1: int = 2,
    variance: str = "pairwise",
    exact_answer: bool = False,
) -> Draws:
    """Racing-EBS: Alg. 1 with G_EBS (000, Eq. 6-7), m1 = 2 so sigma_hat exists from stage 1."""
    return racing(target, n, rng, delta, m1, "ebs", variance, exact_answer)


def racing_normal(
    target,
    n: int,
    rng: np.random.Generator,
    delta: float = 0.1,
    m1: int = 50,
    variance: str = "pairwise",
    exact_answer: bool = False,
) -> Draws:
    """Racing-Normal: Alg. 1 with G_Normal (000, Eq. 9) and B_Normal from Cor. 4 / Eq. 8.

    On a ``discrete-ragged`` target (a population size per arm) it runs
    :func:`racing_normal_ragged`, which supports only the marginal variance.
    """
    if target.kind == "discrete-ragged":
        return racing_normal_ragged(target, n, rng, delta, m1, exact_answer)
    return racing(target, n, rng, delta, m1, "normal", variance, exact_answer)


def student_t_term(y: float, theta: float, nu: float, scale: float) -> float:
    """log f_n(theta) of the Student-t location model, up to a constant (see targets.posterior)."""
    z = (y - theta) / scale
    return -0.5 * (nu + 1.0) * math.log1p(z * z / nu)


def race_two_arms(
    rewards: np.ndarray | Callable[[Sequence[int]], np.ndarray],
    N: int,
    order: np.ndarray | Callable[[int, int], Sequence[int]],
    delta: float,
    m1: int,
    bound: str = "normal",
    ebs_range: float = 0.0,
) -> tuple[bool, int]:
    """Alg. 1 with D = 2 arms and the pairwise variance (000, Sec. 4, Eq. 12): does arm 2 win?

    Model-free: ``rewards`` is a (2, N) array l[a, n], or a callback giving the (2, k) rewards of
    the k indices it is handed (only those are ever computed). ``order`` is the order in which
    the N indices are visited: a permutation (an array), or ``draw(start, stop)`` giving places
    start..stop-1 of an order drawn lazily (e.g. :func:`draw_indices`). On the doubling schedule
    T, the race stops once the gap of the arms' means exceeds
    - ``bound="normal"``: G_Normal = sigma / sqrt(T) (1 - (T-1)/(N-1))^(1/2) B_Normal(delta, N,
      m1) (Eq. 8-9; delta / (D - 1) = delta), sigma the sd of l[2, n] - l[1, n];
    - ``bound="ebs"``: G_EBS (Eq. 6) with delta / (t* - 1) per stage and the range
      ``ebs_range`` of l[2, n] - l[1, n];
    at T = N the means are exact. Returns (arm 2 has the larger mean, indices used).
    """
    if bound not in ("normal", "ebs"):
        raise ValueError(f"parameter 'bound' = {bound!r} is invalid; valid: 'normal', 'ebs'")
    schedule = doubling_schedule(N, m1)
    B = b_normal(delta, N, m1) if (bound == "normal" and N > m1) else 0.0
    delta_stage = delta / max(schedule.size - 1, 1)
    R = np.empty((2, N))
    used, best = 0, 0
    for T in schedule:
        T = int(T)
        idx = order(used, T) if callable(order) else order[used:T]
        R[:, used:T] = rewards(idx) if callable(rewards) else rewards[:, idx]
        used = T
        mu = np.cumsum(R[:, :T], axis=1)[:, -1] / T
        best = 1 if mu[1] > mu[0] else 0
        if T == N:
            break
        gap = mu[best] - mu[1 - best]
        centred = (R[best, :T] - R[1 - best, :T]) - gap
        sig = math.sqrt(np.cumsum(centred * centred)[-1] / T)
        if bound == "normal":
            G = sig / math.sqrt(T) * math.sqrt(1.0 - (T - 1) / (N - 1)) * B
        else:
            G = ebs_bound(delta_stage, T, sig, ebs_range, N)
        if gap > G:
            break
    return best == 1, used


def racing_mh(
    target,
    n_steps: int,
    rng: np.random.Generator,
    x0: float | None = None,
    delta: float = 0.05,
    m1: int = 50,
    bound: str = "normal",
    step: float = 2.0,
    exact_answer: bool = False,
) -> Chain:
    """Metropolis-Hastings whose accept test is a two-arm race (000, Sec. 4, Eq. 12).

    Arms: x (stay) and x' (move). f_0(1) = u p(x) q(x'|x), f_0(2) = p(x') q(x|x'),
    f_n = p(y_n | .); the random-walk proposal x' = x + step * sd * xi is symmetric, so q
    cancels and is left out of both arms. Accepting means arm 2 wins :func:`race_two_arms`:
    - ``bound="normal"``: G_Normal with B_Normal(delta, N, m1) (as Korattikara et al. 2014, with
      the doubling schedule and the normal bound in place of the t-test);
    - ``bound="ebs"``: G_EBS with delta / (t* - 1) per stage (as Bardenet et al. 2014), and the
      range C = 2 L |x' - x| from the Lipschitz bound of the log-likelihood terms, which needs no
      pass over the data.
    Each index costs two likelihood terms (one per arm). ``extras["accepted"]`` holds every
    decision; with ``exact_answer`` the exact decision under the same u and proposal is in
    ``extras["exact_accept"]`` (2N terms per step, counted in ``extras["exact_evals"]``).
    """
    y, nu, s = target.y, target.nu, target.scale
    N = y.size
    data = y.tolist()  # Python floats: the per-term loop below is scalar anyway
    spread = step * target.sd
    theta = float(target.mean if x0 is None else x0)
    perm = list(range(N))
    swaps = [0] * N
    values = np.empty(n_steps)
    accepted = np.empty(n_steps, dtype=np.bool_)
    exact = np.empty(n_steps, dtype=np.bool_)
    step_evals = np.empty(n_steps, dtype=np.int64)
    stopped = np.empty(n_steps, dtype=np.bool_)

    def draw(start: int, stop: int) -> list:
        return draw_indices(perm, swaps, start, stop, rng)

    for k in range(n_steps):
        prop = theta + spread * rng.standard_normal()
        u = 1.0 - rng.random()
        arms = (theta, prop)
        c = (math.log(u) + target.log_prior(theta), target.log_prior(prop))

        def rewards(idx: Sequence[int], arms=arms, c=c) -> np.ndarray:
            return np.array(
                [[student_t_term(data[i], arms[a], nu, s) + c[a] / N for i in idx] for a in (0, 1)]
            )

        C = 2.0 * target.lipschitz * abs(prop - theta)
        accepted[k], used = race_two_arms(rewards, N, draw, delta, m1, bound, C)
        step_evals[k] = 2 * used
        stopped[k] = used < N
        if exact_answer:
            totals = np.cumsum(rewards(range(N)), axis=1)[:, -1]
            exact[k] = bool(totals[1] > totals[0])
        undo_draws(perm, swaps, used)
        if accepted[k]:
            theta = prop
        values[k] = theta
    extras = {"accepted": accepted, "step_evals": step_evals, "stopped_early": stopped}
    if exact_answer:
        extras["exact_accept"] = exact
        extras["exact_evals"] = np.array(n_steps * 2 * N, dtype=np.int64)
    return Chain(values, int(step_evals.sum()), extras)


def racing_normal_ragged(
    target, n: int, rng: np.random.Generator, delta: float, m1: int, exact_answer: bool
) -> Draws:
    """Racing-Normal when arm i has its own population size N_i (000, Sec. 5.3).

    Arm i's rewards are l[i, n] = log f_n(i) + (log f_0(i) + eps_i) / N_i, and the race compares
    the totals S_i = N_i mu_i, not the means. Each arm samples without replacement from its own
    population on its own doubling schedule min(m1 2^(t-1), N_i) (the paper sizes mini-batches
    from N_y in Appx. C.3, which is not available; this is our rule). Shared indices do not
    exist across different populations, so only the marginal variance applies:
    eliminate i when S_x - S_i > G_x + G_i with
    G_i = N_i sigma_i / sqrt(T_i) (1 - (T_i - 1)/(N_i - 1))^(1/2) B_Normal(delta / D, N_i, m1),
    which holds each arm's walk inside its bound with probability 1 - delta / D (Eq. 8-9).
    """
    lf, f0, sizes = target.log_factors, target.log_f0, target.sizes
    D = sizes.size
    schedules = [doubling_schedule(int(s), min(m1, int(s))) for s in sizes]
    B = [b_normal(delta / D, int(s), m1) if s > m1 else 0.0 for s in sizes]
    perms = [list(range(int(s))) for s in sizes]
    swaps = [[0] * int(s) for s in sizes]
    rewards = np.empty(lf.shape)
    values, draw_evals, max_pulls, stopped, exact = draw_outputs(n, exact_answer)
    for k in range(n):
        eps = gumbel_offsets(f0, 0, rng)
        offset = (f0 + eps) / sizes
        alive = list(range(D))
        used = [0] * D
        spent = 0
        stage = 0
        while True:
            for i in alive:
                if stage < schedules[i].size:
                    T = int(schedules[i][stage])
                    idx = draw_indices(perms[i], swaps[i], used[i], T, rng)
                    rewards[i, used[i] : T] = lf[i, idx] + offset[i]
                    spent += T - used[i]
                    used[i] = T
            total = np.array(
                [sizes[i] * (np.cumsum(rewards[i, : used[i]])[-1] / used[i]) for i in alive]
            )
            best = int(np.argmax(total))
            if all(used[i] == sizes[i] for i in alive):
                alive = [alive[best]]
                break
            g = np.empty(len(alive))
            for q, i in enumerate(alive):
                T, size = used[i], int(sizes[i])
                if T == size:
                    g[q] = 0.0
                    continue
                centred = rewards[i, :T] - np.cumsum(rewards[i, :T])[-1] / T
                sig = math.sqrt(np.cumsum(centred * centred)[-1] / T)
                g[q] = size * sig / math.sqrt(T) * math.sqrt(1.0 - (T - 1) / (size - 1)) * B[i]
            alive = [i for q, i in enumerate(alive) if total[best] - total[q] <= g[best] + g[q]]
            if len(alive) == 1:
                break
            stage += 1
        values[k] = alive[0]
        draw_evals[k] = spent
        max_pulls[k] = max(used)
        stopped[k] = spent < int(sizes.sum())
        if exact is not None:
            totals = [np.cumsum(lf[i, : sizes[i]])[-1] + f0[i] + eps[i] for i in range(D)]
            exact[k] = int(np.argmax(totals))
        for i in range(D):
            undo_draws(perms[i], swaps[i], used[i])
    out = pack_draws(values, draw_evals, max_pulls, stopped, exact, 1, 1)
    if exact is not None:
        out.extras["exact_evals"] = np.array(n * int(sizes.sum()), dtype=np.int64)
    return out
