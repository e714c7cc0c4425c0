"""A* against OS* on robust (Cauchy) regression (001_78ff986a3d316097.txt, Sec. 6.4, Fig. 3),
and a slice sampler's mode switches; cost = liks + (D + 1) x bounds. A* draws 1 + Poisson(1/p - 1)
points per expansion, OS* refines on a share p of rejections; "single" cells draw one sample at
a time, "reuse" cells 200 with the bounds kept (001 Sec. 4).

OS*'s second strategy "splits the region with largest probability under the proposal" (001
Sec. 6.4): the base proposal nu(B) (os-star strategy 2) or OS*'s own envelope nu(B) exp(M(B))
(strategy 3), both split at the region's median; strategy 4 is 3 split at a fresh point of the
region, as 001 Sec. 6 splits every region "at the sampled X_k point". Each claim counts the
literal reading, strategy 2 by the proposal's mass; the others are readings under it, and the
Fig. 3 readings say which puts the diamonds where the figure has them. (The proposal's mass
split at a sampled point, the words of both sections at once, is not an os-star strategy.)
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import njit

from harness.declare import Config, param
from harness.experiments import astar_cells as ac
from harness.experiments import claims as cl
from harness.experiments.framework import Column, task
from harness.experiments.plots import Line, group, line_figure
from harness.tasks import Records, Task

WHERE = "001 Sec. 6.4, Fig. 3"
#: The slice bracket's initial width (the modes are about 0.1 wide and 5.7 apart at D = 2).
WIDTH = 1.0
#: OS*'s series by os-star strategy: 1, 2 (nu(B) read as the proposal's mass), 3 (read as the
#: envelope's, nu(B) exp(M)) and 4 (3 split at a sampled point, not the median).
SERIES = {1: "OS* s1", 2: "OS* s2", 3: "OS* s2 envelope", 4: "OS* s2 envelope sampled"}
#: The paper's two strategies under each reading of the second.
READINGS = {
    "proposal": ("OS* s1", "OS* s2"),
    "envelope": ("OS* s1", "OS* s2 envelope"),
    "envelope-sampled": ("OS* s1", "OS* s2 envelope sampled"),
}
PANEL = {"single": "left", "reuse": "right"}


@dataclass(frozen=True, kw_only=True)
class RobustConfig(Config):
    experiment = "astar-robust"
    D: int = param(2, low=1, doc="dimension D (A* and OS*)")
    N: int = param(250, low=2, doc="data points N")
    rates: tuple[float, ...] = param((1.0, 0.5, 0.2, 0.1), low=0.01, high=1.0, doc="rates p")
    single_sets: int = param(low=1, quick=3, full=20, doc="single samples: data sets")
    single_draws: int = param(low=1, quick=2, full=5, doc="single samples: draws per data set")
    reuse_sets: int = param(low=1, quick=2, full=5, doc="reused bounds: data sets")
    reuse_draws: int = param(200, low=1, doc="reused bounds: draws per data set")
    slice_dims: tuple[int, ...] = param(low=1, quick=(2,), full=(2, 3), doc="slice sampler: D")
    strategies: tuple[int, ...] = param(
        (1, 2, 3, 4),
        choices=(1, 2, 3, 4),
        doc="OS* strategies (os-star): 1, 2 (largest nu(B)), 3 (2 read as largest nu(B) exp(M)), "
        "4 (3 split at a sampled point)",
    )
    budget_factor: int = param(10, low=1, doc="slice budget: this many times A*'s")
    notes: tuple[str, ...] = param(
        (
            "Ours: the prior sd (5), the per-point bounds, and OS* s2's readings: largest nu(B) "
            "or largest nu(B) exp(M) ('envelope'), split at the median or at a point drawn in "
            "the region ('sampled').",
        ),
        empty=True,
    )


def mode_of(x: np.ndarray) -> int:
    """+1 near +w* = (2, ..., 2), -1 near -w*, 0 in between (hysteresis for switches)."""
    m = float(np.mean(x))
    return 1 if m > 1.0 else (-1 if m < -1.0 else 0)


def slice_chain(target: Any, budget: int, rng: np.random.Generator) -> dict[str, Any]:
    """Slice steps (Neal 2003: stepping out, shrinkage) along random directions until ``budget``
    density evaluations are spent; the mode switches and the share of states near +w*."""
    o, lo, hi, data = njit(cache=False)(target.log_lik), target.lo, target.hi, target.data

    def phi(x: np.ndarray) -> float:  # i + o in the box (i is uniform there), -inf outside
        return -math.inf if np.any(x < lo) or np.any(x > hi) else float(o(x, data))

    x = target.lo + rng.random(target.d) * (target.hi - target.lo)  # a draw of the prior
    fx = phi(x)
    evals, steps, switches, last, plus = 1, 0, 0, mode_of(x), 0
    while evals < budget:
        d = rng.standard_normal(target.d)
        d /= np.linalg.norm(d)
        level = fx - rng.standard_exponential()
        left = -WIDTH * rng.random()
        right = left + WIDTH
        while phi(x + left * d) > level and evals < budget:
            left, evals = left - WIDTH, evals + 1
        while phi(x + right * d) > level and evals < budget:
            right, evals = right + WIDTH, evals + 1
        evals += 2  # the two evaluations that ended the stepping out
        while evals < budget:
            t = left + rng.random() * (right - left)
            fy = phi(y := x + t * d)
            evals += 1
            if fy > level:
                x, fx = y, fy
                break
            left, right = (t, right) if t < 0 else (left, t)  # shrink the bracket
        steps += 1
        m = mode_of(x)
        plus += m > 0
        if m != 0:
            switches += last != 0 and m != last
            last = m
    share = plus / max(steps, 1)
    return {"steps": steps, "evals": evals, "switches": switches, "share_plus": share}


def run_slice(D: int, N: int, data_seed: int, budget: int, rng: np.random.Generator) -> Records:
    from harness.targets.robust_regression import robust_regression

    out = slice_chain(robust_regression(D, N, "constant", data_seed), budget, rng)
    return [{"type": "slice", "D": D, "N": N, "data_seed": data_seed, "budget": budget, **out}]


def _not_run(series: list[str]) -> Callable[..., cl.Estimate]:
    def measure(records: Records, confidence: float = cl.CONFIDENCE) -> cl.Estimate:
        raise cl.Inconclusive(f"{', '.join(series)} not run: add its strategy to `strategies`")

    return measure


def _switches(records: Records, D: int, confidence: float = cl.CONFIDENCE) -> cl.Estimate:
    """Mode switches a slice run, with the exact (Garwood) Poisson interval at ``confidence``."""
    from scipy import stats

    runs = [r["switches"] for r in cl.select(records, "slice", D=D)]
    k, n, a = sum(runs), len(runs), 1 - confidence
    lo = stats.chi2.ppf(a / 2, 2 * k) / 2 if k > 0 else 0.0
    hi = stats.chi2.ppf(1 - a / 2, 2 * k + 2) / 2
    return cl.Estimate(k / n, lo / n, hi / n, n, "runs", "exact Poisson")


def _panel(
    config: RobustConfig, part: str, f: Callable[[ac.Means], float], needs: tuple[str, ...]
) -> Callable[..., cl.Estimate]:
    """``f`` of one panel's means at D, where OS* is ``m[kind, p]``, A* ``m["A*", p]``, with a
    bootstrap over data sets (at a confidence, for a joint claim's part); ``needs``: the OS*
    series it reads (absent from ``strategies``: inconclusive)."""
    ran = {SERIES[k] for k in config.strategies}
    if missing := [s for s in needs if s not in ran]:
        return _not_run(missing)

    def measure(records: Records, confidence: float = cl.CONFIDENCE) -> cl.Estimate:
        return ac.on(
            lambda r: r["series"].startswith(part) and r["target_args"]["D"] == config.D,
            lambda m: f({(s[len(part) + 1 :], x): v for (s, x), v in m.items()}),
            confidence,
        )(records)

    return measure


def _slug(s: str) -> str:
    return s.removeprefix("OS* ").replace(" ", "-")


#: The paper's two strategies, the second read literally ("largest probability under the
#: proposal": nu(B)); the envelope readings are shown under each claim.
BOTH = READINGS["proposal"]


def _fewer(config: RobustConfig) -> cl.Claim:
    """Single samples: A* uses fewer of both kinds than OS* at every p."""
    ps = config.rates

    def f(series: tuple[str, ...]) -> Callable[[ac.Means], float]:
        return lambda m: min(min(m[s, p] / m["A*", p]) for s in series for p in ps)

    text = (
        '"Across operating points, A* consistently uses fewer bound evaluations and fewer '
        'likelihood evaluations than both OS* refinement strategies."'
    )

    def claim(id: str, series: tuple[str, ...], **more: Any) -> cl.Claim:
        return cl.Claim(
            id,
            f"{WHERE} left",
            text,
            f"least over p and both kinds of {' and '.join(series)} / A* evaluations per sample",
            # "A uses fewer than B" -> the interval of B / A lies above 1.
            cl.above(1.0),
            _panel(config, "single", f(series), series),
            paper_value="A* fewer of both, at every p",
            fails_if="an OS* / A* ratio below 1 at some p and kind, an OS* point using fewer of "
            "either count",
            **more,
        )

    readings = tuple(claim(f"single-fewer-than-{_slug(s)}", (s,)) for s in SERIES.values())
    return claim("single-fewer", BOTH, readings=readings)


def _trade(config: RobustConfig) -> cl.Claim:
    """Reused bounds: OS* uses fewer likelihood and more bound evaluations than A*."""
    ps = config.rates

    def trade(m: ac.Means, s: str) -> float:  # > 1: OS* uses fewer liks and more bounds
        gm = np.exp(np.mean([np.log(m[s, p] / m["A*", p]) for p in ps], axis=0))
        return float(min(1 / gm[0], gm[1]))

    text = (
        '"The extra refinement done by OS* early on allows it to use fewer likelihood '
        'evaluations at the expense of more bound computations."'
    )

    def claim(id: str, series: tuple[str, ...], **more: Any) -> cl.Claim:
        return cl.Claim(
            id,
            f"{WHERE} right",
            text,
            f"{' and '.join(series)}: the least of A* / OS* liks and OS* / A* bounds per sample "
            "(geometric means over p)",
            cl.above(1.0),
            _panel(config, "reuse", lambda m: min(trade(m, s) for s in series), series),
            paper_value="OS* fewer liks, more bounds",
            fails_if="a ratio below 1, an OS* using more likelihood or fewer bound evaluations "
            "than A*",
            **more,
        )

    readings = tuple(claim(f"reuse-trade-{_slug(s)}", (s,)) for s in SERIES.values())
    return claim("reuse-trade", BOTH, readings=readings)


def _not_achievable(config: RobustConfig) -> cl.Claim:
    """ "A point not achievable by OS*": literally, no OS* point uses at most both of A*'s
    counts (undominated); the figure's equal-cost lines read it as a lower total cost; both
    under each reading of strategy 2."""
    ps, w = config.rates, (1.0, config.D + 1.0)  # cost = liks + (D + 1) bounds
    text = '"A* sampling operates at a point that is not achievable by OS*."'
    out = []
    for reading, os in READINGS.items():
        suffix = "" if reading == "proposal" else f"-{reading}"
        read = f" (strategy 2 read as {os[1]})" if suffix else ""
        out += [
            cl.Claim(
                f"reuse-astar-undominated{suffix}",
                f"{WHERE} right",
                text,
                "max over A*'s points of the min over OS*'s of the larger OS* / A* ratio" + read,
                cl.above(1.0),
                _panel(
                    config,
                    "reuse",
                    lambda m, os=os: max(
                        min(max(m[s, q] / m["A*", p]) for s in os for q in ps) for p in ps
                    ),
                    os,
                ),
                paper_value="an A* point OS* does not reach",
                fails_if="a value below 1, every A* point matched in both counts by an OS* point",
            ),
            cl.Claim(
                f"reuse-astar-cheapest{suffix}",
                f"{WHERE} right",
                text + " Read on Fig. 3's equal-cost lines: a lower total cost.",
                "A*'s least cost / OS*'s least cost, liks + (D + 1) bounds" + read,
                cl.below(1.0),
                _panel(
                    config,
                    "reuse",
                    lambda m, os=os: (
                        min(m["A*", p] @ w for p in ps) / min(m[s, p] @ w for s in os for p in ps)
                    ),
                    os,
                ),
                paper_value="an A* point OS* does not reach",
                fails_if="a ratio above 1, an OS* point of lower total cost than every A* point",
            ),
        ]
    return dataclasses.replace(out[0], readings=tuple(out[1:]))


def _figure(config: RobustConfig) -> cl.Claim:
    """Fig. 3 draws equal-cost lines 10% apart, and its diamonds (strategy 2) lie a few lines
    from the circles (A*): "within tens of percent" -> OS* / A* cost within 2x, which tells 1x
    from the 30-70x of the proposal reading; fixed before the first run."""
    ps, w = config.rates, (1.0, config.D + 1.0)  # cost = liks + (D + 1) bounds
    near = cl.within_factor(1.0, 2.0)

    def scale(m: ac.Means, s: str) -> float:  # OS* cost / A* cost, geometric mean over p
        return float(np.exp(np.mean([np.log(m[s, p] @ w / (m["A*", p] @ w)) for p in ps])))

    def measure(part: str, s: str) -> Callable[..., cl.Estimate]:
        return _panel(config, part, lambda m: scale(m, s), (s,))

    text = (
        "Fig. 3 (read off the plot, whose equal-cost lines are spaced 10% apart): strategy 2's "
        "diamonds lie within tens of percent of A*'s total cost"
    )
    readings = tuple(
        cl.Claim(
            f"fig3-{part}-cost-{_slug(s)}",
            f"{WHERE} {PANEL[part]}",
            f"{text} ({PANEL[part]} panel), read as {s}.",
            f"{s} / A* cost per sample, liks + (D + 1) bounds (geometric mean over p)",
            near,
            measure(part, s),
            paper_value="within tens of percent (read off Fig. 3)",
            fails_if="a cost ratio wholly outside [0.5, 2]",
        )
        for part in PANEL
        for s in (SERIES[2], SERIES[3], SERIES[4])
    )
    parts = [ac.Part(f"{PANEL[p]} panel", measure(p, SERIES[2]), near) for p in PANEL]
    return cl.Claim(
        "fig3-cost",
        WHERE,
        f"{text} (both panels; strategy 2 read literally, the proposal's mass).",
        f"{SERIES[2]} / A* cost per sample, liks + (D + 1) bounds, geometric mean over p: worse "
        "panel's log distance outside [0.5, 2]",
        ac.JOINT,
        ac.jointly(parts),
        paper_value="within tens of percent (read off Fig. 3)",
        fails_if="a panel's cost ratio wholly outside [0.5, 2], as an OS* refining a different "
        "region than 001's would give",
        readings=readings,
    )


def _slice(config: RobustConfig) -> cl.Claim:
    """ "Rarely switches" -> fewer than one switch a run (the paper: 1 in 5 runs, 0 at D > 2)."""
    text = (
        '"Across the five runs for D = 2, the sampler switched modes once, and it did not ever '
        'switch modes when D > 2."'
    )
    rule = cl.below(1.0, "below 1 a run")
    readings = tuple(
        cl.Claim(
            id=f"slice-switches-D{D}",
            paper="001 Sec. 6.4",
            text=text,
            paper_value=value,
            quantity=f"mode switches per run, D = {D}",
            rule=rule,
            measure=lambda rs, D=D: _switches(rs, D),
            fails_if="a rate of one switch a run or more at this D",
        )
        for D, value in ((2, "1 in 5 runs"), (3, "0 in 5 runs"))
    )
    dims = sorted(config.slice_dims)
    parts = [ac.Part(f"D = {D}", lambda rs, conf, D=D: _switches(rs, D, conf), rule) for D in dims]
    return cl.Claim(
        id="slice-switches",
        paper="001 Sec. 6.4",
        text=text,
        paper_value="1 in 5 runs (D = 2), 0 (D > 2)",
        quantity=f"mode switches per run of a slice sampler given 10x A*'s budget, worst of D = "
        f"{', '.join(map(str, dims))}: distance above 1 a run",
        rule=ac.JOINT,
        measure=ac.jointly(parts),
        fails_if="a rate of one switch a run or more at some D, as a chain that crosses between "
        "the modes would give",
        readings=readings,
    )


class AstarRobust(ac.CellExperiment[RobustConfig]):
    """robust (Cauchy) regression with a bimodal posterior (data as in the paper), D = 2, N = 250,
    per-point linear/quadratic bounds: A* with extra draws per node against OS* (both strategies,
    the second under the readings of its split: largest nu(B) or largest nu(B) exp(M), at the median
    or a sampled point) refining on a share p of rejections, single samples and 200 samples with
    reused bounds; a random-direction slice sampler at 10x A*'s budget counts mode switches."""

    replicates = ("single_sets", "reuse_sets")

    paper = "001_78ff986a3d316097.txt, Sec. 6.4 (Fig. 3)"
    summary = "A* vs OS* on robust Cauchy regression; 200 samples with reused bounds; slice"
    title = "A* and OS* on robust Cauchy regression; the slice-sampler baseline"
    columns = (
        *ac.COLUMNS,
        Column("D", lambda r: r.get("d", r.get("D"))),
        *(Column(t, f) for t, f in (("slice budget", "budget"), ("steps", "steps"))),
        Column("mode switches", "switches"),
        Column("share near +w*", "share_plus", ".2f"),
    )

    def cells(self, c: RobustConfig) -> list[ac.Cell]:
        """Both panels at D, then A* with reused bounds at the other slice dimensions."""

        def cell(part: str, p: float, D: int, k: int, n: int, **params: Any) -> list[ac.Cell]:
            args = {"D": D, "N": c.N, "bound": "linear-quadratic", "seed": k}
            alg = "os-star" if "strategy" in params else "astar"
            return [ac.Cell(part, p, alg, "robust", args, n, params=params)]

        out, reuse = [], range(100, 100 + c.reuse_sets)
        for part, k, n, more in [
            *(("single", k, c.single_draws, {}) for k in range(c.single_sets)),
            *(("reuse", k, c.reuse_draws, {"reuse": True}) for k in reuse),
        ]:
            for p in c.rates:
                out += cell(f"{part} A*", p, c.D, k, n, extra_draws=1.0 / p - 1.0, **more)
                for s in c.strategies:
                    out += cell(
                        f"{part} {SERIES[s]}", p, c.D, k, n, strategy=s, refine_prob=p, **more
                    )
        for D, k in ((D, k) for D in c.slice_dims if D != c.D for k in reuse):
            out += cell("reuse A*", 1.0, D, k, c.reuse_draws, extra_draws=0.0, reuse=True)
        return out

    def plan(self, config: RobustConfig, records: Records, part: str) -> list[Task]:
        """The cells, then a slice chain per reused-bounds data set once A*'s budget is known:
        ``budget_factor`` x the cost of A* (one draw per node) drawing with reused bounds."""
        tasks, c = super().plan(config, records, part), config
        for r in ac.cells(records, lambda r: r["series"] == "reuse A*" and r["x"] == 1.0):
            D, k = r["target_args"]["D"], r["target_args"]["seed"]
            if D in c.slice_dims:
                budget = int(c.budget_factor * (sum(r["liks"]) + (D + 1) * sum(r["bounds"])))
                key = f"slice|D={D}|N={c.N}|data={k}|budget={budget}"
                label = f"slice D={D} data {k}"
                tasks.append(task(c, key, run_slice, D, c.N, k, budget, label=label))
        return tasks

    def claims(self, config: RobustConfig) -> tuple[cl.Claim, ...]:
        return (
            _fewer(config),
            _trade(config),
            _not_achievable(config),
            _figure(config),
            _slice(config),
        )

    def givens(self, config: RobustConfig) -> tuple[cl.Given, ...]:
        return (
            cl.Given("bound cost", WHERE, "D + 1 likelihood evaluations", "taken from the paper"),
            cl.Given("reused bounds: samples", WHERE, "200", "taken from the paper"),
            cl.Given("slice budget", WHERE, "10x A*'s", "taken from the paper"),
        )

    def figures(self, config: RobustConfig, records: Records) -> list[dict[str, Any]]:
        m = ac.means(ac.cells(records, lambda r: r["target_args"]["D"] == config.D))

        def panel(part: str) -> str:
            ls = []
            for s in ("A*", *SERIES.values()):
                vs = [m[k] for k in ((f"{part} {s}", p) for p in config.rates) if k in m]
                ls += [Line(s, *zip(*vs, strict=True), [0.0] * len(vs))] if vs else []
            return line_figure(ls, "likelihood evaluations / sample", "bound evaluations / sample")

        rates = ", ".join(f"{p:g}" for p in config.rates)
        caption = f"One marker per sampler and rate p (p = {rates}); means over data sets."
        return [
            group(
                "Bound against likelihood evaluations",
                caption,
                ("single samples", panel("single")),
                ("200 samples, reused bounds", panel("reuse")),
            )
        ]
