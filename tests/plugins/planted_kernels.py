"""Planted bugs in Markov kernels on GLM posteriors: each leaves the posterior's variance off by
2% or less, which the thinned KS of a 20000-step chain cannot see; the exact-start invariance
gate (harness/gates/exact_start.py) must. Each kernel takes a switch that turns its bug off, so
the tests run the same code as a correct kernel too.

Loaded with ``harness verify --plugin tests/plugins/planted_kernels.py``.
"""

import math

import numpy as np

import harness
from harness.spec import Check, Param

PROBLEM = "logistic-N100-D2-map"
#: Shrinks before a slice step gives up and keeps theta (as the firefly reference).
MAX_SHRINKS = 200


def _start(target, x0):
    """x0 as D floats; the default is the bounds' tuning point (theta_MAP here)."""
    if x0 is None:
        return np.array(target.theta_tuning, dtype=np.float64)
    return np.array(x0, dtype=np.float64).reshape(target.D)


def _log_u(rng):
    u = rng.random()
    return math.log(u) if u > 0.0 else -math.inf


def slice_centred(target, n_steps, rng, x0=None, step=4.0, centred=True):
    """Bug: the slice sampler of 002's baselines (a bracket of width w along a random direction,
    shrunk until a point lies in the slice, no stepping out) with the bracket centred on the
    current point, [-w/2, w/2], instead of placed at random, [-w u, w (1 - u)]. Where the
    bracket does not cover the whole slice, a centred bracket truncates it symmetrically about
    theta: the move is no longer reversible, and the chain keeps to the middle. On
    logistic-N100-D2-map (posterior sd 0.41 and 0.45) the variances come out 18% too low at
    w = 2, 2.5% at the tuned w = 4, 1.9% at w = 4.25 (where this plugin runs), 1.2% at w = 4.5,
    and within 0.1% at w = 8, where the bracket covers the slice.

    Caught by: exact-start-moments"""
    theta = _start(target, x0)
    lp = target.log_posterior(theta)
    evals = target.N
    values = np.empty((n_steps, target.D))
    for i in range(n_steps):
        d = rng.standard_normal(target.D)
        d = d / math.sqrt(float(d @ d))
        log_y = lp - rng.standard_exponential()
        lo = -0.5 * step if centred else -step * rng.random()
        hi = lo + step
        for _ in range(MAX_SHRINKS):
            s = lo + (hi - lo) * rng.random()
            prop = theta + s * d
            lp_prop = target.log_posterior(prop)
            evals += target.N
            if lp_prop > log_y:
                theta, lp = prop, lp_prop
                break
            if s < 0.0:
                lo = s
            else:
                hi = s
        values[i] = theta
    return harness.Chain(values, evals)


def mh_tempered(target, n_steps, rng, x0=None, step=0.6, temperature=1.02):
    """Bug: random-walk Metropolis whose acceptance reads log pi / T with T = 1.02 (a
    temperature left in from an annealing run), so the chain samples pi^(1/T): on a
    near-Gaussian posterior every variance is about 2% too large.

    Caught by: exact-start-moments"""
    theta = _start(target, x0)
    lp = target.log_posterior(theta) / temperature
    evals = target.N
    values = np.empty((n_steps, target.D))
    for i in range(n_steps):
        prop = theta + step * rng.standard_normal(target.D)
        lp_prop = target.log_posterior(prop) / temperature
        evals += target.N
        if _log_u(rng) < lp_prop - lp:
            theta, lp = prop, lp_prop
        values[i] = theta
    return harness.Chain(values, evals)


PLANTED = [
    (
        "planted-slice-centred",
        slice_centred,
        (
            Param("step", 4.25, float, low=0.0, low_inclusive=False, doc="bracket width w"),
            Param("centred", True, bool, doc="the bug: the bracket centred on theta"),
        ),
        {"step": 4.25},
    ),
    (
        "planted-mh-tempered",
        mh_tempered,
        (
            Param("step", 0.6, float, low=0.0, low_inclusive=False, doc="random-walk step"),
            Param("temperature", 1.02, float, low=0.0, low_inclusive=False, doc="the bug: T"),
        ),
        {"step": 0.6},
    ),
]

for name, run, params, check in PLANTED:
    harness.register(
        harness.AlgorithmSpec(
            name=name,
            family="planted:kernels",
            paper="002_3c1996bf78df7865.txt, Table 1 (regular MCMC)",
            guarantee="mcmc",
            target_kinds=("glm-posterior",),
            implementations={"reference": run},
            params=params,
            entry="run_chain",
            summary=run.__doc__,
            splittable=False,
            checks=(Check(check, problems=(PROBLEM,)),),
        )
    )
