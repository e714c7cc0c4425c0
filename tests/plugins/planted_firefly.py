"""Planted bugs in Firefly Monte Carlo and its baselines (002): mistakes a careful implementer
makes. Each must fail `harness verify`; the gate-quality measurement counts them with the other
families'. Each swaps one step of the reference for a broken copy."""

import math

import numpy as np

import harness
from harness.spec import Check
from harness.targets.glm import with_raised_bound
from implementations.firefly import reference as ref

D2 = "logistic-N100-D2-untuned"
D10 = "logistic-N200-D10-map"
#: q_db of the hand-written FlyMC loop below.
Q_DB = 0.1
LOG_Q = math.log(Q_DB)


def z_without_ratio(target, cur, z, q_db, queries, grads, rng, trace):
    """The implicit z step with its MH ratio forgotten: every bright point goes dark, and every
    dark point picked with probability q_db goes bright (so 1 - B/L is never read)."""
    bright, dark = z.bright(), z.dark()
    for n in bright:
        rng.random()
        z.darken(n)
        if trace is not None:
            trace.darkenings[n] += 1
    pos = ref.geometric_skip(q_db, rng)
    while pos < len(dark):
        n = dark[pos]
        ref.evaluate(target, cur, [n], queries, grads)
        rng.random()
        z.brighten(n)
        pos += 1 + ref.geometric_skip(q_db, rng)


def z_ratio_without_q(target, cur, z, q_db, queries, grads, rng, trace):
    """The implicit z step with q_db left out of the dark-to-bright ratio: min(1, L~) instead of
    min(1, L~ / q_db), so points go bright q_db times too rarely."""
    bright, dark = z.bright(), z.dark()
    log_q = math.log(q_db)
    for n in bright:
        if ref.log_or_minus_inf(rng.random()) < log_q - ref.log_l_tilde(
            cur.log_lik[n], cur.log_bound[n]
        ):
            z.darken(n)
            if trace is not None:
                trace.darkenings[n] += 1
    pos = ref.geometric_skip(q_db, rng)
    while pos < len(dark):
        n = dark[pos]
        ref.evaluate(target, cur, [n], queries, grads)
        if ref.log_or_minus_inf(rng.random()) < ref.log_l_tilde(cur.log_lik[n], cur.log_bound[n]):
            z.brighten(n)
        pos += 1 + ref.geometric_skip(q_db, rng)


def z_frozen(target, cur, z, q_db, queries, grads, rng, trace):
    """A z step that never runs (z stays as it started: all dark, or its conditional at x0)."""


def mala_without_reverse(density, cur, step, rng):
    """MALA accepted by the density ratio alone: the reverse-proposal term is missing."""
    log_cur = density.log_density(cur)
    g_cur = density.grad(cur)
    h = 0.5 * step * step
    prop = ref.Point(cur.theta + h * g_cur + step * rng.standard_normal(cur.theta.size))
    log_u = ref.log_or_minus_inf(rng.random())
    log_prop = density.log_density(prop)
    density.grad(prop)
    if log_u < log_prop - log_cur:
        return prop, True
    return cur, False


def mh_asymmetric(density, cur, step, rng):
    """Random-walk MH whose proposal drifts by step / 2 in every coordinate, accepted as if it
    were symmetric (no Hastings correction)."""
    prop = ref.Point(cur.theta + step * (rng.standard_normal(cur.theta.size) + 0.5))
    log_u = ref.log_or_minus_inf(rng.random())
    if log_u < density.log_density(prop) - density.log_density(cur):
        return prop, True
    return cur, False


def safe_log_l_tilde(log_lik, log_bound):
    """log(L/B - 1), -inf where the "bound" is not below L (such a point can never be bright)."""
    gap = log_lik - log_bound
    return gap + math.log(-math.expm1(-gap)) if gap > 0.0 else -math.inf


def flymc_raised_bound(target, n_steps, rng, x0=None, step=0.3, theta_fixed=False):
    """FlyMC-MH with implicit z updates on a "bound" raised by 0.5 above L_n on every third
    datum (past the target's own bound check), log(L/B - 1) guarded to -inf where B >= L, as
    careless code would do to silence the NaN."""
    raised = with_raised_bound(target, np.arange(0, target.N, 3), 0.5)
    queries = ref.Queries()
    z = ref.BrightSet(target.N)
    cur = ref.Point(ref.start(target, x0))
    trace = ref.ZTrace(np.zeros(target.N, dtype=np.int64), np.zeros(target.N, dtype=np.int64))
    if theta_fixed:
        ref.conditional_z(raised, cur, z, queries, False, rng)

    def log_joint(point):
        bright = z.bright()
        ref.evaluate(raised, point, bright, queries, False)
        total = raised.log_prior(point.theta) + raised.sum_log_bound(point.theta)
        for n in bright:
            total += safe_log_l_tilde(point.log_lik[n], point.log_bound[n])
        return total

    values = np.empty((n_steps, target.D))
    for i in range(n_steps):
        if not theta_fixed:
            prop = ref.Point(cur.theta + step * rng.standard_normal(target.D))
            if ref.log_or_minus_inf(rng.random()) < log_joint(prop) - log_joint(cur):
                cur = prop
        bright, dark = z.bright(), z.dark()
        for n in bright:
            if ref.log_or_minus_inf(rng.random()) < LOG_Q - safe_log_l_tilde(
                cur.log_lik[n], cur.log_bound[n]
            ):
                z.darken(n)
                trace.darkenings[n] += 1
        pos = ref.geometric_skip(Q_DB, rng)
        while pos < len(dark):
            n = dark[pos]
            ref.evaluate(raised, cur, [n], queries, False)
            if (
                ref.log_or_minus_inf(rng.random())
                < safe_log_l_tilde(cur.log_lik[n], cur.log_bound[n]) - LOG_Q
            ):
                z.brighten(n)
            pos += 1 + ref.geometric_skip(Q_DB, rng)
        trace.bright_steps[z.bright()] += 1
        values[i] = cur.theta
    extras = {"bright_steps": trace.bright_steps, "darkenings": trace.darkenings}
    extras = extras if theta_fixed else {}
    return harness.Chain(values, queries.total, extras)


def _flymc(theta_step, **moves):
    def run(target, n_steps, rng, x0=None, step=0.3, theta_fixed=False):
        return ref.flymc(
            target, n_steps, rng, x0, theta_step, step, theta_fixed=theta_fixed, **moves
        )

    return run


def _regular(theta_step, theta_moves):
    def run(target, n_steps, rng, x0=None, step=0.3):
        return ref.regular(target, n_steps, rng, x0, theta_step, step, theta_moves=theta_moves)

    return run


STEP = harness.Param("step", 0.3, float, low=0.0, low_inclusive=False)
FIXED = harness.Param("theta_fixed", False, bool)
PLANTED = [
    # name, runner, the function holding the bug, params, problem, step, gates expected to fail
    (
        "planted-flymc-z-no-ratio",
        _flymc("mh", z_moves={"implicit": z_without_ratio}),
        z_without_ratio,
        (STEP, FIXED),
        D10,
        0.3,
        "sbc, z-conditional",
    ),
    (
        "planted-flymc-z-ratio-without-q",
        _flymc("mh", z_moves={"implicit": z_ratio_without_q}),
        z_ratio_without_q,
        (STEP, FIXED),
        D2,
        0.6,
        "z-conditional, ks-marginals",
    ),
    (
        "planted-flymc-raised-bound",
        flymc_raised_bound,
        flymc_raised_bound,
        (STEP, FIXED),
        D2,
        0.6,
        "z-conditional, ks-marginals",
    ),
    (
        "planted-flymc-z-frozen",
        _flymc("mh", z_moves={"implicit": z_frozen}),
        z_frozen,
        (STEP, FIXED),
        D2,
        0.6,
        "ks-marginals",
    ),
    (
        "planted-mala-no-reverse",
        _regular("mala", {"mala": mala_without_reverse}),
        mala_without_reverse,
        (STEP,),
        D2,
        0.6,
        "ks-marginals",
    ),
    (
        "planted-mh-asymmetric",
        _regular("mh", {"mh": mh_asymmetric}),
        mh_asymmetric,
        (STEP,),
        D2,
        0.6,
        "ks-marginals",
    ),
]

for name, run, bug, params, problem, step, gates in PLANTED:
    harness.register(
        harness.AlgorithmSpec(
            name=name,
            family="planted:firefly",
            paper="002_3c1996bf78df7865.txt",
            guarantee="mcmc",
            target_kinds=("glm-posterior",),
            implementations={"reference": run},
            params=params,
            entry="run_chain",
            summary=f"Bug: {bug.__doc__}\n\nCaught by: {gates}",
            splittable=False,
            checks=(Check({"step": step}, problems=(problem,)),),
        )
    )
