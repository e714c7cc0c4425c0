"""Quadrature ground truth of a GLM posterior with D <= 2 (harness/targets/glm.py): log Z and
every marginal CDF by the box-density quadrature (harness/targets/box_density.py), the prior as
the box's normal proposal, o = sum_n log L_n, the box all of R^D, narrowed to where the mass lies.

o on a grid of (2^10 + 1)^2 points is a million sums of N terms; it runs in one compiled loop
that calls the target's own per-datum kernel and sums in order n = 0, 1, ... as
``log_lik_total`` does, so every value equals the target's ``log_lik`` to the last bit.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import njit

from harness.targets.box_density import NORMAL, BoxDensityTarget, QuadratureTruth, quadrature_truth
from harness.targets.glm_kernels import log_lik_one, log_lik_total_nb

#: The largest D with a quadrature ground truth.
MAX_QUADRATURE_D = 2


@njit(cache=True)
def _log_lik_on_grid(model, X, t, nu, xs, ys, out):  # pragma: no cover - compiled
    """out[a, b] = sum_n log L_n((xs[a], ys[b])); with ys empty, out[a, 0] at theta = xs[a]."""
    theta = np.empty(1 if ys.size == 0 else 2)
    y = np.empty(theta.size // X.shape[1])
    for a in range(xs.size):
        for b in range(max(ys.size, 1)):
            theta[0] = xs[a]
            if ys.size:
                theta[1] = ys[b]
            s = 0.0
            for n in range(X.shape[0]):
                s += log_lik_one(model, X, t, nu, theta, n, y)
            out[a, b] = s


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

    def o_on_grid(axes: list[np.ndarray]) -> np.ndarray:
        ys = axes[1] if len(axes) == 2 else np.empty(0)
        out = np.empty((axes[0].size, max(ys.size, 1)))
        X, t = np.ascontiguousarray(target.X), np.ascontiguousarray(target.t, dtype=np.float64)
        _log_lik_on_grid(target.code, X, t, float(target.nu), axes[0], ys, out)
        return out if ys.size else out[:, 0]

    return quadrature_truth(box, points, o_on_grid)
