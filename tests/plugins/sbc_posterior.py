"""A plugin posterior without ground truth, and two plugin chains on it: simulation-based
calibration is offered to any MCMC sampler whose problem can simulate from its prior.

The model: theta ~ N(0, I_3), y_i ~ N(theta, 4 I_3) for 20 observations. Its target carries no
quadrature or enumerated truth, only ``simulate`` (a prior draw and the posterior of data drawn
from it) and ``log_posterior``: D = 3 > 2, so `harness verify` judges the chains by SBC.
"""

from dataclasses import dataclass

import numpy as np

import harness

D, N, NOISE_SD = 3, 20, 2.0


@dataclass(frozen=True)
class GaussianMeanPosterior:
    y: np.ndarray
    name: str = "gaussian-mean-D3"
    kind: str = "glm-posterior"

    @property
    def D(self) -> int:
        return D

    @property
    def N(self) -> int:
        return int(self.y.shape[0])

    def log_posterior(self, theta):
        theta = np.asarray(theta, dtype=np.float64)
        resid = self.y - theta
        return float(-0.5 * theta @ theta - 0.5 * np.sum(resid * resid) / NOISE_SD**2)

    def simulate(self, rng):
        theta = rng.standard_normal(D)
        y = theta + NOISE_SD * rng.standard_normal((N, D))
        return theta, GaussianMeanPosterior(y, f"{self.name}-sim")


def build():
    return GaussianMeanPosterior(np.random.default_rng(5).standard_normal((N, D)) * NOISE_SD)


def _rw_mh(target, n_steps, rng, x0=None, step=0.5, temper=1.0):
    theta = np.zeros(D) if x0 is None else np.asarray(x0, dtype=np.float64)
    lp = target.log_posterior(theta) / temper
    out = np.empty((n_steps, D))
    for i in range(n_steps):
        prop = theta + step * rng.standard_normal(D)
        lp_prop = target.log_posterior(prop) / temper
        if np.log(rng.random()) < lp_prop - lp:
            theta, lp = prop, lp_prop
        out[i] = theta
    return harness.Chain(out, target.N * (n_steps + 1))


def correct(target, n_steps, rng, x0=None, step=0.5):
    """Random-walk MH on the posterior."""
    return _rw_mh(target, n_steps, rng, x0, step)


def tempered(target, n_steps, rng, x0=None, step=0.5):
    """The planted bug: MH on the posterior to the power 1/1.5 (too wide by sqrt 1.5)."""
    return _rw_mh(target, n_steps, rng, x0, step, temper=1.5)


harness.register_problem("gaussian-mean-D3", "glm-posterior", build)
STEP = harness.Param("step", 0.5, float, low=0.0, low_inclusive=False)
for name, fn in (("sbc-correct-mh", correct), ("sbc-tempered-mh", tempered)):
    harness.register(
        harness.AlgorithmSpec(
            name=name,
            family="plugin:sbc",
            paper="002_3c1996bf78df7865.txt (baseline MH)",
            guarantee="mcmc",
            target_kinds=("glm-posterior",),
            implementations={"reference": fn},
            params=(STEP,),
            entry="run_chain",
            splittable=False,
            checks=(harness.Check(problems=("gaussian-mean-D3",)),),
        )
    )
