"""Drill-down A* against rejection on p(x) ∝ exp(-x) / (1 + x)^a (001_78ff986a3d316097.txt,
Sec. 6.1, Fig. 2a): proposal Exp(1), o(x) = -a log(1 + x) is unimodal (mode 0), so A* needs no
queue; rejection's expected cost is exp(M) nu / Z = 1 / Z (M = 0, nu = 1)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

import numpy as np

from harness.engine import Records
from harness.experiments import astar_cells as ac
from harness.experiments import claims as cl
from harness.experiments.declare import Config, param
from harness.experiments.plots import Line

WHERE = "001 Sec. 6.1, Fig. 2a"


@dataclass(frozen=True, kw_only=True)
class DrillDownConfig(Config):
    experiment = "astar-drill-down"
    points: int = param(low=2, quick=7, full=13, doc="a: log-spaced points of [1, 1e6]")
    draws: int = param(1000, low=1, doc="exact samples per sampler and a")
    # Rejection costs about a evaluations a sample: 1000 samples at a = 1e6 are 1e9.
    rejection_top: float = param(low=1.0, quick=1e4, full=1e6, doc="rejection run up to a =")


@cache
def inverse_z(a: float) -> float:
    from harness.targets.box_density import peaky_exponential

    return math.exp(-peaky_exponential(a).log_normaliser)


def _drill_top(records: Records) -> cl.Estimate:
    runs = cl.select(records, "cell", series="drill-down A*")
    return cl.mean_interval(max(runs, key=lambda r: r["x"])["liks"], "draws")


def _rejection_slope(records: Records) -> cl.Estimate:
    runs = cl.select(records, "cell", series="rejection")
    x = [inverse_z(float(r["x"])) for r in runs]
    return cl.loglog_slope(x, [np.mean(r["liks"]) for r in runs], "values of a")


class AstarDrillDown(ac.CellExperiment[DrillDownConfig]):
    """p(x) proportional to exp(-x)/(1+x)^a, proposal Exp(1), a log-spaced over [1, 1e6]: exact
    samples by astar-drill-down and by rejection, and rejection's expected cost 1/Z."""

    paper = "001_78ff986a3d316097.txt, Sec. 6.1 (Fig. 2a)"
    summary = "A* drill-down vs rejection on exp(-x)/(1+x)^a: evaluations per sample vs a"
    title = "A* drill-down vs rejection on exp(-x) / (1 + x)^a"
    xlabel = "a"

    def cells(self, c: DrillDownConfig) -> list[ac.Cell]:
        out = []
        for a in (float(f"{a:.6g}") for a in np.logspace(0, 6, c.points)):
            out.append(ac.Cell("drill-down A*", a, "astar-drill-down", "peaky", {"a": a}, c.draws))
            if a <= c.rejection_top:
                out.append(ac.Cell("rejection", a, "rejection", "peaky", {"a": a}, c.draws))
        return out

    def guides(self, config: DrillDownConfig) -> list[Line]:
        a = sorted({c.x for c in self.cells(config)})
        return [Line("rejection, expected: 1 / Z", a, [inverse_z(x) for x in a], style="--")]

    def claims(self, config: DrillDownConfig) -> tuple[cl.Claim, ...]:
        return (
            cl.Claim(
                id="drill-down-1-to-10",
                paper=WHERE,
                text="Drill-down A* needs 1 to 10 likelihood evaluations a sample, a in [1, 1e6].",
                paper_value="1 to 10 (read off Fig. 2a)",
                quantity="drill-down: likelihood evaluations per sample at the largest a",
                # A band read off a figure -> the band itself.
                rule=cl.between(1.0, 10.0),
                measure=_drill_top,
            ),
            cl.Claim(
                id="rejection-like-1-over-z",
                paper=f"{WHERE}; Sec. 5",
                text="Rejection's cost grows like 1 / Z (geometric trials, rate Z / exp(M) nu).",
                paper_value="slope 1",
                quantity="log-log slope of rejection's likelihood evaluations per sample on 1/Z",
                # "Grows like X" -> the log-log slope within 0.1 of X's exponent.
                rule=cl.between(0.9, 1.1, "slope in [0.9, 1.1]"),
                measure=_rejection_slope,
            ),
        )
