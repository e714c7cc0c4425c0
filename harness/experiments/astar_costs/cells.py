"""A cost cell of the A* experiments: one sampler setting on one target, run for some draws.

A cell's task draws ``draws`` exact samples in one call (so a sampler that reuses its bounds
across samples, 001 Sec. 4, reuses them over the cell) and records the likelihood and bound
evaluations of every draw. The target is named by a factory and its arguments, so a cell is
plain data that a manifest stores and a worker rebuilds.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from harness.engine import SeedKey, Task
from harness.experiments.framework import check_level
from harness.registry import registry_for
from harness.runner import check_seed
from harness.spec import Param, sample


def _peaky(a: float) -> Any:
    from harness.targets.box_density import peaky_exponential

    return peaky_exponential(a)


def _clutter(D: int, seed: int = 0) -> Any:
    from harness.targets.box_density import clutter

    return clutter(D, seed)


def _gaussian_mean(N: int, bound: str, seed: int = 0) -> Any:
    from harness.targets.gaussian_mean import gaussian_mean

    return gaussian_mean(N, bound, seed)


def _robust(D: int, N: int, bound: str, seed: int = 0) -> Any:
    from harness.targets.robust_regression import robust_regression

    return robust_regression(D, N, bound, seed)


def _interval(model: str, sigma: float, seed: int = 0) -> Any:
    from harness.targets.interval_models import interval_model

    return interval_model(model, sigma, seed)


#: The targets a cell can name: factory name -> constructor (keyword arguments).
TARGETS: dict[str, Callable[..., Any]] = {
    "peaky": _peaky,
    "clutter": _clutter,
    "gaussian-mean": _gaussian_mean,
    "robust": _robust,
    "interval": _interval,
}

TARGET = Param("target", "peaky", choices=tuple(TARGETS))
DRAWS = Param("draws", 1, kind=int, low=1)
IMPLS = ("reference", "numba")


@dataclass(frozen=True)
class Cell:
    """One point of a figure: ``series`` (a line), ``x`` (its abscissa), a sampler
    (``algorithm``, ``impl``, ``params``) and a target (``target`` factory, ``target_args``).
    ``paper`` is the paper's value at this point where it states one."""

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
        TARGET.check(self.target)
        object.__setattr__(self, "draws", DRAWS.check(self.draws))
        Param("impl", "numba", choices=IMPLS).check(self.impl)
        spec = registry_for(()).get(self.algorithm)  # unknown names fail here, before any work
        spec.validate(self.params)

    @property
    def key(self) -> str:
        args = ",".join(f"{k}={v}" for k, v in sorted(self.target_args.items()))
        params = ",".join(f"{k}={v}" for k, v in sorted(self.params.items()))
        return (
            f"{self.series}|x={self.x:g}|{self.algorithm}|{self.impl}|{params}|"
            f"{self.target}({args})|n={self.draws}"
        )

    @property
    def label(self) -> str:
        return f"{self.series} x={self.x:g}"

    def build(self) -> Any:
        return TARGETS[self.target](**self.target_args)


def run_cell(cell: Cell, rng: np.random.Generator) -> list[dict[str, Any]]:
    """Draw ``cell.draws`` exact samples in one call; record every draw's evaluations."""
    target = cell.build()
    spec = registry_for(()).get(cell.algorithm)
    start = time.perf_counter()
    draws = sample(spec, cell.impl, target, cell.draws, rng, **cell.params)
    wall = time.perf_counter() - start
    liks = np.asarray(draws.extras["draw_evals"], dtype=np.int64)
    bnds = np.asarray(draws.extras["bound_evals"], dtype=np.int64)
    record = {
        "type": "cell",
        **dataclasses.asdict(cell),
        "label": cell.label,
        "d": int(target.d),
        "liks": liks.tolist(),
        "bounds": bnds.tolist(),
        "sampler_s": wall,
    }
    if "gumbel_max" in draws.extras:
        # log Z = E[G] - Euler's gamma (001 Sec. 4); with the root's bound and mass it gives
        # rejection's expected cost exp(M) nu / Z (001 Fig. 2c's x axis).
        record["gumbel_mean"] = float(np.mean(draws.extras["gumbel_max"]))
    record["root_bound"] = float(target.M(target.lo, target.hi))
    record["root_log_mass"] = float(target.log_mass(target.lo, target.hi))
    return [record]


def cell_tasks(cells: tuple[Cell, ...], seed: int) -> list[Task]:
    return [
        Task(
            key=c.key,
            fn=run_cell,
            inputs=(c,),
            seed=SeedKey.from_label(seed, c.key),
            label=c.label,
        )
        for c in cells
    ]


@dataclass(frozen=True)
class CostConfig:
    """Everything that determines an A* experiment's records (its manifest's settings)."""

    experiment: str
    level: str
    seed: int
    cells: tuple[Cell, ...]
    bound_cost: float = 0.0
    notes: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_level(self.level)
        object.__setattr__(self, "seed", check_seed(self.seed))
        if not self.cells:
            raise ValueError("cells is empty; valid: at least one Cell")
        keys = [c.key for c in self.cells]
        if len(set(keys)) != len(keys):
            raise ValueError("cells repeat; valid: distinct cells")

    def manifest(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def config_from_settings(settings: dict[str, Any]) -> CostConfig:
    """The inverse of :meth:`CostConfig.manifest` (JSON turns tuples into lists)."""
    keep = {f.name for f in dataclasses.fields(CostConfig)}
    args = {k: v for k, v in settings.items() if k in keep}
    args["cells"] = tuple(Cell(**c) for c in settings["cells"])
    args["notes"] = tuple(settings.get("notes", ()))
    return CostConfig(**args)


def plan_cells(config: CostConfig, records: list[dict[str, Any]], part: str = "all") -> list[Task]:
    del records, part  # cells are independent
    return cell_tasks(config.cells, config.seed)
