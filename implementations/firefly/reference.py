"""Firefly Monte Carlo (002_3c1996bf78df7865.txt, Alg. 1 and the implicit-z box) and the
regular-MCMC baselines it is measured against, in plain Python and NumPy.

The target is a GLM posterior with a lower bound 0 < B_n <= L_n on every likelihood term
(``harness.targets.glm``). FlyMC samples the joint of theta and z in {0, 1}^N,

    p(theta, z) ∝ p(theta) prod_n B_n(theta) prod_{n: z_n = 1} (L_n(theta) / B_n(theta) - 1),

whose theta-marginal is the exact posterior (002, "Solution"; notes-firefly.md Sec. 1). The
product of all bounds is collapsed into O(D^2) statistics (notes Sec. 4), so a theta step reads
only the bright points.

Costs are counted as 002's Table 1 counts them: one query per distinct (theta, n) at which L_n is
evaluated, a cache hit counted once (notes Sec. 9.4). A :class:`Point` caches the per-datum
values at its theta; the chain keeps the current point and its proposal, as the authors' code
does, so the z step after a theta step reads the bright points' L~_n again for free (notes
Sec. 5). A regular chain pays N queries at every new theta.

Per iteration: one theta step on the joint at fixed z (random-walk MH, Alg. 1 lines 6-13; MALA;
or slice sampling along a random direction, notes Sec. 6), then one z step at the new theta:
implicit MH (the box: each bright point proposes dark, each dark point proposes bright with
probability q_db, the candidates found by geometric skips) or explicit Gibbs (Alg. 1 lines 3-5:
ceil(N * resample_fraction) uniformly chosen points redrawn from Bernoulli(1 - B_n / L_n)).
z starts all dark, as the authors' code does (notes Sec. 9.3).

``theta_fixed`` holds theta at x0 and runs only the z steps, from z drawn from its exact
conditional; the chain then reports each datum's bright steps and darkenings, which the harness
compares with 1 - B_n / L_n (the z-conditional gate).

Every floating-point sum runs left to right in a fixed order (the bright list's order, then
coordinates 0..D-1), so ``fast.py`` repeats it to the last bit.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from harness.spec import Chain
from harness.targets.glm_kernels import log_l_tilde
from implementations.shared.reference import log_or_minus_inf

THETA_STEPS = ("mh", "mala", "slice")
Z_UPDATES = ("implicit", "explicit")
#: A slice step that has shrunk this often keeps the current theta (only reachable when the
#: exponential draw is 0, which makes the slice a single point).
MAX_SHRINKS = 200
#: The skip that ends a sweep of dark candidates (a uniform of exactly 0).
NO_CANDIDATE = 2**62


def dot(a: np.ndarray, b: np.ndarray) -> float:
    """sum_j a_j b_j, left to right (BLAS may reorder; the Numba kernel cannot)."""
    s = 0.0
    for j in range(a.size):
        s += float(a[j]) * float(b[j])
    return s


@dataclass
class Point:
    """A theta and the per-datum values computed there (the likelihood cache of one theta):
    log L_n, log B_n and, for MALA, grad log L_n - grad log B_n. ``log_posterior`` memoises the
    regular chain's full density."""

    theta: np.ndarray
    log_lik: dict[int, float] = field(default_factory=dict)
    log_bound: dict[int, float] = field(default_factory=dict)
    grad_gap: dict[int, np.ndarray] = field(default_factory=dict)
    log_posterior: float | None = None
    grad_log_posterior: np.ndarray | None = None


@dataclass
class Queries:
    """Distinct (theta, n) likelihood evaluations so far."""

    total: int = 0


def evaluate(target: Any, point: Point, idx: list[int], queries: Queries, grads: bool) -> None:
    """Fill ``point``'s cache for the data in ``idx`` it lacks; each is one query."""
    missing = np.array([n for n in idx if n not in point.log_lik], dtype=np.int64)
    if missing.size == 0:
        return
    queries.total += int(missing.size)
    ll = target.log_lik(point.theta, missing)
    lb = target.log_bound(point.theta, missing)
    if grads:
        gap = target.grad_log_lik(point.theta, missing) - target.grad_log_bound(
            point.theta, missing
        )
    for k, n in enumerate(missing.tolist()):
        point.log_lik[n] = float(ll[k])
        point.log_bound[n] = float(lb[k])
        if grads:
            point.grad_gap[n] = gap[k]


class BrightSet:
    """z as a permutation: ``arr[:count]`` lists the bright data, ``arr[count:]`` the dark,
    ``tab[n]`` is n's position in ``arr``. A flip is one swap, so listing the bright points costs
    O(bright) and flipping O(1) (the authors' bookkeeping, notes Sec. 5). The order of the lists
    fixes the order of every sum over bright points."""

    def __init__(self, N: int) -> None:
        self.arr = np.arange(N, dtype=np.int64)
        self.tab = np.arange(N, dtype=np.int64)
        self.count = 0

    def bright(self) -> list[int]:
        return self.arr[: self.count].tolist()

    def dark(self) -> list[int]:
        return self.arr[self.count :].tolist()

    def is_bright(self, n: int) -> bool:
        return bool(self.tab[n] < self.count)

    def _swap(self, i: int, j: int) -> None:
        a, b = int(self.arr[i]), int(self.arr[j])
        self.arr[i], self.arr[j] = b, a
        self.tab[a], self.tab[b] = j, i

    def brighten(self, n: int) -> None:
        self._swap(int(self.tab[n]), self.count)
        self.count += 1

    def darken(self, n: int) -> None:
        self.count -= 1
        self._swap(int(self.tab[n]), self.count)


# -- the two densities a theta step can target ---------------------------------------------------


@dataclass
class JointDensity:
    """log p(theta, z) at fixed z (Alg. 1, JOINTPOSTERIOR): prior + collapsed bounds + the
    bright points' log L~_n."""

    target: Any
    z: BrightSet
    queries: Queries
    grads: bool

    def log_density(self, point: Point) -> float:
        t = self.target
        bright = self.z.bright()
        evaluate(t, point, bright, self.queries, self.grads)
        total = t.log_prior(point.theta) + t.sum_log_bound(point.theta)
        for n in bright:
            total += log_l_tilde(point.log_lik[n], point.log_bound[n])
        return total

    def grad(self, point: Point) -> np.ndarray:
        """notes Sec. 4: grad log L~_n = (grad log L_n - grad log B_n) / (1 - exp(-gap))."""
        t = self.target
        g = t.grad_log_prior(point.theta) + t.grad_sum_log_bound(point.theta)
        for n in self.z.bright():
            gap = point.log_lik[n] - point.log_bound[n]
            g = g + point.grad_gap[n] / (-math.expm1(-gap))
        return g


@dataclass
class PosteriorDensity:
    """The exact log posterior of regular MCMC: the first evaluation at a theta reads all N
    terms (N queries); value and gradient at one theta are one evaluation."""

    target: Any
    queries: Queries
    grads: bool

    def log_density(self, point: Point) -> float:
        if point.log_posterior is None:
            self.queries.total += self.target.N
            point.log_posterior = self.target.log_posterior(point.theta)
            if self.grads:
                point.grad_log_posterior = self.target.grad_log_posterior(point.theta)
        return point.log_posterior

    def grad(self, point: Point) -> np.ndarray:
        self.log_density(point)
        return point.grad_log_posterior


# -- theta steps (notes Sec. 6) ------------------------------------------------------------------


def mh_step(density: Any, cur: Point, step: float, rng: np.random.Generator) -> tuple[Point, bool]:
    """Random-walk MH (Alg. 1 lines 6-13): theta' = theta + step * N(0, I), accepted when
    log u < log p(theta', z) - log p(theta, z)."""
    prop = Point(cur.theta + step * rng.standard_normal(cur.theta.size))
    log_u = log_or_minus_inf(rng.random())
    if log_u < density.log_density(prop) - density.log_density(cur):
        return prop, True
    return cur, False


def log_langevin_proposal(to: np.ndarray, frm: np.ndarray, grad: np.ndarray, step: float) -> float:
    """log N(to; frm + step^2/2 grad, step^2 I), up to the constant both directions share."""
    h = 0.5 * step * step
    diff = to - frm - h * grad
    return -dot(diff, diff) / (2.0 * step * step)


def mala_step(
    density: Any, cur: Point, step: float, rng: np.random.Generator
) -> tuple[Point, bool]:
    """Langevin-adjusted MH: theta' = theta + step^2/2 grad + step * xi, accepted with the
    reverse-proposal density in the ratio (notes Sec. 6)."""
    log_cur = density.log_density(cur)
    g_cur = density.grad(cur)
    h = 0.5 * step * step
    prop = Point(cur.theta + h * g_cur + step * rng.standard_normal(cur.theta.size))
    log_u = log_or_minus_inf(rng.random())
    log_prop = density.log_density(prop)
    g_prop = density.grad(prop)
    log_ratio = (
        log_prop
        - log_cur
        + log_langevin_proposal(cur.theta, prop.theta, g_prop, step)
        - log_langevin_proposal(prop.theta, cur.theta, g_cur, step)
    )
    if log_u < log_ratio:
        return prop, True
    return cur, False


def slice_step(
    density: Any, cur: Point, width: float, rng: np.random.Generator
) -> tuple[Point, bool]:
    """Slice sampling along a random unit direction: the bracket of ``width`` is placed at random
    around 0 and only shrinks, no stepping out, as in the authors' code (notes Sec. 6)."""
    d = rng.standard_normal(cur.theta.size)
    d = d / math.sqrt(dot(d, d))
    log_y = density.log_density(cur) - rng.standard_exponential()
    lo = -width * rng.random()
    hi = lo + width
    for _ in range(MAX_SHRINKS):
        s = lo + (hi - lo) * rng.random()
        prop = Point(cur.theta + s * d)
        if density.log_density(prop) > log_y:
            return prop, True
        if s < 0.0:
            lo = s
        else:
            hi = s
    return cur, False


THETA_STEP = {"mh": mh_step, "mala": mala_step, "slice": slice_step}


# -- z steps --------------------------------------------------------------------------------------


@dataclass
class ZTrace:
    """Per datum, over the recorded steps of a ``theta_fixed`` chain: steps spent bright, and
    moves from bright to dark."""

    bright_steps: np.ndarray
    darkenings: np.ndarray


def geometric_skip(q: float, rng: np.random.Generator) -> int:
    """Dark points passed before the next one that proposes bright: Geometric(q) - 1, by
    inversion of one uniform (notes Sec. 5, ``_bernoulli_trials``)."""
    if q >= 1.0:
        return 0
    u = rng.random()
    if u == 0.0:  # log(0) / log1p(-q) = +inf: no further candidate in this sweep
        return NO_CANDIDATE
    return math.floor(math.log(u) / math.log1p(-q))


def implicit_z_step(
    target: Any,
    cur: Point,
    z: BrightSet,
    q_db: float,
    queries: Queries,
    grads: bool,
    rng: np.random.Generator,
    trace: ZTrace | None,
) -> None:
    """The box of 002: each bright n proposes dark, accepted with min(1, q_db / L~_n) from the
    cached L~_n; each dark n proposes bright with probability q_db, accepted with
    min(1, L~_n / q_db) at one query. Both lists are taken before any flip, so every datum is
    updated once."""
    bright, dark = z.bright(), z.dark()
    log_q = math.log(q_db)
    for n in bright:
        if log_or_minus_inf(rng.random()) < log_q - log_l_tilde(cur.log_lik[n], cur.log_bound[n]):
            z.darken(n)
            if trace is not None:
                trace.darkenings[n] += 1
    pos = geometric_skip(q_db, rng)
    while pos < len(dark):
        n = dark[pos]
        evaluate(target, cur, [n], queries, grads)
        if log_or_minus_inf(rng.random()) < log_l_tilde(cur.log_lik[n], cur.log_bound[n]) - log_q:
            z.brighten(n)
        pos += 1 + geometric_skip(q_db, rng)


def pick(N: int, rng: np.random.Generator) -> int:
    """A uniform index in 0..N-1 from one uniform (Alg. 1 line 4, RandInteger)."""
    return min(int(rng.random() * N), N - 1)


def explicit_z_step(
    target: Any,
    cur: Point,
    z: BrightSet,
    fraction: float,
    queries: Queries,
    grads: bool,
    rng: np.random.Generator,
    trace: ZTrace | None,
) -> None:
    """Alg. 1 lines 3-5: ceil(N * fraction) times, a uniform n gets z_n ~ Bernoulli(1 - B/L)."""
    for _ in range(math.ceil(target.N * fraction)):
        n = pick(target.N, rng)
        evaluate(target, cur, [n], queries, grads)
        # P(bright) = 1 - B/L = -expm1(log B - log L)
        bright = rng.random() < -math.expm1(cur.log_bound[n] - cur.log_lik[n])
        if bright != z.is_bright(n):
            if bright:
                z.brighten(n)
            else:
                z.darken(n)
                if trace is not None:
                    trace.darkenings[n] += 1


Z_STEP = {"implicit": implicit_z_step, "explicit": explicit_z_step}


def conditional_z(
    target: Any, cur: Point, z: BrightSet, queries: Queries, grads: bool, rng: np.random.Generator
) -> None:
    """z_n ~ Bernoulli(1 - B_n/L_n) for n = 0..N-1 in order (N queries): an exact draw of z."""
    evaluate(target, cur, list(range(target.N)), queries, grads)
    for n in range(target.N):
        if rng.random() < -math.expm1(cur.log_bound[n] - cur.log_lik[n]):
            z.brighten(n)


# -- the chains -----------------------------------------------------------------------------------


def start(target: Any, x0: Any) -> np.ndarray:
    """x0 as D floats; the default is the bounds' tuning point (theta_MAP, or 0 untuned)."""
    if x0 is None:
        return np.array(target.theta_tuning, dtype=np.float64)
    theta = np.array(x0, dtype=np.float64).reshape(-1)
    if theta.shape != (target.D,):
        raise ValueError(
            f"x0 has {theta.size} values; valid: None or D = {target.D} finite numbers "
            f"(theta of {target.name!r})"
        )
    return theta


def flymc(
    target: Any,
    n_steps: int,
    rng: np.random.Generator,
    x0: Any = None,
    theta_step: str = "mh",
    step: float = 0.1,
    z_update: str = "implicit",
    q_db: float = 0.1,
    resample_fraction: float = 0.1,
    theta_fixed: bool = False,
    theta_moves: Mapping[str, Any] = THETA_STEP,
    z_moves: Mapping[str, Any] = Z_STEP,
) -> Chain:
    """FlyMC: per iteration a theta step on the joint (``theta_step``; ``step`` is the MH or
    MALA step size or the slice width), then a z step (``z_update``). Extras: ``draw_evals``
    (queries in each iteration), ``bright`` (bright points after it), ``accepted``; with
    ``theta_fixed`` also ``bright_steps`` and ``darkenings`` per datum. ``theta_moves`` and
    ``z_moves`` name the step functions (planted-bug tests swap one for a broken copy)."""
    theta0 = start(target, x0)
    grads = theta_step == "mala"
    queries = Queries()
    z = BrightSet(target.N)
    density = JointDensity(target, z, queries, grads)
    cur = Point(theta0)
    move = theta_moves[theta_step]
    z_move = z_moves[z_update]
    z_param = q_db if z_update == "implicit" else resample_fraction
    trace = None
    if theta_fixed:
        trace = ZTrace(np.zeros(target.N, dtype=np.int64), np.zeros(target.N, dtype=np.int64))
        conditional_z(target, cur, z, queries, grads, rng)
    values = np.empty((n_steps, target.D))
    per_step = np.empty(n_steps, dtype=np.int64)
    bright = np.empty(n_steps, dtype=np.int64)
    accepted = np.zeros(n_steps, dtype=bool)
    for i in range(n_steps):
        before = queries.total
        if not theta_fixed:
            cur, accepted[i] = move(density, cur, step, rng)
        z_move(target, cur, z, z_param, queries, grads, rng, trace)
        if trace is not None:
            trace.bright_steps[z.bright()] += 1
        values[i] = cur.theta
        per_step[i] = queries.total - before
        bright[i] = z.count
    extras = {"draw_evals": per_step, "bright": bright, "accepted": accepted}
    if trace is not None:
        extras.update(bright_steps=trace.bright_steps, darkenings=trace.darkenings)
    return Chain(values, queries.total, extras)


def regular(
    target: Any,
    n_steps: int,
    rng: np.random.Generator,
    x0: Any = None,
    theta_step: str = "mh",
    step: float = 0.1,
    theta_moves: Mapping[str, Any] = THETA_STEP,
) -> Chain:
    """The regular-MCMC baseline: the same theta step on the exact posterior, N queries at every
    new theta. Extras: ``draw_evals`` and ``accepted``."""
    queries = Queries()
    density = PosteriorDensity(target, queries, theta_step == "mala")
    cur = Point(start(target, x0))
    move = theta_moves[theta_step]
    values = np.empty((n_steps, target.D))
    per_step = np.empty(n_steps, dtype=np.int64)
    accepted = np.zeros(n_steps, dtype=bool)
    for i in range(n_steps):
        before = queries.total
        cur, accepted[i] = move(density, cur, step, rng)
        values[i] = cur.theta
        per_step[i] = queries.total - before
    return Chain(values, queries.total, {"draw_evals": per_step, "accepted": accepted})


def bind_theta_step(chain: Callable[..., Chain], theta_step: str, name: str) -> Callable:
    """``chain`` (:func:`flymc` or :func:`regular`, or their compiled twins) with its theta step
    fixed: the spec's ``run_chain(target, n_steps, rng, x0=None, **params)`` entry."""

    def run(target: Any, n_steps: int, rng: np.random.Generator, x0: Any = None, **params: Any):
        return chain(target, n_steps, rng, x0, theta_step, **params)

    run.__name__ = f"{name}_{theta_step}"
    run.__doc__ = f"{name} with the {theta_step} theta step (:func:`{chain.__name__}`)."
    return run


flymc_mh, flymc_mala, flymc_slice = (bind_theta_step(flymc, s, "flymc") for s in THETA_STEPS)
rwmh, mala, slice_sampler = (bind_theta_step(regular, s, "regular") for s in THETA_STEPS)
