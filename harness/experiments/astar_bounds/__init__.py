"""Bounding strategies for A* as the data grow (001_78ff986a3d316097.txt, Sec. 6.2, Fig. 2b):
the mean of a 1-D Gaussian from N observations, the prior as the proposal, o a sum of N
log-likelihood terms bounded over a box by constant (each term's max), linear (tangents, summed,
maximised over the box) or tight (quadratic per term: exact here) bounds."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from harness.engine import Records
from harness.experiments import astar_cells as ac
from harness.experiments import claims as cl
from harness.experiments.declare import Config, param

WHERE = "001 Sec. 6.2, Fig. 2b"
#: The paper counts "the number of evaluations" and plots both kinds: each is a reading.
READINGS = {"liks": ("likelihood", ac.LIKS), "bounds": ("bound", ac.BOUNDS)}


@dataclass(frozen=True, kw_only=True)
class BoundsConfig(Config):
    experiment = "astar-bounds"
    ns: tuple[int, ...] = param((1, 10, 100, 1000, 10000), low=1, doc="data sizes N")
    data_sets: int = param(low=1, quick=5, full=10, doc="data sets per N")
    per_set: int = param(low=1, quick=20, full=100, doc="exact samples per data set and bound")
    notes: tuple[str, ...] = param(
        ("Synthetic data: theta* from our prior, y_n ~ N(theta*, 1); the paper gives no prior.",),
        empty=True,
    )


def _constant_slope(w: tuple[float, float]) -> Callable[[Records], cl.Estimate]:
    """The growth exponent of constant / tight over the N > 1 (at N = 1 they coincide)."""

    def measure(records: Records) -> cl.Estimate:
        m = ac.means(ac.cells(records, lambda r: r["x"] > 1))
        ns = sorted(n for s, n in m if s == "constant" and ("tight", n) in m)
        return cl.loglog_slope(ns, [ac.ratio(("constant", n), ("tight", n), w)(m) for n in ns])

    return measure


class AstarBounds(ac.CellExperiment[BoundsConfig]):
    name = "astar-bounds"
    paper = "001_78ff986a3d316097.txt, Sec. 6.2 (Fig. 2b)"
    summary = "A* with constant, linear and tight bounds on a Gaussian mean as N grows"
    help = (
        "the mean of a 1-D Gaussian from N observations (prior as the proposal), N in 1..1e4: "
        "A* with constant, linear and tight (quadratic) bounds, evaluations per sample."
    )
    title = "A* with constant, linear and tight bounds as N grows"
    config_type = BoundsConfig
    xlabel = "N"
    kinds = ((" liks", ac.LIKS), (" bounds", ac.BOUNDS))  # Fig. 2b draws both

    def cells(self, c: BoundsConfig) -> list[ac.Cell]:
        return [
            ac.Cell(
                kind, N, "astar", "gaussian-mean", {"N": N, "bound": kind, "seed": k}, c.per_set
            )
            for N in c.ns
            for kind in ("constant", "linear", "tight")
            for k in range(c.data_sets)
        ]

    def claims(self, config: BoundsConfig) -> tuple[cl.Claim, ...]:
        top = max(config.ns)
        linear = [
            cl.Claim(
                id=f"linear-3x-tight-{key}",
                paper=WHERE,
                text="For large N, linear bounds multiply the evaluations by 3 over tight bounds.",
                paper_value="3",
                quantity=f"linear / tight, {what} evaluations per sample at N = {top}",
                # "Multiplies by X" (read as "about X") -> within 1.5x of X.
                rule=cl.within_factor(3.0, 1.5),
                measure=ac.on(
                    lambda r: r["x"] == top, ac.ratio(("linear", top), ("tight", top), w)
                ),
            )
            for key, (what, w) in READINGS.items()
        ]
        constant = [
            cl.Claim(
                id=f"constant-sqrt-n-{key}",
                paper=WHERE,
                text="Constant bounds multiply the evaluations by O(sqrt N) over tight bounds.",
                paper_value="slope 0.5",
                quantity=f"log-log slope of constant / tight ({what} evaluations) on N, N > 1",
                # "Grows like sqrt N" -> the log-log slope within [0.4, 0.6].
                rule=cl.between(0.4, 0.6, "slope in [0.4, 0.6]"),
                measure=_constant_slope(w),
            )
            for key, (what, w) in READINGS.items()
        ]
        return (*linear, *constant)
