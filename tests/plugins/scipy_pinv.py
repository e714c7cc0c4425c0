"""scipy's NumericalInversePolynomial, a correct external sampler, as a plugin of 1-D box
densities. It evaluates the density wherever its setup likes, the ends of an infinite box
included, where a target that is not total gives NaN (numpy then warns "invalid value")."""

import math

import numpy as np
from scipy.stats.sampling import NumericalInversePolynomial

import harness


class _Density:
    def __init__(self, target):
        self.target = target

    def pdf(self, x):
        point = np.array([x], dtype=np.float64)
        return math.exp(
            self.target.log_proposal(point) + self.target.log_lik(point, self.target.data)
        )


def pinv(target, n, rng):
    gen = NumericalInversePolynomial(
        _Density(target),
        domain=(float(target.lo[0]), float(target.hi[0])),
        center=2.0,
        random_state=rng,
    )
    return harness.Draws(np.asarray(gen.rvs(n), dtype=np.float64), 0)


harness.register(
    harness.AlgorithmSpec(
        name="scipy-pinv",
        family="plugin",
        paper="scipy.stats.sampling.NumericalInversePolynomial",
        guarantee="exact",
        target_kinds=("box-density",),
        implementations={"reference": pinv},
        checks=(harness.Check({}, problems=("pm-mixture",)),),
    )
)
