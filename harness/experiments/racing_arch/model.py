"""The ARCH model of 000_26bed7cc1ef3ab92.txt, Sec. 5.2: simulated data, likelihood terms,
priors and the Gaussian fits of each model's posterior.

Model: r_t = sigma_t z_t, z_t ~ t_nu(0, 1) (unit scale, as written), sigma_t^2 = alpha_0 +
sum_{i=1..q} alpha_i r_{t-i}^2, q ~ Discrete(pi) uniform over Q = {5, 10, ..., 30}, alpha_i,
nu ~ Gamma(1, 1). Every model conditions on the first 30 returns, so all of them explain the
same N terms and one reward matrix serves the Gibbs step of q. Parameters live on the log scale,
phi = log(alpha_0..alpha_q, nu).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.linalg import solve_triangular
from scipy.optimize import minimize
from scipy.special import digamma

from harness.experiments.racing_arch.settings import QMAX, SIM_BURN_IN, ArchConfig


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


@functools.lru_cache(maxsize=4)
def config_data(config: ArchConfig) -> ArchData:
    """The simulated data of ``config`` (fixed by its seed; made once per process)."""
    return arch_data(simulate_returns(config.N, config.true_alpha, config.true_nu, config.seed))


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


def t_const(nu: float) -> float:
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
    return t_const(nu) - 0.5 * np.log(s) - 0.5 * (nu + 1.0) * np.log1p(u / (nu * s)), s


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


def full_loglik_grad(data: ArchData, q: int, phi: np.ndarray) -> tuple[float, np.ndarray]:
    """Full-data log-likelihood and its gradient in phi (chain rule psi = exp(phi))."""
    psi = np.exp(phi)
    terms, G = term_grads(psi, q, data.u, data.X)
    return float(terms.sum()), psi * G.sum(axis=0)


# ---------------------------------------------------------------------------------------------
# Gaussian fits of p(phi | r, q): pseudo-priors, preconditioners, control-variate anchors
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class ModelFit:
    """Gaussian approximation N(mean, cov) of p(phi | r, q) on the log scale, from a pilot fit.

    ``laplace_fit`` gives the Laplace one, ``chain.pilot_fit`` the moment-matched one used as
    (a) the Carlin & Chib pseudo-prior of model q, (b) the preconditioner of its Langevin
    proposals, (c) the anchor psi_hat = exp(mean) of the parameter-space control variate.
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


def fit_to_record(f: ModelFit) -> dict[str, Any]:
    return {
        "q": f.q,
        "mean": f.mean.tolist(),
        "cov": f.cov.tolist(),
        "log_evidence": f.log_evidence,
        "evals": f.evals,
        "pilot_accept_rate": f.pilot_accept_rate,
    }


def fit_from_record(rec: Mapping[str, Any]) -> ModelFit:
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
