"""Settings of the FlyMC Table 1 reproduction (002_3c1996bf78df7865.txt, Table 1).

Rows: three models (logistic regression with random-walk MH, softmax classification with MALA,
robust Student-t regression with slice sampling), each run as regular MCMC, untuned FlyMC and
MAP-tuned FlyMC on the same data, step and start. The paper's data sets cannot be fetched
here; ``harness.targets.glm_data`` says what stands in for each. The scaling part times one
iteration of MAP-tuned FlyMC and of regular MH as N grows.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from harness.experiments.framework import check_level
from harness.runner import check_seed
from harness.spec import Param
from harness.targets import glm_data

NAME = "flymc-table1"
MODELS = ("logistic", "softmax", "robust")
DATA = ("synthetic", "digits")
COLUMNS = ("regular", "untuned", "map")
COLUMN_NAMES = {"regular": "Regular MCMC", "untuned": "Untuned FlyMC", "map": "MAP-tuned FlyMC"}
#: The theta update of each model's row (002, Table 1) and the algorithm of each column.
THETA_STEP = {"logistic": "mh", "softmax": "mala", "robust": "slice"}
ALGORITHM = {
    ("regular", "mh"): "rwmh",
    ("regular", "mala"): "mala",
    ("regular", "slice"): "slice",
    **{(c, s): f"flymc-{s}" for c in ("untuned", "map") for s in ("mh", "mala", "slice")},
}
#: 002, Table 1: (queries per iteration, ESS per 1000 iterations, speedup).
PAPER = {
    ("logistic", "regular"): (12214.0, 3.7, 1.0),
    ("logistic", "untuned"): (6252.0, 1.3, 0.7),
    ("logistic", "map"): (207.0, 1.4, 22.0),
    ("softmax", "regular"): (18000.0, 8.0, 1.0),
    ("softmax", "untuned"): (8058.0, 4.2, 1.2),
    ("softmax", "map"): (654.0, 3.3, 11.0),
    ("robust", "regular"): (18182764.0, 1.3, 1.0),
    ("robust", "untuned"): (2753428.0, 1.1, 5.7),
    ("robust", "map"): (575528.0, 1.2, 29.0),
}
#: The paper's N per model: MNIST's and CIFAR-10's equal their regular query counts; OPV's is
#: about 1.8e6 (notes-firefly.md Sec. 7-8, unsure), its regular slice chain then reading each
#: datum about 10 times an iteration.
PAPER_N = {"logistic": 12214, "softmax": 18000, "robust": 1_800_000}
PAPER_DATA = {
    "logistic": "MNIST 7 vs 9, N = 12,214",
    "softmax": "3-class CIFAR-10, N = 18,000",
    "robust": "OPV molecules, N about 1.8e6",
}
PARTS = ("all", "table", "scaling")

ITERATIONS = Param("iterations", 1000, kind=int, low=10)
Q_DB = Param("q_db", 0.01, low=0.0, high=1.0, low_inclusive=False)
BURN_IN = Param("burn_in", 0.1, low=0.0, high=0.5, high_inclusive=False)


@dataclass(frozen=True)
class Row:
    """One row of the table: a model and data set, a column (regular, untuned or MAP-tuned), a
    data size and a chain length."""

    model: str
    data: str
    column: str
    N: int
    iterations: int

    def __post_init__(self) -> None:
        Param("model", "logistic", choices=MODELS).check(self.model)
        Param("data", "synthetic", choices=DATA).check(self.data)
        Param("column", "regular", choices=COLUMNS).check(self.column)
        if self.data == "digits" and self.model != "logistic":
            raise ValueError(
                f"data = 'digits' is invalid for model {self.model!r}; valid: logistic only"
            )
        object.__setattr__(self, "N", Param("N", 1, kind=int, low=1).check(self.N))
        object.__setattr__(self, "iterations", ITERATIONS.check(self.iterations))

    @property
    def algorithm(self) -> str:
        return ALGORITHM[(self.column, THETA_STEP[self.model])]

    @property
    def label(self) -> str:
        return f"{self.model} {self.data} N={self.N} {self.column}"

    @property
    def key(self) -> str:
        return f"table|{self.label}|it={self.iterations}"


@dataclass(frozen=True)
class Table1Config:
    """Everything that determines the experiment's records (its manifest's settings)."""

    experiment: str
    level: str
    seed: int
    rows: tuple[Row, ...]
    q_db: float
    burn_in: float
    scaling_N: tuple[int, ...]
    scaling_iterations: int
    reference_max_N: int
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        check_level(self.level)
        object.__setattr__(self, "seed", check_seed(self.seed))
        object.__setattr__(self, "q_db", Q_DB.check(self.q_db))
        object.__setattr__(self, "burn_in", BURN_IN.check(self.burn_in))
        if not self.rows:
            raise ValueError("rows is empty; valid: at least one Row")
        keys = [r.key for r in self.rows]
        if len(set(keys)) != len(keys):
            raise ValueError("rows repeat; valid: distinct rows")
        for n in self.scaling_N:
            Param("scaling_N", 1000, kind=int, low=10).check(n)
        ITERATIONS.check(self.scaling_iterations)

    def manifest(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def config_from_manifest(settings: dict[str, Any]) -> Table1Config:
    """The inverse of :meth:`Table1Config.manifest` (JSON turns tuples into lists)."""
    keep = {f.name for f in dataclasses.fields(Table1Config)}
    args = {k: v for k, v in settings.items() if k in keep}
    args["rows"] = tuple(Row(**r) for r in settings["rows"])
    args["scaling_N"] = tuple(settings["scaling_N"])
    args["notes"] = tuple(settings.get("notes", ()))
    return Table1Config(**args)


def config_for_level(level: str, seed: int = 0) -> Table1Config:
    """quick: the paper's N for logistic and softmax, N = 1e5 for robust, short chains
    (minutes); full: N = 1.8e6 for robust and chains ten times longer (hours)."""
    check_level(level)
    full = level == "full"
    scale = 10 if full else 1
    sizes = {
        "logistic": (glm_data.LOGISTIC_N, 4000 * scale),
        "softmax": (glm_data.SOFTMAX_N, 2000 * scale),
        "robust": (glm_data.ROBUST_N_FULL if full else glm_data.ROBUST_N_QUICK, 1500 * scale),
    }
    rows = [
        Row(model, "synthetic", column, N, iterations)
        for model, (N, iterations) in sizes.items()
        for column in COLUMNS
    ]
    rows += [Row("logistic", "digits", column, 359, 4000 * scale) for column in COLUMNS]
    return Table1Config(
        experiment=NAME,
        level=level,
        seed=seed,
        rows=tuple(rows),
        q_db=0.01,
        burn_in=0.1,
        scaling_N=(1000, 10_000, 100_000, 1_000_000),
        scaling_iterations=200 * scale,
        reference_max_N=100_000 if full else 10_000,
        notes=(
            f"{level} level: {', '.join(f'{m} {it} iterations' for m, (_, it) in sizes.items())} "
            f"per chain; the first {10}% of each chain is burn-in.",
            "Data: synthetic prior-predictive data at the paper's sizes (features i.i.d. "
            "N(0, 1/P); logistic P = 50, softmax 3 classes x P = 16, robust Student-t nu = 4 "
            "with P = 10) and, for logistic, REAL data shipped with scikit-learn (8x8 digits, "
            "7 vs 9, N = 359, 64 pixels + intercept) as a small stand-in for MNIST 7 vs 9.",
        ),
    )
