"""The per-datum likelihood and bound kernels of the GLM posteriors (``harness.targets.glm``):
plain loops over floats and arrays with a model code, so one source runs as the NumPy reference
and compiles with ``numba.njit``. Each kernel ``f`` has its twin ``f_nb = njit(f)``, equal to the
last bit (tested); helpers they call are ``register_jitable``. Models and bounds: notes-firefly.md
Sec. 2; the collapsed sum of all log bounds: Sec. 4.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from numba import njit
from numba.extending import register_jitable

LOGISTIC, SOFTMAX, ROBUST = 0, 1, 2


#: Subtracted from every bound's constant, so log L - log B >= EPS (notes Sec. 1).
EPS = 1e-6


# -- scalar helpers (NumPy reference in Python, inlined when a kernel is compiled) -------------


@register_jitable
def _dot(X: np.ndarray, n: int, theta: np.ndarray, offset: int) -> float:
    """x_n . theta[offset : offset + P], summed left to right."""
    s = 0.0
    for p in range(X.shape[1]):
        s += X[n, p] * theta[offset + p]
    return s


@register_jitable
def log_sigmoid(y: float) -> float:
    if y >= 0.0:
        return -math.log1p(math.exp(-y))
    return y - math.log1p(math.exp(y))


@register_jitable
def sigmoid_neg(y: float) -> float:
    """sigmoid(-y) = 1 / (1 + e^y) without overflow."""
    if y >= 0.0:
        e = math.exp(-y)
        return e / (1.0 + e)
    return 1.0 / (1.0 + math.exp(y))


@register_jitable
def _logits(X: np.ndarray, n: int, theta: np.ndarray, y: np.ndarray) -> None:
    """y = Theta x_n, Theta = theta.reshape(K, P), K = y.size."""
    P = X.shape[1]
    for k in range(y.size):
        y[k] = _dot(X, n, theta, k * P)


@register_jitable
def _logsumexp(y: np.ndarray) -> float:
    m = y[0]
    for k in range(1, y.size):
        m = max(m, y[k])
    s = 0.0
    for k in range(y.size):
        s += math.exp(y[k] - m)
    return m + math.log(s)


@register_jitable
def log_l_tilde(log_lik: float, log_bound: float) -> float:
    """log(L/B - 1) = gap + log(-expm1(-gap)), gap = log L - log B >= EPS (notes Sec. 1)."""
    gap = log_lik - log_bound
    return gap + math.log(-math.expm1(-gap))


# -- per-datum kernels --------------------------------------------------------------------------


@register_jitable
def log_lik_one(
    model: int, X: np.ndarray, t: np.ndarray, nu: float, theta: np.ndarray, n: int, y: np.ndarray
) -> float:
    """log L_n(theta) (notes Sec. 2); ``y`` is scratch space of length K."""
    if model == LOGISTIC:
        return log_sigmoid((2.0 * t[n] - 1.0) * _dot(X, n, theta, 0))
    if model == SOFTMAX:
        _logits(X, n, theta, y)
        return y[int(t[n])] - _logsumexp(y)
    r = t[n] - _dot(X, n, theta, 0)
    return -0.5 * (nu + 1.0) * math.log1p(r * r / nu)


@register_jitable
def log_bound_one(
    model: int,
    X: np.ndarray,
    t: np.ndarray,
    bq: np.ndarray,
    bl: np.ndarray,
    bc: np.ndarray,
    theta: np.ndarray,
    n: int,
    y: np.ndarray,
) -> float:
    """log B_n(theta): bq y^2 + bl y + bc in y (logistic) or r (robust); y_t - y'Ay/2 + bl'y +
    bc in y = Theta x_n (softmax, bq unused) (notes Sec. 2). ``y``: scratch of length K."""
    if model == SOFTMAX:
        K = y.size
        _logits(X, n, theta, y)
        total, squares, linear = 0.0, 0.0, 0.0
        for k in range(K):
            total += y[k]
            squares += y[k] * y[k]
            linear += bl[n, k] * y[k]
        # y'Ay / 2 = (sum y_k^2 - (sum y_k)^2 / K) / 4
        return y[int(t[n])] - 0.25 * (squares - total * total / K) + linear + bc[n]
    if model == LOGISTIC:
        v = (2.0 * t[n] - 1.0) * _dot(X, n, theta, 0)
    else:
        v = t[n] - _dot(X, n, theta, 0)
    return bq[n] * v * v + bl[n, 0] * v + bc[n]


@register_jitable
def grad_log_lik_one(
    model: int,
    X: np.ndarray,
    t: np.ndarray,
    nu: float,
    theta: np.ndarray,
    n: int,
    y: np.ndarray,
    out: np.ndarray,
    row: int,
) -> None:
    """out[row] = grad_theta log L_n(theta), length D; ``y``: scratch of length K."""
    P = X.shape[1]
    if model == SOFTMAX:
        _logits(X, n, theta, y)
        lse = _logsumexp(y)
        label = int(t[n])
        for k in range(y.size):
            w = (1.0 if k == label else 0.0) - math.exp(y[k] - lse)
            for p in range(P):
                out[row, k * P + p] = w * X[n, p]
        return
    if model == LOGISTIC:
        s = 2.0 * t[n] - 1.0
        w = s * sigmoid_neg(s * _dot(X, n, theta, 0))
    else:
        r = t[n] - _dot(X, n, theta, 0)
        w = (nu + 1.0) * r / (nu + r * r)
    for p in range(P):
        out[row, p] = w * X[n, p]


@register_jitable
def grad_log_bound_one(
    model: int,
    X: np.ndarray,
    t: np.ndarray,
    bq: np.ndarray,
    bl: np.ndarray,
    bc: np.ndarray,
    theta: np.ndarray,
    n: int,
    y: np.ndarray,
    out: np.ndarray,
    row: int,
) -> None:
    """out[row] = grad_theta log B_n(theta), length D; ``y``: scratch of length K."""
    P = X.shape[1]
    if model == SOFTMAX:
        K = y.size
        _logits(X, n, theta, y)
        total = 0.0
        for k in range(K):
            total += y[k]
        label = int(t[n])
        for k in range(K):
            # d/dy_k: [k = t] - (Ay)_k + bl_k, (Ay)_k = (y_k - mean y) / 2
            w = (1.0 if k == label else 0.0) - 0.5 * (y[k] - total / K) + bl[n, k]
            for p in range(P):
                out[row, k * P + p] = w * X[n, p]
        return
    if model == LOGISTIC:
        s = 2.0 * t[n] - 1.0
        v = s * _dot(X, n, theta, 0)
        w = (2.0 * bq[n] * v + bl[n, 0]) * s
    else:
        v = t[n] - _dot(X, n, theta, 0)
        w = -(2.0 * bq[n] * v + bl[n, 0])  # dr/dtheta = -x
    for p in range(P):
        out[row, p] = w * X[n, p]


@register_jitable
def log_lik_terms(
    model: int,
    X: np.ndarray,
    t: np.ndarray,
    nu: float,
    theta: np.ndarray,
    idx: np.ndarray,
    out: np.ndarray,
) -> None:
    """out[i] = log L_n(theta) for n = idx[i] (notes Sec. 2)."""
    y = np.empty(theta.size // X.shape[1])
    for i in range(idx.size):
        out[i] = log_lik_one(model, X, t, nu, theta, idx[i], y)


@register_jitable
def log_bound_terms(
    model: int,
    X: np.ndarray,
    t: np.ndarray,
    bq: np.ndarray,
    bl: np.ndarray,
    bc: np.ndarray,
    theta: np.ndarray,
    idx: np.ndarray,
    out: np.ndarray,
) -> None:
    """out[i] = log B_n(theta) for n = idx[i] (:func:`log_bound_one`)."""
    y = np.empty(theta.size // X.shape[1])
    for i in range(idx.size):
        out[i] = log_bound_one(model, X, t, bq, bl, bc, theta, idx[i], y)


@register_jitable
def grad_log_lik_terms(
    model: int,
    X: np.ndarray,
    t: np.ndarray,
    nu: float,
    theta: np.ndarray,
    idx: np.ndarray,
    out: np.ndarray,
) -> None:
    """out[i] = grad_theta log L_n(theta), a row of length D, for n = idx[i]."""
    y = np.empty(theta.size // X.shape[1])
    for i in range(idx.size):
        grad_log_lik_one(model, X, t, nu, theta, idx[i], y, out, i)


@register_jitable
def grad_log_bound_terms(
    model: int,
    X: np.ndarray,
    t: np.ndarray,
    bq: np.ndarray,
    bl: np.ndarray,
    bc: np.ndarray,
    theta: np.ndarray,
    idx: np.ndarray,
    out: np.ndarray,
) -> None:
    """out[i] = grad_theta log B_n(theta), a row of length D, for n = idx[i]."""
    y = np.empty(theta.size // X.shape[1])
    for i in range(idx.size):
        grad_log_bound_one(model, X, t, bq, bl, bc, theta, idx[i], y, out, i)


# -- whole-data and collapsed kernels ------------------------------------------------------------


@register_jitable
def log_lik_total(model: int, X: np.ndarray, t: np.ndarray, nu: float, theta: np.ndarray) -> float:
    """sum_n log L_n(theta) over all N data, summed in order n = 0, 1, ... (O(N D))."""
    N = X.shape[0]
    terms = np.empty(N)
    log_lik_terms(model, X, t, nu, theta, np.arange(N), terms)
    s = 0.0
    for n in range(N):
        s += terms[n]
    return s


@register_jitable
def grad_log_lik_total(
    model: int, X: np.ndarray, t: np.ndarray, nu: float, theta: np.ndarray, out: np.ndarray
) -> None:
    """out = sum_n grad log L_n(theta), rows added in order n = 0, 1, ..."""
    row = np.empty((1, theta.size))
    one = np.zeros(1, dtype=np.int64)
    for j in range(theta.size):
        out[j] = 0.0
    for n in range(X.shape[0]):
        one[0] = n
        grad_log_lik_terms(model, X, t, nu, theta, one, row)
        for j in range(theta.size):
            out[j] += row[0, j]


@register_jitable
def collapsed_log_bound(
    quad: np.ndarray, lin: np.ndarray, const: float, theta: np.ndarray
) -> float:
    """sum_n log B_n(theta) = theta'quad theta + lin'theta + const, O(D^2) (notes Sec. 4)."""
    total = const
    for i in range(theta.size):
        row = lin[i]
        for j in range(theta.size):
            row += quad[i, j] * theta[j]
        total += theta[i] * row
    return total


@register_jitable
def collapsed_grad_log_bound(
    quad: np.ndarray, lin: np.ndarray, theta: np.ndarray, out: np.ndarray
) -> None:
    """out = 2 quad theta + lin (quad is symmetric)."""
    for i in range(theta.size):
        acc = 0.0
        for j in range(theta.size):
            acc += quad[i, j] * theta[j]
        out[i] = lin[i] + 2.0 * acc


@register_jitable
def log_prior_value(theta: np.ndarray, prior_sd: float) -> float:
    """log N(theta; 0, prior_sd^2 I), normalised."""
    s = 0.0
    for j in range(theta.size):
        z = theta[j] / prior_sd
        s += z * z
    return -0.5 * s - theta.size * (math.log(prior_sd) + 0.5 * math.log(2.0 * math.pi))


@register_jitable
def grad_log_prior_value(theta: np.ndarray, prior_sd: float, out: np.ndarray) -> None:
    for j in range(theta.size):
        out[j] = -theta[j] / (prior_sd * prior_sd)


log_l_tilde_nb = njit(cache=True)(log_l_tilde)
log_lik_terms_nb = njit(cache=True)(log_lik_terms)
log_bound_terms_nb = njit(cache=True)(log_bound_terms)
grad_log_lik_terms_nb = njit(cache=True)(grad_log_lik_terms)
grad_log_bound_terms_nb = njit(cache=True)(grad_log_bound_terms)
log_lik_total_nb = njit(cache=True)(log_lik_total)
grad_log_lik_total_nb = njit(cache=True)(grad_log_lik_total)
collapsed_log_bound_nb = njit(cache=True)(collapsed_log_bound)
collapsed_grad_log_bound_nb = njit(cache=True)(collapsed_grad_log_bound)
log_prior_value_nb = njit(cache=True)(log_prior_value)
grad_log_prior_value_nb = njit(cache=True)(grad_log_prior_value)

#: (reference, compiled twin) of every kernel, for agreement tests and benchmarks.
KERNELS: Mapping[str, tuple[Callable[..., Any], Callable[..., Any]]] = {
    "log_l_tilde": (log_l_tilde, log_l_tilde_nb),
    "log_lik_terms": (log_lik_terms, log_lik_terms_nb),
    "log_bound_terms": (log_bound_terms, log_bound_terms_nb),
    "grad_log_lik_terms": (grad_log_lik_terms, grad_log_lik_terms_nb),
    "grad_log_bound_terms": (grad_log_bound_terms, grad_log_bound_terms_nb),
    "log_lik_total": (log_lik_total, log_lik_total_nb),
    "grad_log_lik_total": (grad_log_lik_total, grad_log_lik_total_nb),
    "collapsed_log_bound": (collapsed_log_bound, collapsed_log_bound_nb),
    "collapsed_grad_log_bound": (collapsed_grad_log_bound, collapsed_grad_log_bound_nb),
    "log_prior_value": (log_prior_value, log_prior_value_nb),
    "grad_log_prior_value": (grad_log_prior_value, grad_log_prior_value_nb),
}
