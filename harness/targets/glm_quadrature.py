"""Quadrature ground truth of a GLM posterior with D <= 2 (harness/targets/glm.py): log Z and
every marginal CDF by the box-density quadrature (harness/targets/box_density.py), the prior as
the box's normal proposal, o = sum_n log L_n, the box all of R^D, narrowed to where the mass lies.

o on a grid of (2^10 + 1)^2 points is a million sums of N terms (8 to 17 s for N = 100): the
time is in the terms' exp and log1p. Every process that builds the same posterior (a verify's
workers, each planted-bug verify of a gate-quality run) would pay it again, so a truth is kept
on disk, keyed by a digest of everything it depends on: the model, the data, the grid, the
source of the quadrature and its kernels, and NumPy's and SciPy's versions.
SAMPLER_HARNESS_CACHE names the folder (default: ``.harness-cache`` in the checkout); a folder
that cannot be written only costs the recomputation.
"""

from __future__ import annotations

import hashlib
import math
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import scipy

from harness.targets import box_density, box_probes, glm_kernels
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
    path = _cache_file(target, points)
    if path is not None and path.exists():
        try:
            return _load(path)
        except (OSError, ValueError, KeyError):
            pass  # a damaged entry is recomputed and replaced
    truth = _compute(target, points)
    if path is not None:
        _save(path, truth)
    return truth


def _compute(target: Any, points: int | None) -> QuadratureTruth:
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


def cache_folder() -> Path:
    """Where quadrature truths are kept (SAMPLER_HARNESS_CACHE, else the checkout's
    ``.harness-cache``)."""
    chosen = os.environ.get("SAMPLER_HARNESS_CACHE")
    root = Path(chosen) if chosen else Path(__file__).resolve().parents[2] / ".harness-cache"
    return root / "glm-quadrature"


def _cache_file(target: Any, points: int | None) -> Path | None:
    digest = hashlib.sha256()
    for module in (box_density, box_probes, glm_kernels):
        digest.update(Path(module.__file__).read_bytes())
    digest.update(Path(__file__).read_bytes())
    digest.update(f"{np.__version__} {scipy.__version__} {points}".encode())
    digest.update(f"{target.code} {float(target.nu)!r} {float(target.prior_sd)!r}".encode())
    for array in (target.X, target.t):
        array = np.ascontiguousarray(array, dtype=np.float64)
        digest.update(f"{array.shape}".encode())
        digest.update(array.tobytes())
    return cache_folder() / f"{digest.hexdigest()[:32]}.npz"


def _save(path: Path, truth: QuadratureTruth) -> None:
    """Write ``truth`` whole or not at all: a reader never sees half a file."""
    arrays = {"scalars": np.array([truth.log_z, truth.log_z_error, truth.cdf_error])}
    for j, (grid, cdf, density) in enumerate(
        zip(truth.grids, truth.cdfs, truth.densities, strict=True)
    ):
        arrays[f"grid{j}"], arrays[f"cdf{j}"], arrays[f"density{j}"] = grid, cdf, density
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, suffix=".npz", delete=False) as tmp:
            np.savez(tmp, **arrays)
        os.replace(tmp.name, path)
    except OSError:
        return  # no writable cache: the truth was still computed


def _load(path: Path) -> QuadratureTruth:
    with np.load(path) as stored:
        d = sum(1 for name in stored.files if name.startswith("grid"))
        log_z, log_z_error, cdf_error = (float(v) for v in stored["scalars"])
        return QuadratureTruth(
            tuple(stored[f"grid{j}"] for j in range(d)),
            tuple(stored[f"cdf{j}"] for j in range(d)),
            tuple(stored[f"density{j}"] for j in range(d)),
            log_z,
            log_z_error,
            cdf_error,
        )
