"""Potts model: marginal error vs iterations and wall time (003_07f92522b9b1c588.txt, Sec. 4.1).

003, Sec. 4.1 (Fig. 1a/1b, 2a/2b): Gibbs, Poisson-Gibbs and DoubleMIN-Gibbs on a fully
connected 20 x 20 Potts model. One task per (sampler, replicate) chain; see
:mod:`.settings` (levels), :mod:`.run` (one chain) and :mod:`.report` (figures and tables).
"""

from __future__ import annotations

from typing import Any

from harness.engine import SeedKey, Task
from harness.experiments.potts.report import report, summary
from harness.experiments.potts.run import run_chain, warm
from harness.experiments.potts.settings import (
    PottsConfig,
    config_for_level,
    config_from_manifest,
    run_settings,
)

__all__ = ["config_for_level", "config_from_manifest", "plan", "report", "summary", "warm"]


def plan(config: PottsConfig, records: list[dict[str, Any]], part: str = "all") -> list[Task]:
    """One task per (sampler, replicate); the chains are independent of each other."""
    del records, part  # nothing waits on another task; the only part is "all"
    return [
        Task(
            key=s.key,
            fn=run_chain,
            inputs=(s, config.seed),
            seed=SeedKey.from_label(config.seed, s.key),
            label=f"{s.sampler.label} rep {s.replicate}",
        )
        for s in run_settings(config)
    ]
