"""Planted bugs in minibatched Gibbs samplers (003): subtle negative controls for the factor-graph
gates (chi-square-thinned, moment-marginals, transition-consistency, conditional-pit).

Each sampler is a plausible slip in Poisson-Gibbs, Poisson-MH, MGPMH, MIN-Gibbs, DoubleMIN-Gibbs
or a continuous-variable Gibbs sampler that moves its stationary law (or its one-step kernel) by
a few percent. Samplers that imitate a spec with a finite exact kernel declare that correct
kernel, as the real spec does, so the invariance gate (which reads only the declaration) passes
them and the gates that look at the chain itself must do the work.

Loaded with ``harness verify --plugin tests/plugins/planted_gibbs.py``.
"""

import math

import numpy as np

import harness
from harness.spec import Check, Param
from harness.targets.continuous_factor_graph import factor_value
from implementations.minibatch_gibbs import exact

LAM = Param("lam", 10.0, low=0.0, low_inclusive=False)
LAM2 = Param("lam2", 100.0, low=0.0, low_inclusive=False)


def _local(target, x, i):
    """phi(x with x_i = v) for phi in A[i] (rows) and v in 0..D-1 (columns), and the bounds M."""
    start, stop = int(target.adj_indptr[i]), int(target.adj_indptr[i + 1])
    rows, Ms = [], []
    for slot in range(start, stop):
        f, other = int(target.adj_factors[slot]), int(x[target.adj_other[slot]])
        table = target.tables[f]
        rows.append(table[:, other] if target.adj_pos[slot] == 0 else table[other, :])
        Ms.append(float(target.M[f]))
    return np.array(rows), np.array(Ms)


def _draw(U, rng):
    """v with probability proportional to exp(U[v])."""
    w = np.exp(U - U.max())
    return min(int(np.searchsorted(np.cumsum(w), rng.random() * w.sum(), side="right")), w.size - 1)


def _start(target, x0):
    return np.zeros(target.n_vars, dtype=np.int64) if x0 is None else np.array(x0, np.int64)


def _run(target, n_steps, rng, x0, step):
    """A random-scan chain: ``step(x, i)`` resamples x[i] in place and returns its evaluations."""
    x = _start(target, x0)
    values = np.empty((n_steps, target.n_vars), dtype=np.int64)
    evals = 0
    for t in range(n_steps):
        evals += step(x, int(rng.integers(0, target.n_vars)))
        values[t] = x
    return harness.Chain(values, evals)


# --- Gibbs (003, Alg. 1) ---------------------------------------------------------------------


def gibbs_dedup_ties(target, n_steps, rng, x0=None):
    """Bug: Gibbs exponentiates each distinct energy once, dropping tied values' multiplicity.

    np.unique merges values of x_i with equal energy "to save exp calls"; a distinct energy is
    drawn by its weight alone, then one of its values uniformly, so a tied pair weighs as one
    value: 2.4% in TV on fg-ties-n4-D3, where 11% of the conditionals have ties.

    Caught by: transition-consistency"""

    def step(x, i):
        phis, _ = _local(target, x, i)
        energies, which = np.unique(phis.sum(axis=0), return_inverse=True)
        k = _draw(energies, rng)
        x[i] = rng.choice(np.flatnonzero(which == k))
        return phis.size

    return _run(target, n_steps, rng, x0, step)


# --- Poisson-Gibbs (003, Alg. 2) ---------------------------------------------------------------


def _poisson_gibbs(target, n_steps, rng, x0, lam, variant):
    L = target.L

    def step(x, i):
        phis, M = _local(target, x, i)
        bound = float(target.m_sum[i]) if variant == "local-L" else L
        s = rng.poisson(lam * M / bound + phis[:, x[i]])
        if variant == "no-M":
            z = L * phis / lam
        elif variant == "psi":
            z = target.psi * phis / (lam * M[:, None])
        else:
            z = L * phis / (lam * M[:, None])
        x[i] = _draw(s @ np.log1p(z), rng)
        return int(s.sum()) + phis.size

    return _run(target, n_steps, rng, x0, step)


def pg_energy_no_m(target, n_steps, rng, x0=None, lam=10.0):
    """Bug: Poisson-Gibbs energy log(1 + L phi / lam) lacks M_phi (3.8% in TV).

    M_phi is left out of the denominator; 3.8% in TV on fg-random-n4-D2.

    Caught by: moment-marginals, transition-consistency"""
    return _poisson_gibbs(target, n_steps, rng, x0, lam, "no-M")


def pg_local_l_rate(target, n_steps, rng, x0=None, lam=10.0):
    """Bug: Poisson rate lam M / L_i with the local L_i for the global L (7% in TV).

    L_i = sum_{A[i]} M_phi, while the energy uses the global L; 7% in TV on fg-random-n4-D2.

    Caught by: transition-consistency, moment-marginals, chi-square-thinned"""
    return _poisson_gibbs(target, n_steps, rng, x0, lam, "local-L")


def pg_psi_for_l(target, n_steps, rng, x0=None, lam=20.0):
    """Bug: the energy uses MIN-Gibbs's total Psi where the local L belongs (4.4% in TV).

    log(1 + Psi phi / (lam M_phi)), Psi / L = 1.36: 4.4% in TV on fg-random-n4-D2.

    Caught by: transition-consistency, moment-marginals, chi-square-thinned"""
    return _poisson_gibbs(target, n_steps, rng, x0, lam, "psi")


# --- Poisson-MH and MGPMH (003 supplement, Table 1) -------------------------------------------


def pmh_counts_at_proposal(target, n_steps, rng, x0=None, lam=3.0):
    """Bug: Poisson-MH draws its counts at the proposed state y (3% in TV).

    s_phi ~ Poisson(lam M / L + phi(y)) instead of phi(x): 3% in TV on fg-random-n3-D3, one-step
    rows off by w = 0.09.

    Caught by: transition-consistency"""
    L = target.L

    def step(x, i):
        phis, M = _local(target, x, i)
        cur = int(x[i])
        v = int(rng.integers(0, target.D - 1))
        v += v >= cur
        s = rng.poisson(lam * M / L + phis[:, v])
        U = s @ np.log1p(L * phis / (lam * M[:, None]))
        if rng.random() < math.exp(min(0.0, U[v] - U[cur])):
            x[i] = v
        return int(s.sum()) + 2 * phis.shape[0]

    return _run(target, n_steps, rng, x0, step)


def mgpmh_estimator_mismatch(target, n_steps, rng, x0=None, lam=2.0):
    """Bug: MGPMH proposes with log1p energies but corrects with linear ones (4.7%).

    Proposal softmax(sum s log(1 + L phi / (lam M))), correction with the linear estimate
    sum s L phi / (lam M): 4.7% in TV on fg-random-n4-D2 at lam = 2.

    Caught by: transition-consistency, moment-marginals, chi-square-thinned"""
    L = target.L

    def step(x, i):
        phis, M = _local(target, x, i)
        cur = int(x[i])
        s = rng.poisson(lam * M / L)
        z = L * phis / (lam * M[:, None])
        v = _draw(s @ np.log1p(z), rng)
        lin = s @ z  # the proposal's log weights, as the correction reads them (linear)
        U = phis.sum(axis=0)
        if rng.random() < math.exp(min(0.0, U[v] - U[cur] + lin[cur] - lin[v])):
            x[i] = v
        return int(s.sum()) + target.D * phis.shape[0]

    return _run(target, n_steps, rng, x0, step)


# --- MIN-Gibbs and DoubleMIN-Gibbs (De Sa et al. 2018, 003 Table 1) ------------------------------


def _global_estimate(target, x, i, u, lam, rng):
    """eps = sum_phi s_phi log(1 + Psi phi(y) / (lam M_phi)), s_phi ~ Poisson(lam M_phi / Psi),
    at y = x with y_i = u: E exp(eps) = exp(U(y))."""
    y = x.copy()
    y[i] = u
    s = rng.poisson(lam * target.M / target.psi)
    phi = target.tables[np.arange(target.n_factors), y[target.scopes[:, 0]], y[target.scopes[:, 1]]]
    return float(s @ np.log1p(target.psi * phi / (lam * target.M))), int(s.sum())


def min_gibbs_fresh_current(target, n_steps, rng, x0=None, lam=5.0):
    """Bug: MIN-Gibbs re-estimates the current value's energy (5% in TV).

    A fresh estimate for x_i instead of the one stored with the state, so it samples
    E softmax(eps), not pi: 5% in TV on fg-random-n4-D2 at lam = 5.

    Caught by: chi-square-thinned, moment-marginals"""

    def step(x, i):
        est = [_global_estimate(target, x, i, u, lam, rng) for u in range(target.D)]
        x[i] = _draw(np.array([e for e, _ in est]), rng)
        return sum(b for _, b in est)

    return _run(target, n_steps, rng, x0, step)


def double_min_refresh(target, n_steps, rng, x0=None, lam=10.0, lam2=1.5):
    """Bug: DoubleMIN-Gibbs re-estimates U(x) at every step (4.5% in TV).

    Monte Carlo within Metropolis, not pseudo-marginal: about 4.5% in TV on fg-random-n4-D2 at
    lam2 = 1.5.

    Caught by: chi-square-thinned, moment-marginals"""
    L = target.L

    def step(x, i):
        phis, M = _local(target, x, i)
        cur = int(x[i])
        s = rng.poisson(lam * M / L)
        rho = s @ (L * phis / (lam * M[:, None]))
        v = _draw(rho, rng)
        eps_y, b1 = _global_estimate(target, x, i, v, lam2, rng)
        eps_x, b2 = _global_estimate(target, x, i, cur, lam2, rng)
        if rng.random() < math.exp(min(0.0, eps_y - eps_x + rho[cur] - rho[v])):
            x[i] = v
        return target.D * int(np.count_nonzero(s)) + b1 + b2

    return _run(target, n_steps, rng, x0, step)


# --- Continuous factor graphs (003 Sec. 3, 4.2) ------------------------------------------------


def _energy(target, x, i, v):
    """sum_{phi in A[i]} phi(x with x_i = v)."""
    acc = 0.0
    for slot in range(int(target.adj_indptr[i]), int(target.adj_indptr[i + 1])):
        f = int(target.adj_factors[slot])
        o = float(x[target.adj_other[slot]])
        c0, c1, c2, c3 = (float(c) for c in target.coefs[f])
        t = int(target.types[f])
        if target.adj_pos[slot] == 0:
            acc += factor_value(t, c0, c1, c2, c3, v, o)
        else:
            acc += factor_value(t, c0, c1, c2, c3, o, v)
    return acc


def _continuous_run(target, n_steps, rng, x0, step):
    x = np.full(target.n_vars, 0.5 * (target.a + target.b)) if x0 is None else np.array(x0, float)
    values = np.empty((n_steps, target.n_vars))
    evals = 0
    for t in range(n_steps):
        evals += step(x, int(rng.integers(0, target.n_vars)))
        values[t] = x
    return harness.Chain(values, evals)


def gibbs_rejection_envelope_off_by_one(target, n_steps, rng, x0=None):
    """Bug: the rejection envelope sums M_phi over A[i] minus its last factor (CDFs 1.4% off).

    Slots start .. stop - 2, so where the energy tops the envelope the conditional is clipped
    flat: conditional CDFs off by about 1.4% on continuous-spin-4x4 (15 factors per variable;
    on cfg-tiny-n3, 2 per variable, the same slip is 12% in TV). It declares exact Gibbs steps,
    as the correct rejection sampler does.

    Caught by: gibbs-step-pit"""
    a, b = target.a, target.b

    def step(x, i):
        start, stop = int(target.adj_indptr[i]), int(target.adj_indptr[i + 1])
        top = sum(float(target.M[target.adj_factors[slot]]) for slot in range(start, stop - 1))
        k = 0
        while True:
            v = a + (b - a) * rng.random()
            k += 1
            if rng.random() < math.exp(min(0.0, _energy(target, x, i, v) - top)):
                x[i] = v
                return k

    return _continuous_run(target, n_steps, rng, x0, step)


def gibbs_its_no_mh(target, n_steps, rng, x0=None, m=2):
    """Bug: Gibbs-ITS accepts every draw from its interpolant (conditionals 2% off).

    003 Alg. 3 without its MH correction: x_i follows the degree-m Chebyshev interpolant of its
    conditional, whose CDF is off by about 2% at m = 2.

    Caught by: conditional-pit"""
    a, b = target.a, target.b
    mid, half = 0.5 * (a + b), 0.5 * (b - a)
    nodes = np.cos(np.pi * (2 * np.arange(m + 1) + 1) / (2 * (m + 1)))
    fine = np.linspace(-1.0, 1.0, 2049)

    def step(x, i):
        E = np.array([_energy(target, x, i, mid + half * t) for t in nodes])
        c = np.polynomial.chebyshev.chebfit(nodes, np.exp(E - E.max()), m)
        g = np.maximum(np.polynomial.chebyshev.chebval(fine, c), 0.0)
        F = np.concatenate([[0.0], np.cumsum(0.5 * (g[1:] + g[:-1]))])
        t = np.interp(rng.random() * F[-1], F, fine)
        x[i] = min(max(mid + half * t, a), b)
        return nodes.size

    return _continuous_run(target, n_steps, rng, x0, step)


# --- Registration ------------------------------------------------------------------------------


def _register(name, fn, kinds, problems, params=(), kernel=None, gibbs=False, **check_params):
    harness.register(
        harness.AlgorithmSpec(
            name=name,
            family="planted:minibatch_gibbs",
            paper="planted bug",
            guarantee="mcmc",
            entry="run_chain",
            target_kinds=kinds,
            implementations={"reference": fn},
            params=params,
            splittable=False,
            summary=fn.__doc__ or "",
            checks=(Check(check_params, problems=problems),),
            exact_kernel=kernel,
            conditional_steps=gibbs,
        )
    )


def _truncated(build):
    def kernel(target, params):
        k = build(target, params["lam"])
        return k.P, k.truncation_bound

    return kernel


FG = ("factor-graph",)
CFG = ("factor-graph-continuous",)

_register(
    "planted-gibbs-dedup-ties",
    gibbs_dedup_ties,
    FG,
    ("fg-ties-n4-D3",),
    kernel=lambda target, params: (exact.gibbs_matrix(target), 0.0),
)
_register(
    "planted-pg-energy-no-m",
    pg_energy_no_m,
    FG,
    ("fg-random-n4-D2",),
    (LAM,),
    _truncated(exact.poisson_gibbs_matrix),
)
_register(
    "planted-pg-local-l-rate",
    pg_local_l_rate,
    FG,
    ("fg-random-n4-D2",),
    (LAM,),
    _truncated(exact.poisson_gibbs_matrix),
)
_register(
    "planted-pg-psi-for-l",
    pg_psi_for_l,
    FG,
    ("fg-random-n4-D2",),
    (Param("lam", 20.0, low=0.0, low_inclusive=False),),
    _truncated(exact.poisson_gibbs_matrix),
)
_register(
    "planted-pmh-counts-at-proposal",
    pmh_counts_at_proposal,
    FG,
    ("fg-random-n3-D3",),
    (Param("lam", 3.0, low=0.0, low_inclusive=False),),
    _truncated(exact.poisson_mh_matrix),
)
_register(
    "planted-mgpmh-estimator-mismatch",
    mgpmh_estimator_mismatch,
    FG,
    ("fg-random-n4-D2",),
    (Param("lam", 2.0, low=0.0, low_inclusive=False),),
    _truncated(exact.mgpmh_matrix),
)
_register(
    "planted-min-gibbs-fresh-current",
    min_gibbs_fresh_current,
    FG,
    ("fg-random-n4-D2",),
    (Param("lam", 5.0, low=0.0, low_inclusive=False),),
)
_register(
    "planted-double-min-refresh",
    double_min_refresh,
    FG,
    ("fg-random-n4-D2",),
    (LAM, Param("lam2", 1.5, low=0.0, low_inclusive=False)),
)
_register(
    "planted-gibbs-rejection-envelope-off-by-one",
    gibbs_rejection_envelope_off_by_one,
    CFG,
    ("continuous-spin-4x4",),
    gibbs=True,
)
_register(
    "planted-gibbs-its-no-mh",
    gibbs_its_no_mh,
    CFG,
    ("continuous-spin-4x4",),
    (Param("m", 2, int, low=1),),
)
