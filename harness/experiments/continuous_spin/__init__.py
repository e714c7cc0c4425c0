"""Continuous spin model: symmetric KL vs iterations and wall time (003, Sec. 4.2, Fig. 1c/2c).

003_07f92522b9b1c588.txt, Sec. 4.2: PGITS and PGDA against a long Gibbs-ITS reference on a
20 x 20 continuous spin model. The reference is one task; every compared chain is a task planned
once the reference record is on disk, and receives it as an input. See :mod:`.settings`
(levels), :mod:`.run` (the chains) and :mod:`.report` (figures and tables).
"""

from __future__ import annotations

from typing import Any

from harness.engine import SeedKey, Task
from harness.experiments.continuous_spin.report import report, summary
from harness.experiments.continuous_spin.run import run_chain, run_reference, warm
from harness.experiments.continuous_spin.settings import (
    ContinuousSpinConfig,
    chain_settings,
    config_for_level,
    config_from_manifest,
    reference_setting,
)

__all__ = ["config_for_level", "config_from_manifest", "plan", "report", "summary", "warm"]


def plan(
    config: ContinuousSpinConfig, records: list[dict[str, Any]], part: str = "all"
) -> list[Task]:
    """The reference task; once its record is on disk, also one task per compared chain."""
    del part  # the only part is "all"
    ref = reference_setting(config)
    tasks = [
        Task(
            key=ref.key,
            fn=run_reference,
            inputs=(ref, config.seed),
            seed=SeedKey.from_label(config.seed, ref.key),
            label=f"reference {ref.algorithm}",
        )
    ]
    reference = next((r for r in records if r.get("key") == ref.key), None)
    if reference is None:
        return tasks
    return tasks + [
        Task(
            key=s.key,
            fn=run_chain,
            inputs=(s, config.seed, reference),
            seed=SeedKey.from_label(config.seed, s.key),
            label=f"{s.algorithm} rep {s.replicate}",
        )
        for s in chain_settings(config)
    ]
