"""Settings of the gate-quality measurement: levels and validation.

Two error rates of every gate, measured rather than assumed:

- the false-failure rate: the gates of verify's cases for every registered (correct) algorithm,
  run over many seeds at a fixed alpha, their rejection rate with a Clopper-Pearson interval and
  the uniformity of their p-values;
- the catch rate: ``harness verify`` run on each planted bug (``tests/plugins/planted_*.py``),
  as a user would run it on one plugin, at the default level and with ``--level full``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from glob import glob
from typing import Any

from harness.experiments.framework import check_level
from harness.runner import check_seed
from harness.spec import Param

NAME = "gate-quality"
#: Where the project keeps its planted bugs (relative to the directory the command runs in).
PLANTED_GLOB = "tests/plugins/planted_*.py"
IMPL = "numba"

SEEDS = Param("seeds", 500, int, low=10, doc="seeds per algorithm")
N = Param("n", 20_000, int, low=100, doc="draws or chain steps per seed")
ALPHA = Param("alpha", 0.05, float, 0.0, 1.0, low_inclusive=False, high_inclusive=False)
CHUNK = Param("chunk", 25, int, low=1, doc="seeds per task")
CONFIDENCE = 0.999


def planted_files() -> tuple[str, ...]:
    """The planted-bug plugins found from the working directory, sorted."""
    return tuple(sorted(glob(PLANTED_GLOB)))


@dataclass(frozen=True)
class GateQualityConfig:
    level: str
    seed: int
    seeds: int
    n: int
    alpha: float
    chunk: int
    catch_levels: tuple[str, ...]
    planted: tuple[str, ...]

    def __post_init__(self) -> None:
        check_level(self.level)
        check_seed(self.seed)
        for p in (SEEDS, N, ALPHA, CHUNK):
            object.__setattr__(self, p.name, p.check(getattr(self, p.name)))
        for lv in self.catch_levels:
            check_level(lv)

    def manifest(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        out["catch_levels"] = list(self.catch_levels)
        out["planted"] = list(self.planted)
        return {"experiment": NAME, **out}

    @property
    def notes(self) -> list[str]:
        return [
            f"False failures: the gates of every case `harness verify --level quick` runs for "
            f"each registered algorithm ({IMPL} implementation), {self.seeds} seeds per "
            f"algorithm spread round-robin over its cases, {self.n} draws or steps per seed "
            "(fewer where verify's own case is smaller), "
            f"rejection at alpha = {self.alpha:g} on each gate's raw p-value.",
            "A gate is calibrated when the 99.9% Clopper-Pearson interval of its rejection rate "
            "contains alpha and the KS test of uniformity of its p-values gives p >= 0.001. "
            "Gates whose null is an inequality (error-rate, tv, stationary-bias, "
            "decision-error: the sampler's error is at most delta) are conservative by design "
            "on samplers that err less than delta: for them the rate must not exceed alpha "
            "(interval's lower end <= alpha) and the p-values must not be stochastically "
            "smaller than uniform (one-sided KS).",
            "Catch rate: `harness verify --plugin FILE --algorithm BUG --impl reference` per "
            f"planted bug (seed {self.seed}, run alpha 1e-4, escalation as configured), at "
            f"the levels {', '.join(self.catch_levels)}.",
        ]


def config_for_level(level: str, seed: int = 0) -> GateQualityConfig:
    level = check_level(level)
    quick = level == "quick"
    return GateQualityConfig(
        level=level,
        seed=seed,
        seeds=60 if quick else 500,
        n=20_000,
        alpha=0.05,
        chunk=20 if quick else 25,
        catch_levels=("quick",) if quick else ("quick", "full"),
        planted=planted_files(),
    )


def config_from_manifest(settings: dict[str, Any]) -> GateQualityConfig:
    s = {k: v for k, v in settings.items() if k != "experiment"}
    s["catch_levels"] = tuple(s["catch_levels"])
    s["planted"] = tuple(s["planted"])
    return GateQualityConfig(**s)
