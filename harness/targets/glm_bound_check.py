"""A probe of a GLM posterior's bounds (harness/targets/glm.py): log B_n < log L_n at the tuning
point and at random thetas (notes-firefly.md Sec. 9.1)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from harness.targets.glm_kernels import EPS


class BoundedGLM(Protocol):
    """What the bound check reads of a GLM posterior (:class:`harness.targets.glm.GLMTarget`,
    which imports this module to check its bounds)."""

    prior_sd: float
    theta_tuning: np.ndarray

    @property
    def D(self) -> int: ...

    @property
    def N(self) -> int: ...

    def log_lik(self, theta: np.ndarray, idx: np.ndarray) -> np.ndarray: ...

    def log_bound(self, theta: np.ndarray, idx: np.ndarray) -> np.ndarray: ...


@dataclass(frozen=True)
class BoundCheck:
    """What :func:`check_bounds` looked at: thetas, data per theta, and the smallest gap
    log L_n - log B_n it saw (>= EPS up to rounding where the bounds are right)."""

    thetas: int
    data: int
    min_gap: float


def _check_thetas(
    target: BoundedGLM, rng: np.random.Generator, points: int
) -> list[tuple[str, np.ndarray]]:
    """The tuning point, then ``points`` random thetas: half around it at scales prior_sd *
    1e-3 .. 1 (where the chain and the tight bounds are), half from the prior."""
    thetas = [("the tuning point", target.theta_tuning)]
    scales = target.prior_sd * np.array([1e-3, 1e-2, 1e-1, 1.0])
    for k in range(points - points // 2):
        step = scales[k % scales.size] * rng.standard_normal(target.D)
        thetas.append(("near the tuning point", target.theta_tuning + step))
    for _ in range(points // 2):
        thetas.append(("a prior draw", target.prior_sd * rng.standard_normal(target.D)))
    return thetas


def check_bounds(
    target: BoundedGLM, rng: np.random.Generator, points: int = 8, sample: int | None = None
) -> BoundCheck:
    """log B_n < log L_n for ``sample`` random data (all when None) at the tuning point and at
    ``points`` random thetas (notes Sec. 9.1). A violation is a ValueError naming the datum,
    theta and both values. A probe, not a proof: the bounds are proved in the module docstring's
    sources; this catches a wrong constant or sign."""
    N = target.N
    idx = np.arange(N) if sample is None or sample >= N else np.sort(rng.choice(N, sample, False))
    thetas = _check_thetas(target, rng, points)
    min_gap = math.inf
    for where, theta in thetas:
        ll, lb = target.log_lik(theta, idx), target.log_bound(theta, idx)
        gap = ll - lb
        bad = ~(gap > 0.0)  # NaN counts as a violation
        if np.any(bad):
            i = int(np.flatnonzero(bad)[np.argmin(np.nan_to_num(gap[bad], nan=-np.inf))])
            raise ValueError(
                f"the bound of datum n = {int(idx[i])} is invalid at theta = "
                f"{np.array2string(theta, precision=6, threshold=8)} ({where}): log B_n = "
                f"{lb[i]:.17g} > log L_n = {ll[i]:.17g}; valid: log B_n < log L_n at every "
                f"theta (bounds keep a gap >= EPS = {EPS:g})"
            )
        min_gap = min(min_gap, float(gap.min()))
    return BoundCheck(len(thetas), int(idx.size), min_gap)
