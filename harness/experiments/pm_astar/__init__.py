"""PM-A* against A* and A* without a bound (004_b270422b62f00607.txt, Sec. 5): exact draws on
the Sec. 5.1 mixture (Fig. 2a), the best Gumbel value found against expansions on the Sec. 3
counter-example (Fig. 2b), and against time on clutter (Fig. 3) and Bayesian logistic
regression, with MH from the prior beside it (Fig. 4).

:mod:`.settings` holds the levels, :mod:`.run` the tasks, :mod:`.report` the section.
"""

from __future__ import annotations

from typing import Any

from harness.engine import SeedKey, Task
from harness.experiments.pm_astar.report import report, summary
from harness.experiments.pm_astar.run import mixture_task, trace_task
from harness.experiments.pm_astar.settings import (
    PARTS,
    PMConfig,
    config_for_level,
    config_from_manifest,
)

__all__ = ["PARTS", "config_for_level", "config_from_manifest", "plan", "report", "summary"]


def _trace(config: PMConfig, problem: str, args: dict[str, Any], runs: int, horizon: int):
    key = f"{problem}|{sorted(args.items())}|runs={runs}|T={horizon}"
    return Task(
        key=key,
        fn=trace_task,
        inputs=(problem, args, runs, horizon),
        seed=SeedKey.from_label(config.seed, key),
        label=f"{problem} {args}",
    )


def plan(config: PMConfig, records: list[dict[str, Any]], part: str = "all") -> list[Task]:
    del records  # the tasks are independent
    tasks = []
    if part in ("all", "mixture"):
        key = f"mixture|n={config.mixture_draws}"
        tasks.append(
            Task(
                key=key,
                fn=mixture_task,
                inputs=(config.mixture_draws,),
                seed=SeedKey.from_label(config.seed, key),
                label="mixture",
            )
        )
    if part in ("all", "counter"):
        tasks.append(_trace(config, "counter", {}, config.counter_runs, config.counter_horizon))
    if part in ("all", "clutter"):
        for D in config.clutter_dims:
            args = {"D": D, "seed": 5000 + D, "points": config.clutter_points}
            tasks.append(
                _trace(config, "clutter", args, config.clutter_runs, config.clutter_horizon)
            )
    if part in ("all", "logistic"):
        for name in config.logistic_sets:
            tasks.append(
                _trace(
                    config,
                    "logistic",
                    {"set": name, "seed": 0},
                    config.logistic_runs,
                    config.logistic_horizon,
                )
            )
    return tasks
