"""A complete paper experiment in one file: the template ``docs/extending.md`` walks through.

000_26bed7cc1ef3ab92.txt, Sec. 2.1 (Eq. 2-3): the Gumbel-max trick draws state i with
probability p_i. Each replicate draws ``draws`` samples with the Numba ``gumbel-max`` on a
synthetic discrete target and records how often the most probable state came up; the claim is
judged on the pooled frequency over all replicates. ``tests/docs/test_template_experiment.py``
runs it through the framework, so this file stays true.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from harness.declare import Config, param
from harness.experiments.claims import Claim, Estimate, proportion, select, within_factor
from harness.experiments.framework import Column, Experiment, task
from harness.experiments.plots import Line, group, line_figure
from harness.tasks import Records, Task


@dataclass(frozen=True, kw_only=True)
class GumbelMaxConfig(Config):
    """Declared once: type, valid range, the value at each level, the label in the report."""

    experiment = "template-gumbel-max"
    D: int = param(5, low=2, doc="states")
    draws: int = param(low=1, quick=2000, full=100_000, doc="draws per replicate")
    replicates: int = param(low=1, quick=3, full=10, doc="replicates")


def _target(D: int) -> Any:
    from harness.targets.discrete import synthetic_rewards

    # A fixed pmf (its own seed): the same target in every replicate and every process.
    return synthetic_rewards(D, 16, "normal", 0.1, np.random.default_rng(12345))


def run_replicate(D: int, draws: int, *, rng: np.random.Generator) -> Records:
    """One task: ``draws`` samples; the record holds what the claim and the tables read."""
    from harness.registry import registry_for
    from harness.spec import sample

    target = _target(D)
    out = sample(registry_for(()).get("gumbel-max"), "numba", target, draws, rng)
    top = int(np.argmax(target.pmf))
    hits = int(np.sum(out.values == top))
    return [
        {
            "type": "replicate",
            "top": top,
            "p_top": float(target.pmf[top]),
            "hits": hits,
            "draws": draws,
            "evals": int(out.evals),
        }
    ]


def _frequency(records: Records) -> Estimate:
    reps = select(records, "replicate")  # Inconclusive while there are none
    est = proportion(sum(r["hits"] for r in reps), sum(r["draws"] for r in reps))
    return est.scaled(1.0 / reps[0]["p_top"])


class TemplateGumbelMax(Experiment[GumbelMaxConfig]):
    """D states, a fixed synthetic pmf; `draws` Gumbel-max samples per replicate."""

    # The parameters that count independent replicates: `--decide` multiplies them.
    replicates = ("replicates",)

    paper = "000_26bed7cc1ef3ab92.txt, Sec. 2.1"
    summary = "Gumbel-max draws on a synthetic target: frequency of the top state"
    title = "Template: the Gumbel-max trick's frequencies"
    record_types = ("replicate",)
    columns = (
        Column("task", "task_id"),
        Column("hits of the top state", "hits"),
        Column("draws", "draws"),
        Column("frequency / p", lambda r: r["hits"] / r["draws"] / r["p_top"], ".4f"),
        Column("evaluations", "evals"),
    )

    def plan(self, config: GumbelMaxConfig, records: Records, part: str) -> list[Task]:
        # The key seeds the task's generator: keep it stable, it is the task's identity.
        return [
            task(
                config,
                f"rep|D={config.D}|n={config.draws}|{k}",
                run_replicate,
                config.D,
                config.draws,
            )
            for k in range(config.replicates)
        ]

    def warm(self) -> None:
        run_replicate(2, 1, rng=np.random.default_rng(0))  # compile before anything is timed

    def claims(self, config: GumbelMaxConfig) -> tuple[Claim, ...]:
        return (
            Claim(
                id="top-frequency",
                paper="000 Sec. 2.1, Eq. 2-3",
                text="The Gumbel-max trick draws each state with its probability.",
                quantity="frequency of the most probable state / its probability",
                # An exact sampler: the ratio is 1; 2% is far beyond any bias we would accept.
                rule=within_factor(1.0, 1.02),
                measure=_frequency,
                # Possible here: a sampler off by 2% in that state's mass moves the ratio out.
                fails_if="the ratio's interval lies outside [0.98, 1.02]: a biased sampler",
            ),
        )

    def figures(self, config: GumbelMaxConfig, records: Records) -> list[dict[str, Any]]:
        reps = [r for r in records if r.get("type") == "replicate"]
        if not reps:
            return []
        ratio = [r["hits"] / r["draws"] / r["p_top"] for r in reps]
        line = Line("ours", range(1, len(reps) + 1), ratio)
        svg = line_figure([line], "replicate", "frequency / p", logx=False, logy=False)
        return [group("Frequency by replicate", "One point per replicate.", ("frequency", svg))]
