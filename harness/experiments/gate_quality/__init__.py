"""Gate quality: both error rates of every gate, measured.

The false-failure rate of each gate on every registered algorithm (correct samplers, many
seeds), and the catch rate of ``harness verify`` on the project's planted bugs
(``tests/plugins/planted_*.py``). Families registered later appear with no edit here: the
algorithms come from the registry and the bugs from the planted files. See :mod:`.settings`,
:mod:`.run` and :mod:`.report`.
"""

from __future__ import annotations

import math
from typing import Any

from harness.engine import SeedKey, Task
from harness.experiments.gate_quality.report import report, summary
from harness.experiments.gate_quality.run import (
    catch,
    correct_algorithms,
    false_failures,
    planted_bugs,
)
from harness.experiments.gate_quality.settings import (
    IMPL,
    GateQualityConfig,
    config_for_level,
    config_from_manifest,
)

__all__ = [
    "PARTS",
    "TIMED",
    "config_for_level",
    "config_from_manifest",
    "plan",
    "report",
    "summary",
]

PARTS = ("all", "false-failures", "catch")
#: Nothing here is timed: the tasks may share the CPU (all cores by default).
TIMED = False


def plan(config: GateQualityConfig, records: list[dict[str, Any]], part: str = "all") -> list[Task]:
    """Seed blocks of every algorithm, then one verify run per planted bug and level."""
    del records  # every task is independent of the others
    tasks = []
    if part in ("all", "false-failures"):
        for _, algorithm in correct_algorithms():
            for block in range(math.ceil(config.seeds / config.chunk)):
                first = block * config.chunk
                count = min(config.chunk, config.seeds - first)
                key = f"ffr|{algorithm}|{first}"
                tasks.append(
                    Task(
                        key=key,
                        fn=false_failures,
                        inputs=(algorithm, first, count, config.n, config.alpha, IMPL),
                        seed=SeedKey.from_label(config.seed, key),
                        label=f"{algorithm} seeds {first}-{first + count - 1}",
                    )
                )
    if part in ("all", "catch"):
        for level in config.catch_levels:
            for bug in planted_bugs(config.planted):
                key = f"catch|{level}|{bug['name']}"
                tasks.append(
                    Task(
                        key=key,
                        fn=catch,
                        inputs=(bug, level, config.seed),
                        seed=SeedKey.from_label(config.seed, key),
                        label=f"{bug['name']} ({level})",
                    )
                )
    return tasks
