"""Drill-down A* against rejection on p(x) ∝ exp(-x) / (1 + x)^a (001_78ff986a3d316097.txt,
Sec. 6.1, Fig. 2a).

Proposal Exp(1), o(x) = -a log(1 + x), unimodal with its mode at 0. For each a on a log grid
over [1, 1e6]: ``draws`` exact samples by ``astar-drill-down`` and, where it finishes in
reasonable time, by ``rejection``; the expected cost of rejection, exp(M) nu / Z = 1 / Z
(M = 0, nu = 1), from the quadrature log Z at every a.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from harness.experiments.astar_costs.cells import Cell, CostConfig, config_from_settings, plan_cells
from harness.experiments.astar_costs.figures import (
    cost_figure,
    cost_table,
    points,
    settings_rows,
    summary_text,
)

NAME = "astar-drill-down"
plan = plan_cells
config_from_manifest = config_from_settings


def config_for_level(level: str, seed: int = 0) -> CostConfig:
    grid = np.logspace(0, 6, 13 if level == "full" else 7)
    runs = 1000
    # Rejection costs about a evaluations a sample (1 / Z): 1000 samples at a = 1e6 are 1e9.
    rejection_top = 1e6 if level == "full" else 1e4
    cells = []
    for a in grid:
        a = float(f"{a:.6g}")
        cells.append(Cell("drill-down A*", a, "astar-drill-down", "peaky", {"a": a}, runs))
        if a <= rejection_top:
            cells.append(Cell("rejection", a, "rejection", "peaky", {"a": a}, runs))
    return CostConfig(
        experiment=NAME,
        level=level,
        seed=seed,
        cells=tuple(cells),
        notes=(
            f"{level} level: a on {len(grid)} log-spaced points of [1, 1e6], {runs} samples "
            f"each (the paper's 1000 runs); rejection up to a = {rejection_top:g}, beyond that "
            "only its expected cost 1 / Z (dashed).",
            "Target: exactly the paper's (no data set).",
        ),
    )


def _expected_rejection(xs: list[float]) -> list[tuple[float, float]]:
    from harness.targets.box_density import peaky_exponential

    return [(a, float(np.exp(-peaky_exponential(a).log_normaliser))) for a in xs]


def report(config: CostConfig, records: list[dict[str, Any]], manifest: dict[str, Any]) -> dict:
    del manifest
    pts = points(records)
    xs = sorted({c.x for c in config.cells})
    drill = [p for p in pts if p.series == "drill-down A*"]
    lines = []
    if drill:
        top = max(drill, key=lambda p: p.x)
        lines.append(
            f"drill-down at a = {top.x:g}: {top.mean('liks'):.3g} likelihood and "
            f"{top.mean('bounds'):.3g} bound evaluations a sample; log2(a) = {np.log2(top.x):.3g}"
        )
    figure = cost_figure(
        pts,
        "liks",
        "a (peakiness)",
        "likelihood evaluations / sample",
        extra={"rejection, expected 1 / Z": _expected_rejection(xs)},
    )
    bounds = cost_figure(pts, "bounds", "a (peakiness)", "bound evaluations / sample")
    return {
        "title": "A* drill-down vs rejection on exp(-x) / (1 + x)^a",
        "notes": [*config.notes, *lines],
        "settings": settings_rows(config),
        "figure_groups": [
            {
                "title": "Cost against peakiness (001 Fig. 2a)",
                "caption": "Mean evaluations per exact sample (bars: 2 standard errors). "
                "001 Fig. 2a, read from its axes: drill-down stays between 1 and 10 likelihood "
                "evaluations a sample over a in [1, 1e6] while rejection grows without bound "
                "(its curve leaves the plot); the paper gives no table.",
                "figures": [
                    {"title": "likelihood evaluations (Fig. 2a)", "svg": figure},
                    {"title": "bound evaluations", "svg": bounds},
                ],
            }
        ],
        "tables": [
            cost_table(pts, "Evaluations per sample", "One row per (sampler, a).", x_name="a")
        ],
    }


def summary(records: list[dict[str, Any]]) -> str:
    return summary_text(records)
