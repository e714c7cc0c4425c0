"""Planted slips in the older families that their marginal gates pass (racing 000, minibatch
Gibbs 003): the negative controls of the delta grid, of the independence gates of approximate
samplers and of the per-step gates of declared Gibbs updates.

- a Racing-Normal that takes the leader one look early: errors raised about 100-fold on a
  problem where the correct race errs at 0.03% (delta = 0.05), still under the default delta, so
  only the grid's small deltas (000, Prop. 1 must hold for every delta) can fault it;
- a Racing-Normal whose draws come in pairs that share one index order: each draw has the right
  law, and the error rate is the correct one, but the errors of a pair come together;
- random-scan Gibbs whose conditionals sit at temperature 1.02 (TV about 0.7% from the exact
  conditionals): the enumerated-joint gates resolve it only with millions of steps.

The races are vectorised over draws (the law of each draw is that of 000, Alg. 1 with the
pairwise variance), so a verification stays fast.

Loaded with ``harness verify --plugin tests/plugins/planted_slips.py``.
"""

import math

import numpy as np

import harness
from harness.spec import Check, Param
from harness.targets.factor_graph import random_factor_graph
from implementations.minibatch_gibbs.exact import gibbs_matrix
from implementations.racing.bounds import b_normal, doubling_schedule

# --- Racing-Normal, vectorised over draws (000, Alg. 1, Eq. 8-9) ------------------------------

#: Draws per chunk (a chunk holds each draw's index order, D x N floats of rewards at most).
CHUNK = 2500


def _orders(rng, rows, N):
    """One uniform order of the N indices per row, drawn lazily as the race reads it:
    ``take(stop, r)`` returns places 0..stop-1 of rows ``r`` (a Fisher-Yates shuffle run to
    stop). Rows left out of a call are never read again (their draws have stopped)."""
    perm = np.tile(np.arange(N, dtype=np.int32), (rows, 1))
    done = [0]

    def take(stop, r):
        for j in range(done[0], stop):
            pick = j + np.minimum((rng.random(r.size) * (N - j)).astype(np.int64), N - j - 1)
            perm[r, j], perm[r, pick] = perm[r, pick], perm[r, j]
        done[0] = max(done[0], stop)
        return perm[r, :stop]

    return take


def _race(target, n, rng, delta, m1=50, early_final=False, paired_orders=False):
    """Racing-Normal with pairwise variances: eps ~ Gumbel, then on the doubling schedule the
    leader x survives and arm i is eliminated when mu_x - mu_i > G_Normal(sigma_{x,i}) at
    delta / (D - 1), until one arm is left or T = N. ``early_final``: the slip that takes the
    leader at the look where 2 T >= N, as if the next look's size were this one's.
    ``paired_orders``: the slip that gives draws 2j and 2j + 1 one index order."""
    lf, f0 = target.log_factors, target.log_f0
    D, N = lf.shape
    schedule = doubling_schedule(N, m1)
    B = b_normal(delta / (D - 1), N, m1)
    totals = np.cumsum(lf, axis=1)[:, -1] + f0
    # Per-arm constants leave sigma_{x,i} unchanged; removing them keeps sums of squares exact.
    centred = lf - lf.mean(axis=1, keepdims=True)
    out = {k: np.empty(n, np.int64) for k in ("values", "exact", "draw_evals", "max_pulls")}
    stopped = np.empty(n, dtype=bool)
    for lo in range(0, n, CHUNK):
        k = min(CHUNK, n - lo)
        eps = -np.log(rng.standard_exponential((k, D)))
        offset = (f0 + eps) / N
        owner = np.arange(k) // 2 if paired_orders else np.arange(k)
        take = _orders(rng, int(owner[-1]) + 1, N)
        s1, s2 = np.zeros((k, D)), np.zeros((k, D, D))
        alive, active = np.ones((k, D), dtype=bool), np.ones(k, dtype=bool)
        answer, spent, used = np.zeros(k, np.int64), np.zeros(k, np.int64), np.zeros(k, np.int64)
        prev = 0
        for T in schedule.tolist():
            idx = np.flatnonzero(active)
            mine, where = np.unique(owner[idx], return_inverse=True)
            block = centred[:, take(T, mine)[where, prev:]].transpose(1, 0, 2)
            s1[idx] += block.sum(axis=2)
            s2[idx] += block @ block.transpose(0, 2, 1)
            spent[idx] += alive[idx].sum(axis=1) * (T - prev)
            used[idx] = T
            prev = T
            mu = s1[idx] / T + lf.mean(axis=1) + offset[idx]
            best = np.argmax(np.where(alive[idx], mu, -np.inf), axis=1)
            if T == N or (early_final and 2 * T >= N):
                answer[idx] = best
                break
            rows = np.arange(idx.size)
            gap = mu[rows, best][:, None] - mu
            c = s1[idx] / T
            sq = s2[idx] / T
            cx, sqxx = c[rows, best], sq[rows, best, best]
            var = sqxx[:, None] - 2 * sq[rows, best, :] + np.diagonal(sq, axis1=1, axis2=2)
            var -= (cx[:, None] - c) ** 2
            G = np.sqrt(np.maximum(var, 0.0) / T) * math.sqrt(1.0 - (T - 1) / (N - 1)) * B
            alive[idx] &= gap <= G
            done = alive[idx].sum(axis=1) == 1
            answer[idx[done]] = np.argmax(alive[idx[done]], axis=1)
            active[idx[done]] = False
            if not active.any():
                break
        sl = slice(lo, lo + k)
        out["values"][sl], out["exact"][sl] = answer, np.argmax(totals + eps, axis=1)
        out["draw_evals"][sl], out["max_pulls"][sl], stopped[sl] = spent, used, used < N
    values = out.pop("values")
    extras = {**out, "stopped_early": stopped}
    return harness.Draws(values, int(extras["draw_evals"].sum()), extras)


def racing_normal_early_final(target, n, rng, delta=0.05, exact_answer=False):
    """Bug: Racing-Normal takes the leader one look early (2 T >= N read as the final look).

    The final-look test compares the next look's size with N, so the race returns the leader
    of the second-to-last look as if its means were exact. On cv-studentt-D10-N4000 it errs in
    about 2.9% of draws at every delta (correct: 0.001% at delta = 0.001, 0.03% at 0.05), under
    the default delta 0.05: only the grid's 0.001 and 0.01 can fault it there.

    Caught by: error-rate"""
    return _race(target, n, rng, delta, early_final=True)


def racing_normal_paired_orders(target, n, rng, delta=0.05, exact_answer=False):
    """Bug: Racing-Normal's draws come in pairs that share one index order (fresh noise each).

    Each draw has the law of a correct race, and so has the error rate (3% at delta = 0.05 on
    race-normal-D2-N1000-s0.3), but the two draws of a pair read the same mini-batches, so an
    unlucky order makes both err: after an error the next draw errs 44% of the time (about 85%
    within a pair), not 3%.

    Caught by: error-independence"""
    return _race(target, n, rng, delta, paired_orders=True)


# --- Random-scan Gibbs (003, Alg. 1) -----------------------------------------------------------

#: The temperature of the slip: log-weights divided by 1.02 (conditionals about 0.7% off in TV).
WARM = 1.02
#: The Gibbs slip's problem: three variables of ten values, every pair a factor of up to 6 nats,
#: so each conditional spreads over several values and every step carries information about
#: its temperature; 1000 states, so the enumerated-joint gates run beside the per-step ones.
GRAPH = "slips-fg-n3-D10"


def _slot_tables(target):
    """T[s, u, v]: the factor of adjacency slot s with x(owner) = v and x(other) = u."""
    tab = target.tables[target.adj_factors]
    return np.where((target.adj_pos == 0)[:, None, None], tab.transpose(0, 2, 1), tab)


def gibbs_warm(target, n_steps, rng, x0=None):
    """Bug: random-scan Gibbs draws x_i from exp(U_i(v) / 1.02), a temperature left in.

    Every conditional is the exact one at temperature 1.02: about 0.7% in TV. The chain is
    then exact for pi^(1/1.02), a law the chi-square and marginal gates do not tell from pi in
    2e5 steps; the per-step energy score sees every step move the same way.

    Caught by: gibbs-step-energy, gibbs-step-pit"""
    T = _slot_tables(target)
    ip, other = target.adj_indptr, target.adj_other
    x = np.zeros(target.n_vars, dtype=np.int64) if x0 is None else np.array(x0, np.int64)
    values = np.empty((n_steps, target.n_vars), dtype=np.int64)
    evals = 0
    for t in range(n_steps):
        i = int(rng.integers(0, target.n_vars))
        slots = np.arange(ip[i], ip[i + 1])
        U = T[slots, x[other[slots]], :].sum(axis=0) / WARM
        w = np.cumsum(np.exp(U - U.max()))
        x[i] = min(int(np.searchsorted(w, rng.random() * w[-1], side="right")), target.D - 1)
        values[t] = x
        evals += target.D * slots.size
    return harness.Chain(values, evals)


# --- Registration ------------------------------------------------------------------------------

DELTA = Param("delta", 0.05, low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
EXACT = Param("exact_answer", False, kind=bool)
#: The grid of implementations/racing on the early-final slip's problem.
GRID = (1e-3, 1e-2, 0.05, 0.1)

EARLY, PAIRED = "cv-studentt-D10-N4000", "race-normal-D2-N1000-s0.3"
for _name, _fn, _problem, _deltas in (
    ("planted-racing-normal-early-final", racing_normal_early_final, EARLY, GRID),
    ("planted-racing-normal-paired-orders", racing_normal_paired_orders, PAIRED, (0.05,)),
):
    harness.register(
        harness.AlgorithmSpec(
            name=_name,
            family="planted:racing",
            paper="planted bug",
            guarantee="approximate",
            target_kinds=("discrete",),
            implementations={"reference": _fn},
            params=(DELTA, EXACT),
            delta_param="delta",
            splittable=False,
            summary=_fn.__doc__ or "",
            checks=tuple(
                Check({"delta": d, "exact_answer": True}, problems=(_problem,)) for d in _deltas
            ),
        )
    )

harness.register_problem(
    GRAPH,
    "factor-graph",
    lambda: random_factor_graph(3, 10, np.random.default_rng(5), edge_prob=1.0, max_M=6.0),
    draws={"quick": 200_000, "full": 800_000},
)
harness.register(
    harness.AlgorithmSpec(
        name="planted-gibbs-warm",
        family="planted:minibatch_gibbs",
        paper="planted bug",
        guarantee="mcmc",
        entry="run_chain",
        target_kinds=("factor-graph",),
        implementations={"reference": gibbs_warm},
        splittable=False,
        summary=gibbs_warm.__doc__ or "",
        checks=(Check(problems=(GRAPH,)),),
        # As the real spec declares: plain Gibbs's exact kernel and exact conditional steps.
        exact_kernel=lambda target, params: (gibbs_matrix(target), 0.0),
        conditional_steps=True,
    )
)
