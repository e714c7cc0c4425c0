"""A* and OS* on the clutter posterior as the dimension grows (001_78ff986a3d316097.txt,
Sec. 6.1).

theta ~ N(0, 2^2 I) is the proposal; 20 points, half uniform in [-5, -3]^D and half in
[2, 4]^D, each x ~ 0.5 N(theta, I) + 0.5 N(0, 100^2 I): a sharply bimodal posterior. Constant
per-point bounds (theta clipped into the box). For D = 1..4, A* (001 Alg. 2) and piecewise-
constant OS* (splitting the rejected piece at the rejected point) draw a few samples on each
of several data sets.
"""

from __future__ import annotations

from typing import Any

from harness.experiments.astar_costs.cells import Cell, CostConfig, config_from_settings, plan_cells
from harness.experiments.astar_costs.figures import (
    by_series,
    cost_figure,
    cost_table,
    points,
    settings_rows,
    summary_text,
)
from harness.experiments.report_parts import cell, table

NAME = "astar-clutter"
plan = plan_cells
config_from_manifest = config_from_settings
#: 001 Sec. 6.1: likelihood evaluations of A* a sample at D = 3 and D = 4 (text, "about").
PAPER_ASTAR = {3: 900.0, 4: 4000.0}
#: ... and OS*'s extra computation over A*, across the problems.
PAPER_OS_STAR_EXTRA = (0.16, 0.40)


def config_for_level(level: str, seed: int = 0) -> CostConfig:
    data_sets, per_set = (100, 10) if level == "full" else (10, 10)
    cells = []
    for D in (1, 2, 3, 4):
        for k in range(data_sets):
            args = {"D": D, "seed": 1000 * D + k}
            cells.append(Cell("A*", D, "astar", "clutter", args, per_set, paper=PAPER_ASTAR.get(D)))
            cells.append(
                Cell("OS*", D, "os-star", "clutter", args, per_set, params={"strategy": 1})
            )
    return CostConfig(
        experiment=NAME,
        level=level,
        seed=seed,
        cells=tuple(cells),
        bound_cost=1.0,
        notes=(
            f"{level} level: D = 1..4, {data_sets} synthetic data sets a dimension (the paper's "
            f"sizes: 20 points, half in [-5,-3]^D, half in [2,4]^D), {per_set} exact samples on "
            f"each: {data_sets * per_set} samples a point (the paper averages 100 runs).",
            "Prior sd 2 and inlier weight 0.5 are the values of the paper's code "
            "(notes-astar.md Sec. 5); the paper's text does not state them.",
            "Cost for the OS* comparison: likelihood + bound evaluations (the paper says "
            "'computation' without defining it).",
        ),
    )


def _ratios(pts: list[Any]) -> dict[str, Any]:
    series = by_series(pts)
    astar = {p.x: p for p in series.get("A*", [])}
    rows = []
    for p in series.get("OS*", []):
        a = astar.get(p.x)
        if a is None:
            continue
        rows.append(
            [
                cell(f"{p.x:g}", "num"),
                cell(f"{a.mean('liks'):.4g}", "num"),
                cell("-" if a.paper is None else f"{a.paper:g}", "num"),
                cell(f"{p.mean('liks') / a.mean('liks') - 1:+.0%}", "num"),
                cell(f"{p.mean('cost', 1.0) / a.mean('cost', 1.0) - 1:+.0%}", "num"),
            ]
        )
    lo, hi = PAPER_OS_STAR_EXTRA
    return table(
        "A* against the paper, OS* against A*",
        ("D", "A* liks / sample", "paper (001 Sec. 6.1)", "OS* liks extra", "OS* cost extra"),
        rows,
        f"The paper: A* needs about 900 likelihood evaluations at D = 3 and 4000 at D = 4; OS* "
        f"needs {lo:.0%} to {hi:.0%} more computation on average.",
    )


def report(config: CostConfig, records: list[dict[str, Any]], manifest: dict[str, Any]) -> dict:
    del manifest
    pts = points(records)
    paper = {"A* (Sec. 6.1 text)": sorted(PAPER_ASTAR.items())}
    figures = [
        {
            "title": "likelihood evaluations",
            "svg": cost_figure(
                pts, "liks", "D", "likelihood evaluations / sample", logx=False, paper=paper
            ),
        },
        {
            "title": "bound evaluations",
            "svg": cost_figure(pts, "bounds", "D", "bound evaluations / sample", logx=False),
        },
    ]
    return {
        "title": "A* and OS* on the clutter problem, D = 1..4",
        "notes": list(config.notes),
        "settings": settings_rows(config),
        "figure_groups": [
            {
                "title": "Cost against dimension (001 Sec. 6.1)",
                "caption": "Mean evaluations per exact sample over all data sets (bars: 2 "
                "standard errors; the spread between data sets is part of it). Hollow squares: "
                "the paper's stated A* costs.",
                "figures": figures,
            }
        ],
        "tables": [
            _ratios(pts),
            cost_table(
                pts, "Evaluations per sample", "Pooled over data sets.", bound_cost=1.0, x_name="D"
            ),
        ],
    }


def summary(records: list[dict[str, Any]]) -> str:
    return summary_text(records, 1.0)
