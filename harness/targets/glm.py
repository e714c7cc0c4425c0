"""GLM posteriors with a lower bound on every likelihood term: the target kind of Firefly Monte
Carlo (002_3c1996bf78df7865.txt, Alg. 1 and Table 1; notes-firefly.md).

p(theta | data) ∝ N(theta; 0, prior_sd^2 I) prod_n L_n(theta), theta a flat vector of length D,
and for every n a bound 0 < B_n <= L_n that is the exponential of a quadratic in theta
(notes-firefly.md Sec. 2):

- ``logistic`` (t in {0, 1}): y = (2t - 1) x.theta, log L = log sigmoid(y), Jaakkola-Jordan
  log B = a y^2 + y/2 + c, tight at y = +-xi;
- ``softmax`` (t in 0..K-1): Theta = theta.reshape(K, P), y = Theta x, log L = y_t - lse(y),
  Bohning log B = y_t - y'Ay/2 + b'y + c with A = (I - 11'/K)/2, tight at y = psi;
- ``robust`` (real t): r = t - x.theta, log L = -(nu + 1)/2 log(1 + r^2/nu) (the Student-t
  density up to its constant), log B = a r^2 + c, the tangent in u = r^2 of this function,
  which is convex in u (the notes say concave; a tangent bounds from below only where the
  function is convex), tight at r = +-xi.

Every bound has EPS = 1e-6 subtracted from its constant, so gap = log L - log B >= EPS > 0 and
log(L/B - 1) = gap + log(-expm1(-gap)) is finite (notes Sec. 1). ``tuning``: "untuned" uses one
expansion point for all n (xi = 1.5; psi = 1.5 e_t; xi = 0), "map" makes every bound tight at
theta_MAP (notes Sec. 3), found with L-BFGS-B, its cost kept apart in :class:`MapCost`.

The product of all N bounds is collapsed into ``quad`` (D, D), ``lin`` (D,) and ``const``:
sum_n log B_n(theta) = theta'quad theta + lin'theta + const exactly (notes Sec. 4), O(D^2) a
call whatever N is.

Kernels (``harness.targets.glm_kernels``): the per-datum functions are plain loops over floats
and arrays with a model code, so one source runs as the NumPy reference and compiles with
``numba.njit``; each ``f`` has its twin ``f_nb = njit(f)``, equal to the last bit (tested).
The target's methods run the twins, so a NumPy sampler calling the
methods and a Numba sampler calling the kernels on ``target.X``, ``target.t``, ... read the same
numbers. (NumPy's vectorised exp/log1p differ from ``math``'s in the last bit on AVX-512 machines,
so the methods are not vectorised NumPy.)
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar

import numpy as np
from scipy import optimize, special

from harness.spec import Param, finite_number
from harness.targets.box_density import QuadratureTruth
from harness.targets.glm_bound_check import check_bounds
from harness.targets.glm_data import DesignShape, GLMData, categorical
from harness.targets.glm_kernels import (
    EPS,
    LOGISTIC,
    ROBUST,
    SOFTMAX,
    collapsed_grad_log_bound_nb,
    collapsed_log_bound_nb,
    grad_log_bound_terms_nb,
    grad_log_lik_terms_nb,
    grad_log_lik_total_nb,
    grad_log_prior_value_nb,
    log_bound_terms_nb,
    log_lik_terms_nb,
    log_lik_total_nb,
    log_prior_value_nb,
)
from harness.targets.glm_quadrature import glm_quadrature

MODELS = ("logistic", "softmax", "robust")
MODEL_CODES = {"logistic": LOGISTIC, "softmax": SOFTMAX, "robust": ROBUST}
TUNINGS = ("untuned", "map")
#: Untuned expansion points (the authors' code defaults, notes Sec. 3).
UNTUNED_XI_LOGISTIC = 1.5
UNTUNED_PSI_SOFTMAX = 1.5
UNTUNED_XI_ROBUST = 0.0


# -- the target ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class MapCost:
    """What finding theta_MAP cost, kept apart from any sampler's count (issue 13): L-BFGS-B
    iterations, objective evaluations (each one value and gradient over all N), the likelihood
    terms they read (evaluations * N) and wall seconds."""

    iterations: int
    evaluations: int
    likelihood_evals: int
    seconds: float
    converged: bool
    message: str


@dataclass(frozen=True, eq=False)
class GLMTarget(DesignShape):
    """p(theta | X, t) for a GLM with per-datum bounds (module docstring); build it with
    :func:`glm_posterior`. theta is flat, length D = K * P (K = classes for softmax, else 1).

    Bound parameters per datum: ``bq`` (N,), ``bl`` (N, K), ``bc`` (N,), read by
    :func:`log_bound_terms`; ``theta_tuning`` is theta_MAP (``tuning="map"``, every bound tight
    there) or the prior mean 0 (``"untuned"``). ``quad``, ``lin``, ``const``: the collapsed sum of
    all log bounds (notes Sec. 4).
    """

    model: str
    X: np.ndarray
    t: np.ndarray
    K: int
    nu: float
    prior_sd: float
    tuning: str
    theta_tuning: np.ndarray
    bq: np.ndarray
    bl: np.ndarray
    bc: np.ndarray
    quad: np.ndarray
    lin: np.ndarray
    const: float
    map_cost: MapCost | None
    name: str
    meta: Mapping[str, Any] = field(default_factory=dict)
    kind: ClassVar[str] = "glm-posterior"

    @property
    def code(self) -> int:
        """The model code the kernels take (LOGISTIC, SOFTMAX, ROBUST)."""
        return MODEL_CODES[self.model]

    @property
    def D(self) -> int:
        return self.K * self.P

    def _theta(self, theta: Any) -> np.ndarray:
        theta = np.ascontiguousarray(theta, dtype=np.float64)
        if theta.shape != (self.D,):
            raise ValueError(
                f"theta has shape {theta.shape}; valid: a flat vector of D = {self.D} numbers"
            )
        return theta

    def _idx(self, idx: Any) -> np.ndarray:
        idx = np.ascontiguousarray(np.atleast_1d(idx), dtype=np.int64)
        if idx.ndim != 1 or (idx.size and (idx.min() < 0 or idx.max() >= self.N)):
            raise ValueError(f"idx = {idx!r} is invalid; valid: data indices in [0, {self.N})")
        return idx

    def log_lik(self, theta: Any, idx: Any) -> np.ndarray:
        """log L_n(theta) for each n in ``idx``."""
        theta, idx = self._theta(theta), self._idx(idx)
        out = np.empty(idx.size)
        log_lik_terms_nb(self.code, self.X, self.t, self.nu, theta, idx, out)
        return out

    def log_bound(self, theta: Any, idx: Any) -> np.ndarray:
        """log B_n(theta) for each n in ``idx`` (< log L_n by at least EPS)."""
        theta, idx = self._theta(theta), self._idx(idx)
        out = np.empty(idx.size)
        log_bound_terms_nb(self.code, self.X, self.t, self.bq, self.bl, self.bc, theta, idx, out)
        return out

    def grad_log_lik(self, theta: Any, idx: Any) -> np.ndarray:
        """Rows grad log L_n(theta), shape (len(idx), D)."""
        theta, idx = self._theta(theta), self._idx(idx)
        out = np.empty((idx.size, self.D))
        grad_log_lik_terms_nb(self.code, self.X, self.t, self.nu, theta, idx, out)
        return out

    def grad_log_bound(self, theta: Any, idx: Any) -> np.ndarray:
        """Rows grad log B_n(theta), shape (len(idx), D)."""
        theta, idx = self._theta(theta), self._idx(idx)
        out = np.empty((idx.size, self.D))
        grad_log_bound_terms_nb(
            self.code, self.X, self.t, self.bq, self.bl, self.bc, theta, idx, out
        )
        return out

    def sum_log_bound(self, theta: Any) -> float:
        """sum_n log B_n(theta) from the collapsed statistics, O(D^2) (notes Sec. 4)."""
        return float(collapsed_log_bound_nb(self.quad, self.lin, self.const, self._theta(theta)))

    def grad_sum_log_bound(self, theta: Any) -> np.ndarray:
        out = np.empty(self.D)
        collapsed_grad_log_bound_nb(self.quad, self.lin, self._theta(theta), out)
        return out

    def log_prior(self, theta: Any) -> float:
        return float(log_prior_value_nb(self._theta(theta), self.prior_sd))

    def grad_log_prior(self, theta: Any) -> np.ndarray:
        out = np.empty(self.D)
        grad_log_prior_value_nb(self._theta(theta), self.prior_sd, out)
        return out

    def log_posterior(self, theta: Any) -> float:
        """log prior + sum_n log L_n, unnormalised, reading all N terms (the regular-MCMC
        density)."""
        theta = self._theta(theta)
        prior = self.log_prior(theta)
        if prior == -np.inf:
            # An infinite theta: every likelihood term is bounded above, so the posterior
            # vanishes with the prior, while x . theta may be inf - inf (NaN) there.
            return prior
        return prior + float(log_lik_total_nb(self.code, self.X, self.t, self.nu, theta))

    def grad_log_posterior(self, theta: Any) -> np.ndarray:
        theta = self._theta(theta)
        out = np.empty(self.D)
        grad_log_lik_total_nb(self.code, self.X, self.t, self.nu, theta, out)
        return self.grad_log_prior(theta) + out

    def simulate(self, rng: np.random.Generator) -> tuple[np.ndarray, GLMTarget]:
        """The prior simulator for simulation-based calibration: theta ~ N(0, prior_sd^2 I)
        (D standard normals), then labels/targets from the model at the same X (N uniforms, or
        N Student-t draws), and a target of the same model, tuning and size on them. With
        ``tuning="map"`` this re-runs L-BFGS-B on the simulated data (its cost in
        ``map_cost``)."""
        theta = self.prior_sd * rng.standard_normal(self.D)
        t = simulate_labels(self.model, self.X, theta, self.K, self.nu, rng)
        target = glm_posterior(
            self.X,
            t,
            self.model,
            self.tuning,
            self.prior_sd,
            self.nu,
            self.K if self.model == "softmax" else None,
            name=f"{self.name}-sim",
            meta={**self.meta, "simulated_from": self.name},
        )
        return theta, target

    @cached_property
    def truth(self) -> QuadratureTruth:
        """The quadrature ground truth (D <= 2), computed on first use (:func:`glm_quadrature`)."""
        return glm_quadrature(self)

    def marginal_cdf(self, j: int, x: np.ndarray) -> np.ndarray:
        return self.truth.marginal_cdf(j, x)

    @property
    def log_normaliser(self) -> float:
        """log of the integral of N(theta; 0, prior_sd^2 I) prod_n L_n(theta) (D <= 2)."""
        return self.truth.log_z


# -- construction ------------------------------------------------------------------------------


def simulate_labels(
    model: str, X: np.ndarray, theta: np.ndarray, K: int, nu: float, rng: np.random.Generator
) -> np.ndarray:
    """Labels/targets drawn from the model at ``theta`` (float64, one per row of X)."""
    P = X.shape[1]
    if model == "logistic":
        return (rng.random(X.shape[0]) < special.expit(X @ theta)).astype(np.float64)
    if model == "softmax":
        return categorical(special.softmax(X @ theta.reshape(K, P).T, axis=1), rng)
    return X @ theta + rng.standard_t(nu, size=X.shape[0])


def _first_bad(mask: np.ndarray) -> tuple[int, ...]:
    return tuple(int(i) for i in np.argwhere(mask)[0])


def _check_data(
    X: Any, t: Any, model: str, classes: int | None
) -> tuple[np.ndarray, np.ndarray, int]:
    """(X, t, K) as C-contiguous float64 arrays, or a ValueError naming the first bad entry."""
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] < 1:
        raise ValueError(f"X has shape {X.shape}; valid: a design matrix (N, P) with P >= 1")
    if X.shape[0] == 0:
        raise ValueError("X has N = 0 rows: the data set is empty; valid: N >= 1 data points")
    if not np.all(np.isfinite(X)):
        bad = _first_bad(~np.isfinite(X))
        raise ValueError(f"X[{bad[0]}, {bad[1]}] = {X[bad]} is invalid; valid: finite numbers")
    t = np.asarray(t, dtype=np.float64)
    if t.shape != (X.shape[0],):
        raise ValueError(f"t has shape {t.shape}; valid: ({X.shape[0]},), one per row of X")
    if not np.all(np.isfinite(t)):
        n = _first_bad(~np.isfinite(t))[0]
        raise ValueError(f"t[{n}] = {t[n]} is invalid; valid: finite numbers")
    K = 1
    if model == "logistic":
        _check_labels(t, 2, model)
    elif model == "softmax":
        K = int(t.max()) + 1 if classes is None else classes
        K = Param("classes", 3, int, low=2).check(K)
        _check_labels(t, K, model)
    return np.ascontiguousarray(X), np.ascontiguousarray(t), K


def _check_labels(t: np.ndarray, K: int, model: str) -> None:
    bad = (t != np.round(t)) | (t < 0) | (t > K - 1)
    if np.any(bad):
        n = _first_bad(bad)[0]
        raise ValueError(
            f"t[{n}] = {t[n]} is invalid for model {model!r}; valid: labels 0..{K - 1} "
            "(whole numbers)"
        )


def _negative_log_posterior(
    model: str, X: np.ndarray, t: np.ndarray, K: int, nu: float, prior_sd: float
) -> Callable[[np.ndarray], tuple[float, np.ndarray]]:
    """-log p(theta | data) up to a constant and its gradient, vectorised NumPy (for L-BFGS-B;
    the MAP only places the bounds, so its rounding does not matter)."""
    P = X.shape[1]
    precision = 1.0 / (prior_sd * prior_sd)

    def f(theta: np.ndarray) -> tuple[float, np.ndarray]:
        value = 0.5 * precision * float(theta @ theta)
        grad = precision * theta
        if model == "logistic":
            s = 2.0 * t - 1.0
            y = s * (X @ theta)
            value -= float(special.log_expit(y).sum())
            grad = grad - X.T @ (s * special.expit(-y))
        elif model == "softmax":
            Y = X @ theta.reshape(K, P).T
            lse = special.logsumexp(Y, axis=1)
            rows, labels = np.arange(X.shape[0]), t.astype(np.int64)
            value += float((lse - Y[rows, labels]).sum())
            probs = np.exp(Y - lse[:, None])
            probs[rows, labels] -= 1.0
            grad = grad + (probs.T @ X).ravel()
        else:
            r = t - X @ theta
            value += 0.5 * (nu + 1.0) * float(np.log1p(r * r / nu).sum())
            grad = grad - X.T @ ((nu + 1.0) * r / (nu + r * r))
        return value, grad

    return f


#: Largest |d log p / d theta| at which find_map calls theta_MAP found whatever L-BFGS-B says.
MAP_GTOL = 1e-5


def find_map(
    model: str, X: np.ndarray, t: np.ndarray, K: int, nu: float, prior_sd: float
) -> tuple[np.ndarray, MapCost]:
    """theta_MAP by L-BFGS-B from theta = 0 with the analytic gradient, and its cost (notes
    Sec. 3: the paper's optimiser is not known). The robust posterior may be multimodal: this is
    the mode L-BFGS-B reaches from 0."""
    f = _negative_log_posterior(model, X, t, K, nu, prior_sd)
    start = time.perf_counter()
    res = optimize.minimize(
        f,
        np.zeros(K * X.shape[1]),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": 2000, "ftol": 1e-14, "gtol": 1e-9},
    )
    seconds = time.perf_counter() - start
    # At ftol 1e-14 the line search can find no further decrease at the optimum itself, and
    # SciPy's L-BFGS-B (1.15 and later) then reports "ABNORMAL" rather than success: a point
    # whose gradient is below MAP_GTOL in every coordinate is stationary all the same.
    stationary = float(np.max(np.abs(res.jac))) < MAP_GTOL
    cost = MapCost(
        int(res.nit),
        int(res.nfev),
        int(res.nfev) * int(X.shape[0]),
        seconds,
        bool(res.success) or stationary,
        str(res.message),
    )
    return np.asarray(res.x, dtype=np.float64), cost


def _jaakkola_jordan(xi: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(a, b, c) of log sigmoid(y) >= a y^2 + b y + c, tight at y = +-xi (notes Sec. 2)."""
    xi = np.abs(xi)
    safe = np.where(xi > 0.0, xi, 1.0)
    a = np.where(xi > 0.0, -np.tanh(0.5 * safe) / (4.0 * safe), -0.125)
    # xi/2 - log(1 + e^xi) = -xi/2 - log1p(e^-xi), even in xi
    c = -a * xi * xi - 0.5 * xi - np.log1p(np.exp(-xi)) - EPS
    return a, np.full((xi.size, 1), 0.5), c


def _bohning(psi: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(unused zeros, b, c) of the Bohning bound tight at y = psi (N, K) (notes Sec. 2)."""
    K = psi.shape[1]
    g = special.softmax(psi, axis=1)
    a_psi = 0.5 * (psi - psi.mean(axis=1, keepdims=True))
    b = a_psi - g
    c = -0.5 * (psi * a_psi).sum(axis=1) + (g * psi).sum(axis=1)
    c = c - special.logsumexp(psi, axis=1) - EPS
    return np.zeros(psi.shape[0]), np.ascontiguousarray(b.reshape(-1, K)), c


def _student_t_tangent(xi: np.ndarray, nu: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(a, b = 0, c) of -(nu+1)/2 log(1 + r^2/nu) >= a r^2 + c, tight at r = +-xi."""
    u = xi * xi
    a = -(nu + 1.0) / (2.0 * (nu + u))
    c = -a * u - 0.5 * (nu + 1.0) * np.log1p(u / nu) - EPS
    return a, np.zeros((xi.size, 1)), c


def bound_parameters(
    model: str, X: np.ndarray, t: np.ndarray, K: int, nu: float, theta_map: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(bq, bl, bc) per datum, tight at theta_map, or at the untuned points when it is None
    (notes Sec. 3)."""
    N = X.shape[0]
    if model == "logistic":
        xi = np.full(N, UNTUNED_XI_LOGISTIC) if theta_map is None else (2 * t - 1) * (X @ theta_map)
        return _jaakkola_jordan(xi)
    if model == "softmax":
        if theta_map is None:
            psi = UNTUNED_PSI_SOFTMAX * np.eye(K)[t.astype(np.int64)]
        else:
            psi = X @ theta_map.reshape(K, X.shape[1]).T
        return _bohning(psi)
    xi = np.full(N, UNTUNED_XI_ROBUST) if theta_map is None else t - X @ theta_map
    return _student_t_tangent(xi, nu)


def collapse(
    model: str,
    X: np.ndarray,
    t: np.ndarray,
    K: int,
    bq: np.ndarray,
    bl: np.ndarray,
    bc: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, float]:
    """(quad, lin, const) with sum_n log B_n(theta) = theta'quad theta + lin'theta + const
    (notes Sec. 4, constants kept)."""
    if model == "logistic":
        s = 2.0 * t - 1.0  # (s x)(s x)' = x x'
        quad = X.T @ (bq[:, None] * X)
        lin = X.T @ (bl[:, 0] * s)
        const = float(bc.sum())
    elif model == "robust":
        # bq r^2 + bl r + bc with r = t - x.theta
        quad = X.T @ (bq[:, None] * X)
        lin = -(X.T @ (2.0 * bq * t + bl[:, 0]))
        const = float((bq * t * t + bl[:, 0] * t + bc).sum())
    else:
        # sum_n [y_t - y'Ay/2 + b'y + c], y = Theta x_n: -tr(A Theta G Theta')/2 = theta'
        # (-kron(A, G)/2) theta with G = X'X; linear part <Theta, S_t + B'X>.
        A = 0.5 * (np.eye(K) - np.full((K, K), 1.0 / K))
        quad = -0.5 * np.kron(A, X.T @ X)
        labels = np.eye(K)[t.astype(np.int64)]
        lin = ((labels + bl).T @ X).ravel()
        const = float(bc.sum())
    quad = 0.5 * (quad + quad.T)
    return np.ascontiguousarray(quad), np.ascontiguousarray(lin), const


def _frozen(*arrays: np.ndarray) -> None:
    for a in arrays:
        a.setflags(write=False)


def glm_posterior(
    X: Any,
    t: Any,
    model: str,
    tuning: str = "map",
    prior_sd: float = 1.0,
    nu: float = 4.0,
    classes: int | None = None,
    name: str | None = None,
    meta: Mapping[str, Any] | None = None,
    check_points: int = 8,
    check_sample: int = 256,
) -> GLMTarget:
    """The posterior of a GLM with N(0, prior_sd^2 I) prior and per-datum bounds (module
    docstring). ``classes``: softmax only (default: the largest label + 1); ``nu``: robust only.

    Every argument is checked before any work (ValueError naming it, its value and the valid
    range). Then theta_MAP (``tuning="map"``), the bounds, their collapsed sum, and a bound check
    on ``check_sample`` data at ``check_points`` random thetas (:func:`check_bounds`, seeded)."""
    model = Param("model", "logistic", str, choices=MODELS).check(model)
    tuning = Param("tuning", "map", str, choices=TUNINGS).check(tuning)
    prior_sd = finite_number("prior_sd", above=0.0).check(prior_sd)
    nu = finite_number("nu", above=0.0).check(nu)
    X, t, K = _check_data(X, t, model, classes)
    theta_map, cost = None, None
    if tuning == "map":
        theta_map, cost = find_map(model, X, t, K, nu, prior_sd)
    bq, bl, bc = bound_parameters(model, X, t, K, nu, theta_map)
    quad, lin, const = collapse(model, X, t, K, bq, bl, bc)
    theta_tuning = np.zeros(K * X.shape[1]) if theta_map is None else theta_map
    _frozen(X, t, bq, bl, bc, quad, lin, theta_tuning)
    target = GLMTarget(
        model,
        X,
        t,
        K,
        nu,
        prior_sd,
        tuning,
        theta_tuning,
        bq,
        bl,
        bc,
        quad,
        lin,
        const,
        cost,
        name or f"{model}-N{X.shape[0]}-D{K * X.shape[1]}-{tuning}",
        dict(meta or {}),
    )
    check_bounds(target, np.random.default_rng(20140), check_points, check_sample)
    return target


def from_data(data: GLMData, tuning: str = "map", prior_sd: float = 1.0) -> GLMTarget:
    """The posterior of a :mod:`harness.targets.glm_data` data set."""
    meta = {"source": data.source}
    if data.theta_true is not None:
        meta["theta_true"] = data.theta_true
    return glm_posterior(
        data.X,
        data.t,
        data.model,
        tuning,
        prior_sd,
        data.nu,
        data.classes,
        name=f"{data.name}-{tuning}",
        meta=meta,
    )


def with_raised_bound(target: GLMTarget, idx: Any, amount: float) -> GLMTarget:
    """A negative control: ``target`` with log B_n raised by ``amount`` for n in ``idx`` (the
    collapsed constant too) and NOT checked, so the bound can exceed L_n. For planted-bug tests
    of :func:`check_bounds` and of samplers that must notice (issue 13)."""
    bc = target.bc.copy()
    bc[np.atleast_1d(idx)] += amount
    const = target.const + amount * np.atleast_1d(idx).size
    _frozen(bc)
    return GLMTarget(
        target.model,
        target.X,
        target.t,
        target.K,
        target.nu,
        target.prior_sd,
        target.tuning,
        target.theta_tuning,
        target.bq,
        target.bl,
        bc,
        target.quad,
        target.lin,
        const,
        target.map_cost,
        f"{target.name}-raised-bound",
        {**target.meta, "planted": "raised bound"},
    )
