"""Bayesian logistic regression as a box density for A* sampling (004_b270422b62f00607.txt,
Sec. 5.3.2, after Gershman et al. 2012): alpha ~ Gamma(a = 1, b = 1), w_k ~ N(0, 1/alpha),
p(y_i = 1 | x_i, w) = sigmoid(w . x_i), on the 13 data sets of Mika et al. (1999) whose sizes
004 lists in Appx. C, Table 1.

A* needs a product-form proposal, and the prior of (alpha, w) is not one (w's scale depends on
alpha), so the target is written in non-centred coordinates x = (alpha, v_1..v_D):

- alpha ~ Exponential(rate 1) on [0, inf) (Gamma(1, 1) is Exponential(1)), v_k ~ N(0, 1), and
  w = v / sqrt(alpha), which has the model's prior;
- the proposal is the prior, as 004 sets it (Q := p(x)), so o(x) = sum_i log sigmoid(y_i w . x_i)
  with y_i in {-1, +1}; no bias term (004 states none).

The bound of o on a box [lo, hi] (:func:`_logistic_bound`) is the minimum of two upper bounds,
each valid whatever the box:

- per datum: w . (y_i x_i) over the box is at most max over s of s c_i, with s = 1/sqrt(alpha)
  in [1/sqrt(hi_0), 1/sqrt(lo_0)] and c_i the maximum of v . (y_i x_i) over the v-box, and
  log sigmoid is increasing (this bound is also 0 at worst, every term being <= 0);
- a tangent plane: o is concave in w, so f(w0) + g(w0) . (w - w0) lies above it for any w0; its
  maximum over the box is exact (linear in v for fixed s, then in s). w0 comes from projected
  gradient ascent of o in (s, v) with backtracking, so the plane touches o near the box's
  maximiser; a poor w0 costs tightness only. The ascent stops once the plane is within 1e-3
  nats of the best o it has seen, or after 40 evaluations of o.

At alpha = 0 (a box's lower end) o is its limit as alpha -> 0+: 0, a multiple of log(1/2) or
-inf, never NaN. ``log_lik`` and ``bound`` are plain functions over compiled kernels, so they
are fast from Python as well as compilable by Numba.

No real copy of the Raetsch/Mika benchmark sets ships offline (neither scikit-learn nor
statsmodels bundles one of the same dim and n). Three of the 13 are defined by their generators
(ringnorm, twonorm, waveform; Breiman 1996, harness/targets/breiman_data.py), so
:func:`mika_data` draws those from their generators and synthetic stand-ins of Table 1's sizes
for the other ten; :func:`mika_kind` says which a set gets.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from harness.targets.box_density import BoxDensityTarget, box_density
from harness.targets.breiman_data import GENERATORS
from harness.targets.glm_kernels import log_sigmoid, sigmoid_neg

#: 004 Appx. C, Table 1: data set (short name) -> (name Table 1 prints, dim, n).
MIKA_TABLE: dict[str, tuple[str, int, int]] = {
    "banana": ("Banana", 2, 5300),
    "breast-cancer": ("B.Cancer", 9, 263),
    "diabetes": ("Diabetes", 8, 768),
    "german": ("German", 20, 1000),
    "heart": ("Heart", 5, 215),
    "image": ("Image", 18, 2086),
    "ringnorm": ("Ringnorm", 20, 7400),
    "flare-sonar": ("F.Sonar", 9, 144),
    "splice": ("Splice", 60, 2991),
    "thyroid": ("Thyroid", 5, 215),
    "titanic": ("Titanic", 3, 24),
    "twonorm": ("Twonorm", 20, 7400),
    "waveform": ("Waveform", 21, 5000),
}
MIKA_SIZES: dict[str, tuple[int, int]] = {k: (dim, n) for k, (_, dim, n) in MIKA_TABLE.items()}
MIKA_DISPLAY: dict[str, str] = {k: shown for k, (shown, _, _) in MIKA_TABLE.items()}

#: What each set's points are (records and reports carry it as ``data``).
GENERATED, STAND_IN = "generator (Breiman 1996)", "synthetic stand-in"

#: 004 Sec. 5.3.2: alpha ~ Gamma(a, b) with a = b = 1 (the exponential proposal of rate b).
GAMMA_A, GAMMA_B = 1.0, 1.0
#: Scale of the synthetic true weights, w ~ N(0, 1/dim) * 3: w . x has sd about 3, so the
#: classes overlap (not separable) yet the labels carry signal.
SYNTHETIC_W_SCALE = 3.0

#: Evaluations of o and its gradient the bound's ascent may spend, and the gap at which it stops.
_BOUND_EVALS, _BOUND_GAP = 40, 1e-3


def mika_name(name: str) -> str:
    """The short key of a Table 1 data set, from the key or the display name."""
    if name in MIKA_SIZES:
        return name
    for key, display in MIKA_DISPLAY.items():
        if name == display:
            return key
    raise ValueError(
        f"name = {name!r} is invalid; valid: {', '.join(MIKA_SIZES)} "
        f"(or {', '.join(MIKA_DISPLAY.values())})"
    )


def mika_kind(name: str) -> str:
    """:data:`GENERATED` for ringnorm, twonorm and waveform, :data:`STAND_IN` for the others."""
    return GENERATED if mika_name(name) in GENERATORS else STAND_IN


def mika_data(name: str, seed: int = 0) -> tuple[np.ndarray, np.ndarray, str]:
    """(X, y, source) for a data set of 004 Appx. C, Table 1, y in {-1, +1}. One Generator
    seeded by (seed, the set's row in the table) draws everything.

    Ringnorm, twonorm, waveform: n points from Breiman's generator (breiman_data.py), each
    column then standardised to mean 0, sd 1 over the set (our reading: the stand-ins' N(0, I)
    scale, which matters as 004's model has no intercept and a fixed prior scale; we believe
    Raetsch's benchmark files are normalised likewise but cannot check them offline).

    The other ten, synthetic at the table's (dim, n): X ~ N(0, I), a true weight vector
    w ~ N(0, 1/dim) * 3, y_i = +1 with probability sigmoid(w . x_i), drawn in that order.
    """
    key = mika_name(name)
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"seed = {seed!r} is invalid; valid: an integer >= 0")
    dim, n = MIKA_SIZES[key]
    rng = np.random.default_rng([int(seed), list(MIKA_SIZES).index(key)])
    if key in GENERATORS:
        X, y = GENERATORS[key](n, rng)
        X = (X - X.mean(axis=0)) / X.std(axis=0)
        source = (
            f"{GENERATED}: {MIKA_DISPLAY[key]}'s generator, n {n} as 004 Appx. C, Table 1, "
            f"columns standardised, seed {seed}"
        )
        return X, y, source
    X = rng.standard_normal((n, dim))
    w = SYNTHETIC_W_SCALE * rng.standard_normal(dim) / math.sqrt(dim)
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    y = np.where(rng.random(n) < p, 1.0, -1.0)
    source = (
        f"{STAND_IN} (dim {dim}, n {n} as 004 Appx. C, Table 1 {MIKA_DISPLAY[key]}; "
        f"X ~ N(0, I), y from a logistic model, seed {seed})"
    )
    return X, y, source


@njit(cache=True)
def o_at_w(w: np.ndarray, data: np.ndarray, grad: np.ndarray) -> float:
    """sum_i log sigmoid(y_i w . x_i), its gradient in w written into ``grad``."""
    n, dim = data.shape[0], data.shape[1] - 1
    for k in range(dim):
        grad[k] = 0.0
    total = 0.0
    for i in range(n):
        y = data[i, dim]
        z = 0.0
        for k in range(dim):
            z += data[i, k] * w[k]
        z *= y
        total += log_sigmoid(z)
        r = y * sigmoid_neg(z)
        for k in range(dim):
            grad[k] += r * data[i, k]
    return total


@njit(cache=True)
def _log_lik_kernel(x: np.ndarray, data: np.ndarray) -> float:
    n, dim = data.shape[0], data.shape[1] - 1
    alpha = x[0]
    total = 0.0
    if alpha <= 0.0:
        # The limit alpha -> 0+: w = v / sqrt(alpha) runs to infinity along v, so each term tends
        # to 0 (y_i v . x_i > 0), log(1/2) (= 0) or -inf (< 0).
        for i in range(n):
            z = 0.0
            for k in range(dim):
                z += data[i, k] * x[k + 1]
            z *= data[i, dim]
            if z < 0.0:
                return -math.inf
            if z == 0.0:
                total -= math.log(2.0)
        return total
    root = math.sqrt(alpha)
    w = np.empty(dim)
    for k in range(dim):
        w[k] = x[k + 1] / root
    for i in range(n):
        z = 0.0
        for k in range(dim):
            z += data[i, k] * w[k]
        total += log_sigmoid(data[i, dim] * z)
    return total


@njit(cache=True)
def _scaled_max(c: float, smin: float, smax: float) -> float:
    """max of s c over s in [smin, smax] (smax may be inf; c may be inf, never -inf)."""
    if c > 0.0:
        return c * smax
    if c < 0.0:
        return c * smin
    return 0.0


@njit(cache=True)
def _linear_max(a: np.ndarray, lv: np.ndarray, hv: np.ndarray) -> float:
    """max of a . v over the v-box (inf where it is unbounded)."""
    c = 0.0
    for k in range(a.size):
        if a[k] > 0.0:
            c += a[k] * hv[k]
        elif a[k] < 0.0:
            c += a[k] * lv[k]
    return c


@njit(cache=True)
def _tangent(
    f0: float,
    g: np.ndarray,
    w0: np.ndarray,
    lv: np.ndarray,
    hv: np.ndarray,
    smin: float,
    smax: float,
) -> float:
    """max over the box of the tangent plane f0 + g . (s v - w0): above o on the whole box
    (inf where the plane is unbounded or f0 is not finite)."""
    top = _scaled_max(_linear_max(g, lv, hv), smin, smax)
    if top == math.inf or not math.isfinite(f0):
        return math.inf
    gw = 0.0
    for k in range(g.size):
        gw += g[k] * w0[k]
    # The margin covers rounding where the three terms nearly cancel.
    return f0 + top - gw + 1e-10 * (abs(f0) + abs(top) + abs(gw))


@njit(cache=True)
def _bound_kernel(lo: np.ndarray, hi: np.ndarray, data: np.ndarray) -> float:
    n, dim = data.shape[0], data.shape[1] - 1
    lv, hv = lo[1:], hi[1:]
    # s = 1/sqrt(alpha) spans [smin, smax]; alpha = 0 is the limit s -> inf.
    smin = 1.0 / math.sqrt(hi[0]) if hi[0] > 0.0 else math.inf
    smax = 1.0 / math.sqrt(lo[0]) if lo[0] > 0.0 else math.inf

    # Per datum: log sigmoid of the largest margin y_i w . x_i the box allows.
    a = np.empty(dim)
    best = 0.0
    for i in range(n):
        for k in range(dim):
            a[k] = data[i, dim] * data[i, k]
        best += log_sigmoid(_scaled_max(_linear_max(a, lv, hv), smin, smax))

    # A coordinate of v free both ways makes every tangent plane unbounded.
    for k in range(dim):
        if lv[k] == -math.inf and hv[k] == math.inf:
            return best + 1e-10 * (1.0 + abs(best))

    # Projected gradient ascent of F(s, v) = o(s v) from the box's middle, with backtracking.
    if hi[0] < math.inf:
        s = 1.0 / math.sqrt(0.5 * (lo[0] + hi[0]))
    else:
        s = 1.0 / math.sqrt(lo[0] + 1.0 / GAMMA_B)  # the proposal mean above lo
    s = min(max(s, smin), smax)
    v = np.empty(dim)
    for k in range(dim):
        if lv[k] > -math.inf and hv[k] < math.inf:
            v[k] = 0.5 * (lv[k] + hv[k])
        else:
            v[k] = min(max(0.0, lv[k]), hv[k])
    w = s * v
    g = np.empty(dim)
    f = o_at_w(w, data, g)
    if not math.isfinite(f):
        return best + 1e-10 * (1.0 + abs(best))
    best = min(best, _tangent(f, g, w, lv, hv, smin, smax))
    top_f = f
    sq = 0.0
    for i in range(n):
        for k in range(dim):
            sq += data[i, k] ** 2
    # Safe for the v-step at this s (curvature <= s^2 sum_i |x_i|^2 / 4); grown on success.
    eta = 4.0 / (s * s * sq + 1.0)
    v_new, w_new, g_new = np.empty(dim), np.empty(dim), np.empty(dim)
    for _ in range(_BOUND_EVALS):
        if best - top_f <= _BOUND_GAP:
            break
        gs = 0.0
        for k in range(dim):
            gs += g[k] * v[k]
        s_new = min(max(s + eta * gs, smin), smax)
        moved = (s_new - s) * gs
        dist = (s_new - s) ** 2
        for k in range(dim):
            v_new[k] = min(max(v[k] + eta * s * g[k], lv[k]), hv[k])
            moved += (v_new[k] - v[k]) * s * g[k]
            dist += (v_new[k] - v[k]) ** 2
        if dist == 0.0:
            break  # a stationary point of the box: the plane here is as tight as it gets
        for k in range(dim):
            w_new[k] = s_new * v_new[k]
        f_new = o_at_w(w_new, data, g_new)
        if not math.isfinite(f_new):
            break  # overflow far out (alpha near 0): stop with the planes so far
        best = min(best, _tangent(f_new, g_new, w_new, lv, hv, smin, smax))
        top_f = max(top_f, f_new)
        if f_new >= f + moved - 0.5 * dist / eta:
            s, f = s_new, f_new
            v[:] = v_new
            g[:] = g_new
            eta *= 2.0
        else:
            eta *= 0.5
    # best is an upper bound in exact arithmetic; the margin covers rounding in the sums.
    return best + 1e-10 * (1.0 + abs(best))


def _logistic_log_lik(x: np.ndarray, data: np.ndarray) -> float:
    """o(x) = sum_i log sigmoid(y_i x_i . v / sqrt(alpha)), x = (alpha, v); data = [X | y]."""
    return _log_lik_kernel(x, data)


@njit(cache=True)
def _log_lik_grad_kernel(x: np.ndarray, data: np.ndarray, grad: np.ndarray) -> float:
    """o(x) and its gradient in x = (alpha, v): do/dv = g_w / sqrt(alpha) and
    do/dalpha = -(g_w . w) / (2 alpha), g_w the gradient in w = v / sqrt(alpha). At alpha <= 0
    (the box's edge) the gradient is left 0."""
    dim = data.shape[1] - 1
    if x[0] <= 0.0:
        for k in range(dim + 1):
            grad[k] = 0.0
        return _log_lik_kernel(x, data)
    root = math.sqrt(x[0])
    w = np.empty(dim)
    for k in range(dim):
        w[k] = x[k + 1] / root
    g_w = np.empty(dim)
    total = o_at_w(w, data, g_w)
    dot = 0.0
    for k in range(dim):
        grad[k + 1] = g_w[k] / root
        dot += g_w[k] * w[k]
    grad[0] = -0.5 * dot / x[0]
    return total


def _logistic_log_lik_grad(x: np.ndarray, data: np.ndarray, grad: np.ndarray) -> float:
    return _log_lik_grad_kernel(x, data, grad)


def _logistic_bound(lo: np.ndarray, hi: np.ndarray, data: np.ndarray) -> float:
    """An upper bound of o on the box [lo, hi] (see the module docstring)."""
    return _bound_kernel(lo, hi, data)


def logistic_gamma(X: np.ndarray, y: np.ndarray, name: str = "data") -> BoxDensityTarget:
    """The posterior of 004 Sec. 5.3.2 on (X, y) as a box density in x = (alpha, v_1..v_D):
    proposal Exponential(1) x N(0, 1)^D (the prior, 004's Q := p(x)), w = v / sqrt(alpha),
    o(x) = sum_i log sigmoid(y_i w . x_i). No bias term (004 states none). ``y`` in {-1, +1}
    or {0, 1} (004's convention, mapped to -1, +1)."""
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[0] < 1 or X.shape[1] < 1 or not np.all(np.isfinite(X)):
        raise ValueError(
            f"X of shape {X.shape} is invalid; valid: an (n, D) array of finite numbers, n, D >= 1"
        )
    y = np.asarray(y, dtype=np.float64)
    labels = set(np.unique(y).tolist())
    if y.shape != (X.shape[0],) or not (labels <= {-1.0, 1.0} or labels <= {0.0, 1.0}):
        raise ValueError(
            f"y of shape {y.shape} with labels {sorted(labels)[:5]} is invalid; valid: "
            f"{X.shape[0]} labels, all in {{-1, +1}} or all in {{0, 1}}"
        )
    y = np.where(y > 0.0, 1.0, -1.0)
    D = X.shape[1]
    return box_density(
        [0.0] + [-math.inf] * D,
        [math.inf] * (D + 1),
        [("exponential", GAMMA_B)] + [("normal", 0.0, 1.0)] * D,
        _logistic_log_lik,
        _logistic_bound,
        np.column_stack([X, y]),
        name=f"logistic-{name}",
        log_lik_grad=_logistic_log_lik_grad,
    )


def mika_logistic(name: str, seed: int = 0) -> BoxDensityTarget:
    """:func:`logistic_gamma` on :func:`mika_data` (004 Sec. 5.3.2 on an Appx. C data set)."""
    X, y, _ = mika_data(name, seed)
    return logistic_gamma(X, y, name=mika_name(name))
