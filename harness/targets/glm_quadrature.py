"""Quadrature ground truth of a GLM posterior with D <= 2 (harness/targets/glm.py): log Z and
every marginal CDF by the box-density quadrature (harness/targets/box_density.py), the prior as
the box's normal proposal, o = sum_n log L_n, the box all of R^D, narrowed to where the mass lies.

o on a grid of (2^10 + 1)^2 points is a million sums of N terms (about 6 s for N = 100): the
time is in the terms' exp and log1p, so it is computed once per target and process.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from harness.targets.box_density import NORMAL, BoxDensityTarget, QuadratureTruth, quadrature_truth
from harness.targets.glm_kernels import log_lik_total_nb

#: The largest D with a quadrature ground truth.
MAX_QUADRATURE_D = 2


def _packed_log_lik(code: int, nu: float) -> Any:
    """o(theta, data) = sum_n log L_n with data = [X | t]: the box-density form, compilable."""

    def o(theta: np.ndarray, data: np.ndarray) -> float:
        return log_lik_total_nb(code, data[:, :-1], data[:, -1], nu, theta)

    return o


def _no_bound(lo: np.ndarray, hi: np.ndarray, data: np.ndarray) -> float:
    return math.inf


def glm_quadrature(target: Any, points: int | None = None) -> QuadratureTruth:
    """log Z and every marginal CDF of a D <= 2 GLM posterior by Simpson's rule on a grid.
    ``log_z_error``/``cdf_error`` are the differences from the same rule on every other point.
    Cost: a few grids of (2^16 + 1) points (D = 1) or (2^10 + 1)^2 (D = 2), N terms each."""
    if target.D > MAX_QUADRATURE_D:
        raise ValueError(
            f"D = {target.D} is invalid for glm_quadrature; valid: D <= {MAX_QUADRATURE_D}"
        )
    D = target.D
    box = BoxDensityTarget(
        lo=np.full(D, -np.inf),
        hi=np.full(D, np.inf),
        proposal=np.array([[NORMAL, 0.0, target.prior_sd]] * D),
        data=np.column_stack([target.X, target.t]),
        log_lik=_packed_log_lik(target.code, target.nu),
        bound=_no_bound,
        name=f"{target.name}-quadrature",
    )

    return quadrature_truth(box, points)
