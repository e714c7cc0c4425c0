"""Planted bugs in exact Gumbel-family samplers (000 Sec. 2.1, 001): subtle negative controls for
the chi-square, ks, ks-gumbel-max and ks-process gates.

Each sampler is a plausible slip in Gumbel-max, CDF inversion, the truncated Gumbel or the
top-down construction that moves its output law by a few percent or less: clipped uniforms,
float32 sums, a pruned support, an off-by-one CDF table, a naive or linearised far-tail formula,
a rejection loop that gives up.

Loaded with ``harness verify --plugin tests/plugins/planted_gumbel.py``.
"""

import heapq
import itertools
import math

import numpy as np

import harness
from harness.spec import Check


def _logp(target):
    """log p~(i) = sum_n log f_n(i) + log f_0(i), summed left to right."""
    return np.cumsum(target.log_factors, axis=1)[:, -1] + target.log_f0


def _gumbel_max(target, n, logp, g):
    """argmax of logp + g per row, with the maximum itself as extras["gumbel_max"]."""
    D, N = target.log_factors.shape
    perturbed = logp + g
    x = np.argmax(perturbed, axis=1)
    return harness.Draws(x, n * N * D, {"gumbel_max": perturbed[np.arange(n), x]})


def gumbel_max_clipped_uniform(target, n, rng):
    """Bug: uniforms behind -log(-log u) clipped to [0.01, 0.99] (max's CDF 2.5% off).

    Clipped "to keep the logs finite", which cuts both Gumbel tails: the maximum's CDF is off
    by 2.5%, the sample's law by 1.2% in TV.

    Caught by: ks-gumbel-max, chi-square"""
    D = target.log_factors.shape[0]
    u = np.clip(rng.random((n, D)), 0.01, 0.99)
    return _gumbel_max(target, n, _logp(target), -np.log(-np.log(u)))


def gumbel_max_float32_sum(target, n, rng):
    """Bug: log p~ is accumulated in float32 (the law off by 5.8% in TV, w = 0.18).

    40000 terms summed to about -21000 on cv-studentt-D10-N40000: the running sums drift by
    about 3 and differ between states by 0.8 (sd). On the N = 4000 problem the same bug is off
    by only 0.5% in TV (w = 0.01), below what 1e5 draws resolve.

    Caught by: chi-square, ks-gumbel-max"""
    D = target.log_factors.shape[0]
    lf = target.log_factors.astype(np.float32)
    logp = np.cumsum(lf, axis=1, dtype=np.float32)[:, -1] + target.log_f0.astype(np.float32)
    return _gumbel_max(
        target, n, logp.astype(np.float64), -np.log(rng.standard_exponential((n, D)))
    )


def _invert(F, n, rng):
    """x with F[x-1] < u F[-1] <= F[x] for u ~ Uniform(0, 1]."""
    return np.searchsorted(F, (1.0 - rng.random(n)) * F[-1], side="left")


def cdf_inversion_prune(target, n, rng, tol=0.015):
    """Bug: states below 1.5% of the mode's weight are dropped (0.4% of the mass).

    Pruned as negligible before the CDF is built; 0.4% of the mass on
    synthetic-lognormal-D100-N50.

    Caught by: chi-square"""
    D, N = target.log_factors.shape
    logp = _logp(target)
    w = np.exp(logp - logp.max())
    w[w < tol] = 0.0
    return harness.Draws(_invert(np.cumsum(w), n, rng), n * N * D)


def cdf_inversion_off_by_one(target, n, rng):
    """Bug: the CDF table stops at D - 1, so the last state (0.44%) is never drawn.

    The table is filled for j in range(D - 1); on synthetic-normal-D10-N200 the last state's
    0.44% of the mass goes to the others.

    Caught by: chi-square"""
    D, N = target.log_factors.shape
    logp = _logp(target)
    w = np.exp(logp - logp.max())
    F = np.empty(D - 1)
    acc = 0.0
    for j in range(D - 1):
        acc += w[j]
        F[j] = acc
    return harness.Draws(_invert(F, n, rng), n * N * D)


def trunc_gumbel_naive(target, n, rng):
    """Bug: TruncGumbel as phi - log(E + exp(phi - b)) loses E far in the tail (2%).

    Without the log-add-exp split of 001, footnote 1: for b - phi = -30 the sum E + e^30 keeps E
    only to steps of 0.04, a lattice that moves the CDF by about 2%.

    Caught by: ks"""
    e = rng.standard_exponential(n)
    return harness.Draws(target.phi - np.log(e + np.exp(target.phi - target.b)), 0)


def trunc_gumbel_linearised(target, n, rng):
    """Bug: b - log1p(E exp(b - phi)) linearised for b - phi < -2 (CDF off by 1.3%).

    "log1p(z) ~ z for small z": at b - phi = -3, z = E e^-3 is not small enough.

    Caught by: ks"""
    e = rng.standard_exponential(n)
    c = target.b - target.phi
    if c < -2.0:
        values = target.b - e * math.exp(c)
    else:
        values = target.phi - np.logaddexp(np.log(e), -c)
    return harness.Draws(values, 0)


def trunc_gumbel_rejection_cap(target, n, rng, tries=3):
    """Bug: rejection sampling returns b after 3 failed tries (an atom of 3% at b).

    Proposals from Gumbel(phi); on truncgumbel-phi0-b1 each is rejected with probability 0.31.

    Caught by: ks"""
    g = target.phi - np.log(rng.standard_exponential((n, tries)))
    inside = g <= target.b
    first = np.argmax(inside, axis=1)
    values = np.where(inside.any(axis=1), g[np.arange(n), first], target.b)
    return harness.Draws(values, 0)


def top_down_capped_children(target, n, rng, tries=10):
    """Bug: a child's TruncGumbel is capped at G after 10 rejections (3% off).

    Top-down construction (001, Alg. 1) whose children draw TruncGumbel(log mu(B), G) by
    rejection from Gumbel(log mu(B)) and return G itself after 10 tries: the per-state process
    values' CDFs are off by about 3%; the sample and its maximum stay exact.

    Caught by: ks-process"""
    D, N = target.log_factors.shape
    logp = _logp(target)
    values = np.empty(n, dtype=np.int64)
    proc_g = np.empty((n, D))
    proc_x = np.empty((n, D), dtype=np.int64)

    def node(lo, hi, upper):
        m = logp[lo:hi].max()
        F = np.cumsum(np.exp(logp[lo:hi] - m))
        log_mass = m + math.log(F[-1])
        g = log_mass - math.log(rng.standard_exponential())
        for _ in range(tries - 1):
            if g <= upper:
                break
            g = log_mass - math.log(rng.standard_exponential())
        g = min(g, upper)
        x = lo + int(np.searchsorted(F, (1.0 - rng.random()) * F[-1], side="left"))
        return g, x

    for k in range(n):
        g, x = node(0, D, math.inf)
        order = itertools.count()  # breaks ties of G in the heap
        heap = [(-g, next(order), 0, D, x)]
        for j in range(D):
            neg_g, _, lo, hi, x = heapq.heappop(heap)
            proc_g[k, j], proc_x[k, j] = -neg_g, x
            for clo, chi in ((lo, x), (x + 1, hi)):
                if chi > clo:
                    cg, cx = node(clo, chi, -neg_g)
                    heapq.heappush(heap, (-cg, next(order), clo, chi, cx))
        values[k] = proc_x[k, 0]
    extras = {"gumbel_max": proc_g[:, 0], "process_values": proc_g, "process_locations": proc_x}
    return harness.Draws(values, n * N * D, extras)


def _register(name, fn, kinds, problems):
    harness.register(
        harness.AlgorithmSpec(
            name=name,
            family="planted:gumbel",
            paper="planted bug",
            guarantee="exact",
            target_kinds=kinds,
            implementations={"reference": fn},
            splittable=False,
            summary=fn.__doc__ or "",
            checks=(Check(problems=problems),),
        )
    )


for _name, _fn, _kinds, _problem in (
    (
        "planted-gumbel-max-clipped-uniform",
        gumbel_max_clipped_uniform,
        "discrete",
        "synthetic-normal-D10-N200",
    ),
    (
        "planted-gumbel-max-float32-sum",
        gumbel_max_float32_sum,
        "discrete",
        "cv-studentt-D10-N40000",
    ),
    (
        "planted-cdf-inversion-prune",
        cdf_inversion_prune,
        "discrete",
        "synthetic-lognormal-D100-N50",
    ),
    (
        "planted-cdf-inversion-off-by-one",
        cdf_inversion_off_by_one,
        "discrete",
        "synthetic-normal-D10-N200",
    ),
    ("planted-trunc-gumbel-naive", trunc_gumbel_naive, "continuous-1d", "truncgumbel-phi30-b0"),
    (
        "planted-trunc-gumbel-linearised",
        trunc_gumbel_linearised,
        "continuous-1d",
        "truncgumbel-phi0-b-3",
    ),
    (
        "planted-trunc-gumbel-rejection-cap",
        trunc_gumbel_rejection_cap,
        "continuous-1d",
        "truncgumbel-phi0-b1",
    ),
    (
        "planted-top-down-capped-children",
        top_down_capped_children,
        "discrete",
        "synthetic-normal-D10-N200",
    ),
):
    _register(_name, _fn, (_kinds,), (_problem,))
