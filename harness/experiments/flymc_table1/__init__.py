"""Firefly Monte Carlo's Table 1 (002_3c1996bf78df7865.txt): likelihood queries per iteration,
effective samples per 1000 iterations and speedup for regular MCMC, untuned FlyMC and MAP-tuned
FlyMC on three models; and the time per iteration as N grows.

One task per table row (:mod:`.run`'s ``run_row``) and per scaling size (``run_scaling``);
:mod:`.settings` holds the levels, :mod:`.report` the figures and tables.
"""

from __future__ import annotations

from typing import Any

from harness.engine import SeedKey, Task
from harness.experiments.flymc_table1.report import report, summary
from harness.experiments.flymc_table1.run import run_row, run_scaling, warm
from harness.experiments.flymc_table1.settings import (
    PARTS,
    Table1Config,
    config_for_level,
    config_from_manifest,
)

__all__ = [
    "PARTS",
    "config_for_level",
    "config_from_manifest",
    "plan",
    "report",
    "summary",
    "warm",
]


def plan(config: Table1Config, records: list[dict[str, Any]], part: str = "all") -> list[Task]:
    """One task per row (part ``table``) and per scaling size (part ``scaling``)."""
    del records  # the tasks are independent
    tasks = []
    if part in ("all", "table"):
        tasks += [
            Task(
                key=row.key,
                fn=run_row,
                inputs=(row, config.q_db, config.burn_in),
                seed=SeedKey.from_label(config.seed, row.key),
                label=row.label,
            )
            for row in config.rows
        ]
    if part in ("all", "scaling"):
        for N in config.scaling_N:
            key = f"scaling|N={N}|it={config.scaling_iterations}"
            tasks.append(
                Task(
                    key=key,
                    fn=run_scaling,
                    inputs=(N, config.scaling_iterations, config.q_db, N <= config.reference_max_N),
                    seed=SeedKey.from_label(config.seed, key),
                    label=f"scaling N={N:,}",
                )
            )
    return tasks
