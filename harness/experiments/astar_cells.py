"""Costs of exact sampling, shared by the A* experiments of 001_78ff986a3d316097.txt, Sec. 6:
a cell is one sampler on one target, run for ``draws`` exact samples in one task (a sampler that
reuses its bounds, 001 Sec. 4, reuses them over the cell); its record keeps each draw's
likelihood and bound evaluations."""

from __future__ import annotations

import dataclasses
import math
import time
from abc import abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, NamedTuple, TypeVar

import numpy as np

from harness.declare import Config
from harness.experiments import claims as cl
from harness.experiments.framework import Column, Experiment, task
from harness.experiments.plots import Line, group, line_figure
from harness.registry import registry_for
from harness.spec import sample
from harness.tasks import Records, Task

Means = dict[tuple[str, float], np.ndarray]  # (series, x) -> [liks, bounds] per draw
LIKS, BOUNDS = (1.0, 0.0), (0.0, 1.0)  # weights of (liks, bounds) in a cost
C = TypeVar("C", bound=Config)


@dataclass(frozen=True)
class Cell:
    """A point of a figure: ``series`` (a line), ``x``, a sampler and a target (a factory named
    in :func:`run_cell`, and its arguments); ``paper`` stays for the records' sake."""

    series: str
    x: float
    algorithm: str
    target: str
    target_args: dict[str, Any]
    draws: int
    impl: str = "numba"
    params: dict[str, Any] = field(default_factory=dict)
    paper: float | None = None

    def __post_init__(self) -> None:
        registry_for(()).get(self.algorithm).validate(self.params)  # before any work

    @property
    def key(self) -> str:
        args = ",".join(f"{k}={v}" for k, v in sorted(self.target_args.items()))
        params = ",".join(f"{k}={v}" for k, v in sorted(self.params.items()))
        return (
            f"{self.series}|x={self.x:g}|{self.algorithm}|{self.impl}|{params}|"
            f"{self.target}({args})|n={self.draws}"
        )


def run_cell(cell: Cell, rng: np.random.Generator) -> Records:
    """Draw ``cell.draws`` exact samples in one call; record every draw's evaluations."""
    from harness.targets import box_density, gaussian_mean, interval_models, robust_regression

    make = {
        "peaky": box_density.peaky_exponential,
        "peaky-global": peaky_global,
        "clutter": box_density.clutter,
        "gaussian-mean": gaussian_mean.gaussian_mean,
        "robust": robust_regression.robust_regression,
        "interval": lambda model, sigma, seed=0: interval_models.interval_model(model, sigma, seed),
    }[cell.target]
    target = make(**cell.target_args)
    spec = registry_for(()).get(cell.algorithm)
    start = time.perf_counter()
    draws = sample(spec, cell.impl, target, cell.draws, rng, **cell.params)
    wall = time.perf_counter() - start
    record = {
        "type": "cell",
        **dataclasses.asdict(cell),
        "label": f"{cell.series} x={cell.x:g}",
        "d": int(target.d),
        "liks": np.asarray(draws.extras["draw_evals"], dtype=np.int64).tolist(),
        "bounds": np.asarray(draws.extras["bound_evals"], dtype=np.int64).tolist(),
        "sampler_s": wall,
    }
    if "gumbel_max" in draws.extras:
        # log Z = E[G] - Euler's gamma: with the root's bound and mass, rejection's exp(M) nu / Z
        record["gumbel_mean"] = float(np.mean(draws.extras["gumbel_max"]))
    record["root_bound"] = float(target.M(target.lo, target.hi))
    record["root_log_mass"] = float(target.log_mass(target.lo, target.hi))
    return [record]


def cells(records: Records, keep: Callable[[dict[str, Any]], bool] = lambda r: True) -> Records:
    return [r for r in records if r.get("type") == "cell" and keep(r)]


class DataSet(NamedTuple):
    """One data set's cells as rows over the keys (series, x) of all the data sets measured
    together: sums of [liks, bounds, draws] per key, and where each key first stands among its
    cells (:data:`ABSENT` where it has none), so that pooled means keep the order a dict built
    cell by cell has."""

    keys: tuple[tuple[str, float], ...]
    sums: np.ndarray
    first: np.ndarray


ABSENT = np.iinfo(np.int64).max


def _groups(records: Records, by: Callable[[Any], Any] = lambda seed: seed) -> list[DataSet]:
    """Per data set (``by`` of a record's data seed), its cells' [liks, bounds, draws]."""
    found: dict[Any, list[Any]] = {}
    for r in cells(records):
        s = [np.sum(r["liks"]), np.sum(r["bounds"]), len(r["liks"])]
        found.setdefault(by(r["target_args"].get("seed")), []).append(((r["series"], r["x"]), s))
    keys = tuple(dict.fromkeys(k for g in found.values() for k, _ in g))
    index = {k: i for i, k in enumerate(keys)}
    out = []
    for g in found.values():
        sums, first = np.zeros((len(keys), 3)), np.full(len(keys), ABSENT)
        for position, (k, row) in enumerate(g):
            sums[index[k]] += row
            first[index[k]] = min(first[index[k]], position)
        out.append(DataSet(keys, sums, first))
    return out


def _pool(groups: list[DataSet]) -> Means:
    """Mean [liks, bounds] per draw of each key over ``groups`` (a bootstrap resample repeats
    some). The counts are integers, so their sums are exact in any order; the keys come in the
    order of their first cell, scanning the groups in turn."""
    if not groups:
        return {}
    firsts = np.array([g.first for g in groups])
    has = firsts < ABSENT
    tot = np.sum([g.sums for g in groups], axis=0)
    which = np.argmax(has, axis=0)
    where = firsts[which, np.arange(which.size)]
    present = np.flatnonzero(has.any(axis=0))
    order = present[np.lexsort((where[present], which[present]))]
    means = tot[:, :2] / tot[:, 2:]
    keys = groups[0].keys
    return {keys[k]: means[k] for k in order}


def means(records: Records) -> Means:
    return _pool(_groups(records))


def on(
    keep: Callable[[dict[str, Any]], bool],
    f: Callable[[Means], float],
    confidence: float = cl.CONFIDENCE,
    by: Callable[[Any], Any] = lambda seed: seed,
) -> Callable:
    """A claim's measure: ``f`` of the pooled means of the cells ``keep`` selects, with a
    bootstrap over data sets (samplers run on the same data stay paired; ``by`` of the seed
    names a group, so that settings with data sets of their own resample together)."""
    return lambda rs: boot(_groups(cells(rs, keep), by), lambda gs: f(_pool(gs)), confidence)


def boot(
    groups: list[Any], statistic: Callable[[list[Any]], float], confidence: float
) -> cl.Estimate:
    """:func:`claims.bootstrap` over data sets at ``confidence`` (a Bonferroni share of a
    joint claim's level): the same seed, resamples, minimum and refusals."""
    if confidence == cl.CONFIDENCE or len(groups) < cl.MIN_BOOTSTRAP:
        return cl.bootstrap(groups, statistic, "data sets")
    value = float(statistic(groups))
    rng = np.random.default_rng(0)
    picks = [rng.integers(0, len(groups), len(groups)) for _ in range(cl.BOOTSTRAP)]
    s = np.array([float(statistic([groups[i] for i in pick])) for pick in picks])
    s = s[np.isfinite(s)]
    if s.size < cl.BOOTSTRAP // 2:
        raise cl.Inconclusive("the statistic is not finite on most resamples of the data sets")
    lo, hi = np.quantile(s, [(1 - confidence) / 2, (1 + confidence) / 2])
    how = "bootstrap, percentile"
    return cl.Estimate(value, float(lo), float(hi), len(groups), "data sets", how)


@dataclass(frozen=True)
class Part:
    """One setting of a joint claim: its label, its measure at a given confidence and its
    band."""

    label: str
    measure: Callable[[Records, float], cl.Estimate]
    rule: cl.Rule


def _reach(rule: cl.Rule, a: float, b: float) -> tuple[float, float]:
    """The least and largest signed distance to ``rule``'s band over values in [a, b]: on the
    rule's scale, max(low - v, v - high), negative inside the band (convex in v)."""
    g = (lambda v: math.log(max(v, 1e-300))) if rule.log else (lambda v: v)
    lo = g(rule.low) if math.isfinite(rule.low) else -math.inf
    hi = g(rule.high) if math.isfinite(rule.high) else math.inf

    def s(v: float) -> float:
        return max(lo - v, v - hi)

    ga, gb = g(a), g(b)
    points = [ga, gb]
    if math.isfinite(lo) and math.isfinite(hi):
        points.append(min(max((lo + hi) / 2, ga), gb))
    return min(s(v) for v in points), max(s(ga), s(gb))


def jointly(parts: list[Part]) -> Callable[[Records], cl.Estimate]:
    """One claim over several settings ("16% to 40% over every D"): every part in its band.
    The quantity is the worst part's signed distance to its band (on its rule's scale; below 0:
    inside), each part's interval at a Bonferroni share of the level, so the claim holds when
    every interval lies inside its band and fails when any lies wholly outside."""
    confidence = 1 - (1 - cl.CONFIDENCE) / len(parts)

    def measure(records: Records) -> cl.Estimate:
        ests, missing = [], []
        for p in parts:
            try:
                ests.append((p, p.measure(records, confidence)))
            except cl.Inconclusive as exc:
                missing.append((p, exc))
        if missing:
            values = [_reach(p.rule, e.value, e.value)[0] for p, e in ests]
            values += [
                _reach(p.rule, x.value, x.value)[0] for p, x in missing if x.value is not None
            ]
            said: dict[str, list[str]] = {}
            for p, x in missing:
                said.setdefault(str(x), []).append(p.label)
            reason = "; ".join(f"{', '.join(labels)}: {why}" for why, labels in said.items())
            raise cl.Inconclusive(reason, max(values) if len(values) == len(parts) else None)
        reach = [_reach(p.rule, e.low, e.high) for p, e in ests]
        value = max(_reach(p.rule, e.value, e.value)[0] for p, e in ests)
        low, high = max(r[0] for r in reach), max(r[1] for r in reach)
        e0 = ests[0][1]
        how = f"worst of {len(parts)}, {e0.how} at {confidence:.4g} each (Bonferroni)"
        return cl.Estimate(value, low, high, min(e.n for _, e in ests), e0.unit, how)

    return measure


#: The rule of a joint claim: every part's interval inside its band.
JOINT = cl.below(0.0, "every setting inside its band (distance below 0)")


def peaky_global(a: float) -> Any:
    """001 Sec. 6.1's p(x) proportional to exp(-x) / (1 + x)^a with every box bounded by the
    whole space's bound, M(R+) = o(0) = 0: 001 Sec. 5's A* with one global bound."""
    from harness.targets.box_density import box_density, peaky_log_lik

    data = np.array([[a]])
    lims = ([0.0], [math.inf], [("exponential", 1.0)])
    return box_density(*lims, peaky_log_lik, _global_bound, data, name=f"peaky-global-a{a:g}")


def _global_bound(lo: np.ndarray, hi: np.ndarray, data: np.ndarray) -> float:
    return 0.0  # o = -a log(1 + x) <= o(0) = 0 on every box of x > 0


def ratio(num: tuple[str, float], den: tuple[str, float], w: tuple[float, float]) -> Callable:
    """The statistic: mean cost of ``num`` / that of ``den``, cost = w . (liks, bounds)."""
    return lambda m: float(m[num] @ w / (m[den] @ w))


def lines(records: Records, w: tuple[float, float], suffix: str = "") -> list[Line]:
    """Per series, the mean cost per draw against x (bars: 2 standard errors)."""
    by: dict[str, dict[float, list[Any]]] = {}
    for r in cells(records):
        v = w[0] * np.asarray(r["liks"]) + w[1] * np.asarray(r["bounds"])
        by.setdefault(r["series"], {}).setdefault(r["x"], []).append(v)
    out = []
    for series, points in by.items():
        vs = [np.concatenate(points[x]) for x in sorted(points)]
        se = [2 * v.std(ddof=1) / math.sqrt(v.size) if v.size > 1 else 0.0 for v in vs]
        out.append(Line(series + suffix, sorted(points), [v.mean() for v in vs], se))
    return out


COLUMNS = (
    Column("series", "series"),
    Column("x", "x", "g"),
    Column("data", lambda r: r.get("target_args", {}).get("seed", r.get("data_seed"))),
    Column("draws", "draws"),
    *(
        Column(f"{k} / draw", lambda r, k=k: np.mean(r[k]) if k in r else None, ".4g")
        for k in ("liks", "bounds")
    ),
    Column(
        "ms / draw", lambda r: 1e3 * r["sampler_s"] / r["draws"] if "draws" in r else None, ".3g"
    ),
)


class CellExperiment(Experiment[C]):
    """An experiment whose tasks are its config's cells, drawn against x in one figure."""

    columns = COLUMNS
    xlabel: ClassVar[str] = "x"
    logx: ClassVar[bool] = True
    #: The evaluations drawn: line label suffix -> weights of (liks, bounds).
    kinds: ClassVar[tuple[tuple[str, tuple[float, float]], ...]] = (("", LIKS),)

    @abstractmethod
    def cells(self, config: C) -> list[Cell]: ...

    def plan(self, config: C, records: Records, part: str) -> list[Task]:
        cs = self.cells(config)
        return [task(config, c.key, run_cell, c, label=f"{c.series} x={c.x:g}") for c in cs]

    def warm(self) -> None:
        """One untimed draw of each (sampler, target, params) of the quick cells in each worker,
        so no cell's time includes its compilation (or its load from Numba's cache)."""
        first: dict[tuple[str, str, str, str], Cell] = {}
        for c in self.cells(self.config("quick")):
            first.setdefault((c.algorithm, c.impl, c.target, str(sorted(c.params.items()))), c)
        for c in first.values():
            run_cell(dataclasses.replace(c, draws=1), np.random.default_rng(0))

    def guides(self, config: C) -> list[Line]:
        """Dashed curves beside ours (an exact expectation)."""
        return []

    def figures(self, config: C, records: Records) -> list[dict[str, Any]]:
        ls = [ln for s, w in self.kinds for ln in lines(records, w, s)]
        ls += self.guides(config)
        svg = line_figure(ls, self.xlabel, "evaluations / sample", logx=self.logx)
        caption = "Mean evaluations per exact sample, pooled over data sets (bars: 2 standard "
        caption += "errors; the spread between data sets is part of them)."
        return [group(f"Cost against {self.xlabel}", caption, ("evaluations per sample", svg))]
