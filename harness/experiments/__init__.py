"""Paper experiments: targets, algorithms and metrics combined as in a paper's figure.

Each experiment writes an experiment directory (``experiment.json`` + ``records.jsonl``, see
:mod:`harness.experiments.store`) that ``harness report`` renders. The table below is explicit:
an experiment exists when it is listed here, not because some module was imported.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType


@dataclass(frozen=True)
class Experiment:
    """One reproducible experiment: the module that runs it and the one that renders it."""

    name: str
    paper: str
    summary: str
    runner: str
    renderer: str

    def runner_module(self) -> ModuleType:
        return importlib.import_module(self.runner)

    def renderer_module(self) -> ModuleType:
        # Imported on demand: rendering pulls in matplotlib, running does not need it.
        return importlib.import_module(self.renderer)


EXPERIMENTS: tuple[Experiment, ...] = (
    Experiment(
        name="racing-synthetic",
        paper="000_26bed7cc1ef3ab92.txt, Fig. 1",
        summary="lil'UCB, Racing-EBS, Racing-Normal: error rate and rewards sampled vs delta",
        runner="harness.experiments.racing_synthetic",
        renderer="harness.experiments.racing_report",
    ),
    Experiment(
        name="racing-arch",
        paper="000_26bed7cc1ef3ab92.txt, Sec. 5.2",
        summary="ARCH model selection on simulated returns: Racing-Normal Gibbs + racing MH",
        runner="harness.experiments.racing_arch_report",
        renderer="harness.experiments.racing_arch_report",
    ),
    Experiment(
        name="potts",
        paper="003_07f92522b9b1c588.txt, Sec. 4.1",
        summary="Potts 20x20, D = 10: marginal error vs iterations and time, factors per step",
        runner="harness.experiments.potts",
        renderer="harness.experiments.potts_report",
    ),
    Experiment(
        name="minibatch-gap",
        paper="003_07f92522b9b1c588.txt, Thm. 1 and Thm. 2",
        summary="Exact spectral gaps of Poisson-Gibbs / Poisson-MH against the theorems' bounds",
        runner="harness.experiments.minibatch_gap",
        renderer="harness.experiments.minibatch_gap_report",
    ),
    Experiment(
        name="continuous-spin",
        paper="003_07f92522b9b1c588.txt, Sec. 4.2",
        summary="Continuous spin 20x20: PGITS and PGDA vs a long Gibbs-ITS run (symmetric KL)",
        runner="harness.experiments.continuous_spin",
        renderer="harness.experiments.continuous_spin_report",
    ),
    Experiment(
        name="gaussian-mixture",
        paper="003_07f92522b9b1c588.txt, Sec. 4.3",
        summary="Truncated Gaussian mixture: PGITS, PGDA, Gibbs-rejection densities vs exact",
        runner="harness.experiments.gaussian_mixture",
        renderer="harness.experiments.gaussian_mixture_report",
    ),
)


def experiment_names() -> list[str]:
    return [e.name for e in EXPERIMENTS]


def get_experiment(name: str) -> Experiment:
    """The experiment called ``name``; ValueError naming it and the valid ones otherwise."""
    for e in EXPERIMENTS:
        if e.name == name:
            return e
    raise ValueError(f"unknown experiment {name!r}; valid: {', '.join(experiment_names())}")
