"""Deliberately broken racing samplers: negative controls for tv-vs-delta and the MH gates.

Loaded with ``harness verify --plugin tests/plugins/broken_racing.py``.
"""

import math

import numpy as np
from scipy.stats import norm

import harness
from harness.spec import Check, Param
from implementations.racing import reference


def racing_single_look(target, n, rng, delta=0.1, exact_answer=False):
    """Bug: B from the single-stage normal quantile, ignoring the repeated looks (000, Eq. 8)."""
    return reference.racing(
        target,
        n,
        rng,
        delta,
        50,
        "normal",
        "pairwise",
        exact_answer,
        solve_b=lambda d, N, m1: float(norm.isf(d)),
    )


def mh_drift(target, n_steps, rng, x0=None, delta=0.05, exact_answer=False):
    """Bug: a drifting random walk x' = x + s (xi + 1) accepted without the Hastings ratio."""
    theta = float(target.mean if x0 is None else x0)
    s = 2.0 * target.sd
    values = np.empty(n_steps)

    def log_post(t):
        return float(target.log_posterior(np.array([t]))[0])

    current = log_post(theta)
    for k in range(n_steps):
        prop = theta + s * (rng.standard_normal() + 1.0)
        proposed = log_post(prop)
        if math.log(1.0 - rng.random()) < proposed - current:
            theta, current = prop, proposed
        values[k] = theta
    return harness.Chain(values, 2 * target.N * n_steps)


DELTA = Param("delta", 0.1, low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
EXACT = Param("exact_answer", False, kind=bool)

harness.register(
    harness.AlgorithmSpec(
        name="broken-racing-single-look",
        family="negative-controls",
        paper="negative control",
        guarantee="approximate",
        target_kinds=("discrete",),
        implementations={"reference": racing_single_look},
        params=(DELTA, EXACT),
        delta_param="delta",
        summary=racing_single_look.__doc__,
        checks=(Check({"delta": 0.1, "exact_answer": True}, ("race-normal-D2-N1000-s0.3",)),),
    )
)
harness.register(
    harness.AlgorithmSpec(
        name="broken-mh-drift",
        family="negative-controls",
        paper="negative control",
        guarantee="approximate",
        entry="run_chain",
        target_kinds=("posterior-1d",),
        implementations={"reference": mh_drift},
        params=(DELTA, EXACT),
        delta_param="delta",
        splittable=False,
        summary=mh_drift.__doc__,
        checks=(Check({"exact_answer": True}, ("studentt-posterior-N500",)),),
    )
)
