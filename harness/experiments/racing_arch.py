"""Bayesian ARCH model selection with Racing-Normal (000_26bed7cc1ef3ab92.txt, Sec. 5.2).

SIMULATED DATA. The paper fits one year of 5-minute Shanghai composite returns (~13,000 points);
those data are not available here, so every number this module produces comes from an ARCH(10)
series with Student-t innovations simulated with a fixed seed (``simulate_returns``).

Model (000, Sec. 5.2): r_t = sigma_t z_t, z_t ~ t_nu(0, 1) (unit scale, as written),
sigma_t^2 = alpha_0 + sum_{i=1..q} alpha_i r_{t-i}^2, q ~ Discrete(pi) uniform over
Q = {5, 10, ..., 30}, alpha_i, nu ~ Gamma(1, 1). Every model conditions on the first 30 returns,
so all of them explain the same N terms and one reward matrix serves the Gibbs step of q.

Sampler: the product space of Carlin & Chib (1995) (notes-racing-appendix.md, C). The state is
(q, phi_5, ..., phi_30), phi_j = log(alpha_0..alpha_j, nu) (positives on the log scale). One sweep:
1. phi_q of the current model: a Langevin proposal and an MH test;
2. phi_j ~ pseudo-prior_j for every j != q;
3. q | phi ~ pi~_q p(r | phi_q) p(phi_q) / pseudo-prior_q(phi_q): a |Q| = 6 arm discrete draw;
4. during adaptation only, the adjusted priors pi~ move towards a flat p~(q | r).
Two versions run on the same data:
- ``exact``: Gumbel-max Gibbs draw of q over all N terms of all 6 models (cost 6 N) and MALA
  with the full-data gradient (cost N; the current state's terms count as cached);
- ``sub``: Racing-Normal Gibbs (``implementations.racing.fast.racing_normal``, pairwise variance,
  exact_answer=True so its error is measured against the exact draw under the same Gumbel noise)
  and an SGLD proposal corrected by a two-arm Racing-Normal MH test (000, Sec. 4, Eq. 12), both on
  control-variate rewards (000, Sec. 3.4).

The paper's Appx. C.2 with the sampler's details is unavailable; every choice it would have fixed
is made here and documented where it is implemented:
- pseudo-priors: Gaussians on phi with the moments of a pilot MALA chain per model
  (``pilot_fit``; the Laplace approximation alone made the chain stick in large models);
- adjusted priors: stochastic approximation towards a flat p~(q | r) (``adapt_step``), then fixed
  to the exact adaptation's second-half average for both samplers (``fixed_log_pi_tilde``);
- SGLD: preconditioned by the pilot covariance, step eps = step * d^(-1/3), mini-batch ``batch``,
  the reverse density q(x | x') from the same mini-batch (``_sgld_mh``);
- control variate: a second-order Taylor expansion of every term in the model's parameters
  around the pilot mean (``ParameterAnchor``). Eq. 11 as written (in the data y_n around their
  mean, ``_data_cv``) is implemented and measured at every Sub Gibbs step, but on t_5 returns it
  RAISES the reward variance (by 1.5-2 orders of magnitude, per arm and per pair): the quadratic
  in r_t^2 cannot follow log(1 + r_t^2 / (nu sigma_t^2)) over heavy-tailed data.
Costs are likelihood terms evaluated ("evals"): one per term and parameter value, gradient
included; the exact MH decision and exact Gibbs answer computed beside Sub to measure its errors,
and the full reward matrix handed to ``racing_normal`` (which reads only what it races), are not
counted. The pilot's cost is reported apart (shared by both samplers).
Cite as 000_26bed7cc1ef3ab92.txt, Sec. 5.2.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy.linalg import solve_triangular
from scipy.optimize import minimize
from scipy.special import digamma, polygamma
from statsmodels.stats.proportion import proportion_confint

from harness.experiments.store import (
    RECORDS_FILE,
    append_record,
    load_records,
    open_experiment,
    read_manifest,
    repair_records,
)
from harness.targets.discrete import DiscreteFactorTarget
from implementations.racing import b_normal, doubling_schedule

EXPERIMENT = "racing-arch"
PAPER_REF = "000_26bed7cc1ef3ab92.txt, Sec. 5.2"
ARCH_LEVELS = ("quick", "full")
MODELS = (5, 10, 15, 20, 25, 30)
QMAX = max(MODELS)
SAMPLERS = ("exact", "sub")
CONTROL_VARIATES = ("parameter", "data", "none")
ACF_LAGS = 50

# The simulated truth: ARCH(10), alpha decreasing over the lags. sum(alpha_1..10) = 0.45 keeps
# the series covariance-stationary with t_5 innovations: E[z^2] = nu / (nu - 2) = 5/3 and
# 0.45 * 5/3 = 0.75 < 1 (the plain condition sum(alpha) < 1 is not enough for unit-scale t).
TRUE_Q = 10
TRUE_ALPHA = (0.2, 0.08, 0.07, 0.06, 0.05, 0.05, 0.04, 0.04, 0.03, 0.02, 0.01)
TRUE_NU = 5.0
SIM_BURN_IN = 1000

PAPER_ARCH: dict[str, Any] = {
    "source": PAPER_REF,
    "data": "5-minute Shanghai stock exchange composite index, one year",
    "n_data": 13000,
    "models": list(MODELS),
    "m1": 50,
    "delta": 0.05,
    "iterations": 100000,
    "runs": 5,
    "gibbs_error_rate": 4e-4,
    "mh_error_rate": 2e-3,
    "convergence_speedup": 3.0,
    "ess_ratio_min": 2.0,
    "variance_reduction_log10": [2.0, 3.0],
    "claims": {
        "convergence_speedup": "Sub converges about three times faster (likelihood evaluations)",
        "ess_ratio_min": "Sub obtains over twice the effective sample size of q",
        "variance_reduction_log10": "control variates reduce the reward variance by 2~3 orders",
    },
}


def paper_arch() -> dict[str, Any]:
    """The paper's ARCH numbers (000, Sec. 5.2) as a fresh dict, to set beside ours."""
    return copy.deepcopy(PAPER_ARCH)


# ---------------------------------------------------------------------------------------------
# Settings
# ---------------------------------------------------------------------------------------------

_LEVELS: dict[str, dict[str, Any]] = {
    # Quick: fewer data (N = 3000 instead of ~13,000) and short chains, ~1.5 minutes.
    "quick": {
        "N": 3000,
        "pilot_iterations": 2000,
        "adapt_iterations": 2000,
        "iterations": 4000,
        "chains": 3,
        "chunk": 500,
    },
    # Full: the paper's size (13,000 points, 1e5 iterations, 5 runs). Slow: ~2 hours on 2 cores.
    "full": {
        "N": 13000,
        "pilot_iterations": 5000,
        "adapt_iterations": 10000,
        "iterations": 100000,
        "chains": 5,
        "chunk": 2000,
    },
}


@dataclass(frozen=True)
class ArchConfig:
    """Settings of one ARCH run; ``from_level`` gives the quick and full presets.

    N: likelihood terms (returns after the first 30, which every model conditions on).
    pilot_iterations: exact MALA sweeps per model whose moments give the pseudo-priors.
    adapt_iterations: sweeps that tune pi~ (also the burn-in of the fixed runs).
    iterations / chains: sweeps per chain and chains per sampler after pi~ is fixed.
    chunk: sweeps per record (one fsynced line each; the unit of resumption).
    delta, m1: Racing-Normal's error bound and first mini-batch (000, Sec. 5.2: 0.05 and 50).
    step: Langevin step epsilon = step * d^(-1/3) for a model with d parameters, in the
        coordinates whitened by its pilot covariance; the same for MALA and SGLD (0.6: MALA
        accepts ~0.6-0.8, SGLD ~0.2-0.6 on the quick data).
    batch: SGLD mini-batch size (the same indices at x and x', see ``_sgld_mh``).
    control_variate: the rewards of Sub's races and its SGLD gradient: "parameter" (default;
        second-order Taylor of each term in the model's parameters around its pilot mean),
        "data" (000, Eq. 11 in the data space; raises the variance here), or "none" (plain
        rewards; SGLD proposals are then almost never accepted).
    adapt_gain, adapt_t0: adaptation step gamma_k = adapt_gain * min(1, adapt_t0 / k).
    trace_every: sweeps between recorded estimates of log p(q | r) during adaptation.
    """

    level: str = "quick"
    seed: int = 0
    N: int = 3000
    pilot_iterations: int = 2000
    adapt_iterations: int = 2000
    iterations: int = 4000
    chains: int = 3
    chunk: int = 500
    delta: float = 0.05
    m1: int = 50
    step: float = 0.6
    batch: int = 100
    control_variate: str = "parameter"
    adapt_gain: float = 1.0
    adapt_t0: int = 300
    trace_every: int = 5
    true_q: int = TRUE_Q
    true_alpha: tuple[float, ...] = TRUE_ALPHA
    true_nu: float = TRUE_NU

    def __post_init__(self) -> None:
        object.__setattr__(self, "true_alpha", tuple(float(a) for a in self.true_alpha))
        _validate(self)

    @classmethod
    def from_level(cls, level: str, seed: int = 0) -> ArchConfig:
        if level not in _LEVELS:
            raise ValueError(f"level = {level!r} is invalid; valid: one of {ARCH_LEVELS}")
        return cls(level=level, seed=seed, **_LEVELS[level])

    def to_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        out["true_alpha"] = list(self.true_alpha)
        return out


def _need_int(name: str, value: Any, low: int, high: int | None = None) -> None:
    ok = isinstance(value, int | np.integer) and not isinstance(value, bool)
    if not ok or value < low or (high is not None and value > high):
        valid = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise ValueError(f"parameter {name!r} = {value!r} is invalid; valid: an integer {valid}")


def _need_real(name: str, value: Any, low: float, high: float = math.inf) -> None:
    ok = isinstance(value, int | float | np.floating) and not isinstance(value, bool)
    if not ok or not low < float(value) < high:
        raise ValueError(f"parameter {name!r} = {value!r} is invalid; valid: in ({low}, {high})")


def _validate(c: ArchConfig) -> None:
    """Every setting checked once, before any work; ValueError names the parameter."""
    if c.level not in ARCH_LEVELS:
        raise ValueError(f"parameter 'level' = {c.level!r} is invalid; valid: {ARCH_LEVELS}")
    _need_int("seed", c.seed, 0)
    _need_int("m1", c.m1, 2)
    _need_int("N", c.N, max(4 * c.m1, 100))
    _need_int("pilot_iterations", c.pilot_iterations, 40)
    _need_int("adapt_iterations", c.adapt_iterations, 1)
    _need_int("iterations", c.iterations, 2)
    _need_int("chains", c.chains, 1)
    _need_int("chunk", c.chunk, 1)
    _need_int("batch", c.batch, 1, c.N)
    _need_int("adapt_t0", c.adapt_t0, 1)
    _need_int("trace_every", c.trace_every, 1)
    _need_real("delta", c.delta, 0.0, 1.0)
    _need_real("step", c.step, 0.0)
    _need_real("adapt_gain", c.adapt_gain, 0.0)
    _need_real("true_nu", c.true_nu, 2.0)
    if c.control_variate not in CONTROL_VARIATES:
        raise ValueError(
            f"parameter 'control_variate' = {c.control_variate!r} is invalid; "
            f"valid: one of {CONTROL_VARIATES}"
        )
    if c.true_q not in MODELS or len(c.true_alpha) != c.true_q + 1:
        raise ValueError(
            f"parameter 'true_q' = {c.true_q!r} with {len(c.true_alpha)} alphas is invalid; "
            f"valid: q in {MODELS} and q + 1 alphas (alpha_0..alpha_q)"
        )
    alpha = np.asarray(c.true_alpha)
    persistence = float(alpha[1:].sum()) * c.true_nu / (c.true_nu - 2.0)
    if np.any(alpha <= 0) or persistence >= 1.0:
        raise ValueError(
            f"parameter 'true_alpha' = {c.true_alpha!r} is invalid; valid: positive, with "
            f"sum(alpha_1..q) * nu / (nu - 2) < 1 (covariance-stationary), got {persistence:.3g}"
        )


# ---------------------------------------------------------------------------------------------
# Data and likelihood
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class ArchData:
    """Returns and the design of the N modelled terms t = 31..N+30.

    u[n] = r_t^2 and X[n] = (1, r_{t-1}^2, ..., r_{t-30}^2), so sigma_t^2 = X[n, :q+1] @ alpha.
    ``y_mean`` / ``y_cov`` are the first two empirical moments of y_n = (u[n], X[n, 1:]), the
    data vector of the control variate of 000, Eq. 11.
    """

    returns: np.ndarray
    u: np.ndarray
    X: np.ndarray
    y_mean: np.ndarray
    y_cov: np.ndarray

    @property
    def N(self) -> int:
        return int(self.u.size)


def simulate_returns(N: int, alpha: Iterable[float], nu: float, seed: int) -> np.ndarray:
    """N + 30 returns of ARCH(q) with t_nu(0, 1) innovations; the first 1000 draws are dropped."""
    alpha = np.asarray(tuple(alpha), dtype=np.float64)
    q = alpha.size - 1
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(0,)))
    total = SIM_BURN_IN + N + QMAX
    z = rng.standard_t(nu, size=total)
    r2 = np.zeros(total + q)  # q leading zeros: the series starts at sigma^2 = alpha_0
    r = np.empty(total)
    lag_weights = alpha[:0:-1]  # alpha_q..alpha_1, aligned with r2[t : t + q]
    for t in range(total):
        sigma2 = alpha[0] + float(lag_weights @ r2[t : t + q])
        r[t] = math.sqrt(sigma2) * z[t]
        r2[t + q] = r[t] * r[t]
    return r[SIM_BURN_IN:]


def arch_data(returns: np.ndarray) -> ArchData:
    r = np.asarray(returns, dtype=np.float64)
    N = r.size - QMAX
    X = np.ones((N, QMAX + 1))
    for i in range(1, QMAX + 1):
        X[:, i] = r[QMAX - i : QMAX - i + N] ** 2
    u = r[QMAX:] ** 2
    Y = np.column_stack([u, X[:, 1:]])
    y_mean = Y.mean(axis=0)
    dev = Y - y_mean
    y_cov = dev.T @ dev / N  # biased: then the mean of h over the N terms is exactly E[h]
    for a in (r, u, X, y_mean, y_cov):
        a.setflags(write=False)
    return ArchData(r, u, X, y_mean, y_cov)


def _t_const(nu: float) -> float:
    return math.lgamma((nu + 1.0) / 2.0) - math.lgamma(nu / 2.0) - 0.5 * math.log(nu * math.pi)


def term_loglik(
    psi: np.ndarray, q: int, u: np.ndarray, X: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """log p(r_t | r_{t-1..t-q}, alpha, nu) for each row, vectorised over t, and sigma_t^2.

    log t_nu(r / sigma) - log sigma = c(nu) - 1/2 log s - (nu + 1)/2 log(1 + u / (nu s)).
    ``psi`` = (alpha_0..alpha_q, nu) on the natural scale.
    """
    nu = float(psi[q + 1])
    s = X[:, : q + 1] @ psi[: q + 1]
    return _t_const(nu) - 0.5 * np.log(s) - 0.5 * (nu + 1.0) * np.log1p(u / (nu * s)), s


def term_grads(
    psi: np.ndarray, q: int, u: np.ndarray, X: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per-term log-likelihood (n,) and its gradient in psi = (alpha, nu), shape (n, q + 2)."""
    nu = float(psi[q + 1])
    k = 0.5 * (nu + 1.0)
    terms, s = term_loglik(psi, q, u, X)
    denom = nu * s + u
    d_s = -0.5 / s + k * u / (s * denom)
    G = np.empty((u.size, q + 2))
    G[:, : q + 1] = X[:, : q + 1] * d_s[:, None]
    d_nu_const = 0.5 * digamma(k) - 0.5 * digamma(0.5 * nu) - 0.5 / nu
    G[:, q + 1] = d_nu_const - 0.5 * np.log1p(u / (nu * s)) + k * u / (nu * denom)
    return terms, G


def log_prior(phi: np.ndarray) -> float:
    """Gamma(1, 1) priors on alpha_i and nu, as densities of phi = log(psi) (Jacobian included)."""
    return float(np.sum(phi - np.exp(phi)))


def log_prior_grad(phi: np.ndarray) -> np.ndarray:
    return 1.0 - np.exp(phi)


# ---------------------------------------------------------------------------------------------
# Pilot: Laplace approximations (pseudo-priors, preconditioners, control-variate anchors)
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class ModelFit:
    """Gaussian approximation N(mean, cov) of p(phi | r, q) on the log scale, from a pilot fit.

    ``laplace_fit`` gives the Laplace one, ``pilot_fit`` the moment-matched one used as (a) the
    Carlin & Chib pseudo-prior of model q, (b) the preconditioner of its Langevin proposals,
    (c) the anchor psi_hat = exp(mean) of the parameter-space control variate.
    """

    q: int
    mean: np.ndarray
    cov: np.ndarray
    chol: np.ndarray
    log_evidence: float
    evals: int
    pilot_accept_rate: float | None = None

    @property
    def dim(self) -> int:
        return self.q + 2


def _neg_log_post(phi: np.ndarray, q: int, data: ArchData) -> tuple[float, np.ndarray]:
    psi = np.exp(phi)
    terms, G = term_grads(psi, q, data.u, data.X)
    value = float(terms.sum()) + log_prior(phi)
    grad = psi * G.sum(axis=0) + log_prior_grad(phi)
    return -value, -grad


def _start_point(q: int, data: ArchData) -> np.ndarray:
    # Half the variance on the constant, 0.3 spread over the lags, nu = 10: far from the truth.
    var = float(np.mean(data.u))
    psi = np.concatenate([[0.5 * var], np.full(q, 0.3 / q), [10.0]])
    return np.log(psi)


def _hessian(phi: np.ndarray, q: int, data: ArchData, h: float = 1e-5) -> np.ndarray:
    """Hessian of -log posterior by central differences of the analytic gradient."""
    d = phi.size
    H = np.empty((d, d))
    for i in range(d):
        e = np.zeros(d)
        e[i] = h
        H[i] = (_neg_log_post(phi + e, q, data)[1] - _neg_log_post(phi - e, q, data)[1]) / (2 * h)
    H = 0.5 * (H + H.T)
    w, V = np.linalg.eigh(H)
    return (V * np.maximum(w, 1e-8 * w.max())) @ V.T  # floor: a usable covariance always


def laplace_fit(q: int, data: ArchData) -> ModelFit:
    """MAP by L-BFGS and the Hessian there: the start and preconditioner of the pilot chain."""
    x0 = _start_point(q, data)
    res = minimize(_neg_log_post, x0, args=(q, data), jac=True, method="L-BFGS-B")
    H = _hessian(res.x, q, data)
    cov = np.linalg.inv(H)
    cov = 0.5 * (cov + cov.T)
    d = res.x.size
    log_ev = -float(res.fun) + 0.5 * d * math.log(2 * math.pi) - 0.5 * np.linalg.slogdet(H)[1]
    evals = (int(res.nfev) + 2 * d) * data.N
    return ModelFit(q, res.x, cov, np.linalg.cholesky(cov), log_ev, evals)


def pilot_fit(q: int, data: ArchData, config: ArchConfig) -> ModelFit:
    """Pseudo-prior of model q: a Gaussian on phi with the moments of a pilot MALA chain.

    Laplace alone is a poor pseudo-prior for q >= 15: the posteriors of superfluous log-alphas
    are skewed (log of a near-exponential), and the resulting mismatch makes the Carlin & Chib
    chain stick in a model for many sweeps. Moment matching minimises KL(posterior || Gaussian).
    The pilot starts at the Laplace mode, uses its covariance as preconditioner, and drops its
    first quarter; its cost (terms evaluated) is reported apart and shared by both samplers.
    """
    lap = laplace_fit(q, data)
    rng = np.random.default_rng(np.random.SeedSequence(config.seed, spawn_key=(2, q)))
    eps = _step_size(config, lap.dim)
    phi, burn = lap.mean.copy(), config.pilot_iterations // 4
    draws, accepted = [], 0
    for it in range(config.pilot_iterations):
        phi, ok = mala_step(data, lap, phi, eps, rng)
        accepted += int(ok)
        if it >= burn:
            draws.append(phi)
    D = np.array(draws)
    cov = np.cov(D.T)
    evals = lap.evals + config.pilot_iterations * data.N
    fit = ModelFit(q, D.mean(axis=0), cov, np.linalg.cholesky(cov), lap.log_evidence, evals)
    return dataclasses.replace(fit, pilot_accept_rate=accepted / config.pilot_iterations)


def _fit_to_record(f: ModelFit) -> dict[str, Any]:
    return {
        "q": f.q,
        "mean": f.mean.tolist(),
        "cov": f.cov.tolist(),
        "log_evidence": f.log_evidence,
        "evals": f.evals,
        "pilot_accept_rate": f.pilot_accept_rate,
    }


def _fit_from_record(rec: Mapping[str, Any]) -> ModelFit:
    cov = np.asarray(rec["cov"], dtype=np.float64)
    return ModelFit(
        int(rec["q"]),
        np.asarray(rec["mean"], dtype=np.float64),
        cov,
        np.linalg.cholesky(cov),
        float(rec["log_evidence"]),
        int(rec["evals"]),
        rec.get("pilot_accept_rate"),
    )


def pseudo_log_density(fit: ModelFit, phi: np.ndarray) -> float:
    z = solve_triangular(fit.chol, phi - fit.mean, lower=True)
    log_det = float(np.log(np.diag(fit.chol)).sum())
    return -0.5 * float(z @ z) - log_det - 0.5 * fit.dim * math.log(2 * math.pi)


# ---------------------------------------------------------------------------------------------
# Control variates (000, Sec. 3.4)
# ---------------------------------------------------------------------------------------------


def term_curvatures(
    psi: np.ndarray, q: int, u: np.ndarray, X: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-term second derivatives (d2l/ds2, d2l/ds dnu, d2l/dnu2), s = sigma_t^2.

    With l = c(nu) + (nu/2) log s + k log nu - k log(nu s + u), k = (nu + 1)/2, the Hessian of a
    term in psi = (alpha, nu) is [[l_ss x x^T, l_snu x], [l_snu x^T, l_nunu]], x = X[n, :q+1].
    """
    nu = float(psi[q + 1])
    s = X[:, : q + 1] @ psi[: q + 1]
    w = nu * s + u
    l_ss = 0.5 * nu * (-1.0 / (s * s) + (nu + 1.0) * nu / (w * w))
    l_snu = 0.5 * (1.0 / s - (nu + 1.0) / w) - 0.5 * nu * (u - s) / (w * w)
    const = 0.25 * polygamma(1, 0.5 * (nu + 1.0)) - 0.25 * polygamma(1, 0.5 * nu) + 0.5 / nu
    l_nunu = const - 0.5 * s / w - 0.5 * s * (u - s) / (w * w)
    return l_ss, l_snu, l_nunu


@dataclass(frozen=True, eq=False)
class ParameterAnchor:
    """Second-order Taylor expansion of every term of one model around psi_hat = exp(mean).

    h_n(psi) = l_n + G_n . d + 1/2 d^T H_n d with d = psi - psi_hat, all at psi_hat; H_n has the
    rank-2 structure of ``term_curvatures``, so h_n costs O(q) and E_n[h] = mean(l) + mean(G) . d
    + 1/2 d^T mean(H) d costs O(q^2) from sums kept once. This is Eq. 11's recipe (000, Sec. 3.4)
    with the expansion taken in the parameters instead of the data: the data-space version
    raises the variance on t-distributed returns (see ``ArchConfig.control_variate``).
    """

    q: int
    psi_hat: np.ndarray
    l0: np.ndarray
    G0: np.ndarray
    curv: tuple[np.ndarray, np.ndarray, np.ndarray]
    l0_mean: float
    G0_mean: np.ndarray
    H_mean: np.ndarray


def parameter_anchor(fit: ModelFit, data: ArchData) -> ParameterAnchor:
    q, psi_hat = fit.q, np.exp(fit.mean)
    l0, G0 = term_grads(psi_hat, q, data.u, data.X)
    a, b, c = term_curvatures(psi_hat, q, data.u, data.X)
    x = data.X[:, : q + 1]
    H = np.empty((q + 2, q + 2))
    H[: q + 1, : q + 1] = (x * a[:, None]).T @ x / data.N
    H[: q + 1, q + 1] = H[q + 1, : q + 1] = b @ x / data.N
    H[q + 1, q + 1] = float(c.mean())
    return ParameterAnchor(q, psi_hat, l0, G0, (a, b, c), float(l0.mean()), G0.mean(axis=0), H)


def _param_cv(
    anchor: ParameterAnchor, data: ArchData, psi: np.ndarray, rows: Any
) -> tuple[np.ndarray, float]:
    """(h_n at ``rows``, E_n[h]) of the parameter-space control variate."""
    q, d = anchor.q, psi - anchor.psi_hat
    a, b, c = (v[rows] for v in anchor.curv)
    xs = data.X[rows, : q + 1] @ d[: q + 1]
    dnu = d[q + 1]
    quad = a * xs * xs + 2.0 * b * xs * dnu + c * dnu * dnu
    h = anchor.l0[rows] + anchor.G0[rows] @ d + 0.5 * quad
    mean = anchor.l0_mean + float(anchor.G0_mean @ d) + 0.5 * float(d @ anchor.H_mean @ d)
    return h, mean


def _param_cv_grad(
    anchor: ParameterAnchor, data: ArchData, psi: np.ndarray, rows: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(sum over ``rows`` of grad h_n, mean over all n of grad h_n), gradients in psi."""
    q, d = anchor.q, psi - anchor.psi_hat
    a, b, c = (v[rows] for v in anchor.curv)
    x = data.X[rows, : q + 1]
    xs = x @ d[: q + 1]
    dnu = d[q + 1]
    total = anchor.G0[rows].sum(axis=0)
    total[: q + 1] += (a * xs + b * dnu) @ x
    total[q + 1] += float(b @ xs + c.sum() * dnu)
    return total, anchor.G0_mean + anchor.H_mean @ d


def _data_cv(
    data: ArchData, q: int, psi: np.ndarray, s: np.ndarray, rows: Any
) -> tuple[np.ndarray, float]:
    """(h_n at ``rows``, E_n[h]) of 000, Eq. 11: second-order Taylor in y_n around its mean.

    y_n = (r_t^2, r_{t-1}^2, ..., r_{t-30}^2). The term depends on y only through u = r_t^2 and
    s = alpha_0 + alpha . (lags), linear in y, so g and H of Eq. 11 reduce to the derivatives in
    (u, s): f = (k - 1/2) log s - k log(nu s + u) + const, k = (nu + 1)/2. E[h] uses the
    empirical mean and (biased) covariance of y_n, so the mean of h over the N terms is E[h].
    """
    nu = float(psi[q + 1])
    k = 0.5 * (nu + 1.0)
    a = psi[1 : q + 1]
    u0 = float(data.y_mean[0])
    s0 = float(psi[0] + a @ data.y_mean[1 : q + 1])
    den = nu * s0 + u0
    l0 = _t_const(nu) - 0.5 * math.log(s0) - k * math.log1p(u0 / (nu * s0))
    lu, ls = -k / den, (k - 0.5) / s0 - k * nu / den
    luu, lus = k / den**2, k * nu / den**2
    lss = -(k - 0.5) / s0**2 + k * nu * nu / den**2
    du, ds = data.u[rows] - u0, s - s0
    h = l0 + lu * du + ls * ds + 0.5 * (luu * du * du + 2.0 * lus * du * ds + lss * ds * ds)
    C = data.y_cov
    v_uu = float(C[0, 0])
    v_us = float(a @ C[1 : q + 1, 0])
    v_ss = float(a @ C[1 : q + 1, 1 : q + 1] @ a)
    return h, l0 + 0.5 * (luu * v_uu + 2.0 * lus * v_us + lss * v_ss)


@dataclass(frozen=True, eq=False)
class Problem:
    """Everything a sweep reads: settings, data, pilot fits, anchors and the racing constants."""

    config: ArchConfig
    data: ArchData
    fits: tuple[ModelFit, ...]
    anchors: tuple[ParameterAnchor, ...]
    b_mh: float
    schedule: np.ndarray
    log_pi: np.ndarray


def _cv_terms(
    problem: Problem, kind: str, j: int, psi: np.ndarray, s: np.ndarray, rows: Any
) -> tuple[np.ndarray | float, float]:
    if kind == "parameter":
        return _param_cv(problem.anchors[j], problem.data, psi, rows)
    if kind == "data":
        return _data_cv(problem.data, MODELS[j], psi, s, rows)
    return 0.0, 0.0


# ---------------------------------------------------------------------------------------------
# Chain state and one sweep
# ---------------------------------------------------------------------------------------------


@dataclass
class ChainState:
    """The evolving state of one chain (mutable on purpose: a sweep updates it in place)."""

    k: int
    phis: list[np.ndarray]
    log_pi_tilde: np.ndarray
    rng: np.random.Generator
    evals: int = 0
    sweeps: int = 0

    def to_record(self) -> dict[str, Any]:
        return {
            "k": self.k,
            "phis": [p.tolist() for p in self.phis],
            "log_pi_tilde": self.log_pi_tilde.tolist(),
            "rng": self.rng.bit_generator.state,
            "evals": self.evals,
            "sweeps": self.sweeps,
        }

    @classmethod
    def from_record(cls, rec: Mapping[str, Any]) -> ChainState:
        rng = np.random.Generator(np.random.PCG64())
        rng.bit_generator.state = rec["rng"]
        return cls(
            int(rec["k"]),
            [np.asarray(p, dtype=np.float64) for p in rec["phis"]],
            np.asarray(rec["log_pi_tilde"], dtype=np.float64),
            rng,
            int(rec["evals"]),
            int(rec["sweeps"]),
        )


@dataclass
class Tally:
    """Per-chunk counts; turned into a record by ``as_record``."""

    q: list[int] = field(default_factory=list)
    gibbs_evals: int = 0
    mh_evals: int = 0
    gibbs_draws: int = 0
    gibbs_errors: int = 0
    gibbs_early: int = 0
    mh_tests: int = 0
    mh_errors: int = 0
    mh_early: int = 0
    mh_accepts: int = 0
    cv_log10: dict[str, list[float]] = field(default_factory=dict)
    trace: list[list[float]] = field(default_factory=list)

    def add_cv(self, name: str, value: float) -> None:
        self.cv_log10.setdefault(name, []).append(value)

    def as_record(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        out["cv_log10"] = {k: _sum_count(v) for k, v in self.cv_log10.items()}
        return out


def _sum_count(values: list[float]) -> dict[str, float]:
    finite = [v for v in values if math.isfinite(v)]
    return {"sum": float(sum(finite)), "sumsq": float(sum(v * v for v in finite)), "n": len(finite)}


def _step_size(config: ArchConfig, dim: int) -> float:
    return config.step * dim ** (-1.0 / 3.0)


def _langevin_move(
    fit: ModelFit, phi: np.ndarray, grad: np.ndarray, eps: float, xi: np.ndarray
) -> np.ndarray:
    """x' = x + (eps/2) M grad + sqrt(eps) L xi with M = L L^T the pilot covariance."""
    return phi + 0.5 * eps * (fit.cov @ grad) + math.sqrt(eps) * (fit.chol @ xi)


# The target is truncated to this box of phi = log(alpha, nu): the Gamma(1, 1) prior puts mass
# below 1e-17 outside it, and it keeps exp(phi) finite when a noisy gradient throws a proposal
# far away (such a proposal is rejected, as its target density is taken as zero).
PHI_BOX = (-40.0, math.log(40.0))


def in_support(phi: np.ndarray) -> bool:
    return bool(np.all(phi >= PHI_BOX[0]) and np.all(phi <= PHI_BOX[1]))


def _log_q(fit: ModelFit, to: np.ndarray, frm: np.ndarray, grad: np.ndarray, eps: float) -> float:
    """log N(to; frm + (eps/2) M grad, eps M) up to the constant shared by both directions."""
    z = solve_triangular(fit.chol, to - frm - 0.5 * eps * (fit.cov @ grad), lower=True)
    return -0.5 * float(z @ z) / eps


def _full_loglik_grad(data: ArchData, q: int, phi: np.ndarray) -> tuple[float, np.ndarray]:
    """Full-data log-likelihood and its gradient in phi (chain rule psi = exp(phi))."""
    psi = np.exp(phi)
    terms, G = term_grads(psi, q, data.u, data.X)
    return float(terms.sum()), psi * G.sum(axis=0)


def mala_step(
    data: ArchData, fit: ModelFit, phi: np.ndarray, eps: float, rng: np.random.Generator
) -> tuple[np.ndarray, bool]:
    """One exact MH step with a full-gradient Langevin proposal preconditioned by ``fit.cov``."""
    ll, g = _full_loglik_grad(data, fit.q, phi)
    g = g + log_prior_grad(phi)
    prop = _langevin_move(fit, phi, g, eps, rng.standard_normal(fit.dim))
    log_u = math.log(1.0 - rng.random())
    if not in_support(prop):
        return phi, False
    ll_p, g_p = _full_loglik_grad(data, fit.q, prop)
    g_p = g_p + log_prior_grad(prop)
    forward = ll + log_prior(phi) + _log_q(fit, prop, phi, g, eps)
    backward = ll_p + log_prior(prop) + _log_q(fit, phi, prop, g_p, eps)
    if backward - forward > log_u:
        return prop, True
    return phi, False


def _mala_exact(problem: Problem, st: ChainState, tally: Tally) -> None:
    """Exact MALA for phi_q; cost N (the current state's terms count as cached)."""
    fit = problem.fits[st.k]
    eps = _step_size(problem.config, fit.dim)
    st.phis[st.k], accepted = mala_step(problem.data, fit, st.phis[st.k], eps, st.rng)
    tally.mh_evals += problem.data.N
    tally.mh_tests += 1
    tally.mh_accepts += int(accepted)


def _batch_grad(
    problem: Problem, j: int, phi: np.ndarray, rows: np.ndarray, cv: bool
) -> np.ndarray:
    """SGLD gradient of the log posterior in phi from the terms ``rows`` (000, Sec. 5.2).

    With the parameter control variate the mini-batch estimates the gradient of
    sum_n (l_n - h_n) + N E[h] instead of sum_n l_n: the same rewards the race uses.
    """
    data, N = problem.data, problem.data.N
    psi = np.exp(phi)
    _, G = term_grads(psi, MODELS[j], data.u[rows], data.X[rows])
    g_psi = (N / rows.size) * G.sum(axis=0)
    if cv:
        h_sum, h_mean = _param_cv_grad(problem.anchors[j], data, psi, rows)
        g_psi += N * h_mean - (N / rows.size) * h_sum
    return psi * g_psi + log_prior_grad(phi)


def _residual_diff(
    problem: Problem, j: int, psis: tuple[np.ndarray, np.ndarray], rows: Any
) -> tuple[np.ndarray, float]:
    """Control-variate reward differences (x' minus x) at ``rows`` and their offset E[h'] - E[h]."""
    data, q, kind = problem.data, MODELS[j], problem.config.control_variate
    out, offset = [], 0.0
    for sign, psi in zip((-1.0, 1.0), psis, strict=True):
        terms, s = term_loglik(psi, q, data.u[rows], data.X[rows])
        h, e_h = _cv_terms(problem, kind, j, psi, s, rows)
        out.append(sign * (terms - h))
        offset += sign * e_h
    return out[0] + out[1], offset


def race_mh(
    diffs: Callable[[np.ndarray], np.ndarray],
    offset: float,
    N: int,
    schedule: np.ndarray,
    B: float,
    rng: np.random.Generator,
) -> tuple[bool, int]:
    """Two-arm Racing-Normal MH test (000, Sec. 4, Eq. 12; Alg. 1 with D = 2, pairwise sigma).

    Arm 1 keeps x: f_0(1) = u p(x) q(x'|x); arm 2 moves: f_0(2) = p(x') q(x|x'); f_n = p(y_n|.).
    ``diffs(idx)`` returns l_{2,n} - l_{1,n} (control-variate residuals) at fresh indices;
    ``offset`` = (log f_0(2) - log f_0(1)) / N + E[h_2] - E[h_1] is the per-term constant. On
    the doubling schedule T, stop once |mean| > G_Normal = sigma / sqrt(T) (1 - (T-1)/(N-1))^(1/2)
    B with B = B_Normal(delta / (D - 1)) (Eq. 9); at T = N the mean is exact. Returns (accept,
    number of indices used); each index costs two likelihood terms.
    """
    perm = rng.permutation(N)
    total, sumsq, used = 0.0, 0.0, 0
    for T in schedule:
        T = int(T)
        d = diffs(perm[used:T]) + offset
        total += float(d.sum())
        sumsq += float((d * d).sum())
        used = T
        mean = total / T
        if T == N:
            break
        sigma = math.sqrt(max(sumsq / T - mean * mean, 0.0))
        if abs(mean) > sigma / math.sqrt(T) * math.sqrt(1.0 - (T - 1) / (N - 1)) * B:
            break
    return mean > 0.0, used


def _sgld_mh(problem: Problem, st: ChainState, tally: Tally) -> None:
    """SGLD proposal (one mini-batch) corrected by the racing MH test of Eq. 12.

    q(x'|x) = N(x'; x + (eps/2) M g_S(x), eps M), and q(x|x') uses g_S(x') on the SAME indices S:
    S is drawn independently of x, so for each S this is an MH kernel with a fixed drift and
    detailed balance holds exactly (an independent batch for the reverse move would not). The
    exact decision under the same u and proposal is computed apart, uncounted, to measure errors.
    """
    j, fit, N = st.k, problem.fits[st.k], problem.data.N
    eps = _step_size(problem.config, fit.dim)
    cv = problem.config.control_variate == "parameter"
    phi = st.phis[j]
    rows = st.rng.choice(N, size=problem.config.batch, replace=False)
    g = _batch_grad(problem, j, phi, rows, cv)
    prop = _langevin_move(fit, phi, g, eps, st.rng.standard_normal(fit.dim))
    log_u = math.log(1.0 - st.rng.random())
    tally.mh_tests += 1
    if not in_support(prop):
        tally.mh_evals += rows.size  # the gradient at x was spent; the test needs nothing
        return
    g_p = _batch_grad(problem, j, prop, rows, cv)
    f0_keep = log_u + log_prior(phi) + _log_q(fit, prop, phi, g, eps)
    f0_move = log_prior(prop) + _log_q(fit, phi, prop, g_p, eps)
    psis = (np.exp(phi), np.exp(prop))
    e_offset = _residual_diff(problem, j, psis, slice(0, 0))[1]
    offset = (f0_move - f0_keep) / N + e_offset

    def diffs(idx: np.ndarray) -> np.ndarray:
        return _residual_diff(problem, j, psis, idx)[0]

    accept, used = race_mh(diffs, offset, N, problem.schedule, problem.b_mh, st.rng)
    exact = _exact_mh_decision(problem, j, psis, f0_move - f0_keep)
    tally.mh_evals += 2 * rows.size + 2 * used
    tally.mh_errors += int(accept != exact)
    tally.mh_early += int(used < N)
    if accept:
        st.phis[j] = prop
        tally.mh_accepts += 1


def _exact_mh_decision(
    problem: Problem, j: int, psis: tuple[np.ndarray, np.ndarray], f0_diff: float
) -> bool:
    data, q = problem.data, MODELS[j]
    ll = [float(term_loglik(p, q, data.u, data.X)[0].sum()) for p in psis]
    return ll[1] - ll[0] + f0_diff > 0.0


def _refresh_pseudo(problem: Problem, st: ChainState) -> None:
    """phi_j ~ pseudo-prior_j for every model j other than the current one (no likelihood)."""
    for j, fit in enumerate(problem.fits):
        if j != st.k:
            st.phis[j] = fit.mean + fit.chol @ st.rng.standard_normal(fit.dim)


def _gibbs_f0(problem: Problem, st: ChainState) -> np.ndarray:
    """log f_0(j) = log pi~_j + log p(phi_j | j) - log pseudo-prior_j(phi_j) (Carlin & Chib)."""
    return np.array(
        [
            st.log_pi_tilde[j] + log_prior(phi) - pseudo_log_density(problem.fits[j], phi)
            for j, phi in enumerate(st.phis)
        ]
    )


def _reward_rows(problem: Problem, st: ChainState) -> tuple[np.ndarray, list[np.ndarray]]:
    """Raw rewards l[j, n] = log p(r_t | phi_j, q_j) of all models, and each model's sigma^2."""
    data = problem.data
    rows, sig2 = [], []
    for j, phi in enumerate(st.phis):
        terms, s = term_loglik(np.exp(phi), MODELS[j], data.u, data.X)
        rows.append(terms)
        sig2.append(s)
    return np.array(rows), sig2


def _gibbs_exact(problem: Problem, st: ChainState, tally: Tally) -> None:
    L, _ = _reward_rows(problem, st)
    logw = L.sum(axis=1) + _gibbs_f0(problem, st)
    st.k = int(np.argmax(logw + st.rng.gumbel(size=logw.size)))
    tally.gibbs_evals += L.size
    tally.gibbs_draws += 1


def _residual_matrix(
    problem: Problem, st: ChainState, L: np.ndarray, sig2: list[np.ndarray], kind: str
) -> np.ndarray:
    if kind == "none":
        return L
    R = np.empty_like(L)
    rows = slice(None)
    for j, phi in enumerate(st.phis):
        h, e_h = _cv_terms(problem, kind, j, np.exp(phi), sig2[j], rows)
        R[j] = L[j] - h + e_h
    return R


def variance_factors(L: np.ndarray, R: np.ndarray) -> tuple[float, float]:
    """log10 of the median variance ratio raw / residual: per arm, and per pair of arms."""
    marg = np.var(L, axis=1) / np.var(R, axis=1)
    i, j = np.triu_indices(L.shape[0], 1)
    pair = np.var(L[i] - L[j], axis=1) / np.var(R[i] - R[j], axis=1)
    return float(np.log10(np.median(marg))), float(np.log10(np.median(pair)))


def _gibbs_racing(problem: Problem, st: ChainState, tally: Tally) -> None:
    """Racing-Normal draw of q on control-variate rewards, measured against the exact draw."""
    from implementations.racing import fast  # Numba: compiled on first use, cached

    cfg = problem.config
    L, sig2 = _reward_rows(problem, st)
    residuals = {}
    for kind in ("parameter", "data"):
        residuals[kind] = _residual_matrix(problem, st, L, sig2, kind)
        marg, pair = variance_factors(L, residuals[kind])
        tally.add_cv(f"{kind}_marginal", marg)
        tally.add_cv(f"{kind}_pairwise", pair)
    R = residuals.get(cfg.control_variate, L)
    target = DiscreteFactorTarget(R, _gibbs_f0(problem, st))
    draw = fast.racing_normal(
        target, 1, st.rng, delta=cfg.delta, m1=cfg.m1, variance="pairwise", exact_answer=True
    )
    st.k = int(draw.values[0])
    tally.gibbs_evals += int(draw.evals)
    tally.gibbs_draws += 1
    tally.gibbs_errors += int(draw.values[0] != draw.extras["exact"][0])
    tally.gibbs_early += int(bool(draw.extras["stopped_early"][0]))


def sweep(problem: Problem, sampler: str, st: ChainState, tally: Tally) -> None:
    """One Carlin & Chib sweep: update phi_q, refresh the others, draw q."""
    before = tally.gibbs_evals + tally.mh_evals
    if sampler == "exact":
        _mala_exact(problem, st, tally)
        _refresh_pseudo(problem, st)
        _gibbs_exact(problem, st, tally)
    else:
        _sgld_mh(problem, st, tally)
        _refresh_pseudo(problem, st)
        _gibbs_racing(problem, st, tally)
    st.evals += tally.gibbs_evals + tally.mh_evals - before
    st.sweeps += 1
    tally.q.append(MODELS[st.k])


def adapt_step(problem: Problem, st: ChainState) -> None:
    """Stochastic approximation towards a flat p~(q | r) (documented choice; Appx. C.2 missing).

    log pi~_j -= gamma_k (1[q = j] - 1/|Q|), gamma_k = gain * min(1, t0 / k): the visited model
    loses weight, the others gain it, so visits equalise; sum gamma = inf, sum gamma^2 < inf.
    Then pi~_q p(r | q) is nearly constant, and pi_q / pi~_q estimates p(q | r) (000, Sec. 5.2).
    """
    cfg = problem.config
    gamma = cfg.adapt_gain * min(1.0, cfg.adapt_t0 / st.sweeps)
    visit = np.zeros(len(MODELS))
    visit[st.k] = 1.0
    st.log_pi_tilde = st.log_pi_tilde - gamma * (visit - 1.0 / len(MODELS))


def log_posterior_estimate(log_pi: np.ndarray, log_pi_tilde: np.ndarray) -> np.ndarray:
    """log p(q | r) estimated by normalising pi_q / pi~_q (000, Sec. 5.2, Fig. 2(b))."""
    x = log_pi - log_pi_tilde
    return x - (x.max() + math.log(np.exp(x - x.max()).sum()))


# ---------------------------------------------------------------------------------------------
# Parts, records and resumption
# ---------------------------------------------------------------------------------------------


def _parts(config: ArchConfig) -> list[str]:
    runs = [f"run/{s}/{c}" for s in SAMPLERS for c in range(config.chains)]
    return ["adapt/exact", "adapt/sub", *runs]


def _part_length(config: ArchConfig, part: str) -> int:
    return config.adapt_iterations if part.startswith("adapt/") else config.iterations


def _stream(config: ArchConfig, part: str) -> np.random.Generator:
    """An independent Generator per part, fixed by (seed, part): resumption cannot shift it."""
    kind, sampler, *chain = part.split("/")
    code = (1 if kind == "adapt" else 2, SAMPLERS.index(sampler), int(chain[0]) if chain else 0)
    return np.random.default_rng(np.random.SeedSequence(config.seed, spawn_key=(1, *code)))


def build_problem(config: ArchConfig, fits: tuple[ModelFit, ...]) -> Problem:
    data = arch_data(simulate_returns(config.N, config.true_alpha, config.true_nu, config.seed))
    anchors = tuple(parameter_anchor(f, data) for f in fits)
    return Problem(
        config,
        data,
        fits,
        anchors,
        b_normal(config.delta, data.N, config.m1),  # D = 2 arms, pairwise: delta / (D - 1)
        doubling_schedule(data.N, config.m1),
        np.full(len(MODELS), -math.log(len(MODELS))),
    )


def fixed_log_pi_tilde(config: ArchConfig, adapt_chunks: list[dict]) -> np.ndarray:
    """pi~ of the fixed runs: the exact adaptation's estimate of log p(q | r), averaged over its
    second half (Polyak-Ruppert), turned back into log pi~ = log pi - estimate.

    The last iterate alone is off by a few nats for the least probable models (the chain dwells
    in a model for a while and gamma is still ~ t0 / k), which would tilt p~(q | r) far from flat.
    """
    trace = [t for c in sorted(adapt_chunks, key=lambda c: c["start"]) for t in c["trace"]]
    half = [t[2:] for t in trace if t[0] > config.adapt_iterations // 2] or [trace[-1][2:]]
    log_pi = np.full(len(MODELS), -math.log(len(MODELS)))
    return log_pi - np.mean(np.asarray(half), axis=0)


def _initial_state(
    problem: Problem, part: str, last: Mapping[str, dict], fixed: np.ndarray | None
) -> ChainState:
    """Adaptation starts at q = 5 with pi~ = pi; a fixed run starts where its sampler's
    adaptation ended (that run is its burn-in), with pi~ = ``fixed`` for both samplers."""
    rng = _stream(problem.config, part)
    if part.startswith("adapt/"):
        st = ChainState(0, [f.mean.copy() for f in problem.fits], problem.log_pi.copy(), rng)
        _refresh_pseudo(problem, st)
        return st
    if fixed is None:
        raise RuntimeError(f"{part} needs the exact adaptation's pi~, which is not finished")
    end = ChainState.from_record(last[f"adapt/{part.split('/')[1]}"]["state"])
    return ChainState(end.k, end.phis, fixed.copy(), rng)


def _setup_evals(problem: Problem, part: str) -> int:
    """The parameter control variate needs every model's terms at its anchor once: 6 N."""
    if part == "adapt/sub" and problem.config.control_variate == "parameter":
        return problem.data.N * len(MODELS)
    return 0


def _run_chunk(
    problem: Problem, part: str, st: ChainState, start: int, stop: int, bar: Any
) -> dict[str, Any]:
    sampler = part.split("/")[1]
    adapt = part.startswith("adapt/")
    tally = Tally()
    t0 = time.perf_counter()
    for it in range(start, stop):
        sweep(problem, sampler, st, tally)
        if adapt:
            adapt_step(problem, st)
            if (it + 1) % problem.config.trace_every == 0 or it + 1 == stop:
                est = log_posterior_estimate(problem.log_pi, st.log_pi_tilde)
                tally.trace.append([it + 1, st.evals, *est.tolist()])
        bar.update(1)
    return {
        "key": f"{part}:{start}",
        "kind": "chunk",
        "part": part,
        "sampler": sampler,
        "start": start,
        "stop": stop,
        "seconds": time.perf_counter() - t0,
        **tally.as_record(),
        "state": st.to_record(),
    }


def _pilot(config: ArchConfig, out: Path, records: list[dict]) -> tuple[ModelFit, ...]:
    found = [r for r in records if r.get("kind") == "pilot"]
    if found:
        return tuple(_fit_from_record(m) for m in found[0]["models"])
    data = arch_data(simulate_returns(config.N, config.true_alpha, config.true_nu, config.seed))
    t0 = time.perf_counter()
    fits = tuple(pilot_fit(q, data, config) for q in MODELS)
    append_record(
        out / RECORDS_FILE,
        {
            "key": "pilot",
            "kind": "pilot",
            "seconds": time.perf_counter() - t0,
            "models": [_fit_to_record(f) for f in fits],
            "data": describe_data(config, data),
        },
    )
    return fits


def describe_data(config: ArchConfig, data: ArchData) -> dict[str, Any]:
    r = data.returns
    kurt = float(np.mean((r - r.mean()) ** 4) / np.var(r) ** 2)
    return {
        "simulated": True,
        "note": "simulated ARCH returns; the paper's Shanghai index data are not available",
        "model": f"ARCH({config.true_q}) with t_{config.true_nu:g}(0, 1) innovations",
        "true_q": config.true_q,
        "true_alpha": list(config.true_alpha),
        "true_nu": config.true_nu,
        "n_returns": int(r.size),
        "n_terms": data.N,
        "std": float(np.std(r)),
        "kurtosis": kurt,
        "max_abs": float(np.max(np.abs(r))),
    }


def _chunks(records: list[dict], part: str) -> list[dict]:
    return [r for r in records if r.get("kind") == "chunk" and r["part"] == part]


def _done_parts(records: list[dict]) -> tuple[dict[str, dict], dict[str, int]]:
    """Last chunk of each part (for its end state) and the sweeps already on disk."""
    last: dict[str, dict] = {}
    for r in records:
        if r.get("kind") == "chunk" and r["stop"] > last.get(r["part"], {}).get("stop", -1):
            last[r["part"]] = r
    return last, {p: r["stop"] for p, r in last.items()}


def settings_of(config: ArchConfig) -> dict[str, Any]:
    return {"experiment": EXPERIMENT, "paper": PAPER_REF, **config.to_dict()}


def run_arch(config: ArchConfig, out: Path, progress: bool = True) -> dict[str, Any]:
    """Run (or resume) the ARCH experiment into ``out``; returns ``arch_summary(out)``.

    ``out/experiment.json`` holds the settings (another config in the same folder raises
    ValueError); ``out/records.jsonl`` gets one fsynced line per finished chunk of sweeps, and a
    rerun continues each part from its last finished chunk with the saved Generator state, so an
    interrupted run ends with the same records as an uninterrupted one.
    """
    from tqdm.auto import tqdm

    out = Path(out)
    open_experiment(out, settings_of(config))
    path = out / RECORDS_FILE
    repair_records(path)
    records = load_records(path)
    fits = _pilot(config, out, records)
    problem = build_problem(config, fits)
    last, done = _done_parts(records)
    total = sum(_part_length(config, p) for p in _parts(config))
    with tqdm(total=total, initial=sum(done.values()), disable=not progress, desc="arch") as bar:
        for part in _parts(config):
            length = _part_length(config, part)
            start = done.get(part, 0)
            if start >= length:
                continue
            bar.set_postfix_str(part)
            if start:
                st = ChainState.from_record(last[part]["state"])
            else:
                fixed = None
                if part.startswith("run/"):
                    fixed = fixed_log_pi_tilde(config, _chunks(records, "adapt/exact"))
                st = _initial_state(problem, part, last, fixed)
                st.evals = _setup_evals(problem, part)
            while start < length:
                stop = min(start + config.chunk, length)
                rec = _run_chunk(problem, part, st, start, stop, bar)
                append_record(path, rec)
                records.append(rec)
                last[part] = rec
                start = stop
    return arch_summary(out)


# ---------------------------------------------------------------------------------------------
# Summary
# ---------------------------------------------------------------------------------------------


def autocorrelation(x: np.ndarray, lags: int = ACF_LAGS) -> list[float] | None:
    """Autocorrelation of one chain at lags 0..lags (arviz-stats, FFT); None if constant."""
    from arviz_stats.base import array_stats

    x = np.asarray(x, dtype=np.float64)
    if x.size < 2 or np.all(x == x[0]):
        return None
    return [float(v) for v in array_stats.autocorr(x)[: lags + 1]]


def ess(x: np.ndarray) -> float | None:
    """Bulk ESS (rank-normalised, arviz-stats) of x with shape (chains, draws); None if constant."""
    from arviz_stats.base import array_stats

    x = np.atleast_2d(np.asarray(x, dtype=np.float64))
    if np.all(x == x.flat[0]):
        return None
    value = float(array_stats.ess(x, method="bulk", chain_axis=0, draw_axis=1))
    return value if math.isfinite(value) else None


def _rate(errors: int, n: int) -> dict[str, Any]:
    if n == 0:
        return {"errors": 0, "n": 0, "rate": None, "ci95": None}
    lo, hi = proportion_confint(errors, n, alpha=0.05, method="beta")
    return {"errors": errors, "n": n, "rate": errors / n, "ci95": [float(lo), float(hi)]}


def _pooled_rate(parts: list[dict], step: str) -> dict[str, Any]:
    return _rate(sum(p[step]["errors"] for p in parts), sum(p[step]["n"] for p in parts))


def _merge_cv(chunks: list[dict]) -> dict[str, Any]:
    acc: dict[str, list[float]] = {}
    for c in chunks:
        for k, v in c.get("cv_log10", {}).items():
            a = acc.setdefault(k, [0.0, 0.0, 0])
            a[0] += v["sum"]
            a[1] += v["sumsq"]
            a[2] += v["n"]
    out = {}
    for k, (s, ss, n) in acc.items():
        mean = s / n if n else None
        sd = math.sqrt(max(ss / n - mean * mean, 0.0)) if n else None
        out[k] = {"mean_log10": mean, "sd_log10": sd, "n": n}
    return out


def _part_summary(chunks: list[dict]) -> dict[str, Any]:
    chunks = sorted(chunks, key=lambda c: c["start"])
    q = [v for c in chunks for v in c["q"]]
    first = chunks[0]
    setup = first["state"]["evals"] - first["gibbs_evals"] - first["mh_evals"]

    def s(name: str) -> int:
        return int(sum(c[name] for c in chunks))

    return {
        "sweeps": chunks[-1]["stop"],
        "q": q,
        "evals": s("gibbs_evals") + s("mh_evals"),
        "setup_evals": int(setup),
        "gibbs_evals": s("gibbs_evals"),
        "mh_evals": s("mh_evals"),
        "gibbs": {**_rate(s("gibbs_errors"), s("gibbs_draws")), "early": s("gibbs_early")},
        "mh": {
            **_rate(s("mh_errors"), s("mh_tests")),
            "early": s("mh_early"),
            "accept_rate": s("mh_accepts") / max(s("mh_tests"), 1),
        },
        "cv": _merge_cv(chunks),
        "trace": [t for c in chunks for t in c.get("trace", [])],
        "seconds": float(sum(c["seconds"] for c in chunks)),
        "end_log_pi_tilde": chunks[-1]["state"]["log_pi_tilde"],
    }


def _adjusted_posterior(q: list[int]) -> list[float]:
    counts = np.array([q.count(m) for m in MODELS], dtype=np.float64)
    return (counts / max(counts.sum(), 1.0)).tolist()


def _run_summary(parts: list[dict], log_pi_tilde: np.ndarray | None) -> dict[str, Any]:
    """Fixed-pi~ chains of one sampler: adjusted posterior, ACF and ESS of q, costs."""
    length = min(len(p["q"]) for p in parts)
    Q = np.array([p["q"][:length] for p in parts], dtype=np.float64)
    evals = [p["evals"] for p in parts]
    per_chain_ess = [ess(row[None, :]) for row in Q]
    acfs = [autocorrelation(row) for row in Q]
    adjusted = [_adjusted_posterior(p["q"]) for p in parts]
    pooled = _adjusted_posterior([v for p in parts for v in p["q"]])
    out: dict[str, Any] = {
        "chains": len(parts),
        "sweeps": length,
        "evals": evals,
        "evals_per_sweep": float(np.sum(evals) / (length * len(parts))),
        "ess": per_chain_ess,
        "ess_all_chains": ess(Q) if len(parts) > 1 else per_chain_ess[0],
        "ess_per_eval": [
            (e / n if e is not None else None) for e, n in zip(per_chain_ess, evals, strict=True)
        ],
        "autocorr": acfs,
        "autocorr_mean": _mean_lists([a for a in acfs if a is not None]),
        "adjusted_posterior": adjusted,
        "adjusted_posterior_pooled": pooled,
        "gibbs": _pooled_rate(parts, "gibbs"),
        "mh": _pooled_rate(parts, "mh"),
        "mh_accept_rate": float(np.mean([p["mh"]["accept_rate"] for p in parts])),
        "seconds": float(sum(p["seconds"] for p in parts)),
    }
    if log_pi_tilde is not None:
        log_pi = np.full(len(MODELS), -math.log(len(MODELS)))
        with np.errstate(divide="ignore"):
            # p(q | r) ∝ (pi_q / pi~_q) p~(q | r), p~ from the visit frequencies
            est = log_posterior_estimate(log_pi + np.log(pooled), log_pi_tilde)
        out["log_posterior_q"] = _finite_or_none(est)
        out["log_pi_tilde"] = log_pi_tilde.tolist()
    return out


def _finite_or_none(x: np.ndarray) -> list[float | None]:
    return [float(v) if math.isfinite(v) else None for v in x]


def _mean_lists(lists: list[list[float]]) -> list[float] | None:
    return np.mean(np.array(lists), axis=0).tolist() if lists else None


# Nats (max over q) within which the adaptation's estimate of log p(q | r) counts as arrived.
CONVERGENCE_TOLS = (10.0, 5.0, 2.0)
CONVERGENCE_TOL = 5.0  # the headline one


def first_within(trace: list[list[float]], reference: list[float], tol: float) -> float | None:
    """Likelihood evaluations at which the estimate first comes within ``tol`` nats of
    ``reference`` for every q; None if it never does.

    First hitting, not staying: after arriving, the estimates of the least probable models keep
    fluctuating by a few nats (the adaptation's noise, the same for both samplers), so a
    "stays within" rule would measure that noise rather than the speed of convergence.
    """
    ref = np.asarray(reference, dtype=np.float64)
    for t in trace:
        if float(np.max(np.abs(np.asarray(t[2:]) - ref))) <= tol:
            return float(t[1])
    return None


def arch_summary(out: Path) -> dict[str, Any]:
    """Read the records back into the numbers of 000, Sec. 5.2; works on partial results.

    ``missing`` lists the parts (pilot, adaptation, fixed-run chains) not finished yet; every
    quantity that needs one of them is None.
    """
    out = Path(out)
    settings = read_manifest(out)["settings"]
    if settings.get("experiment") != EXPERIMENT:
        raise ValueError(
            f"{str(out)!r} holds experiment {settings.get('experiment')!r}, not {EXPERIMENT!r}"
        )
    cfg = ArchConfig(**{k: v for k, v in settings.items() if k in _config_fields()})
    records = load_records(out / RECORDS_FILE)
    pilot = next((r for r in records if r.get("kind") == "pilot"), None)
    by_part: dict[str, list[dict]] = {}
    for r in records:
        if r.get("kind") == "chunk":
            by_part.setdefault(r["part"], []).append(r)
    parts = {p: _part_summary(c) for p, c in by_part.items()}
    missing = [] if pilot else ["pilot"]
    for p in _parts(cfg):
        have = parts.get(p, {}).get("sweeps", 0)
        if have < _part_length(cfg, p):
            missing.append(f"{p} ({have}/{_part_length(cfg, p)} sweeps)")
    summary: dict[str, Any] = {
        "experiment": EXPERIMENT,
        "paper_ref": PAPER_REF,
        "config": cfg.to_dict(),
        "complete": not missing,
        "missing": missing,
        "paper": paper_arch(),
        "notes": _notes(cfg),
        "data": pilot["data"] if pilot else None,
        "pilot": _pilot_summary(pilot),
        "samplers": {},
    }
    fixed = None
    if parts.get("adapt/exact", {}).get("sweeps", 0) >= cfg.adapt_iterations:
        fixed = fixed_log_pi_tilde(cfg, by_part["adapt/exact"])
    for s in SAMPLERS:
        summary["samplers"][s] = _sampler_summary(cfg, s, parts, fixed)
    summary["comparison"] = _comparison(summary)
    summary["paper_vs_ours"] = _paper_vs_ours(summary)
    return summary


def _notes(cfg: ArchConfig) -> list[str]:
    """What differs from the paper's experiment, for a reader of the report."""
    notes = [
        f"Simulated data: ARCH({cfg.true_q}) returns with t_{cfg.true_nu:g}(0, 1) innovations; "
        "the paper's 5-minute Shanghai composite index data are not available.",
        "The paper's Appx. C.2 (sampler details) is unavailable: pseudo-priors, adaptation, "
        "SGLD step and control variate are our documented choices.",
    ]
    if cfg.N < PAPER_ARCH["n_data"]:
        notes.append(f"{cfg.N} likelihood terms instead of the paper's ~13,000 points.")
    if cfg.iterations < PAPER_ARCH["iterations"]:
        notes.append(f"{cfg.iterations} sweeps per chain instead of the paper's 1e5.")
    if cfg.control_variate == "parameter":
        notes.append(
            "Control variate: second-order Taylor in the parameters; Eq. 11 in the data space "
            "raises the reward variance on these heavy-tailed returns (measured alongside)."
        )
    return notes


def _config_fields() -> set[str]:
    return {f.name for f in dataclasses.fields(ArchConfig)}


def _pilot_summary(pilot: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if pilot is None:
        return None
    ev = np.array([m["log_evidence"] for m in pilot["models"]])
    return {
        "evals": int(sum(m["evals"] for m in pilot["models"])),
        "seconds": pilot["seconds"],
        "laplace_log_evidence": ev.tolist(),
        "laplace_log_posterior_q": log_posterior_estimate(
            np.full(len(MODELS), -math.log(len(MODELS))), -ev
        ).tolist(),
        "modes": [np.exp(m["mean"]).tolist() for m in pilot["models"]],
    }


def _sampler_summary(
    cfg: ArchConfig, sampler: str, parts: Mapping[str, dict], fixed: np.ndarray | None
) -> dict[str, Any]:
    adapt = parts.get(f"adapt/{sampler}")
    runs = [parts[p] for p in _parts(cfg) if p.startswith(f"run/{sampler}/") and p in parts]
    out: dict[str, Any] = {"adapt": None, "run": None}
    if adapt:
        out["adapt"] = {
            k: adapt[k] for k in ("sweeps", "evals", "setup_evals", "trace", "seconds", "cv")
        }
        out["adapt"]["log_posterior_q"] = log_posterior_estimate(
            np.full(len(MODELS), -math.log(len(MODELS))), np.asarray(adapt["end_log_pi_tilde"])
        ).tolist()
    if runs:
        out["run"] = _run_summary(runs, fixed)
        out["run"]["cv"] = _merge_cv_parts(runs)
    every = [p for p in ([adapt] if adapt else []) + runs]
    out["gibbs"] = _rate(
        sum(p["gibbs"]["errors"] for p in every), sum(p["gibbs"]["n"] for p in every)
    )
    out["mh"] = _rate(sum(p["mh"]["errors"] for p in every), sum(p["mh"]["n"] for p in every))
    out["gibbs"]["early"] = sum(p["gibbs"]["early"] for p in every)
    out["mh"]["early"] = sum(p["mh"]["early"] for p in every)
    out["evals_total"] = sum(p["evals"] + p["setup_evals"] for p in every)
    return out


def _merge_cv_parts(parts: list[dict]) -> dict[str, Any]:
    acc: dict[str, list[float]] = {}
    for p in parts:
        for k, v in p["cv"].items():
            if v["n"]:
                a = acc.setdefault(k, [0.0, 0.0, 0])
                a[0] += v["mean_log10"] * v["n"]
                a[1] += (v["sd_log10"] ** 2 + v["mean_log10"] ** 2) * v["n"]
                a[2] += v["n"]
    return {
        k: {"mean_log10": s / n, "sd_log10": math.sqrt(max(ss / n - (s / n) ** 2, 0.0)), "n": n}
        for k, (s, ss, n) in acc.items()
    }


def _ratio(a: Any, b: Any) -> float | None:
    if a is None or b is None or not b:
        return None
    return float(a) / float(b)


def _convergence_reference(ex: Mapping[str, Any]) -> tuple[list[float] | None, str | None]:
    """The exact sampler's fixed-run estimate of log p(q | r), else its adaptation's end."""
    run_est = (ex.get("run") or {}).get("log_posterior_q")
    if run_est and all(v is not None for v in run_est):
        return run_est, "exact fixed runs"
    adapt_est = (ex.get("adapt") or {}).get("log_posterior_q")
    return (adapt_est, "exact adaptation end") if adapt_est else (None, None)


def _comparison(summary: dict[str, Any]) -> dict[str, Any]:
    ex, sub = summary["samplers"]["exact"], summary["samplers"]["sub"]
    reference, source = _convergence_reference(ex)
    convergence = []
    for tol in CONVERGENCE_TOLS:
        row: dict[str, Any] = {"tol_nats": tol}
        for name, s in (("exact", ex), ("sub", sub)):
            trace = (s.get("adapt") or {}).get("trace") or []
            row[name] = first_within(trace, reference, tol) if reference else None
        row["speedup"] = _ratio(row["exact"], row["sub"])
        convergence.append(row)
    headline = next(r for r in convergence if r["tol_nats"] == CONVERGENCE_TOL)
    ex_ad, sub_ad = ex.get("adapt"), sub.get("adapt")
    ex_run, sub_run = ex.get("run"), sub.get("run")
    out: dict[str, Any] = {
        "convergence_reference": reference,
        "convergence_reference_source": source,
        "convergence": convergence,
        "convergence_speedup": headline["speedup"],
        "adapt_evals_ratio": None,
        "evals_per_sweep_ratio": None,
        "ess_ratio": None,
        "ess_per_eval_ratio": None,
        "ess_all_chains_ratio": None,
        "ess_all_chains_per_eval_ratio": None,
    }
    if ex_ad and sub_ad:
        out["adapt_evals_ratio"] = _ratio(
            ex_ad["evals"] / ex_ad["sweeps"], sub_ad["evals"] / sub_ad["sweeps"]
        )
    if ex_run and sub_run:
        out["evals_per_sweep_ratio"] = _ratio(ex_run["evals_per_sweep"], sub_run["evals_per_sweep"])
        out["ess_ratio"] = _ratio(_mean_or_none(sub_run["ess"]), _mean_or_none(ex_run["ess"]))
        out["ess_per_eval_ratio"] = _ratio(
            _mean_or_none(sub_run["ess_per_eval"]), _mean_or_none(ex_run["ess_per_eval"])
        )
        # Pooled over chains, ESS also pays for disagreement between chains (bulk ESS uses the
        # between-chain variance); with sticky Carlin & Chib chains the two can differ a lot.
        ess_ex, ess_sub = ex_run["ess_all_chains"], sub_run["ess_all_chains"]
        out["ess_all_chains_ratio"] = _ratio(ess_sub, ess_ex)
        if ess_ex is not None and ess_sub is not None:
            out["ess_all_chains_per_eval_ratio"] = _ratio(
                ess_sub / sum(sub_run["evals"]), ess_ex / sum(ex_run["evals"])
            )
    return out


def _mean_or_none(values: list[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return float(np.mean(vals)) if vals else None


def _paper_vs_ours(summary: dict[str, Any]) -> list[dict[str, Any]]:
    sub, comp, cfg = summary["samplers"]["sub"], summary["comparison"], summary["config"]
    cv = (sub.get("adapt") or {}).get("cv", {})

    def cv_mean(name: str) -> float | None:
        return (cv.get(name) or {}).get("mean_log10")

    data = summary.get("data") or {}
    return [
        {"quantity": "data points", "paper": PAPER_ARCH["n_data"], "ours": data.get("n_returns")},
        {"quantity": "iterations per chain", "paper": 100000, "ours": cfg["iterations"]},
        {"quantity": "Racing Gibbs error rate", "paper": 4e-4, "ours": sub["gibbs"]["rate"]},
        {"quantity": "Racing MH error rate", "paper": 2e-3, "ours": sub["mh"]["rate"]},
        {
            "quantity": f"convergence speed-up, evals exact / Sub ({CONVERGENCE_TOL:g} nats)",
            "paper": 3.0,
            "ours": comp["convergence_speedup"],
        },
        {
            "quantity": "likelihood evals per sweep, exact / Sub",
            "paper": None,
            "ours": comp["evals_per_sweep_ratio"],
        },
        {"quantity": "ESS of q per chain, Sub / exact", "paper": "> 2", "ours": comp["ess_ratio"]},
        {
            "quantity": "ESS of q per likelihood eval, Sub / exact",
            "paper": None,
            "ours": comp["ess_per_eval_ratio"],
        },
        {
            "quantity": "ESS of q, all chains pooled, Sub / exact",
            "paper": "> 2",
            "ours": comp["ess_all_chains_ratio"],
        },
        {
            "quantity": "ESS of q per likelihood eval, all chains pooled, Sub / exact",
            "paper": None,
            "ours": comp["ess_all_chains_per_eval_ratio"],
        },
        {
            "quantity": "variance reduction, log10, pairwise (control variate in use)",
            "paper": "2 to 3",
            "ours": cv_mean(f"{cfg['control_variate']}_pairwise"),
        },
        {
            "quantity": "variance reduction, log10, per arm (control variate in use)",
            "paper": "2 to 3",
            "ours": cv_mean(f"{cfg['control_variate']}_marginal"),
        },
        {
            "quantity": "variance reduction, log10, pairwise, Eq. 11 (data space)",
            "paper": "2 to 3",
            "ours": cv_mean("data_pairwise"),
        },
        {
            "quantity": "variance reduction, log10, per arm, Eq. 11 (data space)",
            "paper": "2 to 3",
            "ours": cv_mean("data_marginal"),
        },
    ]


# ---------------------------------------------------------------------------------------------
# Figures
# ---------------------------------------------------------------------------------------------

_STYLE = {"exact": "-", "sub": "--"}


def arch_figures(summary: dict[str, Any]) -> dict[str, Any]:
    """Figures of 000, Fig. 2(b)-(d) from a summary: log p(q|r) vs likelihood evaluations during
    adaptation, the adjusted posterior of q, and the autocorrelation of q (solid: exact,
    dashed: Sub). Parts not yet run are simply absent from the plots."""
    return {
        "log_posterior_vs_evals": _fig_convergence(summary),
        "adjusted_posterior": _fig_adjusted(summary),
        "autocorrelation": _fig_acf(summary),
    }


def _new_figure(title: str) -> tuple[Any, Any]:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.0, 4.0), layout="constrained")
    ax = fig.add_subplot()
    ax.set_title(title, fontsize=10)
    return fig, ax


def _legend(ax: Any, **kwargs: Any) -> None:
    # Partial results may have nothing labelled yet; matplotlib would warn about an empty legend.
    if ax.get_legend_handles_labels()[0]:
        ax.legend(**kwargs)


def _fig_convergence(summary: dict[str, Any]) -> Any:
    fig, ax = _new_figure("Estimated log p(q | r) during adaptation (simulated data)")
    colours = [f"C{i}" for i in range(len(MODELS))]
    for name, s in summary["samplers"].items():
        trace = (s.get("adapt") or {}).get("trace") or []
        if not trace:
            continue
        T = np.asarray(trace)
        for i, q in enumerate(MODELS):
            label = f"q={q}" if name == "exact" else None
            ax.plot(T[:, 1], T[:, 2 + i], _STYLE[name], color=colours[i], lw=1, label=label)
    reference = summary.get("comparison", {}).get("convergence_reference") or []
    for i, v in enumerate(reference):
        if v is not None:
            ax.axhline(v, color=colours[i], lw=0.6, ls=":")
    ax.set_xscale("log")
    ax.set_xlabel("likelihood evaluations")
    ax.set_ylabel("log p(q | r), normalised pi_q / pi~_q")
    _legend(ax, fontsize=7, ncol=2, title="solid exact, dashed Sub", title_fontsize=7)
    return fig


def _fig_adjusted(summary: dict[str, Any]) -> Any:
    fig, ax = _new_figure("Adjusted posterior p~(q | r), fixed pi~")
    x = np.arange(len(MODELS))
    for shift, (name, s) in zip((-0.2, 0.2), summary["samplers"].items(), strict=False):
        run = s.get("run")
        if not run:
            continue
        ax.bar(x + shift, run["adjusted_posterior_pooled"], width=0.4, alpha=0.6, label=name)
        for chain in run["adjusted_posterior"]:
            ax.plot(x + shift, chain, "k.", ms=3)
    ax.axhline(1.0 / len(MODELS), color="grey", lw=0.8, ls=":")
    ax.set_xticks(x, [str(q) for q in MODELS])
    ax.set_xlabel("q")
    ax.set_ylabel("frequency (dots: single chains)")
    _legend(ax, fontsize=8)
    return fig


def _fig_acf(summary: dict[str, Any]) -> Any:
    fig, ax = _new_figure("Autocorrelation of q")
    for name, s in summary["samplers"].items():
        acf = (s.get("run") or {}).get("autocorr_mean")
        if acf:
            ax.plot(np.arange(len(acf)), acf, _STYLE[name], color="k", label=name)
    ax.axhline(0.0, color="grey", lw=0.8)
    ax.set_xlabel("lag")
    ax.set_ylabel("autocorrelation (mean over chains)")
    _legend(ax, fontsize=8)
    return fig
