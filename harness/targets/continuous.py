"""One-dimensional continuous targets with exact CDFs."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np


def gumbel_cdf(x: np.ndarray, loc: float) -> np.ndarray:
    """P(G <= x) for G ~ Gumbel(loc): exp(-exp(-(x - loc))) (001, Sec. 2)."""
    return np.exp(-np.exp(-(np.asarray(x, dtype=np.float64) - loc)))


@dataclass(frozen=True)
class TruncatedGumbelTarget:
    """TruncGumbel(phi, b): a Gumbel(phi) conditioned on G <= b (001, footnote 1).

    CDF: F(g) = exp(-exp(-(min(g, b) - phi))) / exp(-exp(-(b - phi))). Written as
    log F(g) = -exp(phi - b) * expm1(b - g) for g <= b, it stays accurate when b - phi is far
    into either tail (no overflow for b << phi, no cancellation for b >> phi).
    """

    phi: float
    b: float
    name: str = ""
    kind: ClassVar[str] = "continuous-1d"

    def __post_init__(self) -> None:
        for label in ("phi", "b"):
            value = getattr(self, label)
            if isinstance(value, bool) or not isinstance(value, int | float | np.floating):
                raise ValueError(f"{label} = {value!r} is invalid; valid: a finite number")
            if not math.isfinite(value):
                raise ValueError(f"{label} = {value!r} is invalid; valid: a finite number")
            object.__setattr__(self, label, float(value))
        if not self.name:
            object.__setattr__(self, "name", f"truncgumbel-phi{self.phi:g}-b{self.b:g}")

    def cdf(self, g: np.ndarray) -> np.ndarray:
        g = np.minimum(np.asarray(g, dtype=np.float64), self.b)
        return np.exp(-math.exp(self.phi - self.b) * np.expm1(self.b - g))

    def logpdf(self, g: np.ndarray) -> np.ndarray:
        """log density: Gumbel(phi) log density minus log F_Gumbel(b); -inf above b."""
        g = np.asarray(g, dtype=np.float64)
        z = g - self.phi
        # Far below phi, exp(-z) overflows to inf (the density is 0: log -inf); at g = -inf
        # the formula is inf - inf, so that end is set apart.
        with np.errstate(over="ignore", invalid="ignore"):
            out = -z - np.exp(-z) + math.exp(self.phi - self.b)
        return np.where((g <= self.b) & (g > -np.inf), out, -np.inf)

    @property
    def support(self) -> tuple[float, float]:
        """The closed domain of a draw (what the output contract checks draws against)."""
        return (-math.inf, self.b)

    @property
    def log_normaliser(self) -> float:
        """log P(Gumbel(phi) <= b) = -exp(-(b - phi))."""
        return -math.exp(self.phi - self.b)
