"""Bayesian ARCH model selection with Racing-Normal (000_26bed7cc1ef3ab92.txt, Sec. 5.2).

SIMULATED DATA: the paper's 5-minute Shanghai composite returns are not available, so the data
are an ARCH(10) series with t_5 innovations simulated with a fixed seed. Exact Gibbs + MALA run
against Racing-Normal Gibbs + SGLD corrected by racing MH on the Carlin & Chib product space.

Modules: ``settings`` (config, levels, the paper's numbers), ``model`` (data, likelihood terms,
priors, Laplace fits), ``control_variates`` (000, Sec. 3.4), ``chain`` (the sampler steps),
``run`` (the tasks and their plan), ``summary`` (the numbers) and ``report`` (figures, tables).
This module is the framework contract (:mod:`harness.experiments.framework`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from harness.experiments.racing_arch.report import report
from harness.experiments.racing_arch.run import plan
from harness.experiments.racing_arch.settings import (
    ArchConfig,
    config_for_level,
    config_from_manifest,
)
from harness.experiments.racing_arch.summary import summary_text

__all__ = [
    "ArchConfig",
    "config_for_level",
    "config_from_manifest",
    "plan",
    "report",
    "summary",
    "warm",
]


def summary(records: Sequence[Mapping[str, Any]]) -> str:
    return summary_text(records)


def warm() -> None:
    """Compile the Racing-Normal kernel Sub's Gibbs step uses before any timed chunk."""
    import numpy as np

    from harness.targets.discrete import DiscreteFactorTarget
    from implementations.racing import fast

    target = DiscreteFactorTarget(np.zeros((2, 4)), np.zeros(2))
    fast.racing_normal(target, 1, np.random.default_rng(0), m1=2, exact_answer=True)
