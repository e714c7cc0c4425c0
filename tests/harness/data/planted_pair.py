"""Two planted bugs for the gate-quality tests: one the chi-square gate catches, and one that
is not a bug at all (a correct sampler under a planted name), so it must escape."""

import numpy as np

import harness
from harness.spec import Check


def _logp(target):
    return target.log_unnormalised


def sharpened(target, n, rng):
    """Bug: log-weights scaled by 1.1 (a temperature typo).

    Caught by: chi-square
    """
    g = -np.log(rng.standard_exponential((n, target.D)))
    return harness.Draws(np.argmax(1.1 * _logp(target) + g, axis=1), 0)


def correct(target, n, rng):
    """Bug: none (numpy's Generator.choice on the exact pmf); it must escape.

    Caught by: chi-square
    """
    return harness.Draws(rng.choice(target.D, size=n, p=target.pmf), 0)


for name, fn in (("planted-test-sharpened", sharpened), ("planted-test-correct", correct)):
    harness.register(
        harness.AlgorithmSpec(
            name=name,
            family="planted:gumbel",
            paper="negative control",
            guarantee="exact",
            target_kinds=("discrete",),
            implementations={"reference": fn},
            splittable=False,
            summary=fn.__doc__,
            checks=(Check(problems=("synthetic-normal-D10-N200",)),),
        )
    )
