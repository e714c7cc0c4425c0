"""The Potts figures (003_07f92522b9b1c588.txt, Sec. 4.1, Fig. 1/2): error curves."""

from __future__ import annotations

from typing import Any

import numpy as np

from harness.experiments.plots import Line, group, line_figure
from harness.experiments.potts.settings import PottsConfig
from harness.experiments.report_parts import by_label

COLORS = {
    "gibbs": "#000000",
    "pg-0.1": "#a6cee3",
    "pg-1": "#1f78b4",
    "pg-5": "#08306b",
    "dmin-1": "#e6550d",
    "dmin-1e4": "#a63603",
}


def _lines(chains: list[dict[str, Any]], config: PottsConfig, x: str) -> list[Line]:
    """Mean error over a sampler's runs against iterations or sampler seconds."""
    groups, lines = by_label(chains), []
    for s in config.samplers:
        recs = groups.get(s.label)
        if recs:
            xs = np.mean([r[x] for r in recs], axis=0)
            err = np.mean([r["error"] for r in recs], axis=0)
            label = f"{s.label} ({len(recs)} run{'s' if len(recs) > 1 else ''})"
            lines.append(Line(label, xs, err, color=COLORS.get(s.label)))
    return lines


def figure_groups(chains: list[dict[str, Any]], config: PottsConfig) -> list[dict[str, Any]]:
    if not chains:
        return []
    ylabel = "marginal l2 error (mean over sites)"
    caption = (
        f"{config.side} x {config.side} Potts, D = {config.D}, beta = {config.beta:g}, L = "
        f"{chains[0]['L']:.4f}. Error: mean over sites of the l2 distance between the running "
        "empirical marginal and uniform, averaged over the runs in the legend. pg-c: "
        "Poisson-Gibbs with lambda = c L^2; dmin-c: DoubleMIN-Gibbs with lambda = L^2 and "
        "lambda2 = c L^2. Time: Numba sampler calls only, summed chunk by chunk."
    )
    return [
        group(
            "Marginal error",
            caption,
            (
                "error vs iterations (Fig. 1a/1b)",
                line_figure(_lines(chains, config, "iterations"), "iterations", ylabel),
            ),
            (
                "error vs wall time (Fig. 2a/2b)",
                line_figure(_lines(chains, config, "sampler_s"), "sampler time (s)", ylabel),
            ),
        )
    ]
