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
from typing import Any, ClassVar, TypeVar

import numpy as np

from harness.engine import Records, Task
from harness.experiments.claims import bootstrap
from harness.experiments.declare import Config
from harness.experiments.framework import Column, Experiment, task
from harness.experiments.plots import Line, group, line_figure
from harness.registry import registry_for
from harness.spec import sample

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


def _groups(records: Records) -> list[list[tuple[tuple[str, float], np.ndarray]]]:
    """Per data set (a record's data seed): each (series, x) with its [liks, bounds, draws]."""
    groups: dict[Any, list[Any]] = {}
    for r in cells(records):
        s = np.array([np.sum(r["liks"]), np.sum(r["bounds"]), len(r["liks"])], dtype=float)
        groups.setdefault(r["target_args"].get("seed"), []).append(((r["series"], r["x"]), s))
    return list(groups.values())


def _pool(groups: list[list[tuple[tuple[str, float], np.ndarray]]]) -> Means:
    tot: dict[tuple[str, float], np.ndarray] = {}
    for k, s in (p for g in groups for p in g):
        tot[k] = tot.get(k, 0.0) + s
    return {k: s[:2] / s[2] for k, s in tot.items()}


def means(records: Records) -> Means:
    return _pool(_groups(records))


def on(keep: Callable[[dict[str, Any]], bool], f: Callable[[Means], float]) -> Callable:
    """A claim's measure: ``f`` of the pooled means of the cells ``keep`` selects, with a
    bootstrap over data sets (samplers run on the same data stay paired)."""
    return lambda rs: bootstrap(_groups(cells(rs, keep)), lambda gs: f(_pool(gs)), "data sets")


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
