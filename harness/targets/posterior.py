"""A one-dimensional posterior with a quadrature ground truth, for subsampling MH kernels.

Model: y_n ~ t_nu(theta, s) independently (Student-t location, heavy-tailed like the ARCH
innovations of 000 Sec. 5.2), prior theta ~ N(m0, s0^2). The log-likelihood terms are the
factors f_n of 000 Eq. 1 / Eq. 12. Only their theta-dependent part is used,
log f_n(theta) = -(nu + 1)/2 * log1p(((y_n - theta) / s)^2 / nu), because constants cancel
between the two arms of an MH race.

Ground truth: the log posterior on a uniform grid of 20001 points spanning +-14 approximate
posterior standard deviations, normalised with Simpson's rule; the CDF is the cumulative
trapezoid of the normalised density, interpolated linearly. The reported quadrature error is
the difference of the trapezoid and Simpson normalisers (about 1e-12 for the catalog problems),
far below the 1e-2 that a KS gate resolves.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import ClassVar

import numpy as np
from scipy.integrate import simpson
from scipy.special import logsumexp

from harness.spec import Param, finite_number


@dataclass(frozen=True, eq=False)
class StudentTPosterior:
    y: np.ndarray
    nu: float = 4.0
    scale: float = 1.0
    prior_mean: float = 0.0
    prior_sd: float = 10.0
    name: str = "studentt-posterior"
    meta: dict = field(default_factory=dict)
    kind: ClassVar[str] = "posterior-1d"

    def __post_init__(self) -> None:
        y = np.array(self.y, dtype=np.float64)
        if y.ndim != 1 or y.size < 2:
            raise ValueError(f"y must be a 1-D array of at least 2 observations, got {y.shape}")
        if not np.all(np.isfinite(y)):
            raise ValueError("y contains NaN or inf; valid: finite observations")
        for name in ("nu", "scale", "prior_sd"):
            finite_number(name, above=0.0).check(getattr(self, name))
        finite_number("prior_mean").check(self.prior_mean)
        y.setflags(write=False)
        object.__setattr__(self, "y", y)

    @property
    def N(self) -> int:
        return int(self.y.size)

    @property
    def lipschitz(self) -> float:
        """sup_theta |d log f_n / d theta| = (nu + 1) / (2 sqrt(nu) s), attained at |z| = sqrt(nu).

        So |log f_n(theta') - log f_n(theta)| <= L |theta' - theta| for every n: a range bound
        for the EBS race that needs no pass over the data (as Bardenet et al. 2014 do).
        """
        return (self.nu + 1.0) / (2.0 * math.sqrt(self.nu) * self.scale)

    def log_prior(self, theta: float) -> float:
        z = (theta - self.prior_mean) / self.prior_sd
        return -0.5 * z * z

    def log_posterior(self, thetas: np.ndarray) -> np.ndarray:
        """Unnormalised log posterior at each theta (vectorised over the grid)."""
        thetas = np.asarray(thetas, dtype=np.float64)
        z = (self.y[None, :] - thetas[:, None]) / self.scale
        ll = -0.5 * (self.nu + 1.0) * np.log1p(z * z / self.nu).sum(axis=1)
        zp = (thetas - self.prior_mean) / self.prior_sd
        return ll - 0.5 * zp * zp

    @cached_property
    def _quadrature(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
        centre = float(np.median(self.y))
        # Posterior sd of a t location is about s sqrt((nu + 3) / ((nu + 1) N)).
        width = 14.0 * self.scale * math.sqrt((self.nu + 3.0) / ((self.nu + 1.0) * self.N))
        # Recentre once at the mode of a coarse grid so the fine grid is symmetric about the mass.
        coarse = np.linspace(centre - 3 * width, centre + 3 * width, 2001)
        centre = float(coarse[np.argmax(self.log_posterior(coarse))])
        grid = np.linspace(centre - width, centre + width, 20001)
        logp = self.log_posterior(grid)
        dens = np.exp(logp - logsumexp(logp))
        z_simpson = float(simpson(dens, x=grid))
        z_trapz = float(np.trapezoid(dens, grid))
        dens = dens / z_simpson
        cdf = np.concatenate([[0.0], np.cumsum(0.5 * (dens[1:] + dens[:-1]) * np.diff(grid))])
        cdf = cdf / cdf[-1]
        return grid, dens, cdf, abs(z_trapz - z_simpson) / z_simpson

    @property
    def quadrature_error(self) -> float:
        return self._quadrature[3]

    @cached_property
    def mean(self) -> float:
        grid, dens, _, _ = self._quadrature
        return float(simpson(grid * dens, x=grid))

    @cached_property
    def sd(self) -> float:
        grid, dens, _, _ = self._quadrature
        return float(math.sqrt(simpson((grid - self.mean) ** 2 * dens, x=grid)))

    def cdf(self, x: np.ndarray) -> np.ndarray:
        grid, _, cdf, _ = self._quadrature
        return np.interp(x, grid, cdf, left=0.0, right=1.0)


def studentt_posterior(
    N: int, theta: float, nu: float, rng: np.random.Generator, name: str | None = None
) -> StudentTPosterior:
    """Simulated data y_n = theta + t_nu noise (unit scale), prior N(0, 10^2)."""
    N = Param("N", 2, int, low=2, doc="observations").check(N)
    y = theta + rng.standard_t(nu, size=N)
    label = name or f"studentt-posterior-N{N}-nu{nu:g}"
    return StudentTPosterior(y, nu=nu, name=label, meta={"theta": theta, "family": "000 Sec. 4"})
