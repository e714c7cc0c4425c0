"""Gibbs and Poisson-Gibbs on continuous factor graphs (003_07f92522b9b1c588.txt, Sec. 3), plain
Python floats.

One random-scan step picks i ~ Unif{0..n-1} and resamples x(i) from the conditional exp(E(v)),
v in [a, b], where E is either the full local energy sum_{phi in A[i]} phi (``gibbs-*``) or the
Poisson-minibatch energy of 003 Alg. 2, E(v) = sum_{phi in S} s_phi log(1 + L phi / (lam M_phi))
with s_phi ~ Poisson(lam M_phi / L + phi(x)) drawn as in Statement 1 (``pg-*``). Given s, the
augmented chain's x(i)-conditional is exactly ∝ exp(E) (notes-minibatch-gibbs.md, Sec. 7), so any
kernel that leaves exp(E) invariant gives an exact sampler. Three such kernels:

* ``rejection``: uniform proposals on [a, b], accepted with probability exp(E(v) - E_max) where
  E_max = sum_{A[i]} M_phi (Gibbs) or (sum_S s_phi) log(1 + L / lam) (Poisson); exact draws.
* ``its`` (Gibbs-ITS / PGITS): degree-m Chebyshev interpolant g of exp(E) from m + 1 evaluations
  of E, inverse transform sampling of g by bisection on its CDF, then the MH correction of 003
  Alg. 3, p = exp(E(v)) g(x(i)) / (exp(E(x(i))) g(v)).
* ``da`` (Gibbs-DA / PGDA, 003 Alg. 3): degree-m interpolant E~ of E, then a degree-k interpolant
  g of exp(E~) (no further E evaluations), then as ``its``.

Factors are evaluated by ``factor_value`` of the target module (bilinear, tempered mixture term or
folded quadratic prior, by ``target.types``); the Numba kernels compile that same function.

Chebyshev details (written out so the Numba kernels reproduce them bit for bit): interpolation at
the first-kind points t_l = cos(pi (2l + 1) / (2N)), N = deg + 1, with coefficients
c_j = (2 / N) sum_l f_l cos(pi j (2l + 1) / (2N)) (c_0 halved) summed in l order -- the same
interpolant as ``numpy.polynomial.chebyshev.chebinterpolate``, which the tests check to 1e-12; numpy
itself is not used because its BLAS dot product has no fixed summation order. The cosine table is
built once in Python and shared by both implementations. Evaluation is Clenshaw's recurrence, the
CDF is the exact antiderivative in the Chebyshev basis, and F(t) = u F(1) is solved by 60 bisection
steps. An interpolant may dip below 0 (notes Sec. 8): if c_0 < sum_{j>=1} |c_j| we raise c_0 to
that sum, which makes g >= 0 on [a, b] (|T_j| <= 1) and keeps it a polynomial; the MH step uses
this g, so the chain stays exact. The certificate is conservative: for steep conditionals it
fires even where g > 0 and mixes a uniform part into the proposal, which costs acceptance (about
0.6 on the 20x20 spin grid at m = 3, k = 10; about 0.97 on the tiny test graph).

Evaluation counts: each evaluation of E costs |A[i]| (Gibbs) or |S| (Poisson) factor evaluations;
Poisson steps also spend B (one per proposed count, Statement 1's thinning test).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from harness.spec import Chain, Param
from harness.targets.continuous_factor_graph import ContinuousFactorGraphTarget, factor_value
from implementations.minibatch_gibbs.reference import check_positive
from implementations.shared.reference import poisson_count

METHODS = {"rejection": 0, "its": 1, "da": 2}
BISECTION_STEPS = 60
#: Degrees above this make the per-step cost and the cosine table pointless for this harness.
MAX_DEGREE = 256


def check_degree(name: str, deg: Any) -> int:
    """A polynomial degree (``m``, ``k``): an integer in [1, MAX_DEGREE]."""
    return Param(name, 1, int, 1, MAX_DEGREE).check(deg)


def initial_state(target: ContinuousFactorGraphTarget, x0: Any = None) -> np.ndarray:
    """x0, checked, as a fresh float64 array; the domain midpoint when not given (no draw)."""
    if x0 is None:
        return np.full(target.n_vars, 0.5 * (target.a + target.b))
    x = np.array(x0, dtype=np.float64)
    if x.shape != (target.n_vars,) or not np.isfinite(x).all():
        raise ValueError(f"x0 has shape {x.shape}; valid: {target.n_vars} finite numbers")
    if np.any((x < target.a) | (x > target.b)):
        raise ValueError(f"x0 = {x.tolist()}; valid: values in [{target.a}, {target.b}]")
    return x


def cheb_plan(deg: int) -> tuple[np.ndarray, np.ndarray]:
    """First-kind Chebyshev points t_l on [-1, 1] and the table cos(pi j (2l + 1) / (2N))."""
    N = deg + 1
    t = [math.cos(math.pi * (2 * q + 1) / (2 * N)) for q in range(N)]
    table = [[math.cos(math.pi * (j * (2 * q + 1)) / (2 * N)) for q in range(N)] for j in range(N)]
    return np.array(t), np.array(table)


def cheb_coefficients(f: list[float], table: list[list[float]]) -> list[float]:
    """Interpolation coefficients of the values f at the plan's points (see module docstring)."""
    N = len(f)
    c = []
    for j in range(N):
        acc = 0.0
        for q in range(N):
            acc += f[q] * table[j][q]
        c.append(acc * 2.0 / N)
    c[0] = c[0] * 0.5
    return c


def clenshaw(c: list[float], t: float) -> float:
    """sum_j c_j T_j(t)."""
    b1 = 0.0
    b2 = 0.0
    for j in range(len(c) - 1, 0, -1):
        b1, b2 = c[j] + 2.0 * t * b1 - b2, b1
    return c[0] + t * b1 - b2


def lift_nonnegative(c: list[float]) -> None:
    """Raise c_0 so that c_0 >= sum_{j>=1} |c_j|, a certificate of g >= 0 on [-1, 1]."""
    s = 0.0
    for j in range(1, len(c)):
        s += abs(c[j])
    if c[0] < s:
        c[0] = s


def cheb_integral(c: list[float]) -> list[float]:
    """Coefficients of F(t) = int_{-1}^t sum_j c_j T_j, so that F(-1) = 0."""
    d = len(c) - 1
    cc = [*c, 0.0, 0.0]
    C = [0.0] * (d + 2)
    C[1] = cc[0] - 0.5 * cc[2]
    for j in range(2, d + 2):
        C[j] = (cc[j - 1] - cc[j + 1]) / (2.0 * j)
    acc = 0.0
    for j in range(1, d + 2):
        acc += C[j] if j % 2 == 0 else -C[j]
    C[0] = -acc
    return C


def invert_cdf(C: list[float], u: float) -> float:
    """t in [-1, 1] with F(t) = u F(1), by bisection (F is nondecreasing once g >= 0)."""
    goal = u * clenshaw(C, 1.0)
    lo, hi = -1.0, 1.0
    for _ in range(BISECTION_STEPS):
        mid = 0.5 * (lo + hi)
        if clenshaw(C, mid) <= goal:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


class _Step:
    """The state of one step: variable i, its minibatch, and the energy E(v)."""

    def __init__(self, target: ContinuousFactorGraphTarget, x: np.ndarray, i: int) -> None:
        self.g = target
        self.x = x
        self.i = i
        self.start = int(target.adj_indptr[i])
        self.stop = int(target.adj_indptr[i + 1])
        self.counts: dict[int, int] = {}
        self.poisson = False
        self.lam = 1.0

    def phi(self, slot: int, v: float) -> float:
        g = self.g
        f = int(g.adj_factors[slot])
        o = float(self.x[g.adj_other[slot]])
        c0, c1, c2, c3 = (float(c) for c in g.coefs[f])
        t = int(g.types[f])
        if g.adj_pos[slot] == 0:
            return factor_value(t, c0, c1, c2, c3, v, o)
        return factor_value(t, c0, c1, c2, c3, o, v)

    def draw_counts(self, lam: float, rng: np.random.Generator) -> int:
        """Statement 1 at the current x (as in the discrete reference). Returns B."""
        g = self.g
        self.poisson = True
        self.lam = lam
        K = self.stop - self.start
        c = lam / g.L
        B = poisson_count((c + 1.0) * float(g.m_sum[self.i]), rng)
        xi = float(self.x[self.i])
        for _ in range(B):
            k = min(int(rng.random() * K), K - 1)
            if rng.random() >= g.alias_prob[self.start + k]:
                k = int(g.alias_idx[self.start + k])
            m = float(g.M[g.adj_factors[self.start + k]])
            base = c * m
            if rng.random() * (base + m) < base + self.phi(self.start + k, xi):
                self.counts[k] = self.counts.get(k, 0) + 1
        return B

    @property
    def width(self) -> int:
        """Factor evaluations per evaluation of E."""
        return len(self.counts) if self.poisson else self.stop - self.start

    def energy(self, v: float) -> float:
        acc = 0.0
        if self.poisson:
            L, lam, g = self.g.L, self.lam, self.g
            for k, s in self.counts.items():
                m = float(g.M[g.adj_factors[self.start + k]])
                acc += s * math.log1p(L * self.phi(self.start + k, v) / (lam * m))
        else:
            for slot in range(self.start, self.stop):
                acc += self.phi(slot, v)
        return acc

    def energy_max(self) -> float:
        if self.poisson:
            return sum(self.counts.values()) * math.log1p(self.g.L / self.lam)
        return float(self.g.m_sum[self.i])


def run(
    target: ContinuousFactorGraphTarget,
    n_steps: int,
    rng: np.random.Generator,
    x0: Any,
    method: str,
    poisson: bool,
    lam: float = 1.0,
    m: int = 3,
    k: int = 10,
    mh: bool = True,
    max_proposals: int = 0,
    envelope: float | None = None,
) -> Chain:
    """The shared driver of the six samplers. ``mh=False`` drops the MH correction of ``its`` /
    ``da`` (a deliberately biased kernel, used only as the tests' negative control).

    Rejection only, both off by default (exact sampling): ``envelope`` replaces the exact bound
    E_max by a chosen log-height log w, accepting with probability min(1, exp(E(v) - log w))
    (003 Sec. 4.2-4.3's "proposal w g, w tuned"; biased where log w < E); ``max_proposals`` > 0
    gives up after that many proposals and keeps x(i) (003 Sec. 4.3's fixed budget). With
    either set the chain also reports ``accepted`` per step."""
    code = METHODS[method]
    if poisson:
        lam = check_positive(lam, "lam")
    m = check_degree("m", m)
    k = check_degree("k", k)
    max_proposals, envelope = check_budget(max_proposals, envelope)
    x = initial_state(target, x0)
    a, b = target.a, target.b
    mid, half = 0.5 * (a + b), 0.5 * (b - a)
    tm, table_m = (p.tolist() for p in cheb_plan(m))
    tk, table_k = (p.tolist() for p in cheb_plan(k))
    vm = [mid + half * t for t in tm]
    values = np.empty((n_steps, target.n_vars))
    # rows: factors in E, factor evaluations, proposals (rejection) or accepted (MH), B, kept,
    # accepted (rejection)
    stats = np.zeros((6, n_steps), dtype=np.int64)
    for step in range(n_steps):
        i = int(rng.integers(0, target.n_vars))
        st = _Step(target, x, i)
        B = st.draw_counts(lam, rng) if poisson else 0
        n_energy = 0
        if code == 0:
            top = st.energy_max() if envelope is None else envelope
            while True:
                v = a + (b - a) * rng.random()
                e = st.energy(v)
                n_energy += 1
                if rng.random() < math.exp(e - top):
                    x[i] = v
                    stats[5, step] = 1
                    break
                if n_energy == max_proposals:
                    break
            stats[2, step] = n_energy
        else:
            E = [st.energy(v) for v in vm]
            n_energy += len(vm)
            top = max(E)
            if code == 1:
                f = [math.exp(e - top) for e in E]
                c = cheb_coefficients(f, table_m)
            else:
                cE = cheb_coefficients([e - top for e in E], table_m)
                f = [math.exp(clenshaw(cE, t)) for t in tk]
                c = cheb_coefficients(f, table_k)
            lift_nonnegative(c)
            t_new = invert_cdf(cheb_integral(c), rng.random())
            v = min(max(mid + half * t_new, a), b)
            if mh:
                xi = float(x[i])
                t_old = min(max((xi - mid) / half, -1.0), 1.0)
                t_new = min(max((v - mid) / half, -1.0), 1.0)
                e_new, e_old = st.energy(v), st.energy(xi)
                n_energy += 2
                ratio = math.exp(e_new - e_old) * clenshaw(c, t_old)
                if rng.random() * clenshaw(c, t_new) < ratio:
                    x[i] = v
                    stats[2, step] = 1
            else:
                x[i] = v
                stats[2, step] = 1
        stats[0, step] = st.width
        stats[1, step] = B + st.width * n_energy
        stats[3, step] = B
        stats[4, step] = sum(st.counts.values())
        values[step] = x
    return pack_chain(values, stats, code, poisson, max_proposals > 0 or envelope is not None)


def check_budget(max_proposals: Any, envelope: Any) -> tuple[int, float | None]:
    """The two rejection-budget options of ``run``, checked (0 and None: off; an envelope of
    +inf, the registered default, is None: the exact bound)."""
    if isinstance(max_proposals, bool) or not isinstance(max_proposals, int | np.integer):
        raise ValueError(f"max_proposals = {max_proposals!r}; valid: an integer >= 0 (0: none)")
    if max_proposals < 0:
        raise ValueError(f"max_proposals = {max_proposals!r}; valid: an integer >= 0 (0: none)")
    if envelope == math.inf:
        envelope = None
    if envelope is not None:
        ok = isinstance(envelope, int | float) and not isinstance(envelope, bool)
        if not ok or not math.isfinite(envelope):
            raise ValueError(f"envelope = {envelope!r}; valid: None or a finite log-height")
        envelope = float(envelope)
    return int(max_proposals), envelope


def pack_chain(
    values: np.ndarray, stats: np.ndarray, code: int, poisson: bool, budget: bool = False
) -> Chain:
    extras = {"factors_per_step": stats[0], "evals_per_step": stats[1]}
    extras["proposals_per_step" if code == 0 else "accepted"] = stats[2]
    if code == 0 and budget:
        extras["accepted"] = stats[5]
    if poisson:
        extras["draws_per_step"] = stats[3]
        extras["kept_per_step"] = stats[4]
    return Chain(values, int(stats[1].sum()), extras)


class Samplers(NamedTuple):
    """A build's six public samplers, each ``run`` with its (method, poisson) fixed."""

    gibbs_rejection: Callable[..., Chain]
    pg_rejection: Callable[..., Chain]
    gibbs_its: Callable[..., Chain]
    pgits: Callable[..., Chain]
    gibbs_da: Callable[..., Chain]
    pgda: Callable[..., Chain]


def samplers(run: Callable[..., Chain], build: str) -> Samplers:
    """The six samplers over ``run``: this module's :func:`run`, or the compiled build's
    (``build`` names it in the docstrings)."""

    def bind(method: str, poisson: bool) -> Callable[..., Chain]:
        def sampler(
            target: ContinuousFactorGraphTarget,
            n_steps: int,
            rng: np.random.Generator,
            x0: Any = None,
            **params: Any,
        ) -> Chain:
            return run(target, n_steps, rng, x0, method, poisson, **params)

        sampler.__name__ = f"{'pg' if poisson else 'gibbs'}_{method}"
        kind = "Poisson-Gibbs" if poisson else "Gibbs"
        sampler.__doc__ = f"{kind} with {method} ({build}); see ``run``."
        return sampler

    return Samplers(*(bind(m, p) for m in METHODS for p in (False, True)))


gibbs_rejection, pg_rejection, gibbs_its, pgits, gibbs_da, pgda = samplers(run, "reference")
