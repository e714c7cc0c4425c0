"""Nonlinear regression posteriors with bounds from interval arithmetic: the five models of
001_78ff986a3d316097.txt, Sec. 6.3, Fig. 2(c) ("Using Generic Interval Bounds").

Each model is y_n = f(x_n; theta) + eps_n with eps_n ~ N(0, sigma^2), theta uniform on a prior box.
As a box density (:mod:`harness.targets.box_density`) the proposal i is the uniform density of the
prior box and o(theta) = sum_n log N(y_n; f(x_n; theta), sigma^2). The bound of o over a sub-box is
derived automatically, as 001 does with FuncDesigner: f(x_n; box) is evaluated in mpmath's
interval arithmetic (a private ``MPIntervalContext``, so the global ``mpmath.iv`` is untouched),
which encloses every value f takes on the box; the residual interval R_n = y_n - f(x_n; box) then
bounds term n by its value at the point of R_n nearest 0 (the peak -log(sigma sqrt(2 pi)) when R_n
contains 0). Interval arithmetic is inclusion-monotone, so the bounds shrink toward o as a box
shrinks around a point (linearly in the width), but they are loose on wide boxes where a parameter
appears twice in f (the dependency problem), as 001's generic bounds are.

What 001 leaves open, and what is chosen here:

- The prior ranges are in 001's appendix, which is not available. The ranges in :data:`MODELS`
  are our own: wide enough that N = 3 points leave the posterior multimodal (001 chose the data
  "so that posteriors are multimodal"), and kept where f is defined (a positive width c in
  ``notch``, positive gravity and height in ``projectile``, a positive exponent d in ``bump``).
- The legend's third formula reads "d y = 1/b x cos(a)(x sin(a) + sqrt(x^2 sin^2(a) + 2bc))" in the
  extracted text. It is the range of a projectile launched at speed x, angle a, under gravity b,
  from height c, usually written "d = (v cos a / g)(v sin a + sqrt(v^2 sin^2 a + 2 g y0))": the
  leading "d" is read as that formula's left-hand side (the distance), not as a parameter, so the
  model has three parameters a, b, c.
- The projectile model is not identified by any data: with p = sin(a) cos(a) / b and
  r = 2 c cos^2(a) / b it is y = p x^2 + x sqrt(p^2 x^2 + r), a function of (p, r) only, so its
  posterior is a ridge along one curve of (a, b, c) however small the noise
  (:func:`identification`). It is kept as the legend writes it.
- The data: a true theta drawn from the prior, N inputs uniform on the model's input range, and
  y_n = f(x_n; theta) + sigma z_n, all from ``seed``. The draws z_n do not depend on sigma, so
  changing sigma (001 varies it "from large to small" to control peakiness) keeps theta and the
  x_n and scales only the noise.

These targets are for the reference A* (``implementations.astar.reference``) only: the bound is
Python calling mpmath and cannot be compiled by Numba. One bound evaluation takes about 0.1 to
0.6 ms at N = 3, 10 to 20 times one evaluation of o (see :func:`interval_model`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from mpmath import ctx_iv

from harness.targets.box_density import BoxDensityTarget, box_density

#: A private interval context at double precision: a lower precision saves little (the cost is
#: Python overhead per operation, not the arithmetic) and the endpoints of the boxes A* splits
#: are doubles, so 53 bits take them exactly.
_IV = ctx_iv.MPIntervalContext()
_IV.prec = 53

Interval = object  # an mpmath interval (``ctx_iv.ivmpf``); mpmath has no public type for it


def _sqrt_on_domain(z: Interval) -> Interval:
    """sqrt over the part of z at or above 0, where sqrt is defined (mpmath raises on a negative
    endpoint). f is only ever evaluated where its argument is >= 0, so dropping the rest of z
    keeps an enclosure of f's values on the box."""
    lo, hi = float(z.a), float(z.b)  # round to nearest: widened below
    if not hi >= 0.0:
        return _IV.mpf([0.0, math.inf])  # no defined point: any enclosure of sqrt will do
    lo = max(math.nextafter(lo, -math.inf), 0.0)
    return _IV.sqrt(_IV.mpf([lo, math.nextafter(hi, math.inf)]))


@dataclass(frozen=True)
class IntervalModel:
    """One regression model of 001 Fig. 2(c).

    ``f(theta, x)`` is written with NumPy ufuncs, so the parameters and x may be floats or arrays
    that broadcast (a grid of parameters for quadrature). ``f_interval(theta, x)`` takes one
    mpmath interval a parameter and a float x and returns an interval enclosing f over the box.
    ``prior`` is one (low, high) a parameter; ``inputs`` the range the x_n are drawn from.
    """

    name: str
    formula: str
    params: tuple[str, ...]
    prior: tuple[tuple[float, float], ...]
    inputs: tuple[float, float]
    f: Callable[[Sequence, float | np.ndarray], float | np.ndarray]
    f_interval: Callable[[Sequence[Interval], float | Interval], Interval]

    @property
    def d(self) -> int:
        return len(self.params)


def _notch(t, x):
    a, b, c = t[0], t[1], t[2]
    u = (x - b) ** 2
    return a * u / (u + c**2)


def _notch_iv(t, x):
    a, b, c = t
    u = (x - b) ** 2  # an even power: mpmath gives [0, .] when x - b contains 0
    return a * u / (u + c**2)  # c >= 0.1 on the prior: the denominator stays away from 0


def _cubic(t, x):
    a, b, c = t[0], t[1], t[2]
    return a * x * (x - b) * (x - c)


def _cubic_iv(t, x):
    a, b, c = t
    return a * x * (x - b) * (x - c)


def _projectile(t, x):
    a, b, c = t[0], t[1], t[2]
    s = np.sin(a)
    return x * np.cos(a) / b * (x * s + np.sqrt(x * x * s * s + 2.0 * b * c))


def _projectile_iv(t, x):
    a, b, c = t
    s = _IV.sin(a)
    # b, c >= 0 on the prior, so the square root's argument is >= 0 at every point of a box.
    return x * _IV.cos(a) / b * (x * s + _sqrt_on_domain(x * x * s**2 + 2 * b * c))


def _bump(t, x):
    a, b, c, d, e = t[0], t[1], t[2], t[3], t[4]
    return a * np.exp(-b * np.abs(x - c) ** d) + e


def _bump_iv(t, x):
    a, b, c, d, e = t
    # |x - c|^d with an interval exponent is exp(d log|x - c|) in mpmath: valid when |x - c|
    # reaches 0 (log gives -inf, exp 0) because d > 0 on the prior.
    return a * _IV.exp(-b * abs(x - c) ** d) + e


def _two_sines(t, x):
    a, b, c, d, e, f = t[0], t[1], t[2], t[3], t[4], t[5]
    return a * np.sin(b * x + c) + d * np.sin(e * x + f)


def _two_sines_iv(t, x):
    a, b, c, d, e, f = t
    return a * _IV.sin(b * x + c) + d * _IV.sin(e * x + f)


_TWO_PI = 2.0 * math.pi

#: The five models in the order of 001 Fig. 2(c)'s legend; the prior ranges are ours (see the
#: module docstring).
MODELS: dict[str, IntervalModel] = {
    m.name: m
    for m in (
        IntervalModel(
            "notch",
            "y = a (x-b)^2 / ((x-b)^2 + c^2)",
            ("a", "b", "c"),
            ((0.0, 10.0), (0.0, 10.0), (0.1, 5.0)),
            (0.0, 10.0),
            _notch,
            _notch_iv,
        ),
        IntervalModel(
            "cubic",
            "y = a x (x-b) (x-c)",
            ("a", "b", "c"),
            ((-1.0, 1.0), (-3.0, 3.0), (-3.0, 3.0)),
            (-3.0, 3.0),
            _cubic,
            _cubic_iv,
        ),
        IntervalModel(
            "projectile",
            "y = (1/b) x cos(a) (x sin(a) + sqrt(x^2 sin^2(a) + 2 b c))",
            ("a", "b", "c"),
            ((0.0, math.pi / 2.0), (1.0, 20.0), (0.0, 10.0)),
            (1.0, 10.0),
            _projectile,
            _projectile_iv,
        ),
        IntervalModel(
            "bump",
            "y = a exp(-b |x-c|^d) + e",
            ("a", "b", "c", "d", "e"),
            ((0.0, 5.0), (0.1, 3.0), (-3.0, 3.0), (0.5, 3.0), (-2.0, 2.0)),
            (-3.0, 3.0),
            _bump,
            _bump_iv,
        ),
        IntervalModel(
            "two-sines",
            "y = a sin(b x + c) + d sin(e x + f)",
            ("a", "b", "c", "d", "e", "f"),
            ((0.0, 2.0), (0.0, 2.0), (0.0, _TWO_PI), (0.0, 2.0), (0.0, 2.0), (0.0, _TWO_PI)),
            (0.0, 5.0),
            _two_sines,
            _two_sines_iv,
        ),
    )
}


def _log_peak(sigma: float) -> float:
    """log N(0; 0, sigma^2) = -log(sigma sqrt(2 pi)), the largest value of one term."""
    return -math.log(sigma) - 0.5 * math.log(2.0 * math.pi)


@dataclass(frozen=True)
class GaussianLogLik:
    """o(theta) = sum_n log N(y_n; f(x_n; theta), sigma^2), data = rows (x_n, y_n)."""

    model: IntervalModel
    sigma: float

    def __call__(self, theta: np.ndarray, data: np.ndarray) -> float:
        r = data[:, 1] - self.model.f(theta, data[:, 0])
        return float(data.shape[0] * _log_peak(self.sigma) - 0.5 * np.sum(r * r) / self.sigma**2)

    def batch(self, thetas: np.ndarray, data: np.ndarray) -> np.ndarray:
        """o at each row of ``thetas`` (m, d), vectorised."""
        cols = [thetas[:, j, None] for j in range(thetas.shape[1])]
        r = data[None, :, 1] - self.model.f(cols, data[None, :, 0])
        return data.shape[0] * _log_peak(self.sigma) - 0.5 * np.sum(r * r, axis=1) / self.sigma**2


#: Slack added to a bound, relative to 1 + |bound|: it covers the rounding of o's own float
#: evaluation (the interval part is rigorous), so a bound on a box shrunk to a point is >= o there.
BOUND_SLACK = 1e-9


@dataclass(frozen=True)
class IntervalBound:
    """An upper bound of o over the box [lo, hi] from f's interval enclosure (one term a datum)."""

    model: IntervalModel
    sigma: float

    def __call__(self, lo: np.ndarray, hi: np.ndarray, data: np.ndarray) -> float:
        box = [_IV.mpf([float(a), float(b)]) for a, b in zip(lo, hi, strict=True)]
        peak = _log_peak(self.sigma)
        total = 0.0
        for x, y in data:
            # x as an (exact, degenerate) interval once: mpmath would convert it at every use.
            r = float(y) - self.model.f_interval(box, _IV.mpf(float(x)))
            # Round the residual's ends outward to doubles; NaN or inf ends leave the peak.
            r_lo = math.nextafter(float(r.a), -math.inf)
            r_hi = math.nextafter(float(r.b), math.inf)
            if r_lo <= 0.0 <= r_hi or math.isnan(r_lo) or math.isnan(r_hi):
                total += peak
            else:
                near = min(abs(r_lo), abs(r_hi))
                total += peak - 0.5 * (near / self.sigma) ** 2
        return total + BOUND_SLACK * (1.0 + abs(total))


@dataclass(frozen=True)
class ModelData:
    """The data of one instance: the true parameter, the inputs x_n and the outputs y_n."""

    theta: np.ndarray
    x: np.ndarray
    y: np.ndarray


def _check_args(name: str, sigma: float, n_data: int) -> IntervalModel:
    if name not in MODELS:
        raise ValueError(f"name = {name!r} is invalid; valid: {', '.join(MODELS)}")
    if (
        isinstance(sigma, bool)
        or not isinstance(sigma, (int, float, np.floating, np.integer))
        or not 0.0 < sigma < math.inf
    ):
        raise ValueError(f"sigma = {sigma!r} is invalid; valid: a finite number > 0")
    if isinstance(n_data, bool) or not isinstance(n_data, (int, np.integer)) or n_data < 1:
        raise ValueError(f"n_data = {n_data!r} is invalid; valid: an integer >= 1")
    return MODELS[name]


def model_data(name: str, sigma: float, seed: int = 0, n_data: int = 3) -> ModelData:
    """The data :func:`interval_model` conditions on: theta ~ prior, then x_n ~ Uniform(inputs),
    then y_n = f(x_n; theta) + sigma z_n with z_n ~ N(0, 1), in that order from ``seed``."""
    model = _check_args(name, sigma, n_data)
    rng = np.random.default_rng(seed)
    lo, hi = np.array(model.prior).T
    theta = rng.uniform(lo, hi)
    x = rng.uniform(*model.inputs, size=n_data)
    y = model.f(theta, x) + float(sigma) * rng.standard_normal(n_data)
    return ModelData(theta, x, np.asarray(y, dtype=np.float64))


def interval_model(name: str, sigma: float, seed: int = 0, n_data: int = 3) -> BoxDensityTarget:
    """The posterior of model ``name`` (a key of :data:`MODELS`) given ``n_data`` points with noise
    sd ``sigma`` (001_78ff986a3d316097.txt, Sec. 6.3, Fig. 2(c); 001 uses N = 3).

    The proposal is uniform on the prior box, o the Gaussian log likelihood and the bound
    :class:`IntervalBound`; data rows are (x_n, y_n). For the reference A* only: the bound calls
    mpmath and cannot be compiled by Numba (about 0.1 ms for ``cubic`` to 0.6 ms for
    ``two-sines`` per bound at N = 3, growing linearly in N).
    """
    model = _check_args(name, sigma, n_data)
    sigma = float(sigma)
    truth = model_data(name, sigma, seed, n_data)
    lo, hi = np.array(model.prior).T
    return box_density(
        lo,
        hi,
        [("uniform",)] * model.d,
        GaussianLogLik(model, sigma),
        IntervalBound(model, sigma),
        np.column_stack([truth.x, truth.y]),
        name=f"interval-{name}-sigma{sigma:g}-seed{seed}-N{n_data}",
        compiles=False,  # mpmath's interval arithmetic: the reference samplers only
    )


@dataclass(frozen=True)
class RejectionCost:
    """The expected number of likelihood evaluations rejection sampling from the proposal with
    the global bound spends per accepted draw, exp(M(box)) nu(box) / Z (the x axis of 001
    Fig. 2(c)), on a log scale too since it spans many decades; the standard errors are those of
    the estimate of Z (``log_std_error`` = the relative error), to first order."""

    evals: float
    std_error: float
    log_evals: float
    log_std_error: float
    method: str
    samples: int


#: Var of a standard Gumbel: pi^2 / 6.
_GUMBEL_SD = math.pi / math.sqrt(6.0)


def expected_rejection_evals(
    target: BoxDensityTarget,
    samples: int = 20_000,
    seed: int = 0,
    gumbel_max: np.ndarray | None = None,
) -> RejectionCost:
    """exp(M(box)) nu(box) / Z for a box density (001_78ff986a3d316097.txt, Sec. 6.3, Fig. 2(c)).

    Z / nu(box) is the proposal mean of exp(o). By default it is estimated by plain Monte Carlo
    from ``samples`` proposal draws (``seed``): the acceptance rate p = E[exp(o - M)] and the
    cost 1 / p. On a peaky target the draws rarely hit the mass and the estimate (and its
    standard error) is unreliable; there, pass A*'s Gumbel maxima (``Draws.extras
    ["gumbel_max"]``): each is an exact Gumbel(log Z) draw, so log Z = mean - Euler's gamma
    with standard error pi / sqrt(6 n), whatever the peakiness.
    """
    m = target.M(target.lo, target.hi)
    log_nu = target.log_mass(target.lo, target.hi)
    if gumbel_max is not None:
        g = np.asarray(gumbel_max, dtype=np.float64).ravel()
        if g.size < 2 or not np.all(np.isfinite(g)):
            raise ValueError(
                f"gumbel_max has {g.size} values; valid: at least 2 finite Gumbel maxima"
            )
        log_z = float(np.mean(g)) - np.euler_gamma
        log_evals = m + log_nu - log_z
        log_se = _GUMBEL_SD / math.sqrt(g.size)
        method, n = "gumbel", int(g.size)
    else:
        if isinstance(samples, bool) or not isinstance(samples, (int, np.integer)) or samples < 2:
            raise ValueError(f"samples = {samples!r} is invalid; valid: an integer >= 2")
        rng = np.random.default_rng(seed)
        u = rng.random((samples, target.d))
        thetas = np.array([target.sample_in(target.lo, target.hi, row) for row in u])
        batch = getattr(target.log_lik, "batch", None)
        if batch is not None:
            o = np.asarray(batch(thetas, target.data), dtype=np.float64)
        else:
            o = np.array([target.o(t) for t in thetas])
        w = np.exp(o - m)  # acceptance probabilities, in [0, 1] as M >= o
        p = float(np.mean(w))
        if p == 0.0:
            log_evals, log_se = math.inf, math.inf
        else:
            log_evals = -math.log(p)
            log_se = float(np.std(w, ddof=1)) / math.sqrt(samples) / p
        method, n = "monte-carlo", int(samples)
    evals = math.exp(log_evals) if log_evals < 700.0 else math.inf
    return RejectionCost(evals, evals * log_se, log_evals, log_se, method, n)


@dataclass(frozen=True)
class Identification:
    """How well ``n_data`` points pin theta down near the true theta (of :func:`model_data`):
    the singular values, largest first, of the Jacobian of (f(x_n; theta))_n with each parameter
    scaled to its prior width. There are min(N, d) of them, and d - N more directions the data
    never see when d > N. Near theta the posterior at noise sd sigma spans about sigma / s prior
    widths along the direction of singular value s: where s is 0 (or below sigma) it is a ridge
    across the prior rather than a peak, and A* must tile the ridge with boxes about as narrow as
    the posterior, so its cost grows with 1 / sigma as rejection's does (a linearisation at the
    true theta: other modes are not seen)."""

    singular_values: tuple[float, ...]
    flat: int  # directions the data never constrain: max(d - N, 0)

    @property
    def smallest(self) -> float:
        """0 when some direction is never constrained, else the smallest singular value."""
        return 0.0 if self.flat else self.singular_values[-1]


def identification(name: str, seed: int = 0, n_data: int = 3) -> Identification:
    """The :class:`Identification` of the instance :func:`model_data` draws (sigma does not
    move theta or the x_n); derivatives by central differences of step 1e-6 prior widths."""
    model = _check_args(name, 1.0, n_data)
    truth = model_data(name, 1.0, seed, n_data)
    lo, hi = np.array(model.prior).T
    width = hi - lo
    jac = np.empty((n_data, model.d))
    for j in range(model.d):
        step = np.zeros(model.d)
        step[j] = 1e-6 * width[j]
        up = model.f(truth.theta + step, truth.x)
        down = model.f(truth.theta - step, truth.x)
        jac[:, j] = (up - down) / (2.0 * step[j]) * width[j]
    s = np.linalg.svd(jac, compute_uv=False)
    return Identification(tuple(float(v) for v in s), max(model.d - n_data, 0))
