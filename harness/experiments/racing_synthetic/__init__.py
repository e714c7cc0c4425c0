"""Synthetic racing experiment: error and cost against delta (000_26bed7cc1ef3ab92.txt, Fig. 1).

One ``error`` task per (variant, algorithm, distribution, sigma, delta) cell that the level's
skip rules keep, and one ``speed`` task per benchmark noise level. See :mod:`.settings` (levels,
validation, skip rules), :mod:`.run` (one setting into records) and :mod:`.report` (figures,
tables, the terminal summary).
"""

from __future__ import annotations

from typing import Any

from harness.engine import SeedKey, Task
from harness.experiments.racing_synthetic.report import report, summary
from harness.experiments.racing_synthetic.run import run_error_setting, run_speed_setting, warm
from harness.experiments.racing_synthetic.settings import (
    PARTS,
    RacingSyntheticConfig,
    config_for_level,
    config_from_manifest,
    error_settings,
    speed_settings,
)
from harness.store import done_tasks

__all__ = [
    "PARTS",
    "config_for_level",
    "config_from_manifest",
    "plan",
    "report",
    "summary",
    "warm",
]


def plan(
    config: RacingSyntheticConfig, records: list[dict[str, Any]], part: str = "all"
) -> list[Task]:
    """The error cells (``part`` all or errors) and the benchmark (all or speed).

    The benchmark must not share the CPU: its tasks are planned one at a time (each once the
    one before it is recorded, so each round of the engine holds just one and runs it alone),
    and with ``part`` all only after every error cell is recorded. Recorded benchmark tasks are
    always planned, so the report keeps them whatever else is missing.
    """
    done = done_tasks(records)
    errors = [
        Task(
            key=s.key,
            fn=run_error_setting,
            inputs=(s, config.seed),
            seed=SeedKey.from_label(config.seed, s.key),
            label=s.label,
        )
        for s in error_settings(config)
    ]
    tasks = list(errors) if part != "speed" else []
    if part == "errors":
        return tasks
    ready = part == "speed" or all(t.key in done for t in errors)
    for s in speed_settings(config):
        if s.key not in done:
            if not ready:
                continue
            ready = False  # the next one waits for this one
        tasks.append(
            Task(
                key=s.key,
                fn=run_speed_setting,
                inputs=(s, config.seed),
                label=f"speed sigma={s.sigma:g}",
            )
        )
    return tasks
