"""Two biased inverse-CDF samplers on one discrete problem: a share ``eps`` of the draws is
replaced by state 0. At seed 0 ``leaky-borderline`` (eps = 0.02) is borderline at the first
stage and fails at the second; ``leaky-broken`` (eps = 0.5) fails at the first."""

import numpy as np

import harness
from harness.spec import Check, Param


def leaky_inverse_cdf(target, n, rng, eps=0.0):
    logp = target.log_factors.sum(axis=1) + target.log_f0
    cdf = np.cumsum(np.exp(logp - logp.max()))
    values = np.searchsorted(cdf, rng.random(n) * cdf[-1], side="right")
    values[rng.random(n) < eps] = 0
    return harness.Draws(values, evals=target.log_factors.size)


for name, eps in (("leaky-borderline", 0.02), ("leaky-broken", 0.5)):
    harness.register(
        harness.AlgorithmSpec(
            name=name,
            family="test",
            paper="000_26bed7cc1ef3ab92.txt, Sec. 2.1",
            guarantee="exact",
            target_kinds=("discrete",),
            implementations={"reference": leaky_inverse_cdf},
            params=(Param("eps", eps, low=0.0, high=1.0),),
            splittable=False,
            checks=(Check(problems=("synthetic-normal-D10-N200",)),),
        )
    )
