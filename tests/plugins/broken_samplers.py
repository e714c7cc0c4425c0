"""Deliberately broken samplers: the negative controls the gates must reject.

Each one is a plausible bug in a Gumbel-family sampler. Loaded with
``harness verify --plugin tests/plugins/broken_samplers.py``.
"""

import numpy as np

import harness
from harness.targets.discrete import DiscreteFactorTarget


def _logp(target: DiscreteFactorTarget) -> np.ndarray:
    return np.cumsum(target.log_factors, axis=1)[:, -1] + target.log_f0


def argmax_exponential_noise(target, n, rng):
    """Bug: Exp(1) noise where Gumbel(0, 1) noise belongs."""
    D, N = target.log_factors.shape
    noise = rng.standard_exponential((n, D))
    return harness.Draws(np.argmax(_logp(target) + noise, axis=1), n * N * D)


def argmax_hot(target, n, rng):
    """Bug: a temperature of 1.05, i.e. argmax(log p~ / 1.05 + Gumbel)."""
    D, N = target.log_factors.shape
    noise = -np.log(rng.standard_exponential((n, D)))
    return harness.Draws(np.argmax(_logp(target) / 1.05 + noise, axis=1), n * N * D)


def trunc_gumbel_sign_flipped(target, n, rng):
    """Bug: the bound's sign flipped, TruncGumbel(phi, -b)."""
    phi, b = target.phi, -target.b
    e = rng.standard_exponential(n)
    return harness.Draws(phi - np.logaddexp(np.log(e), phi - b), 0)


def gumbel_max_wrong_max(target, n, rng):
    """Bug: the right argmax, but the reported maximum forgets the noise's location shift."""
    D, N = target.log_factors.shape
    logp = _logp(target)
    noise = -np.log(rng.standard_exponential((n, D)))
    x = np.argmax(logp + noise, axis=1)
    wrong = logp[x] + noise[np.arange(n), x] - 0.05
    return harness.Draws(x, n * N * D, {"gumbel_max": wrong})


def raises(target, n, rng):
    """Bug: the sampler crashes; the run must record a failed verdict and go on."""
    raise RuntimeError("index out of range in my kernel")


for name, fn, kinds in (
    ("broken-raises", raises, ("discrete",)),
    ("broken-exp-noise", argmax_exponential_noise, ("discrete",)),
    ("broken-temperature", argmax_hot, ("discrete",)),
    ("broken-trunc-sign", trunc_gumbel_sign_flipped, ("continuous-1d",)),
    ("broken-gumbel-max-value", gumbel_max_wrong_max, ("discrete",)),
):
    harness.register(
        harness.AlgorithmSpec(
            name=name,
            family="negative-controls",
            paper="negative control",
            guarantee="exact",
            target_kinds=kinds,
            implementations={"reference": fn},
            summary=fn.__doc__ or "",
        )
    )
