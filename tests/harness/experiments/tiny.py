"""What every experiment's tests share: a tiny run through the framework, stable records."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.experiments.declare import Config
from harness.experiments.framework import Experiment, RunSummary, run

#: Record fields that depend on the clock or the source tree, or that the store adds.
CLOCK_FIELDS = frozenset({"wall_s", "sampler_s", "setup_s", "code", "task_lines"})


def run_tiny(experiment: Experiment[Any], config: Config, out: Path, **kw: Any) -> RunSummary:
    """``harness reproduce`` of ``experiment`` with ``config`` in place of a level, in this
    process and quietly."""
    kw.setdefault("scheduler", "inprocess")
    return run(
        experiment,
        config.level,
        config.seed,
        out,
        progress=False,
        log=lambda m: None,
        config=config,
        **kw,
    )


def stable(record: dict[str, Any], clock: frozenset[str] = CLOCK_FIELDS) -> dict[str, Any]:
    """``record`` without the fields that change from run to run."""
    return {k: v for k, v in record.items() if k not in clock}
