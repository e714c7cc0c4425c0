"""Densities on a box written as phi(x) = i(x) + o(x): the target kind of A* sampling
(001, Sec. 4).

- i is a product-form proposal: per coordinate a Normal(a, b) density, the uniform density of
  the box side, or an exponential density of rate b from the box's lower end. It gives its
  log mass on any sub-box and samples inside one by inversion (one uniform a coordinate).
- o(x) = ``log_lik(x, data)``, the sum of the per-datum log-likelihoods (one evaluation of o is
  one likelihood evaluation in 001's count), and ``bound(lo, hi, data) >= max o`` over the box
  [lo, hi] (one bound evaluation).
- ``log_lik`` and ``bound`` are plain functions of NumPy arrays and floats, so a Numba kernel
  can compile the same source; a helper they call must itself be ``numba.njit``-compiled.

Ground truth for d = 1 (:func:`quadrature_truth`): log Z and the CDF on a dense grid.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import ClassVar

import numpy as np
from numba import njit
from scipy import integrate, special

NORMAL, UNIFORM, EXPONENTIAL = 0, 1, 2
PROPOSALS = {"normal": NORMAL, "uniform": UNIFORM, "exponential": EXPONENTIAL}


def _log_diff_ndtr(a: float, b: float) -> float:
    """log(Phi(b) - Phi(a)) for a <= b, from the tail where both masses are small."""
    if a > 0.0:  # upper tail: Phi(-a) - Phi(-b) keeps the digits
        a, b = -b, -a
    if b <= 0.0:
        return math.log(special.ndtr(b) - special.ndtr(a)) if b > a else -math.inf
    return math.log1p(-(special.ndtr(a) + special.ndtr(-b)))


def _normal_inside(a: float, b: float, u: float) -> float:
    """A standard normal conditioned on [a, b], by inversion of u in (0, 1), from the tail
    where the CDF is small (the other tail by symmetry)."""
    if a > 0.0:
        return -_normal_inside(-b, -a, 1.0 - u)
    lo = special.ndtr(a)
    if b <= 0.0:
        return special.ndtri(lo + u * (special.ndtr(b) - lo))
    # a <= 0 < b: mass below 0 is 0.5 - lo, above it 0.5 - Phi(-b).
    mass = 1.0 - lo - special.ndtr(-b)
    v = u * mass
    if v <= 0.5 - lo:
        return special.ndtri(lo + v)
    return -special.ndtri(special.ndtr(-b) + (mass - v))


def log_mass_1d(code: int, a: float, b: float, origin: float, lo: float, hi: float) -> float:
    """log of the proposal's mass on [lo, hi] in one coordinate."""
    if code == NORMAL:
        return _log_diff_ndtr((lo - a) / b, (hi - a) / b)
    if code == UNIFORM:
        return math.log(hi - lo) - math.log(b - a) if hi > lo else -math.inf
    # Exponential of rate b from origin: mass exp(-b (lo - o)) (1 - exp(-b (hi - lo))).
    if hi <= lo:
        return -math.inf
    return -b * (lo - origin) + math.log(-math.expm1(-b * (hi - lo)))


def sample_1d(
    code: int, a: float, b: float, origin: float, lo: float, hi: float, u: float
) -> float:
    """The proposal restricted to [lo, hi] in one coordinate, by inversion of u in [0, 1)."""
    if code == NORMAL:
        return a + b * _normal_inside((lo - a) / b, (hi - a) / b, u)
    if code == UNIFORM:
        return lo + u * (hi - lo)
    return lo - math.log1p(u * math.expm1(-b * (hi - lo))) / b


def log_density_1d(code: int, a: float, b: float, origin: float, x: float) -> float:
    if code == NORMAL:
        z = (x - a) / b
        return -0.5 * z * z - math.log(b) - 0.5 * math.log(2.0 * math.pi)
    if code == UNIFORM:
        return -math.log(b - a)
    return math.log(b) - b * (x - origin)


@dataclass(frozen=True, eq=False)
class BoxDensityTarget:
    """p(x) proportional to exp(i(x) + o(x)) on the box [lo, hi] (001, Sec. 4).

    ``proposal`` has one row (code, a, b) a coordinate: Normal(a, b) (mean, sd), Uniform on the
    box side [a, b] = [lo, hi] (so i is the normalised uniform density), or Exponential with
    rate b from ``lo`` (a unused). ``mode``, for d = 1 only: o is unimodal with its maximum
    there (non-decreasing below, non-increasing above), as drill-down needs (001, Sec. 4).
    """

    lo: np.ndarray
    hi: np.ndarray
    proposal: np.ndarray
    data: np.ndarray
    log_lik: Callable[[np.ndarray, np.ndarray], float]
    bound: Callable[[np.ndarray, np.ndarray, np.ndarray], float]
    name: str = "box-density"
    mode: float | None = None
    kind: ClassVar[str] = "box-density"

    @property
    def d(self) -> int:
        return int(self.lo.size)

    def o(self, x: np.ndarray) -> float:
        return float(self.log_lik(x, self.data))

    def M(self, lo: np.ndarray, hi: np.ndarray) -> float:
        return float(self.bound(lo, hi, self.data))

    def log_mass(self, lo: np.ndarray, hi: np.ndarray) -> float:
        """log nu([lo, hi]) under the proposal."""
        return sum(
            log_mass_1d(int(c), a, b, o, lo[j], hi[j])
            for j, ((c, a, b), o) in enumerate(zip(self.proposal, self.lo, strict=True))
        )

    def sample_in(self, lo: np.ndarray, hi: np.ndarray, u: np.ndarray) -> np.ndarray:
        """X ~ nu restricted to [lo, hi], one uniform of ``u`` a coordinate."""
        return np.array(
            [
                sample_1d(int(c), a, b, o, lo[j], hi[j], u[j])
                for j, ((c, a, b), o) in enumerate(zip(self.proposal, self.lo, strict=True))
            ]
        )

    def log_proposal(self, x: np.ndarray) -> float:
        """i(x)."""
        return sum(
            log_density_1d(int(c), a, b, o, x[j])
            for j, ((c, a, b), o) in enumerate(zip(self.proposal, self.lo, strict=True))
        )

    @cached_property
    def truth(self) -> QuadratureTruth:
        """The quadrature ground truth (d = 1), computed on first use."""
        return quadrature_truth(self)

    def cdf(self, x: np.ndarray) -> np.ndarray:
        return self.truth.cdf(x)

    @property
    def log_normaliser(self) -> float:
        """log Z, the location of the Gumbel maxima A* returns (001, Sec. 4)."""
        return self.truth.log_z


def _check_finite(name: str, values: np.ndarray) -> None:
    if np.any(np.isnan(values)):
        raise ValueError(f"{name} = {values.tolist()} is invalid; valid: numbers, no NaN")


def box_density(
    lo: list[float] | np.ndarray,
    hi: list[float] | np.ndarray,
    proposal: list[tuple[str, float, float] | tuple[str, float]],
    log_lik: Callable[[np.ndarray, np.ndarray], float],
    bound: Callable[[np.ndarray, np.ndarray, np.ndarray], float],
    data: np.ndarray,
    name: str = "box-density",
    mode: float | None = None,
) -> BoxDensityTarget:
    """A density on [lo, hi] for A* sampling, from plain functions.

    ``proposal`` has one entry a coordinate: ("normal", mean, sd), ("uniform",) or
    ("exponential", rate). ``log_lik(x, data)`` returns o(x); ``bound(lo, hi, data)`` an upper
    bound of o on the box [lo, hi]. Sides may be infinite except under a uniform proposal, and an
    exponential proposal needs a finite lower end. ``mode`` declares o unimodal in 1-D with its
    maximum there (drill-down relies on it).
    """
    lo = np.atleast_1d(np.asarray(lo, dtype=np.float64))
    hi = np.atleast_1d(np.asarray(hi, dtype=np.float64))
    if lo.ndim != 1 or lo.size == 0:
        raise ValueError(f"lo = {lo.tolist()} is invalid; valid: a box of dimension d >= 1")
    if hi.shape != lo.shape:
        raise ValueError(f"hi = {hi.tolist()} is invalid; valid: {lo.size} numbers, like lo")
    _check_finite("lo", lo)
    _check_finite("hi", hi)
    if np.any(lo >= hi):
        raise ValueError(
            f"the box [lo, hi] = [{lo.tolist()}, {hi.tolist()}] is invalid; valid: lo < hi in "
            "every coordinate"
        )
    if len(proposal) != lo.size:
        raise ValueError(
            f"proposal = {proposal!r} is invalid; valid: one entry for each of {lo.size} "
            "coordinates"
        )
    rows = []
    for j, entry in enumerate(proposal):
        kind = entry[0]
        if kind not in PROPOSALS:
            raise ValueError(
                f"proposal[{j}] = {entry!r} is invalid; valid kinds: {', '.join(PROPOSALS)}"
            )
        if kind == "normal":
            if len(entry) != 3 or not entry[2] > 0 or not math.isfinite(entry[1]):
                raise ValueError(
                    f"proposal[{j}] = {entry!r} is invalid; valid: ('normal', mean, sd > 0)"
                )
            rows.append((NORMAL, float(entry[1]), float(entry[2])))
        elif kind == "uniform":
            if not (math.isfinite(lo[j]) and math.isfinite(hi[j])):
                raise ValueError(
                    f"proposal[{j}] = {entry!r} is invalid on the side [{lo[j]}, {hi[j]}]; "
                    "valid: a uniform proposal on a finite side"
                )
            rows.append((UNIFORM, float(lo[j]), float(hi[j])))
        else:
            if len(entry) != 2 or not entry[1] > 0 or not math.isfinite(lo[j]):
                raise ValueError(
                    f"proposal[{j}] = {entry!r} is invalid on the side [{lo[j]}, {hi[j]}]; "
                    "valid: ('exponential', rate > 0) on a side with a finite lower end"
                )
            rows.append((EXPONENTIAL, 0.0, float(entry[1])))
    data = np.asarray(data, dtype=np.float64)
    if data.size == 0:
        raise ValueError("data is empty; valid: at least one datum")
    _check_finite("data", data)
    if mode is not None and (lo.size != 1 or not lo[0] <= mode <= hi[0]):
        raise ValueError(
            f"mode = {mode!r} is invalid; valid: a point of the side [{lo[0]}, {hi[-1]}] of a "
            "1-D box"
        )
    return BoxDensityTarget(
        lo, hi, np.array(rows, dtype=np.float64), data, log_lik, bound, name, mode
    )


@dataclass(frozen=True)
class QuadratureTruth:
    """log Z and the CDF of a 1-D box density on a grid, with the error of both (the
    difference from a grid half as fine, a bound for Simpson's rule on a smooth density)."""

    grid: np.ndarray
    cdf_values: np.ndarray
    log_z: float
    log_z_error: float
    cdf_error: float

    def cdf(self, x: np.ndarray) -> np.ndarray:
        return np.interp(np.asarray(x, dtype=np.float64), self.grid, self.cdf_values)


def _support(target: BoxDensityTarget, width: float) -> tuple[float, float]:
    """The part of the side where the density is not negligible: the box, with an infinite end
    cut where the proposal's tail mass falls below exp(-width) (o <= M there)."""
    (code, a, b), lo, hi = target.proposal[0], target.lo[0], target.hi[0]
    if code == NORMAL:
        k = math.sqrt(2.0 * width)
        return max(lo, a - k * b), min(hi, a + k * b)
    if code == EXPONENTIAL:
        return lo, min(hi, lo + width / b)
    return lo, hi


def quadrature_truth(target: BoxDensityTarget, points: int = 2**16 + 1) -> QuadratureTruth:
    """log Z = log of the integral of exp(i + o) over the box, and the CDF, by Simpson's rule
    (cumulative for the CDF) on ``points`` points (d = 1 only).

    A first grid over the side (an infinite end cut where the proposal's tail is below e^-80)
    finds where the mass lies (CDF between 1e-15 and 1 - 1e-15); the grid is narrowed to that
    window until a quarter of its points lie inside it.
    The errors are the differences from the same rule on every other point; the CDF's includes
    linear interpolation between those points, so it bounds what :meth:`QuadratureTruth.cdf`
    adds between grid points.
    """
    if target.d != 1:
        raise ValueError(f"d = {target.d} is invalid for quadrature_truth; valid: d = 1")

    def on(lo: float, hi: float) -> tuple[np.ndarray, np.ndarray, float]:
        grid = np.linspace(lo, hi, points)
        lf = np.array([target.log_proposal(x[None]) + target.o(x[None]) for x in grid])
        top = float(np.max(lf))
        return grid, np.exp(lf - top), top

    def rule(x: np.ndarray, y: np.ndarray, top: float) -> tuple[float, np.ndarray]:
        cdf = np.concatenate([[0.0], integrate.cumulative_simpson(y, x=x)])
        return top + math.log(cdf[-1]), cdf / cdf[-1]

    grid, f, top = on(*_support(target, 80.0))
    for _ in range(8):  # narrow the window to the mass until it stops shrinking
        _, cdf = rule(grid, f, top)
        cdf = np.maximum.accumulate(cdf)
        first = max(int(np.searchsorted(cdf, 1e-15, side="right")) - 1, 0)
        last = min(int(np.searchsorted(cdf, 1.0 - 1e-15, side="left")) + 1, points - 1)
        if last - first > points // 4:
            break
        grid, f, top = on(grid[first], grid[last])
    log_z, cdf = rule(grid, f, top)
    coarse_z, coarse = rule(grid[::2], f[::2], top)
    between = np.interp(grid[1::2], grid[::2], coarse) - cdf[1::2]
    cdf_error = max(float(np.max(np.abs(cdf[::2] - coarse))), float(np.max(np.abs(between))))
    return QuadratureTruth(grid, cdf, log_z, abs(log_z - coarse_z), cdf_error)


def _peaky_log_lik(x: np.ndarray, data: np.ndarray) -> float:
    return -data[0, 0] * math.log1p(x[0])


def _peaky_bound(lo: np.ndarray, hi: np.ndarray, data: np.ndarray) -> float:
    return -data[0, 0] * math.log1p(lo[0])  # o decreases on x > 0: its max is at lo


def peaky_exponential(a: float) -> BoxDensityTarget:
    """p(x) proportional to exp(-x) / (1 + x)^a on x > 0 (001, Sec. 6.1): proposal Exp(1),
    o(x) = -a log(1 + x), unimodal with its mode at 0; peakier as a grows."""
    if not a > 0 or not math.isfinite(a):
        raise ValueError(f"a = {a!r} is invalid; valid: a finite number > 0")
    return box_density(
        [0.0],
        [math.inf],
        [("exponential", 1.0)],
        _peaky_log_lik,
        _peaky_bound,
        np.array([[a]]),
        name=f"peaky-exponential-a{a:g}",
        mode=0.0,
    )


#: 001 Sec. 6.1 (clutter, after Minka 2001): inlier weight and clutter standard deviation.
CLUTTER_W, CLUTTER_SD, CLUTTER_PRIOR_SD = 0.5, 100.0, 2.0


@njit(cache=True)
def _clutter_point(x: np.ndarray, theta: np.ndarray) -> float:
    """log(w N(x; theta, I) + (1 - w) N(x; 0, 100^2 I)) for one point x (compiled: a helper
    that ``log_lik`` or ``bound`` calls must be, for the Numba samplers to call it)."""
    d = x.size
    inlier = 0.0
    clutter = 0.0
    for j in range(d):
        inlier += (x[j] - theta[j]) ** 2
        clutter += x[j] ** 2
    half_log_2pi = 0.5 * math.log(2.0 * math.pi)
    a = math.log(CLUTTER_W) - 0.5 * inlier - d * half_log_2pi
    b = (
        math.log(1.0 - CLUTTER_W)
        - 0.5 * clutter / CLUTTER_SD**2
        - d * (math.log(CLUTTER_SD) + half_log_2pi)
    )
    top = max(a, b)
    return top + math.log(math.exp(a - top) + math.exp(b - top))


def _clutter_log_lik(theta: np.ndarray, data: np.ndarray) -> float:
    total = 0.0
    for i in range(data.shape[0]):
        total += _clutter_point(data[i], theta)
    return total


def _clutter_bound(lo: np.ndarray, hi: np.ndarray, data: np.ndarray) -> float:
    """Per point, theta clipped into the box maximises the inlier term; the clutter term does
    not depend on theta, so the sum of the per-point maxima bounds o (tight per point)."""
    total = 0.0
    theta = np.empty(lo.size)
    for i in range(data.shape[0]):
        for j in range(lo.size):
            theta[j] = min(max(data[i, j], lo[j]), hi[j])
        total += _clutter_point(data[i], theta)
    return total


def clutter(D: int, seed: int = 0, points: int = 20) -> BoxDensityTarget:
    """The clutter posterior of 001 Sec. 6.1: theta ~ N(0, 2^2 I) as the proposal, ``points``
    observations, half uniform in [-5, -3]^D and half in [2, 4]^D (a sharply bimodal posterior),
    each x ~ 0.5 N(theta, I) + 0.5 N(0, 100^2 I)."""
    if isinstance(D, bool) or not isinstance(D, int) or D < 1:
        raise ValueError(f"D = {D!r} is invalid; valid: an integer >= 1")
    rng = np.random.default_rng(seed)
    half = points // 2
    data = np.vstack(
        [rng.uniform(-5.0, -3.0, (half, D)), rng.uniform(2.0, 4.0, (points - half, D))]
    )
    return box_density(
        [-math.inf] * D,
        [math.inf] * D,
        [("normal", 0.0, CLUTTER_PRIOR_SD)] * D,
        _clutter_log_lik,
        _clutter_bound,
        data,
        name=f"clutter-D{D}",
    )
