"""Potts model: marginal error vs iterations and wall time (003_07f92522b9b1c588.txt, Sec. 4.1).

Gibbs, Poisson-Gibbs and DoubleMIN-Gibbs on a fully connected 20 x 20 Potts model
(Fig. 1a/1b, 2a/2b), one task per (sampler, replicate) chain.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from harness.engine import Records, Task
from harness.experiments.claims import (
    Claim,
    Estimate,
    Inconclusive,
    above,
    between,
    exact,
    mean_interval,
    ratio_of_means,
    within_factor,
)
from harness.experiments.framework import Column, Experiment, task
from harness.experiments.potts.report import figure_groups
from harness.experiments.potts.run import run_chain, warm
from harness.experiments.potts.settings import PAPER_FACTORS, PottsConfig, run_settings

WHERE = "003 Sec. 4.1"
Measure = Callable[[Records], Estimate]


def _runs(records: Records, label: str) -> Records:
    runs = [r for r in records if r.get("type") == "chain" and r["label"] == label]
    if not runs:
        raise Inconclusive(f"no record of {label} yet")
    return runs


def _per_iteration(label: str, field: str) -> Measure:
    """The mean of a per-iteration count over runs; one run gives the interval of a Poisson
    count's mean over its T iterations, +-1.96 sqrt(m / T)."""

    def measure(records: Records) -> Estimate:
        runs = _runs(records, label)
        if len(runs) > 1:
            return mean_interval([r[field] for r in runs])
        m, T = runs[0][field], runs[0]["n_steps"]
        h = 1.96 * math.sqrt(m / T)
        return Estimate(m, m - h, m + h, T, "iterations", "one run: a Poisson count's mean")

    return measure


def _final_error(r: dict[str, Any]) -> float:
    return float(r["error"][-1])


def _us_per_iteration(r: dict[str, Any]) -> float:
    return 1e6 * float(r["sampler_s"][-1]) / r["n_steps"]


def _ratio(num: str, den: str, of: Callable[[dict[str, Any]], float]) -> Measure:
    return lambda rs: ratio_of_means(
        [of(r) for r in _runs(rs, num)], [of(r) for r in _runs(rs, den)]
    )


#: (id, figure, the paper's sentence, quantity, numerator, denominator, per-run value, rule).
ORDERINGS = (
    (
        "pg-comparable-to-gibbs",
        "Fig. 1a",
        "Poisson-Gibbs performs comparably with plain Gibbs per iteration.",
        "final error",
        "pg-1",
        "gibbs",
        _final_error,
        within_factor(1.0, 2.0),
    ),
    (
        "pg-beats-small-dmin",
        "Fig. 1a",
        "Poisson-Gibbs outperforms DoubleMIN-Gibbs when lambda2 is not large enough.",
        "final error",
        "dmin-1",
        "pg-1",
        _final_error,
        above(1.0),
    ),
    (
        "lambda-approaches-gibbs",
        "Fig. 1b",
        "With a larger lambda, Poisson-Gibbs converges more like plain Gibbs.",
        "final error",
        "pg-0.1",
        "pg-5",
        _final_error,
        above(1.0),
    ),
    (
        "pg-faster-than-gibbs",
        "Fig. 2a",
        "Poisson-Gibbs is significantly faster than plain Gibbs.",
        "time per iteration",
        "gibbs",
        "pg-1",
        _us_per_iteration,
        above(1.0),
    ),
    (
        "pg-faster-than-dmin",
        "Fig. 2a",
        "Poisson-Gibbs is faster than DoubleMIN-Gibbs.",
        "time per iteration",
        "dmin-1e4",
        "pg-1",
        _us_per_iteration,
        above(1.0),
    ),
)


class Potts(Experiment[PottsConfig]):
    name = "potts"
    paper = "003_07f92522b9b1c588.txt, Sec. 4.1 (Fig. 1a/1b, 2a/2b)"
    summary = "Potts 20x20, D = 10: marginal error vs iterations and time, factors per step"
    help = (
        "20x20 Potts, D = 10, beta = 4.6; Gibbs, Poisson-Gibbs (lam = 0.1, 1, 5 L^2), "
        "DoubleMIN-Gibbs (lam2 = L^2, 1e4 L^2): marginal error against iterations and time, "
        "and factors per iteration."
    )
    title = "Potts model: marginal error of Gibbs, Poisson-Gibbs and DoubleMIN-Gibbs"
    config_type = PottsConfig
    record_types = ("chain",)
    columns = (
        Column("sampler", "label"),
        Column("run", "replicate"),
        Column("iterations", "n_steps"),
        Column("us / iter", _us_per_iteration, ".3g"),
        Column("distinct factors / iter", "factors_per_iter", ".4g"),
        Column("draws B / iter", "draws_per_iter", ".4g"),
        Column("kept draws / iter", "kept_per_iter", ".4g"),
        Column("2nd minibatch / iter", "second_per_iter", ".4g"),
        Column("accept rate", "accept_rate", ".3g"),
        Column("final error", _final_error, ".4g"),
        Column("set-up s (once)", "setup_s", ".3g"),
        Column("wall s", "wall_s", ".4g"),
    )

    def plan(self, config: PottsConfig, records: Records, part: str) -> list[Task]:
        return [
            task(config, s.key, run_chain, s, config.seed, label=f"{s.sampler.label} {s.replicate}")
            for s in run_settings(config)
        ]

    def warm(self) -> None:
        warm()

    def claims(self, config: PottsConfig) -> tuple[Claim, ...]:
        # The paper does not say whether it counts the Poisson draws B (Statement 1) or the
        # distinct factors they hit: both readings are judged.
        readings = (
            ("draws", "draws_per_iter", "Poisson draws B"),
            ("distinct", "factors_per_iter", "distinct factors"),
        )
        factors = [
            Claim(
                id=f"factors-{label}-{reading}",
                paper=WHERE,
                text=f"Poisson-Gibbs with lambda = {label[3:]} L^2 evaluates {paper:g} factors "
                "per iteration on average.",
                paper_value=f"{paper:g}",
                quantity=f"{label}: {what} per iteration",
                rule=within_factor(paper, 1.25),
                measure=_per_iteration(label, field),
            )
            for label, paper in PAPER_FACTORS.items()
            if label != "gibbs"
            for reading, field, what in readings
        ]
        orderings = [
            Claim(
                id=cid,
                paper=f"{WHERE}, {fig}",
                text=text,
                quantity=f"{what}, {num} / {den}",
                rule=rule,
                measure=_ratio(num, den, of),
            )
            for cid, fig, text, what, num, den, of, rule in ORDERINGS
        ]
        first = config.samplers[0].label
        L = Claim(
            id="L",
            paper=WHERE,
            text="The model's L (the largest local energy variation) is 5.09.",
            paper_value="5.09",
            quantity="L of our model",
            rule=between(5.085, 5.095, "rounds to 5.09"),
            measure=lambda rs: exact(_runs(rs, first)[0]["L"]),
        )
        return (*factors, L, *orderings)

    def figures(self, config: PottsConfig, records: Records) -> list[dict[str, Any]]:
        return figure_groups(records, config)
