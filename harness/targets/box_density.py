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

Ground truth for d <= 2 (:func:`quadrature_truth`): log Z and each marginal CDF on a dense grid.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import ClassVar

import numpy as np
from numba import njit
from scipy import integrate, interpolate, special

from harness.targets.box_probes import check_functions, compiled, numba_problem

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
    ``log_lik_grad(x, data, grad)``, optional, returns o(x) and writes its gradient into
    ``grad`` (PM-A*'s trajectory estimator, 004 Sec. 5.3, follows it).
    """

    lo: np.ndarray
    hi: np.ndarray
    proposal: np.ndarray
    data: np.ndarray
    log_lik: Callable[[np.ndarray, np.ndarray], float]
    bound: Callable[[np.ndarray, np.ndarray, np.ndarray], float]
    name: str = "box-density"
    mode: float | None = None
    log_lik_grad: Callable[[np.ndarray, np.ndarray, np.ndarray], float] | None = None
    #: Why the Numba samplers cannot run on this target ("" when they can).
    numba_problem: str = ""
    kind: ClassVar[str] = "box-density"

    @property
    def d(self) -> int:
        return int(self.lo.size)

    def o(self, x: np.ndarray) -> float:
        """log_lik at x; NaN and +inf are refused here, naming the point, since a search
        compares against them and would never stop."""
        v = float(self.log_lik(x, self.data))
        if math.isnan(v) or v == math.inf:
            raise ValueError(
                f"log_lik(x, data) = {v} at x = {np.asarray(x).tolist()} is invalid; valid: a "
                "number or -inf"
            )
        return v

    def M(self, lo: np.ndarray, hi: np.ndarray) -> float:
        """bound on [lo, hi]; NaN and +inf are refused, naming the box."""
        v = float(self.bound(lo, hi, self.data))
        if math.isnan(v) or v == math.inf:
            raise ValueError(
                f"bound(lo, hi, data) = {v} on the box [{np.asarray(lo).tolist()}, "
                f"{np.asarray(hi).tolist()}] is invalid; valid: a number or -inf"
            )
        return v

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
        """The quadrature ground truth (d <= 2), computed on first use."""
        return quadrature_truth(self)

    def cdf(self, x: np.ndarray) -> np.ndarray:
        return self.truth.cdf(x)

    def marginal_cdf(self, j: int, x: np.ndarray) -> np.ndarray:
        """The CDF of coordinate j under p (quadrature, d <= 2)."""
        return self.truth.marginal_cdf(j, x)

    @property
    def log_normaliser(self) -> float:
        """log Z, the location of the Gumbel maxima A* returns (001, Sec. 4)."""
        return self.truth.log_z


def _check_finite(name: str, values: np.ndarray) -> None:
    if np.any(np.isnan(values)):
        raise ValueError(f"{name} = {values.tolist()} is invalid; valid: numbers, no NaN")


def _checked_box(
    lo: list[float] | np.ndarray, hi: list[float] | np.ndarray
) -> tuple[np.ndarray, ...]:
    """The box's sides as float arrays, checked: d >= 1, no NaN, lo < hi."""
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
    return lo, hi


def _proposal_rows(
    proposal: list[tuple[str, float, float] | tuple[str, float]], lo: np.ndarray, hi: np.ndarray
) -> list[tuple[int, float, float]]:
    """(code, a, b) of each coordinate's proposal entry, checked against its side."""
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
    return rows


def box_density(
    lo: list[float] | np.ndarray,
    hi: list[float] | np.ndarray,
    proposal: list[tuple[str, float, float] | tuple[str, float]],
    log_lik: Callable[[np.ndarray, np.ndarray], float],
    bound: Callable[[np.ndarray, np.ndarray, np.ndarray], float],
    data: np.ndarray,
    name: str = "box-density",
    mode: float | None = None,
    log_lik_grad: Callable[[np.ndarray, np.ndarray, np.ndarray], float] | None = None,
    compiles: bool = True,
) -> BoxDensityTarget:
    """A density on [lo, hi] for A* sampling, from plain functions.

    ``proposal`` has one entry a coordinate: ("normal", mean, sd), ("uniform",) or
    ("exponential", rate). ``log_lik(x, data)`` returns o(x); ``bound(lo, hi, data)`` an upper
    bound of o on the box [lo, hi]. Sides may be infinite except under a uniform proposal, and an
    exponential proposal needs a finite lower end. ``mode`` declares o unimodal in 1-D with its
    maximum there (drill-down relies on it).

    Before returning, the bound is probed at random points of 49 boxes of the kind A* visits;
    one point where o exceeds it, or where ``log_lik`` or ``bound`` is NaN or +inf, is a
    ValueError naming the box, the point and the values. The functions (already
    ``numba.njit``-compiled ones too) are compiled once with Numba here: a helper they call that
    Numba cannot compile is a ValueError naming it, unless ``compiles=False`` (the target then
    serves the reference samplers only, and the Numba ones refuse it).
    """
    lo, hi = _checked_box(lo, hi)
    rows = _proposal_rows(proposal, lo, hi)
    data = np.asarray(data, dtype=np.float64)
    if data.size == 0:
        raise ValueError("data is empty; valid: at least one datum")
    _check_finite("data", data)
    if mode is not None and (lo.size != 1 or not lo[0] <= mode <= hi[0]):
        raise ValueError(
            f"mode = {mode!r} is invalid; valid: a point of the side [{lo[0]}, {hi[-1]}] of a "
            "1-D box"
        )
    target = BoxDensityTarget(
        lo, hi, np.array(rows, dtype=np.float64), data, log_lik, bound, name, mode, log_lik_grad
    )
    check_functions(target)
    problem = numba_problem(target) if compiles else "it was built with compiles=False"
    if problem and compiles:
        raise ValueError(f"{problem}; or pass compiles=False to use the reference samplers only")
    return dataclasses.replace(target, numba_problem=problem)


@dataclass(frozen=True)
class QuadratureTruth:
    """log Z and each coordinate's marginal CDF on a grid, with the error of both (the difference
    from the same rule on a grid half as fine, a bound for Simpson's rule on a smooth density)."""

    grids: tuple[np.ndarray, ...]
    cdfs: tuple[np.ndarray, ...]
    densities: tuple[np.ndarray, ...]
    log_z: float
    log_z_error: float
    cdf_error: float

    @cached_property
    def _splines(self) -> tuple[interpolate.CubicHermiteSpline, ...]:
        # The CDF's slope is the marginal density, known on the grid: cubic Hermite
        # interpolation errs by O(h^4) between points where linear errs by O(h^2).
        return tuple(
            interpolate.CubicHermiteSpline(g, c, f, extrapolate=False)
            for g, c, f in zip(self.grids, self.cdfs, self.densities, strict=True)
        )

    def marginal_cdf(self, j: int, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=np.float64)
        grid = self.grids[j]
        inside = np.clip(x, grid[0], grid[-1])  # the CDF is 0 below the grid and 1 above it
        return np.clip(self._splines[j](inside), 0.0, 1.0)

    def cdf(self, x: np.ndarray) -> np.ndarray:
        return self.marginal_cdf(0, x)


def _support(target: BoxDensityTarget, j: int, width: float) -> tuple[float, float]:
    """The part of side j where the density is not negligible: the side, with an infinite end
    cut where the proposal's tail mass falls below exp(-width) (o <= M there)."""
    (code, a, b), lo, hi = target.proposal[j], target.lo[j], target.hi[j]
    if code == NORMAL:
        k = math.sqrt(2.0 * width)
        return max(lo, a - k * b), min(hi, a + k * b)
    if code == EXPONENTIAL:
        return lo, min(hi, lo + width / b)
    return lo, hi


@njit(cache=False)
def _o_on_plane(log_lik, data, xs, ys, out):  # pragma: no cover - compiled
    x = np.empty(2)
    for a in range(xs.size):
        for b in range(ys.size):
            x[0] = xs[a]
            x[1] = ys[b]
            out[a, b] = log_lik(x, data)


def _log_density_on(target: BoxDensityTarget, axes: list[np.ndarray]) -> np.ndarray:
    """i + o on the tensor grid of ``axes`` (d = 1 or 2). i is a product, so it adds per axis;
    o on a plane is compiled when Numba can compile ``log_lik`` (a million points), else looped."""
    log_i = [
        np.array([log_density_1d(int(c), a, b, target.lo[j], v) for v in axis])
        for j, ((c, a, b), axis) in enumerate(zip(target.proposal, axes, strict=True))
    ]
    if len(axes) == 1:
        o = np.array([target.o(np.array([v])) for v in axes[0]])
        return log_i[0] + o
    o = np.empty((axes[0].size, axes[1].size))
    try:
        _o_on_plane(compiled(target.log_lik), target.data, axes[0], axes[1], o)
    except Exception:  # any compile failure: a plain loop gives the same values
        for a, u in enumerate(axes[0]):
            for b, v in enumerate(axes[1]):
                o[a, b] = target.o(np.array([u, v]))
    return log_i[0][:, None] + log_i[1][None, :] + o


def _marginals(
    axes: list[np.ndarray], f: np.ndarray, top: float
) -> tuple[float, list[np.ndarray], list[np.ndarray]]:
    """log Z, each coordinate's normalised CDF and marginal density from f = exp(i + o - top)
    on the grid: Simpson over the other axis, then cumulative Simpson along its own."""
    cdfs, densities, totals = [], [], []
    for j, axis in enumerate(axes):
        density = f
        for k in reversed(range(len(axes))):
            if k != j:
                density = integrate.simpson(density, x=axes[k], axis=k)
        cdf = np.concatenate([[0.0], integrate.cumulative_simpson(density, x=axis)])
        totals.append(cdf[-1])
        cdfs.append(cdf / cdf[-1])
        densities.append(density / cdf[-1])
    return top + math.log(totals[0]), cdfs, densities


def quadrature_truth(target: BoxDensityTarget, points: int | None = None) -> QuadratureTruth:
    """log Z = log of the integral of exp(i + o) over the box, and each coordinate's marginal
    CDF, by Simpson's rule on ``points`` points an axis (d = 1: 2^16 + 1; d = 2: 2^10 + 1).

    A first grid over the box (an infinite end cut where the proposal's tail is below e^-80)
    finds where the mass lies (each marginal CDF between 1e-15 and 1 - 1e-15); the grid is
    narrowed to that window until a quarter of its points an axis lie inside it.
    The errors are the differences from the same rule on every other point; the CDFs' include
    the interpolation (cubic Hermite, the density as slope) at the points in between, so they
    bound what :meth:`QuadratureTruth.cdf` adds between grid points.
    """
    if target.d > 2:
        raise ValueError(f"d = {target.d} is invalid for quadrature_truth; valid: d = 1 or 2")
    points = points or (2**16 + 1 if target.d == 1 else 2**10 + 1)
    windows = [_support(target, j, 80.0) for j in range(target.d)]

    def on(windows: list[tuple[float, float]]) -> tuple[list[np.ndarray], np.ndarray, float]:
        axes = [np.linspace(lo, hi, points) for lo, hi in windows]
        lf = _log_density_on(target, axes)
        top = float(np.max(lf))
        return axes, np.exp(lf - top), top

    axes, f, top = on(windows)
    for _ in range(8):  # narrow each axis to the mass until no axis shrinks much
        _, cdfs, _ = _marginals(axes, f, top)
        narrowed, done = [], True
        for axis, cdf in zip(axes, cdfs, strict=True):
            cdf = np.maximum.accumulate(cdf)
            first = max(int(np.searchsorted(cdf, 1e-15, side="right")) - 1, 0)
            last = min(int(np.searchsorted(cdf, 1.0 - 1e-15, side="left")) + 1, points - 1)
            narrowed.append((axis[first], axis[last]))
            done = done and last - first > points // 4
        if done:
            break
        axes, f, top = on(narrowed)
    log_z, cdfs, densities = _marginals(axes, f, top)
    coarse_f = f[tuple(slice(None, None, 2) for _ in axes)]
    half = [a[::2] for a in axes]
    coarse_z, coarse, coarse_densities = _marginals(half, coarse_f, top)
    rough = QuadratureTruth(tuple(half), tuple(coarse), tuple(coarse_densities), 0.0, 0.0, 0.0)
    cdf_error = 0.0
    for j, (axis, cdf) in enumerate(zip(axes, cdfs, strict=True)):
        cdf_error = max(cdf_error, float(np.max(np.abs(rough.marginal_cdf(j, axis) - cdf))))
    return QuadratureTruth(
        tuple(axes), tuple(cdfs), tuple(densities), log_z, abs(log_z - coarse_z), cdf_error
    )


def peaky_log_lik(x: np.ndarray, data: np.ndarray) -> float:
    return -data[0, 0] * math.log1p(x[0])


def _peaky_log_lik_grad(x: np.ndarray, data: np.ndarray, grad: np.ndarray) -> float:
    grad[0] = -data[0, 0] / (1.0 + x[0])
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
        peaky_log_lik,
        _peaky_bound,
        np.array([[a]]),
        name=f"peaky-exponential-a{a:g}",
        mode=0.0,
        log_lik_grad=_peaky_log_lik_grad,
    )


#: 001 Sec. 6.1 (clutter, after Minka 2001): inlier weight and clutter standard deviation.
CLUTTER_W, CLUTTER_SD, CLUTTER_PRIOR_SD = 0.5, 100.0, 2.0


@njit(cache=True)
def clutter_point(x: np.ndarray, theta: np.ndarray) -> float:
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
        total += clutter_point(data[i], theta)
    return total


def _clutter_log_lik_grad(theta: np.ndarray, data: np.ndarray, grad: np.ndarray) -> float:
    """o and its gradient: each point pulls theta towards it by its inlier responsibility."""
    d = theta.size
    for j in range(d):
        grad[j] = 0.0
    total = 0.0
    half_log_2pi = 0.5 * math.log(2.0 * math.pi)
    for i in range(data.shape[0]):
        point = clutter_point(data[i], theta)
        total += point
        inlier = 0.0
        for j in range(d):
            inlier += (data[i, j] - theta[j]) ** 2
        r = math.exp(math.log(CLUTTER_W) - 0.5 * inlier - d * half_log_2pi - point)
        if r > 0.0:  # r = 0 adds nothing, and 0 * inf at an infinite theta would be NaN
            for j in range(d):
                grad[j] += r * (data[i, j] - theta[j])
    return total


def _clutter_bound(lo: np.ndarray, hi: np.ndarray, data: np.ndarray) -> float:
    """Per point, theta clipped into the box maximises the inlier term; the clutter term does
    not depend on theta, so the sum of the per-point maxima bounds o (tight per point)."""
    total = 0.0
    theta = np.empty(lo.size)
    for i in range(data.shape[0]):
        for j in range(lo.size):
            theta[j] = min(max(data[i, j], lo[j]), hi[j])
        total += clutter_point(data[i], theta)
    return total


#: Where the clutter problem's points lie (001 Sec. 6.1 states only the two cubes): "uniform",
#: uniform draws in each cube; "diagonal", evenly spaced along each cube's diagonal, as the
#: authors' public demo places its points.
CLUTTER_LAYOUTS = ("uniform", "diagonal")


def clutter(
    D: int,
    seed: int = 0,
    points: int = 20,
    prior_sd: float = CLUTTER_PRIOR_SD,
    layout: str = "uniform",
) -> BoxDensityTarget:
    """The clutter posterior of 001 Sec. 6.1: theta ~ N(0, prior_sd^2 I) as the proposal,
    ``points`` observations, half in [-5, -3]^D and half in [2, 4]^D (a sharply bimodal posterior;
    ``layout`` says how, :data:`CLUTTER_LAYOUTS`), each x ~ 0.5 N(theta, I) + 0.5 N(0, 100^2 I)."""
    for name, value, low in (("D", D, 1), ("seed", seed, 0), ("points", points, 2)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ValueError(f"{name} = {value!r} is invalid; valid: an integer >= {low}")
    if isinstance(prior_sd, bool) or not isinstance(prior_sd, int | float) or not prior_sd > 0:
        raise ValueError(f"prior_sd = {prior_sd!r} is invalid; valid: a number > 0")
    if layout not in CLUTTER_LAYOUTS:
        raise ValueError(f"layout = {layout!r} is invalid; valid: {', '.join(CLUTTER_LAYOUTS)}")
    half = points // 2
    if layout == "uniform":
        rng = np.random.default_rng(seed)
        data = np.vstack(
            [rng.uniform(-5.0, -3.0, (half, D)), rng.uniform(2.0, 4.0, (points - half, D))]
        )
    else:  # the same coordinate in every dimension: points on the cubes' diagonals
        line = np.concatenate([np.linspace(-5.0, -3.0, half), np.linspace(2.0, 4.0, points - half)])
        data = np.repeat(line[:, None], D, axis=1)
    name = f"clutter-D{D}"
    if prior_sd != CLUTTER_PRIOR_SD or layout != "uniform":
        name += f"-sd{prior_sd:g}-{layout}"
    return box_density(
        [-math.inf] * D,
        [math.inf] * D,
        [("normal", 0.0, float(prior_sd))] * D,
        _clutter_log_lik,
        _clutter_bound,
        data,
        name=name,
        log_lik_grad=_clutter_log_lik_grad,
    )
