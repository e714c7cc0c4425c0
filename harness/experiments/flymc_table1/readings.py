"""The data readings of flymc-table1 (002_3c1996bf78df7865.txt, Table 1) and its table row.

Table 1's MNIST row runs on the real MNIST 7s and 9s (``mnist``, shipped with the package,
glm_data.mnist_7_vs_9); its CIFAR-10 and OPV rows, whose data we do not have, on synthetic
stand-ins at the paper's sizes. Every model also runs on further readings (``Row.data``):
synthetic draws with N(0, 1/P) features, the same with N(0, 1) features, and real sets bundled
with scikit-learn. ``PRIMARY`` names the data each model's claims are judged on first."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from harness.declare import Declared, param
from harness.targets import glm_data
from harness.targets.glm_data import GLMData

MODELS = ("logistic", "softmax", "robust")
COLUMNS = ("regular", "untuned", "map")
#: The theta update of each model's row (002, Table 1).
THETA_STEP = {"logistic": "mh", "softmax": "mala", "robust": "slice"}
REGULAR = {"mh": "rwmh", "mala": "mala", "slice": "slice"}
#: Data readings: synthetic draws with N(0, 1/P) features, the same with N(0, WIDE_SD^2)
#: features (the paper's scale, assumed), and real sets: data -> (model, N, loader).
SYNTHETIC, WIDE, MNIST = "synthetic", "synthetic-wide", "mnist"
WIDE_SD = 1.0
REAL: dict[str, tuple[str, int, Callable[[], GLMData]]] = {
    MNIST: ("logistic", glm_data.LOGISTIC_N, glm_data.mnist_7_vs_9),
    "digits": ("logistic", 359, glm_data.digits_7_vs_9),
    "breast-cancer": ("logistic", 569, glm_data.breast_cancer),
    "digits-3": ("softmax", 537, glm_data.digits_3_class),
}
DATA = (SYNTHETIC, WIDE, *REAL)
#: The data each model's claims are judged on first: 002's own data where we have it (MNIST),
#: else the synthetic stand-in at 002's N. The other readings are rows under the claims.
PRIMARY = {"logistic": MNIST, "softmax": SYNTHETIC, "robust": SYNTHETIC}
#: Table 1's data sets and models, in its own words.
PAPER_DATA = {
    "logistic": "MNIST, Logistic regression",
    "softmax": "3-Class CIFAR-10, Softmax classification",
    "robust": "OPV, Robust regression",
}


def is_papers_data(model: str, data: str) -> bool:
    """Whether ``data`` is 002's own data set for ``model`` (only MNIST is)."""
    return model == "logistic" and data == MNIST


@dataclass(frozen=True)
class Row(Declared):
    """One row of the table: a model and data set, a column, a data size and a chain length."""

    model: str = param(choices=MODELS)
    data: str = param(choices=DATA)
    column: str = param(choices=COLUMNS)
    N: int = param(low=1)
    iterations: int = param(low=10)
    #: Chains of one row differ only in their seed (chain 0 keeps the old key).
    chain: int = param(0, low=0)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.data in REAL:
            model, N, _ = REAL[self.data]
            if self.model != model:
                raise ValueError(
                    f"parameter 'data' = {self.data!r} is invalid; valid: with model {model!r}"
                )
            if self.N != N:
                raise ValueError(
                    f"parameter 'N' = {self.N} is invalid for data {self.data!r}; valid: {N}"
                )

    @property
    def algorithm(self) -> str:
        step = THETA_STEP[self.model]
        return REGULAR[step] if self.column == "regular" else f"flymc-{step}"

    @property
    def label(self) -> str:
        chain = f" #{self.chain}" if self.chain else ""
        return f"{self.model} {self.data} N={self.N} {self.column}{chain}"

    @property
    def key(self) -> str:
        return f"table|{self.label}|it={self.iterations}"

    def describe(self) -> str:
        return f"{self.label}: {self.algorithm}, {self.iterations} iterations"
