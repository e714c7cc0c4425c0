"""The standard verification problems, by target kind.

Each problem builds its target deterministically (fixed construction seed), so a verification run
is a pure function of its own seed. ``quick`` runs in CI; ``full`` adds larger problems.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from harness.spec import Param
from harness.targets.continuous import TruncatedGumbelTarget
from harness.targets.discrete import ragged_rewards, synthetic_rewards
from harness.targets.location_model import model_target, studentt_location_model
from harness.targets.posterior import studentt_posterior

LEVELS = ("quick", "full")


@dataclass(frozen=True)
class Problem:
    name: str
    kind: str
    build: Callable[[], Any]
    levels: tuple[str, ...] = LEVELS


def _synthetic(D: int, N: int, distribution: str, sigma: float, seed: int) -> Callable[[], Any]:
    def build() -> Any:
        return synthetic_rewards(
            D,
            N,
            distribution,
            sigma,
            np.random.default_rng(seed),
            name=f"synthetic-{distribution}-D{D}-N{N}",
        )

    return build


def _control_variates(N: int, D: int, nu: float, seed: int) -> Callable[[], Any]:
    def build() -> Any:
        model = studentt_location_model(N, D, nu, np.random.default_rng(seed))
        return model_target(model, control_variates=True)

    return build


def _factor_graph(n: int, D: int, seed: int) -> Callable[[], Any]:
    from harness.targets.factor_graph import random_factor_graph

    return lambda: random_factor_graph(n, D, np.random.default_rng(seed))


def _potts(side: int, beta: float, D: int) -> Any:
    from harness.targets.factor_graph import potts_grid

    return potts_grid(side, beta, D)


def _continuous(which: str) -> Any:
    from harness.targets.continuous_factor_graph import continuous_spin_grid, tiny_continuous_graph

    return tiny_continuous_graph() if which == "tiny" else continuous_spin_grid(4)


def _trunc(phi: float, b: float) -> Callable[[], Any]:
    return lambda: TruncatedGumbelTarget(phi, b)


PROBLEMS: tuple[Problem, ...] = (
    Problem("synthetic-normal-D10-N200", "discrete", _synthetic(10, 200, "normal", 1.0, 1)),
    Problem("synthetic-lognormal-D100-N50", "discrete", _synthetic(100, 50, "lognormal", 1.0, 2)),
    Problem(
        "synthetic-uniform-D1000-N20",
        "discrete",
        _synthetic(1000, 20, "uniform", 1.0, 3),
        levels=("full",),
    ),
    # Racing problems (000 Sec. 5.1 family): small sigma makes races stop early, so they can err.
    Problem("race-normal-D10-N1000-s1e-3", "discrete", _synthetic(10, 1000, "normal", 1e-3, 4)),
    Problem(
        "race-lognormal-D10-N1000-s1e-3", "discrete", _synthetic(10, 1000, "lognormal", 1e-3, 5)
    ),
    Problem("race-normal-D10-N1000-s1e-4", "discrete", _synthetic(10, 1000, "normal", 1e-4, 6)),
    # Large noise, two arms: Racing-Normal's error nears delta, so a wrong B shows.
    Problem("race-normal-D2-N1000-s0.3", "discrete", _synthetic(2, 1000, "normal", 0.3, 7)),
    # A population size per state (000 Sec. 5.3): only Racing-Normal takes it.
    Problem(
        "ragged-normal-D8-s1e-3",
        "discrete-ragged",
        lambda: ragged_rewards(
            [2, 7, 40, 150, 600, 2000, 60, 900],
            1e-3,
            np.random.default_rng(10),
            name="ragged-normal-D8-s1e-3",
        ),
    ),
    # The same kind of posterior as a racing target with control variates (000 Sec. 3.4).
    Problem("cv-studentt-D10-N4000", "discrete", _control_variates(4000, 10, 30.0, 9)),
    Problem(
        "studentt-posterior-N500",
        "posterior-1d",
        lambda: studentt_posterior(500, 1.0, 4.0, np.random.default_rng(8)),
    ),
    # Factor graphs (003): tiny ones have an enumerated joint and exact kernels; the Potts grid
    # is checked by the symmetry of its marginals.
    Problem("fg-random-n4-D2", "factor-graph", _factor_graph(4, 2, 11)),
    Problem("fg-random-n3-D3", "factor-graph", _factor_graph(3, 3, 12)),
    Problem("potts-grid-5x5-D3-beta1", "factor-graph", lambda: _potts(5, 1.0, 3)),
    # Continuous factor graphs (003 Sec. 3, 4.2): a tiny graph with a quadrature joint, and a
    # small continuous-spin grid checked through its exact truncated-exponential conditionals.
    Problem("cfg-tiny-n3", "factor-graph-continuous", lambda: _continuous("tiny")),
    Problem("continuous-spin-4x4", "factor-graph-continuous", lambda: _continuous("spin")),
    Problem("truncgumbel-phi0-b1", "continuous-1d", _trunc(0.0, 1.0)),
    Problem("truncgumbel-phi0-b-3", "continuous-1d", _trunc(0.0, -3.0)),
    Problem("truncgumbel-phi2-b8", "continuous-1d", _trunc(2.0, 8.0), levels=("full",)),
)


def problems(kind: str, level: str) -> list[Problem]:
    Param("level", "quick", str, choices=LEVELS).check(level)
    return [p for p in PROBLEMS if p.kind == kind and level in p.levels]


def problem(name: str) -> Problem:
    for p in PROBLEMS:
        if p.name == name:
            return p
    raise ValueError(f"unknown problem {name!r}; known: {', '.join(p.name for p in PROBLEMS)}")


@lru_cache(maxsize=16)
def build_target(name: str) -> Any:
    """The target of a named problem, built once per process (construction is deterministic)."""
    return problem(name).build()
