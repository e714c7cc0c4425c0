"""Targets from a data model: a Student-t location model and control variates (000, Sec. 3.4).

For a Bayesian model whose factors are likelihood terms, f_n(i) = p(y_n | theta_i), the reward
l[i, n] = log p(y_n | theta_i) is replaced by the residual

    r[i, n] = l[i, n] - h[i, n] + E_n[h[i, n]],

where h is the second-order Taylor expansion of log p(y | theta_i) in the data y around
y_hat = mean(y) (Eq. 11). E_n[h] needs only the first two empirical moments of y, so it costs
O(D) once. The residuals have the same sum over n as the rewards (exactly, up to rounding), so
the target distribution is unchanged, while their variance, and with it the difficulty of the
race, drops when h tracks l. The result is an ordinary :class:`DiscreteFactorTarget`, so every
racing algorithm, built-in or plugin, uses control variates without change.

Control variates are a target transform, so they live with the targets: the catalog's
``cv-studentt`` problem is built here, and the harness depends on no implementation.
``implementations.racing.control_variates`` re-exports these names.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from harness.targets.discrete import DiscreteFactorTarget


@dataclass(frozen=True)
class DataModel:
    """A discrete parameter theta_i, i < D, with data y (N, d) and per-datum log-likelihoods.

    ``log_lik(y, theta)`` -> (N,); ``grad(y_hat, theta)`` -> (d,) and ``hess(y_hat, theta)``
    -> (d, d) are derivatives of log p(y | theta) with respect to the data y.
    """

    y: np.ndarray
    thetas: np.ndarray
    log_lik: Callable[[np.ndarray, float], np.ndarray]
    grad: Callable[[np.ndarray, float], np.ndarray]
    hess: Callable[[np.ndarray, float], np.ndarray]
    log_prior: np.ndarray
    name: str = "model"


def _data_matrix(y: np.ndarray) -> np.ndarray:
    y = np.asarray(y, dtype=np.float64)
    return y[:, None] if y.ndim == 1 else y


def reward_matrix(model: DataModel) -> np.ndarray:
    """l[i, n] = log p(y_n | theta_i) (000, Eq. 3 without the Gumbel offset)."""
    return np.array([model.log_lik(model.y, t) for t in model.thetas])


def control_variate_rewards(model: DataModel) -> tuple[np.ndarray, np.ndarray]:
    """(rewards, residuals) of Eq. 11 with y_hat = mean(y) and E[h] from the moments of y."""
    Y = _data_matrix(model.y)
    y_hat = Y.mean(axis=0)
    dev = Y - y_hat
    cov = dev.T @ dev / Y.shape[0]
    rewards = reward_matrix(model)
    residuals = np.empty_like(rewards)
    for i, theta in enumerate(model.thetas):
        at = model.log_lik(y_hat[None, :] if Y.shape[1] > 1 else y_hat, theta)
        l0 = float(np.ravel(at)[0])
        g = np.atleast_1d(model.grad(y_hat, theta))
        H = np.atleast_2d(model.hess(y_hat, theta))
        h = l0 + dev @ g + 0.5 * np.einsum("nj,jk,nk->n", dev, H, dev)
        expected = l0 + 0.5 * float(np.trace(H @ cov))  # E[dev] = 0 at y_hat = mean(y)
        residuals[i] = rewards[i] - h + expected
    return rewards, residuals


def model_target(model: DataModel, control_variates: bool) -> DiscreteFactorTarget:
    """The posterior over theta_i as a racing target, with or without control variates.

    ``meta["variance_reduction"]`` is the mean over arms of var(l_i) / var(r_i).
    """
    rewards, residuals = control_variate_rewards(model)
    ratio = float(np.mean(rewards.var(axis=1) / np.maximum(residuals.var(axis=1), 1e-300)))
    factors = residuals if control_variates else rewards
    suffix = "-cv" if control_variates else ""
    return DiscreteFactorTarget(
        factors,
        np.asarray(model.log_prior, dtype=np.float64),
        name=f"{model.name}{suffix}",
        meta={"family": "000 Sec. 3.4", "variance_reduction": ratio, "control_variates": True}
        if control_variates
        else {"family": "000 Sec. 3.4", "control_variates": False},
    )


def studentt_location_model(
    N: int, D: int, nu: float, rng: np.random.Generator, name: str | None = None
) -> DataModel:
    """y_n = 1 + t_nu noise; theta on D grid points around the truth; uniform prior.

    log p(y | theta) = -(nu + 1)/2 log1p(z^2 / nu) with z = y - theta (constants dropped);
    d/dy = -(nu + 1) z / (nu + z^2), d2/dy2 = -(nu + 1)(nu - z^2) / (nu + z^2)^2.
    """
    y = 1.0 + rng.standard_t(nu, size=N)
    sd = np.sqrt((nu + 3.0) / ((nu + 1.0) * N))
    thetas = 1.0 + sd * np.linspace(-3.0, 3.0, D)

    def log_lik(data: np.ndarray, theta: float) -> np.ndarray:
        z = np.ravel(data) - theta
        return -0.5 * (nu + 1.0) * np.log1p(z * z / nu)

    def grad(y_hat: np.ndarray, theta: float) -> np.ndarray:
        z = np.ravel(y_hat) - theta
        return -(nu + 1.0) * z / (nu + z * z)

    def hess(y_hat: np.ndarray, theta: float) -> np.ndarray:
        z = float(np.ravel(y_hat)[0]) - theta
        return np.array([[-(nu + 1.0) * (nu - z * z) / (nu + z * z) ** 2]])

    return DataModel(
        y, thetas, log_lik, grad, hess, np.zeros(D), name or f"studentt-grid-D{D}-N{N}"
    )
