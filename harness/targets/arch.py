"""The ARCH model of 000_26bed7cc1ef3ab92.txt, Sec. 5.2: index returns (and a simulated stand-in),
likelihood terms and their derivatives, priors, Gaussian fits of each model's posterior, and
second-order Taylor surrogates of the terms (for control variates, 000 Sec. 3.4).

r_t = sigma_t z_t, z_t ~ t_nu(0, 1) (unit scale, as written), sigma_t^2 = alpha_0 +
sum_{i=1..q} alpha_i r_{t-i}^2, alpha_i, nu ~ Gamma(1, 1). Every order q conditions on the first
:data:`QMAX` returns, so all models explain the same N terms (one reward matrix serves a Gibbs
draw of q). Parameters live on the log scale, phi = log(alpha_0..alpha_q, nu); psi = exp(phi).

The paper's 5-minute Shanghai composite returns are not available: :func:`index_returns` gives
daily returns of a stock index shipped inside the ``arch`` package (offline), and
:func:`simulate_returns` draws a series from the model itself.
"""

from __future__ import annotations

import hashlib
import importlib
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.linalg import solve_triangular
from scipy.optimize import minimize
from scipy.special import digamma, polygamma

#: The paper's candidate orders q; every model conditions on the first QMAX returns.
MODELS = (5, 10, 15, 20, 25, 30)
QMAX = MODELS[-1]
SIM_BURN_IN = 1000
#: Daily prices 1999-01-04..2018-12-31 that the ``arch`` package ships (``arch.data``): the
#: stand-ins for 000's index; 5,031 prices, so 5,030 returns and 5,000 terms after QMAX.
INDEXES = {"nasdaq": "NASDAQ Composite", "sp500": "S&P 500"}
INDEX_RETURNS = 5030
#: The requirement that ships them (its data files have not changed within a major version).
ARCH_REQUIREMENT = "arch>=8.0,<9"


class MissingPackage(ImportError, RuntimeError):
    """An optional package is not installed (a RuntimeError too, so the CLI says it in one
    line)."""


@dataclass(frozen=True, eq=False)
class IndexReturns:
    """Daily log returns of an index's adjusted close, oldest first, and where they came from."""

    name: str
    returns: np.ndarray
    first: str
    last: str
    source: str

    def describe(self) -> dict[str, Any]:
        """What a record keeps of them: source, dates and a digest (the series, in short)."""
        r = self.returns
        return {
            "simulated": False,
            "source": self.source,
            "first": self.first,
            "last": self.last,
            "n_returns": int(r.size),
            "mean": float(r.mean()),
            "std": float(r.std()),
            "sha256": hashlib.sha256(r.tobytes()).hexdigest(),
        }


def index_returns(name: str, n: int | None = None) -> IndexReturns:
    """The last ``n`` (all when None) daily log returns log P_t - log P_{t-1} of the adjusted
    close of index ``name`` (a key of :data:`INDEXES`), read from the ``arch`` package's
    bundled file (no network).

    Reading of 000 (000_26bed7cc1ef3ab92.txt, Sec. 5.2), which names "the return r_t of stock
    price series" and no unit: the log return itself, as a fraction (not in percent) and not
    demeaned (the model has no mean term; the daily mean is under 1/70 of the sd). Only the
    Gamma(1, 1) prior on alpha_0 sees the unit: with r_t of order 1e-2 here, and 1e-3 for
    5-minute returns, alpha_0 is of order 1e-4 or less and that prior nearly flat in both; in
    percent it would be of order 0.1 to 1 and the prior would inform it.
    """
    if name not in INDEXES:
        raise ValueError(f"index {name!r} is invalid; valid: {', '.join(INDEXES)}")
    try:
        module = importlib.import_module(f"arch.data.{name}")
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] != "arch":
            raise
        raise MissingPackage(
            f"the {INDEXES[name]} returns need the arch package: pip install "
            f"'{ARCH_REQUIREMENT}' (racing-arch runs without it at data=simulated, variant=none)"
        ) from None
    frame = module.load()
    prices = frame["Adj Close"].to_numpy(dtype=np.float64)
    r = np.diff(np.log(prices))
    if not np.all(np.isfinite(r)):
        raise ValueError(f"{name}: the adjusted close has missing or non-positive prices")
    dates = frame.index[1:]
    start = 0 if n is None else r.size - n
    if not 0 <= start < r.size:
        raise ValueError(f"{name}: {n} returns asked; valid: 1..{r.size}")
    r = r[start:]
    r.setflags(write=False)
    version = importlib.import_module("arch").__version__
    source = f"{INDEXES[name]}, daily adjusted close (arch.data.{name}, arch {version})"
    return IndexReturns(name, r, str(dates[start].date()), str(dates[-1].date()), source)


@dataclass(frozen=True, eq=False)
class ArchData:
    """Returns and the design of the N modelled terms t = QMAX+1..QMAX+N.

    u[n] = r_t^2 and X[n] = (1, r_{t-1}^2, ..., r_{t-QMAX}^2), so sigma_t^2 = X[n, :q+1] @ alpha.
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
    """N + QMAX returns of ARCH(q) with t_nu(0, 1) innovations, after a dropped burn-in."""
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


def t_const(nu: float) -> float:
    return math.lgamma((nu + 1.0) / 2.0) - math.lgamma(nu / 2.0) - 0.5 * math.log(nu * math.pi)


def term_loglik(
    psi: np.ndarray, q: int, u: np.ndarray, X: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """log p(r_t | r_{t-1..t-q}, psi) of each row, and sigma_t^2 (psi = (alpha_0..alpha_q, nu)).

    log t_nu(r / sigma) - log sigma = c(nu) - 1/2 log s - (nu + 1)/2 log(1 + u / (nu s)).
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


def log_prior(phi: np.ndarray) -> float:
    """Gamma(1, 1) priors on alpha_i and nu, as densities of phi = log(psi) (Jacobian included)."""
    return float(np.sum(phi - np.exp(phi)))


def log_prior_grad(phi: np.ndarray) -> np.ndarray:
    return 1.0 - np.exp(phi)


# The target is truncated to this box of phi: the prior puts mass below 1e-17 outside it, and it
# keeps exp(phi) finite when a noisy gradient throws a proposal far away (its density is zero).
PHI_BOX = (-40.0, math.log(40.0))


def in_support(phi: np.ndarray) -> bool:
    return bool(np.all(phi >= PHI_BOX[0]) and np.all(phi <= PHI_BOX[1]))


def full_loglik_grad(data: ArchData, q: int, phi: np.ndarray) -> tuple[float, np.ndarray]:
    """Full-data log-likelihood and its gradient in phi (chain rule psi = exp(phi))."""
    psi = np.exp(phi)
    terms, G = term_grads(psi, q, data.u, data.X)
    return float(terms.sum()), psi * G.sum(axis=0)


def model_terms(data: ArchData, phis: Sequence[np.ndarray]) -> tuple[np.ndarray, list[np.ndarray]]:
    """The terms l[j, n] of every model j of MODELS at ``phis[j]``, and each one's sigma^2."""
    out = [term_loglik(np.exp(phi), MODELS[j], data.u, data.X) for j, phi in enumerate(phis)]
    return np.array([terms for terms, _ in out]), [s for _, s in out]


@dataclass(frozen=True, eq=False)
class ModelFit:
    """A Gaussian approximation N(mean, cov) of p(phi | r, q) on the log scale; ``evals`` counts
    the likelihood terms evaluated to make it."""

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
    """MAP by L-BFGS and the Hessian there, with the Laplace log evidence."""
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


def gaussian_log_density(fit: ModelFit, phi: np.ndarray) -> float:
    z = solve_triangular(fit.chol, phi - fit.mean, lower=True)
    log_det = float(np.log(np.diag(fit.chol)).sum())
    return -0.5 * float(z @ z) - log_det - 0.5 * fit.dim * math.log(2 * math.pi)


# Second-order Taylor surrogates h_n of the terms, for control variates (000, Sec. 3.4, Eq. 11):
# in the parameters around a fit's mean, and in the data y_n around their mean (Eq. 11).


@dataclass(frozen=True, eq=False)
class ParameterAnchor:
    """Second-order Taylor expansion of every term of one model around psi_hat = exp(mean).

    h_n(psi) = l_n + G_n . d + 1/2 d^T H_n d with d = psi - psi_hat; H_n has the rank-2
    structure of ``term_curvatures``, so h_n costs O(q), and E_n[h] costs O(q^2) from sums kept
    once.
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


def param_cv(
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


def param_cv_grad(
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


def data_cv(
    data: ArchData, q: int, psi: np.ndarray, s: np.ndarray, rows: Any
) -> tuple[np.ndarray, float]:
    """(h_n at ``rows``, E_n[h]) of 000, Eq. 11: second-order Taylor in y_n around its mean.

    y_n = (r_t^2, r_{t-1}^2, ..., r_{t-30}^2). A term depends on y only through u = r_t^2 and
    s = alpha_0 + alpha . (lags), linear in y, so Eq. 11's g and H reduce to derivatives in
    (u, s): f = (k - 1/2) log s - k log(nu s + u) + const, k = (nu + 1)/2. Over heavy-tailed
    returns a quadratic in r_t^2 cannot follow log(1 + r_t^2 / (nu s)): it may raise the variance.
    """
    nu = float(psi[q + 1])
    k = 0.5 * (nu + 1.0)
    a = psi[1 : q + 1]
    u0 = float(data.y_mean[0])
    s0 = float(psi[0] + a @ data.y_mean[1 : q + 1])
    den = nu * s0 + u0
    l0 = t_const(nu) - 0.5 * math.log(s0) - k * math.log1p(u0 / (nu * s0))
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


def control_variate(
    kind: str, anchor: ParameterAnchor, data: ArchData, psi: np.ndarray, s: np.ndarray, rows: Any
) -> tuple[np.ndarray | float, float]:
    """(h_n at ``rows``, E_n[h]) of model ``anchor.q``'s control variate ``kind`` (0 for "none")."""
    if kind == "parameter":
        return param_cv(anchor, data, psi, rows)
    if kind == "data":
        return data_cv(data, anchor.q, psi, s, rows)
    return 0.0, 0.0
