"""The tasks of the minibatch-gap experiment: one per exact (graph, lam) setting and one per
(chain, algorithm, lam) chain; exact settings whose Poisson grid exceeds ``max_grid`` are
skipped by rule."""

from __future__ import annotations

from typing import Any

from harness.engine import SeedKey, Task
from harness.experiments.minibatch_gap.chains import ChainSetting, run_chain
from harness.experiments.minibatch_gap.exact_gaps import ExactSetting, run_exact
from harness.experiments.minibatch_gap.settings import MinibatchGapConfig
from harness.experiments.minibatch_gap.targets import chain_target, graph_target, grid_size

PARTS = ("all", "exact", "chains")


def _lams(config: MinibatchGapConfig, L: float) -> list[tuple[float, str]]:
    out = {L * m: f"{m:g} L" for m in config.lam_over_L}
    for m in config.lam_over_L2:
        out.setdefault(L * L * m, f"{m:g} L^2")
    return sorted(out.items())


def exact_settings(
    config: MinibatchGapConfig,
) -> tuple[list[ExactSetting], list[tuple[ExactSetting, str]]]:
    """The exact settings to run, and those skipped because their grid exceeds ``max_grid``."""
    run, skipped = [], []
    for g in config.graphs:
        target = graph_target(g, config.seed)
        for lam, label in _lams(config, g.L):
            s = ExactSetting(g.name, lam, label)
            if grid_size(target, lam, config.tail) > config.max_grid:
                skipped.append((s, f"Poisson grid > {config.max_grid:.3g} points per (x, i)"))
            else:
                run.append(s)
    return run, skipped


def chain_settings(config: MinibatchGapConfig) -> list[ChainSetting]:
    out = []
    for c in config.chains:
        L = chain_target(c, config).L
        out.append(ChainSetting(c.name, c.graph, "gibbs", None, None, c.n_steps))
        for m in c.lam_over_L2:
            out.append(ChainSetting(c.name, c.graph, "poisson-gibbs", L * L * m, m, c.n_steps))
    return out


def plan(config: MinibatchGapConfig, records: list[dict[str, Any]], part: str) -> list[Task]:
    """Every task of ``part``; no task needs another's records."""
    tasks = []
    if part in ("all", "exact"):
        for s in exact_settings(config)[0]:
            tasks.append(Task(key=s.key, fn=run_exact, inputs=(s, config), label=s.key))
    if part in ("all", "chains"):
        for c in chain_settings(config):
            seed = SeedKey.from_label(config.seed, c.key)
            tasks.append(Task(key=c.key, fn=run_chain, inputs=(c, config), seed=seed, label=c.key))
    return tasks
