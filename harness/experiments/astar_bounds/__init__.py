"""Bounding strategies for A* as the data grow (001_78ff986a3d316097.txt, Sec. 6.2, Fig. 2b).

The mean of a 1-D Gaussian from N observations (``harness.targets.gaussian_mean``): the prior
is the proposal, o sums N Gaussian log-likelihood terms. Three bounds on o over a box:
constant (each term's max, summed), linear (each term's tangent, summed, maximised over the
box) and tight (quadratic per term, which is exact here). A* draws exact samples with each,
for N on a log grid; the paper finds constant bounds costing about O(sqrt N) times the tight
ones' evaluations and linear about 3 times.
"""

from __future__ import annotations

import math
from typing import Any

from harness.experiments.astar_costs.cells import (
    Cell,
    CostConfig,
    config_from_settings,
    plan_cells,
)
from harness.experiments.astar_costs.figures import (
    by_series,
    cost_figure,
    cost_table,
    points,
    settings_rows,
    summary_text,
)
from harness.experiments.report_parts import cell, table

NAME = "astar-bounds"
BOUNDS = ("constant", "linear", "tight")
plan = plan_cells
config_from_manifest = config_from_settings
#: 001 Sec. 6.2: evaluations of linear bounds over tight ones at large N.
PAPER_LINEAR_RATIO = 3.0


def config_for_level(level: str, seed: int = 0) -> CostConfig:
    ns = (1, 10, 100, 1000, 10000)
    data_sets, per_set = (10, 100) if level == "full" else (5, 20)
    cells = [
        Cell(bound, N, "astar", "gaussian-mean", {"N": N, "bound": bound, "seed": k}, per_set)
        for N in ns
        for bound in BOUNDS
        for k in range(data_sets)
    ]
    return CostConfig(
        experiment=NAME,
        level=level,
        seed=seed,
        cells=tuple(cells),
        notes=(
            f"{level} level: N in {ns}, {data_sets} synthetic data sets a point, {per_set} exact "
            "A* samples on each (the paper states neither its runs nor its prior).",
            "Synthetic data: theta* from the prior, y_n ~ N(theta*, 1); the prior (the "
            "proposal) is the one of harness.targets.gaussian_mean.",
        ),
    )


def _ratios(pts: list[Any]) -> dict[str, Any]:
    series = by_series(pts)
    tight = {p.x: p for p in series.get("tight", [])}
    rows = []
    for N in sorted(tight):
        t = tight[N]
        row = [cell(f"{N:g}", "num"), cell(f"{t.mean('liks'):.3g} / {t.mean('bounds'):.3g}", "num")]
        for name in ("constant", "linear"):
            p = next((q for q in series.get(name, []) if q.x == N), None)
            row.append(
                cell(
                    "-"
                    if p is None
                    else f"{p.mean('liks') / t.mean('liks'):.3g} / "
                    f"{p.mean('bounds') / t.mean('bounds'):.3g}",
                    "num",
                )
            )
        row.append(cell(f"{math.sqrt(N):.3g}", "num"))
        rows.append(row)
    return table(
        "Evaluations relative to tight bounds",
        (
            "N",
            "tight: liks / bounds a sample",
            "constant ÷ tight (liks / bounds)",
            "linear ÷ tight (liks / bounds)",
            "sqrt(N)",
        ),
        rows,
        "001 Sec. 6.2: for large N, linear bounds multiply the evaluations by about 3 and "
        "constant bounds by O(sqrt N) (the sqrt(N) column is that rate with constant 1).",
    )


def report(config: CostConfig, records: list[dict[str, Any]], manifest: dict[str, Any]) -> dict:
    del manifest
    pts = points(records)
    figures = [
        {
            "title": "likelihood evaluations (Fig. 2b)",
            "svg": cost_figure(pts, "liks", "N (data points)", "likelihood evaluations / sample"),
        },
        {
            "title": "bound evaluations (Fig. 2b)",
            "svg": cost_figure(pts, "bounds", "N (data points)", "bound evaluations / sample"),
        },
    ]
    return {
        "title": "A* with constant, linear and tight bounds as N grows",
        "notes": list(config.notes),
        "settings": settings_rows(config),
        "figure_groups": [
            {
                "title": "Cost against N (001 Fig. 2b)",
                "caption": "Mean evaluations per exact sample (bars: 2 standard errors). 001 "
                "Fig. 2b, read from its axes: all three coincide at N = 1; at N = 1e4 tight "
                "bounds stay near 1-10 evaluations while constant bounds reach about 1e3.",
                "figures": figures,
            }
        ],
        "tables": [
            _ratios(pts),
            cost_table(pts, "Evaluations per sample", "Pooled over data sets.", x_name="N"),
        ],
    }


def summary(records: list[dict[str, Any]]) -> str:
    return summary_text(records)
