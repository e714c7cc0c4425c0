"""Planted bugs for the moment, pair-independence and transition-consistency gates
(harness/gates/moments.py, independence.py, transitions.py).

Each is a bug of a few percent that every marginal or invariance check passes:

- random-walk MH chains on the Student-t posterior (the exact MH that racing MH approximates)
  whose stationary law is slightly off (moment gates);
- independent-draw Gumbel samplers with the right marginal law whose draws share randomness
  (pair-independence);
- Gibbs samplers that declare plain Gibbs's exact kernel while their code steps differently
  (transition consistency; the invariance gate, which reads the declaration, passes them).

Loaded with ``harness verify --plugin tests/plugins/planted_subtle.py``.
"""

import numpy as np

import harness
from harness.spec import Check, Param
from implementations.minibatch_gibbs.exact import _local_energies, gibbs_matrix

# --- Posterior chains (moment gates) ---------------------------------------------------------


def rw_mh_chains(target, n_chains, n_steps, rng, log_density, start, drift=0.0, step=2.0):
    """``n_chains`` random-walk MH chains in lockstep, shape (n_chains, n_steps): proposal
    x + step * sd * (xi + drift), accepted with exp(log_density(x') - log_density(x)).

    ``drift != 0`` makes the proposal asymmetric without a Hastings correction (a bug)."""
    theta = np.array(start, dtype=np.float64).reshape(n_chains)
    current = log_density(theta)
    out = np.empty((n_chains, n_steps))
    spread = step * target.sd
    for k in range(n_steps):
        prop = theta + spread * (rng.standard_normal(n_chains) + drift)
        proposed = log_density(prop)
        accept = np.log(1.0 - rng.random(n_chains)) < proposed - current
        theta = np.where(accept, prop, theta)
        current = np.where(accept, proposed, current)
        out[:, k] = theta
    return out


def tempered_log_density(target, temperature):
    """log pi / T: MH with it targets pi^(1/T) (variance about T times pi's)."""
    return lambda theta: target.log_posterior(theta) / temperature


def nu_typo_log_density(target):
    """The Student-t log-likelihood with exponent -nu/2 where -(nu + 1)/2 belongs."""

    def log_density(theta):
        z = (target.y[None, :] - np.asarray(theta)[:, None]) / target.scale
        ll = -0.5 * target.nu * np.log1p(z * z / target.nu).sum(axis=1)
        zp = (np.asarray(theta) - target.prior_mean) / target.prior_sd
        return ll - 0.5 * zp * zp

    return log_density


def _posterior_chain(target, n_steps, rng, x0, log_density, drift=0.0, chains=1):
    """One chain, or ``chains`` lockstep chains of n_steps / chains steps laid end to end (one
    trace, as fast as a vectorised sampler; each segment starts at x0, or the mean)."""
    if n_steps % chains:
        raise ValueError(f"n_steps = {n_steps} is not a multiple of chains = {chains}")
    start = np.full(chains, target.mean if x0 is None else float(x0))
    values = rw_mh_chains(target, chains, n_steps // chains, rng, log_density, start, drift)
    return harness.Chain(values.ravel(), 2 * target.N * n_steps)


def mh_tempered(target, n_steps, rng, x0=None, temperature=1.02, chains=1):
    """Bug: MH targets pi^(1/T), T = 1.02 (the posterior variance 2% too large).

    A z-test of the variance needs about 24 times a 20000-step chain to see it; verified on
    studentt-posterior-N50, which runs 1e6 steps at the default level for this reason.

    Caught by: moment-variance"""
    log_density = tempered_log_density(target, temperature)
    return _posterior_chain(target, n_steps, rng, x0, log_density, chains=chains)


def mh_nu_typo(target, n_steps, rng, x0=None):
    """Bug: log-likelihood exponent -nu/2 for -(nu + 1)/2 (variance 25% too large).

    The chain samples about pi^(1/1.25).

    Caught by: moment-variance, ks-thinned"""
    return _posterior_chain(target, n_steps, rng, x0, nu_typo_log_density(target))


def mh_small_drift(target, n_steps, rng, x0=None):
    """Bug: proposal x + s (xi + 0.1) with no Hastings ratio (mean off by 0.1 sd).

    Caught by: moment-mean, ks-thinned"""
    return _posterior_chain(target, n_steps, rng, x0, target.log_posterior, drift=0.1)


# --- Factor-graph chains declaring plain Gibbs (transition consistency) ----------------------


def _conditional(target, x, i, variant):
    E = _local_energies(target, x, i)
    if variant == "drop-last-factor":
        E = E[:-1]
    U = E.sum(axis=0)
    if variant == "tempered":
        U = 1.5 * U
    w = np.exp(U - U.max())
    return w / w.sum()


def _draw(w, u):
    return min(int(np.searchsorted(np.cumsum(w), u * w.sum(), side="right")), w.size - 1)


def _gibbs_variant(target, n_steps, rng, x0, variant):
    x = np.zeros(target.n_vars, dtype=np.int64) if x0 is None else np.array(x0, dtype=np.int64)
    values = np.empty((n_steps, target.n_vars), dtype=np.int64)
    cache = [None] * target.n_vars
    for t in range(n_steps):
        i = int(rng.integers(0, target.n_vars))
        if variant == "stale-cache":
            # The conditional cached at i's previous update, blind to its neighbours' moves since.
            if cache[i] is None:
                cache[i] = _conditional(target, x, i, "plain")
            x[i] = _draw(cache[i], rng.random())
            cache[i] = _conditional(target, x, i, "plain")
        elif variant == "metropolized":
            # Metropolised Gibbs (Liu 1996): propose from the conditional without the current
            # value, accept with (1 - w[cur]) / (1 - w[new]). Invariant, but not Gibbs's kernel.
            w = _conditional(target, x, i, "plain")
            cur = int(x[i])
            rest = w.copy()
            rest[cur] = 0.0
            new = _draw(rest, rng.random())
            if rng.random() < min(1.0, (1.0 - w[cur]) / (1.0 - w[new])):
                x[i] = new
        else:
            x[i] = _draw(_conditional(target, x, i, variant), rng.random())
        values[t] = x
    return harness.Chain(values, n_steps * target.D)


def gibbs_tempered(target, n_steps, rng, x0=None):
    """Bug: conditional exp(1.5 U) for exp(U) (law pi^1.5: 7% in TV on fg-random-n3-D3).

    Caught by: transition-consistency, moment-marginals, chi-square-thinned"""
    return _gibbs_variant(target, n_steps, rng, x0, "tempered")


def gibbs_stale_cache(target, n_steps, rng, x0=None):
    """Bug: x_i drawn from its conditional cached at its last update (3.9% in TV).

    The cached conditional is blind to its neighbours' moves since.

    Caught by: transition-consistency"""
    return _gibbs_variant(target, n_steps, rng, x0, "stale-cache")


def gibbs_drop_last_factor(target, n_steps, rng, x0=None):
    """Bug: the conditional of x_i misses the last factor of A[i] (4.6% in TV).

    An off-by-one in the loop over A[i]; 4.6% in TV on fg-random-n3-D3.

    Caught by: transition-consistency, moment-marginals"""
    return _gibbs_variant(target, n_steps, rng, x0, "drop-last-factor")


def gibbs_metropolized(target, n_steps, rng, x0=None):
    """Bug: the code is Metropolised Gibbs, the spec declares plain Gibbs (rows off, law exact).

    Liu (1996): pi-invariant, so the law is exact; the one-step rows are not the declared ones.

    Caught by: transition-consistency"""
    return _gibbs_variant(target, n_steps, rng, x0, "metropolized")


def _declares_gibbs(target, params):
    return gibbs_matrix(target), 0.0


# --- Independent draws that share randomness (pair independence) -----------------------------


def _logp(target):
    return np.cumsum(target.log_factors, axis=1)[:, -1] + target.log_f0


def gumbel_max_repeat(target, n, rng):
    """Bug: with probability 0.05 a draw repeats the previous one (a stale buffer).

    Each marginal is exact; consecutive draws are equal 5% more often than they should be.

    Caught by: pair-independence"""
    D, N = target.log_factors.shape
    x = np.argmax(_logp(target) - np.log(rng.standard_exponential((n, D))), axis=1)
    repeat = rng.random(n) < 0.05
    for t in np.flatnonzero(repeat[1:]) + 1:
        x[t] = x[t - 1]
    return harness.Draws(x, n * N * D)


def gumbel_max_shared_noise(target, n, rng):
    """Bug: each pair's second draw reuses the first's noise at 10% of the states.

    Each marginal is exact; the pairs are dependent.

    Caught by: pair-independence"""
    D, N = target.log_factors.shape
    g = -np.log(rng.standard_exponential((n, D)))
    second, first = g[1::2], g[0::2][: n // 2]
    g[1::2] = np.where(rng.random(second.shape) < 0.1, first, second)
    return harness.Draws(np.argmax(_logp(target) + g, axis=1), n * N * D)


def trunc_gumbel_antithetic(target, n, rng):
    """Bug: with probability 0.05 a draw uses 1 - u of the previous draw's u.

    The marginal is exact; 5% of consecutive pairs are antithetic.

    Caught by: pair-independence"""
    u = 1.0 - rng.random(n)
    flip = rng.random(n) < 0.05
    for t in np.flatnonzero(flip[1:]) + 1:
        u[t] = 1.0 - u[t - 1]
    e = -np.log(u)
    return harness.Draws(target.phi - np.log(e + np.exp(target.phi - target.b)), 0)


def _register(name, fn, family, kinds, problems, guarantee="exact", entry="draw", **extra):
    harness.register(
        harness.AlgorithmSpec(
            name=name,
            family=f"planted:{family}",
            paper="planted bug",
            guarantee=guarantee,
            entry=entry,
            target_kinds=kinds,
            implementations={"reference": fn},
            splittable=False,
            summary=fn.__doc__ or "",
            checks=(Check(problems=problems),),
            **extra,
        )
    )


for _name, _fn in (
    ("planted-mh-tempered-1.02", mh_tempered),
    ("planted-mh-nu-typo", mh_nu_typo),
    ("planted-mh-small-drift", mh_small_drift),
):
    _register(
        _name,
        _fn,
        "racing",
        ("posterior-1d",),
        ("studentt-posterior-N50",) if _fn is mh_tempered else ("studentt-posterior-N500",),
        "mcmc",
        "run_chain",
        params=(
            Param("temperature", 1.02, low=0.0, low_inclusive=False),
            Param("chains", 1, int, low=1),
        )
        if _fn is mh_tempered
        else (),
    )

for _name, _fn in (
    ("planted-gibbs-tempered-1.5", gibbs_tempered),
    ("planted-gibbs-stale-cache", gibbs_stale_cache),
    ("planted-gibbs-drop-last-factor", gibbs_drop_last_factor),
    ("planted-gibbs-metropolized", gibbs_metropolized),
):
    _register(
        _name,
        _fn,
        "minibatch_gibbs",
        ("factor-graph",),
        ("fg-random-n3-D3",),
        "mcmc",
        "run_chain",
        exact_kernel=_declares_gibbs,
    )

_register(
    "planted-gumbel-max-repeat",
    gumbel_max_repeat,
    "gumbel",
    ("discrete",),
    ("synthetic-normal-D10-N200",),
)
_register(
    "planted-gumbel-max-shared-noise",
    gumbel_max_shared_noise,
    "gumbel",
    ("discrete",),
    ("synthetic-normal-D10-N200",),
)
_register(
    "planted-trunc-gumbel-antithetic",
    trunc_gumbel_antithetic,
    "gumbel",
    ("continuous-1d",),
    ("truncgumbel-phi0-b1",),
)
