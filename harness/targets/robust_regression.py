"""Robust Bayesian (Cauchy) linear regression for A* sampling (001_78ff986a3d316097.txt,
Sec. 6.4; notes-astar.md Sec. 6).

y_n = w.x_n + eps_n with standard Cauchy eps_n and an isotropic Gaussian prior w ~ N(0, 5^2 I).
The proposal i is uniform on [-10, 10]^D and o(w) = log N(w; 0, 5^2 I) + sum_n f(w.x_n - y_n),
f(r) = -log(1 + r^2) (the paper's L(w), without the Cauchy's constant -log pi). The data make
the posterior bimodal and symmetric: w* = [2, ..., 2], X' ~ randn(N/2, D),
y' = X' w* + 0.1 randn(N/2), X = [X'; X'], y = [y'; -y'], with modes near +w* and -w*.

Bounds of o over a box [lo, hi], built per point from the interval [r_lo, r_hi] that the residual
r = w.x_n - y_n spans on the box:

- "constant": f's max over the interval (0 when it holds 0, else f at the end nearer 0), summed,
  plus the prior's max over the box (at 0 clipped into the box);
- "linear-quadratic" (001 Sec. 6.4: "in some regions the per point bounds are linear, and in
  others they are quadratic"; the construction is notes-astar.md Sec. 6 [ours]): where the
  interval lies in |r| <= 1, f is concave and its tangent line in r (linear in w) bounds it;
  elsewhere f is convex in u = r^2, so the chord of -log(1 + u) over the interval of u bounds it,
  a concave quadratic in w. Their sum with the (concave quadratic) log prior is maximised over
  the box exactly (all 3^D faces), and the result is the smaller of that and the constant bound.

The paper does not give the prior's sd: 5 puts the modes at |w_j| = 2 well inside the prior's
bulk (the likelihood dominates) while keeping the summed quadratic strictly concave (curvature
>= 1/25), so every face of the box QP has a unique stationary point.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from harness.targets.box_density import BoxDensityTarget, box_density

PRIOR_SD = 5.0
#: The proposal's box [-10, 10]^D (001, Sec. 6.4).
BOX = 10.0
W_STAR, NOISE = 2.0, 0.1
BOUNDS = ("constant", "linear-quadratic")
#: The exact box QP enumerates 3^D faces: 729 at D = 6.
MAX_D_LINEAR_QUADRATIC = 6
_LOG_PRIOR_NORM = math.log(PRIOR_SD) + 0.5 * math.log(2.0 * math.pi)
_PRIOR_PRECISION = 1.0 / PRIOR_SD**2


@njit(cache=True)
def _f(r: float) -> float:
    """The per-point log-likelihood -log(1 + r^2) of a residual r."""
    return -math.log1p(r * r)


@njit(cache=True)
def _log_prior(w: np.ndarray) -> float:
    total = 0.0
    for j in range(w.size):
        total += w[j] * w[j]
    return -0.5 * _PRIOR_PRECISION * total - w.size * _LOG_PRIOR_NORM


@njit(cache=True)
def _log_posterior(w: np.ndarray, data: np.ndarray) -> float:
    d = w.size
    total = _log_prior(w)
    for n in range(data.shape[0]):
        r = -data[n, d]
        for j in range(d):
            r += data[n, j] * w[j]
        total += _f(r)
    return total


@njit(cache=True)
def _reference_point(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """A finite point of the box to expand around: its centre on finite sides, the finite end of
    a half-infinite side, 0 on a whole line. Residuals are written r_ref + x.(w - ref), so the
    quadratic's coefficients stay the size of the box, not of w (less cancellation)."""
    ref = np.empty(lo.size)
    for j in range(lo.size):
        if math.isfinite(lo[j]) and math.isfinite(hi[j]):
            ref[j] = 0.5 * (lo[j] + hi[j])
        elif math.isfinite(lo[j]):
            ref[j] = lo[j]
        elif math.isfinite(hi[j]):
            ref[j] = hi[j]
        else:
            ref[j] = 0.0
    return ref


@njit(cache=True)
def _residual_range(
    data: np.ndarray, n: int, lo: np.ndarray, hi: np.ndarray, ref: np.ndarray
) -> tuple[float, float, float]:
    """r at ``ref`` and the interval [r_lo, r_hi] of r = w.x_n - y_n over the box (each term
    x_j (w_j - ref_j) is extreme at an end of side j; a zero x_j adds nothing, even on an
    infinite side)."""
    d = lo.size
    r_ref = -data[n, d]
    for j in range(d):
        r_ref += data[n, j] * ref[j]
    r_lo = r_hi = r_ref
    for j in range(d):
        x = data[n, j]
        if x > 0.0:
            r_lo += x * (lo[j] - ref[j])
            r_hi += x * (hi[j] - ref[j])
        elif x < 0.0:
            r_lo += x * (hi[j] - ref[j])
            r_hi += x * (lo[j] - ref[j])
    return r_ref, r_lo, r_hi


@njit(cache=True)
def _f_max(r_lo: float, r_hi: float) -> float:
    """max of f over [r_lo, r_hi]: at 0 when the interval holds it, else at the end nearer 0."""
    if r_lo <= 0.0 <= r_hi:
        return 0.0
    return _f(r_lo) if r_lo > 0.0 else _f(r_hi)


@njit(cache=True)
def _constant(lo: np.ndarray, hi: np.ndarray, data: np.ndarray) -> float:
    ref = _reference_point(lo, hi)
    prior_max = np.empty(lo.size)
    for j in range(lo.size):
        prior_max[j] = min(max(0.0, lo[j]), hi[j])
    total = _log_prior(prior_max)
    for n in range(data.shape[0]):
        _, r_lo, r_hi = _residual_range(data, n, lo, hi, ref)
        total += _f_max(r_lo, r_hi)
    return total


@njit(cache=True)
def _quadratic(
    lo: np.ndarray, hi: np.ndarray, data: np.ndarray, ref: np.ndarray, tangent_limit: float
) -> tuple[float, np.ndarray, np.ndarray]:
    """(c, g, H) with q(ref + v) = c + g.v - v.H v / 2 >= o(ref + v) on the box: the sum of the
    per-point linear or quadratic bounds and the log prior. ``tangent_limit`` is the |r| up to
    which tangents are used: 1 (f's inflection points) is valid; larger values are for tests
    (a tangent where f is convex lies below it)."""
    d = lo.size
    c = _log_prior(ref)
    g = np.empty(d)
    h = np.zeros((d, d))
    for j in range(d):
        g[j] = -_PRIOR_PRECISION * ref[j]
        h[j, j] = _PRIOR_PRECISION
    for n in range(data.shape[0]):
        r_ref, r_lo, r_hi = _residual_range(data, n, lo, hi, ref)
        if -tangent_limit <= r_lo and r_hi <= tangent_limit:
            # Tangent at the interval's centre r0: on a concave stretch its gap to f is at most
            # max|f''| (width / 2)^2 / 2, the smallest worst case of any tangent point.
            r0 = 0.5 * (r_lo + r_hi)
            slope = -2.0 * r0 / (1.0 + r0 * r0)
            c += _f(r0) + slope * (r_ref - r0)
            for j in range(d):
                g[j] += slope * data[n, j]
        elif math.isfinite(r_lo) and math.isfinite(r_hi):
            # Chord of the convex -log(1 + u) over [u_lo, u_hi], u = r^2: k (r^2 - u_lo) +
            # f_max with k <= 0, and r = r_ref + x.v gives the quadratic in v.
            u_lo = 0.0 if r_lo <= 0.0 <= r_hi else min(r_lo * r_lo, r_hi * r_hi)
            u_hi = max(r_lo * r_lo, r_hi * r_hi)
            top = -math.log1p(u_lo)
            width = u_hi - u_lo
            if width <= 0.0:
                c += top
                continue
            # (log(1 + u_lo) - log(1 + u_hi)) / width without the cancellation of the two logs.
            k = -math.log1p(width / (1.0 + u_lo)) / width
            c += top + k * (r_ref * r_ref - u_lo)
            for j in range(d):
                g[j] += 2.0 * k * r_ref * data[n, j]
                for i in range(d):
                    h[i, j] -= 2.0 * k * data[n, i] * data[n, j]
        else:
            # An infinite interval of r (only on an infinite box): the chord flattens to f's max.
            c += _f_max(r_lo, r_hi)
    return c, g, h


@njit(cache=True)
def _box_qp_max(c: float, g: np.ndarray, h: np.ndarray, v_lo: np.ndarray, v_hi: np.ndarray):
    """The exact max of c + g.v - v.H v / 2 (H positive definite) over v_lo <= v <= v_hi.

    The maximiser lies in the relative interior of one face (each coordinate at its lower end,
    its upper end, or free), where it is the unique stationary point of q on that face's affine
    hull: H_FF v_F = g_F - H_FB v_B. Every face is tried (a finite end only), the stationary
    points inside the box kept, and the best one's value returned; none is ever above the max,
    and the true maximiser is among them.
    """
    d = g.size
    best = -math.inf
    v = np.empty(d)
    free = np.empty(d, dtype=np.int64)
    a = np.empty((d, d))
    b = np.empty(d)
    faces = 1
    for _ in range(d):
        faces *= 3
    for face in range(faces):
        code = face
        m = np.int64(0)  # not a literal 0: Numba would compile the helpers below for it too
        possible = True
        for j in range(d):
            digit = code % 3
            code //= 3
            if digit == 0:
                free[m] = j
                m += 1
            elif digit == 1:
                v[j] = v_lo[j]
                possible = possible and math.isfinite(v_lo[j])
            else:
                v[j] = v_hi[j]
                possible = possible and math.isfinite(v_hi[j])
        if not possible:
            continue
        for p in range(m):
            i = free[p]
            b[p] = g[i]
            for j in range(d):
                if not _is_free(j, free, m):
                    b[p] -= h[i, j] * v[j]
            for q in range(m):
                a[p, q] = h[i, free[q]]
        _cholesky_solve(a, b, m)
        inside = True
        for p in range(m):
            i = free[p]
            v[i] = b[p]
            inside = inside and v_lo[i] <= b[p] <= v_hi[i]
        if not inside:
            continue
        value = c
        for i in range(d):
            quad = 0.0
            for j in range(d):
                quad += h[i, j] * v[j]
            value += v[i] * (g[i] - 0.5 * quad)
        best = max(best, value)
    return best


@njit(cache=True)
def _is_free(j: int, free: np.ndarray, m: int) -> bool:
    for p in range(m):
        if free[p] == j:
            return True
    return False


@njit(cache=True)
def _cholesky_solve(a: np.ndarray, b: np.ndarray, m: int) -> None:
    """Solve A x = b in place in b for the leading m x m block of a positive definite A
    (A's lower triangle is overwritten by its Cholesky factor)."""
    for j in range(m):
        s = a[j, j]
        for k in range(j):
            s -= a[j, k] * a[j, k]
        a[j, j] = math.sqrt(s)
        for i in range(j + 1, m):
            s = a[i, j]
            for k in range(j):
                s -= a[i, k] * a[j, k]
            a[i, j] = s / a[j, j]
    for i in range(m):  # L z = b
        s = b[i]
        for k in range(i):
            s -= a[i, k] * b[k]
        b[i] = s / a[i, i]
    for i in range(m - 1, -1, -1):  # L^T x = z
        s = b[i]
        for k in range(i + 1, m):
            s -= a[k, i] * b[k]
        b[i] = s / a[i, i]


@njit(cache=True)
def _linear_quadratic(
    lo: np.ndarray, hi: np.ndarray, data: np.ndarray, tangent_limit: float
) -> float:
    ref = _reference_point(lo, hi)
    c, g, h = _quadratic(lo, hi, data, ref, tangent_limit)
    qp = _box_qp_max(c, g, h, lo - ref, hi - ref)
    # Rounding guard: q's max is a sum of O(N) rounded terms and can land an ulp or so below o
    # at the maximiser on a tiny box; 1e-12 relative is far below any gap A* acts on.
    qp += 1e-12 * (1.0 + abs(qp))
    return min(qp, _constant(lo, hi, data))  # both bound o: so does the smaller


def _log_lik(x: np.ndarray, data: np.ndarray) -> float:
    return _log_posterior(x, data)


def _constant_bound(lo: np.ndarray, hi: np.ndarray, data: np.ndarray) -> float:
    return _constant(lo, hi, data)


def _linear_quadratic_bound(lo: np.ndarray, hi: np.ndarray, data: np.ndarray) -> float:
    return _linear_quadratic(lo, hi, data, 1.0)


_BOUND_FUNCTIONS = {"constant": _constant_bound, "linear-quadratic": _linear_quadratic_bound}


def regression_data(D: int, N: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(X, y) as 001 Sec. 6.4 makes them: X' ~ randn(N/2, D), y' = X' w* + 0.1 randn(N/2),
    X = [X'; X'], y = [y'; -y'], from one seeded Generator (X' first, then the noise)."""
    rng = np.random.default_rng(seed)
    x_half = rng.standard_normal((N // 2, D))
    y_half = x_half @ np.full(D, W_STAR) + NOISE * rng.standard_normal(N // 2)
    return np.vstack([x_half, x_half]), np.concatenate([y_half, -y_half])


def robust_regression(D: int, N: int, bound: str = "constant", seed: int = 0) -> BoxDensityTarget:
    """The posterior of w in Cauchy regression (001, Sec. 6.4): proposal uniform on
    [-10, 10]^D, o = log prior + sum_n -log(1 + (w.x_n - y_n)^2), ``bound`` "constant" or
    "linear-quadratic" (the module docstring gives both). ``data`` holds [X, y], one row a
    point. N must be even (the data are two mirrored halves)."""
    for name, value, low in (("D", D, 1), ("N", N, 2), ("seed", seed, 0)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ValueError(f"{name} = {value!r} is invalid; valid: an integer >= {low}")
    if N % 2:
        raise ValueError(f"N = {N!r} is invalid; valid: an even integer (X = [X'; X'])")
    if not isinstance(bound, str) or bound not in _BOUND_FUNCTIONS:
        raise ValueError(f"bound = {bound!r} is invalid; valid: {', '.join(BOUNDS)}")
    if bound == "linear-quadratic" and D > MAX_D_LINEAR_QUADRATIC:
        raise ValueError(
            f"D = {D!r} is invalid for bound = 'linear-quadratic'; valid: D <= "
            f"{MAX_D_LINEAR_QUADRATIC} (its exact box QP tries all 3^D faces)"
        )
    x, y = regression_data(D, N, seed)
    return box_density(
        [-BOX] * D,
        [BOX] * D,
        [("uniform",)] * D,
        _log_lik,
        _BOUND_FUNCTIONS[bound],
        np.column_stack([x, y]),
        name=f"robust-regression-D{D}-N{N}-{bound}",
    )
