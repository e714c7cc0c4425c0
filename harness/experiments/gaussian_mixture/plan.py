"""The tasks of the truncated Gaussian mixture experiment: the exact posterior, and once its
record is on disk, one chain per sampler that receives it."""

from __future__ import annotations

from typing import Any

from harness.engine import SeedKey, Task
from harness.experiments.gaussian_mixture.run import run_chain, run_truth
from harness.experiments.gaussian_mixture.settings import GaussianMixtureConfig, run_settings


def plan(config: GaussianMixtureConfig, records: list[dict[str, Any]], part: str) -> list[Task]:
    """The truth task; the chain tasks only once the truth record is in ``records``."""
    truth_setting, *chains = run_settings(config)
    tasks = [
        Task(
            key=truth_setting.key,
            fn=run_truth,
            inputs=(truth_setting, config.seed),
            label=f"exact posterior, N = {config.n_data}, {config.n_bins}^2 boxes",
        )
    ]
    truth = next((r for r in records if r.get("key") == truth_setting.key), None)
    if truth is None:
        return tasks
    for s in chains:
        tasks.append(
            Task(
                key=s.key,
                fn=run_chain,
                inputs=(s, config.seed, truth),
                seed=SeedKey.from_label(config.seed, s.key),
                label=f"{s.algorithm}, {s.n_steps} iterations",
            )
        )
    return tasks
