"""Control variates for the ARCH rewards (000_26bed7cc1ef3ab92.txt, Sec. 3.4, Eq. 11).

A reward l_n = log p(r_t | .) is raced as the residual l_n - h_n + E_n[h]: the same sum over the
N terms, a smaller variance when h tracks l. Two choices of h:
- "parameter" (used): a second-order Taylor expansion of every term in the model's parameters
  around the pilot mean (``ParameterAnchor``);
- "data": Eq. 11 as written, in the data y_n around their mean (``data_cv``). Measured at every
  Sub Gibbs step, on t_5 returns it RAISES the reward variance (by 1.5-2 orders of magnitude,
  per arm and per pair): the quadratic in r_t^2 cannot follow log(1 + r_t^2 / (nu sigma_t^2))
  over heavy-tailed data.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import polygamma

from harness.experiments.racing_arch.model import ArchData, ModelFit, t_const, term_grads


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


def variance_factors(L: np.ndarray, R: np.ndarray) -> tuple[float, float]:
    """log10 of the median variance ratio raw / residual: per arm, and per pair of arms."""
    marg = np.var(L, axis=1) / np.var(R, axis=1)
    i, j = np.triu_indices(L.shape[0], 1)
    pair = np.var(L[i] - L[j], axis=1) / np.var(R[i] - R[j], axis=1)
    return float(np.log10(np.median(marg))), float(np.log10(np.median(pair)))
