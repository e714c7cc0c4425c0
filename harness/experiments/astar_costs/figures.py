"""What every A* experiment's report shows: evaluations per sample by cell, as a table beside
the paper's numbers and as cost curves, with the paper's points drawn on the same axes."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from harness.experiments.report_parts import cell, table
from harness.experiments.report_parts import fmt as _g
from harness.figures import inline_svg
from harness.text_table import text_table


@dataclass(frozen=True)
class Point:
    """The draws of every cell at one (series, x), pooled over data sets."""

    series: str
    x: float
    algorithm: str
    liks: np.ndarray
    bounds: np.ndarray
    data_sets: int
    paper: float | None
    sampler_s: float

    @property
    def n(self) -> int:
        return int(self.liks.size)

    def mean(self, what: str, bound_cost: float = 0.0) -> float:
        return float(np.mean(self.values(what, bound_cost)))

    def se(self, what: str, bound_cost: float = 0.0) -> float:
        v = self.values(what, bound_cost)
        return float(np.std(v, ddof=1) / math.sqrt(v.size)) if v.size > 1 else math.nan

    def values(self, what: str, bound_cost: float = 0.0) -> np.ndarray:
        if what == "liks":
            return self.liks.astype(float)
        if what == "bounds":
            return self.bounds.astype(float)
        return self.liks + bound_cost * self.bounds


def points(records: list[dict[str, Any]]) -> list[Point]:
    """One point per (series, x), in the order the cells were planned."""
    groups: dict[tuple[str, float], list[dict[str, Any]]] = {}
    for r in records:
        if r.get("type") == "cell":
            groups.setdefault((r["series"], float(r["x"])), []).append(r)
    out = []
    for (series, x), recs in groups.items():
        out.append(
            Point(
                series=series,
                x=x,
                algorithm=recs[0]["algorithm"],
                liks=np.concatenate([np.asarray(r["liks"]) for r in recs]),
                bounds=np.concatenate([np.asarray(r["bounds"]) for r in recs]),
                data_sets=len(recs),
                paper=recs[0].get("paper"),
                sampler_s=float(sum(r["sampler_s"] for r in recs)),
            )
        )
    return out


def by_series(pts: list[Point]) -> dict[str, list[Point]]:
    out: dict[str, list[Point]] = {}
    for p in pts:
        out.setdefault(p.series, []).append(p)
    for series in out.values():
        series.sort(key=lambda p: p.x)
    return out


def cost_figure(
    pts: list[Point],
    what: str,
    xlabel: str,
    ylabel: str,
    *,
    bound_cost: float = 0.0,
    logx: bool = True,
    logy: bool = True,
    paper: dict[str, Sequence[tuple[float, float]]] | None = None,
    extra: dict[str, Sequence[tuple[float, float]]] | None = None,
) -> str:
    """Mean ``what`` ("liks", "bounds" or "cost") per sample against x, one line per series
    with 2-standard-error bars; ``paper`` points (hollow markers) on the same axes, and
    ``extra`` curves (dashed) such as an exact expectation."""
    fig, ax = plt.subplots(figsize=(5.6, 3.8))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for k, (series, line) in enumerate(by_series(pts).items()):
        xs = np.array([p.x for p in line])
        ys = np.array([p.mean(what, bound_cost) for p in line])
        es = np.array([2 * p.se(what, bound_cost) for p in line])
        ax.errorbar(
            xs,
            ys,
            yerr=es,
            marker="o",
            ms=3,
            lw=1.3,
            capsize=2,
            label=series,
            color=colors[k % len(colors)],
        )
    for k, (name, xy) in enumerate((paper or {}).items()):
        if xy:
            px, py = zip(*xy, strict=True)
            ax.plot(
                px,
                py,
                ls="none",
                marker="s",
                mfc="none",
                ms=7,
                mew=1.4,
                color=colors[(k + 5) % len(colors)],
                label=f"paper: {name}",
            )
    for name, xy in (extra or {}).items():
        if xy:
            px, py = zip(*xy, strict=True)
            ax.plot(px, py, ls="--", lw=1.0, color="0.4", label=name)
    ax.set(xscale="log" if logx else "linear", yscale="log" if logy else "linear")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=7, frameon=False)
    return inline_svg(fig)


def cost_table(
    pts: list[Point],
    title: str,
    caption: str,
    *,
    bound_cost: float = 0.0,
    x_name: str = "x",
    paper_name: str = "paper",
) -> dict[str, Any]:
    rows = []
    for p in pts:
        rows.append(
            [
                cell(p.series),
                cell(_g(p.x, "g"), "num"),
                cell(p.algorithm),
                cell(p.n, "num"),
                cell(p.data_sets, "num"),
                cell(f"{p.mean('liks'):.4g} ± {2 * p.se('liks'):.2g}", "num"),
                cell(f"{p.mean('bounds'):.4g} ± {2 * p.se('bounds'):.2g}", "num"),
                cell(_g(p.mean("cost", bound_cost), ".4g"), "num"),
                cell(_g(p.paper, ".4g"), "num"),
                cell(_g(1e3 * p.sampler_s / max(p.n, 1), ".3g"), "num"),
            ]
        )
    columns = (
        "series",
        x_name,
        "algorithm",
        "samples",
        "data sets",
        "likelihood evals / sample (± 2 se)",
        "bound evals / sample (± 2 se)",
        f"cost (liks + {bound_cost:g} x bounds)",
        paper_name,
        "ms / sample",
    )
    return table(title, columns, rows, caption)


def summary_text(records: list[dict[str, Any]], bound_cost: float = 0.0) -> str:
    rows = [
        [
            p.series,
            f"{p.x:g}",
            str(p.n),
            f"{p.mean('liks'):.4g}",
            f"{p.mean('bounds'):.4g}",
            f"{p.mean('cost', bound_cost):.4g}",
            _g(p.paper, ".4g"),
        ]
        for p in points(records)
    ]
    headers = ("series", "x", "samples", "liks/sample", "bounds/sample", "cost", "paper")
    return text_table(headers, rows, align="lrrrrrr")


def settings_rows(config: Any) -> list[tuple[str, str]]:
    rows = [("level", config.level), ("seed", str(config.seed))]
    rows.append(("cells", f"{len(config.cells)} (one task each; table below)"))
    if config.bound_cost:
        rows.append(("cost", f"likelihood evaluations + {config.bound_cost:g} x bound evaluations"))
    return rows
