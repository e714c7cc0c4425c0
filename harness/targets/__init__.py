"""Targets with ground truth, one module per kind."""

from harness.targets.continuous import TruncatedGumbelTarget, gumbel_cdf
from harness.targets.discrete import DiscreteFactorTarget, default_pmf, synthetic_rewards

__all__ = [
    "DiscreteFactorTarget",
    "TruncatedGumbelTarget",
    "default_pmf",
    "gumbel_cdf",
    "synthetic_rewards",
]
