"""Exact discrete sampling with Gumbel noise: the readable NumPy reference.

Read against:
- 000_26bed7cc1ef3ab92.txt, Sec. 2.1 (CDF inversion; Gumbel-max, Eq. 2-3, footnote 1);
- 001_78ff986a3d316097.txt, Sec. 2-3 (Gumbel process, Eq. 1-2), footnote 1 (truncated Gumbel)
  and Alg. 1 (top-down construction).

Bit-for-bit agreement with ``fast.py`` rests on three rules (DESIGN.md, Randomness):
- draws come from the Generator in the same order and through the same methods;
- sums over factors run in one fixed order both can stream at memory speed: 8 lanes, lane l
  adding factors l, l + 8, l + 16, ... left to right, the lanes then paired as
  ((0 + 1) + (2 + 3)) + ((4 + 5) + (6 + 7)) (:func:`log_unnormalised`, with the shared
  :func:`implementations.shared.reference.lane_sums`);
- scalar transcendental functions come from ``math`` (libm), which is what Numba calls. NumPy's
  SIMD ``np.log``/``np.exp`` can differ from libm in the last bit.

Cost model (000, Sec. 2.1): every draw is a fresh problem that needs log p~(i) for all i, so each
exact draw spends N * D factor evaluations.
"""

from __future__ import annotations

import heapq
import math

import numpy as np

from harness.spec import Draws
from implementations.shared.reference import (
    gumbel_below,
    gumbel_noise,
    lane_sums,
    trunc_gumbel_from_exponential,
)


def log_unnormalised(log_factors: np.ndarray, log_f0: np.ndarray) -> np.ndarray:
    """log p~(i) = sum_n log f_n(i) + log f_0(i) (000, Eq. 1), each row in the lane order
    (:func:`~implementations.shared.reference.lane_sums`)."""
    return lane_sums(log_factors) + log_f0


def factor_matrix(target) -> np.ndarray:
    """All N x D log-factors of one draw: the stored matrix, or on a ``discrete-likelihood``
    target every likelihood term computed from the data (000, Sec. 2.1: an exact draw needs
    them all)."""
    if target.kind == "discrete-likelihood":
        return target.terms(range(target.D), range(target.N))
    return target.log_factors


def _log_sum_exp_cdf(logp: np.ndarray) -> tuple[float, np.ndarray]:
    """Shift by the max, exponentiate with libm, accumulate left to right.

    Returns (max, F) with F[j] = sum_{i <= j} exp(logp[i] - max); log mass = max + log F[-1].
    """
    m = float(np.max(logp))
    w = np.array([math.exp(v - m) for v in logp])
    return m, np.cumsum(w)


def _invert(F: np.ndarray, u: float) -> int:
    """The x with F(x-1) < u F(last) <= F(x) for u in (0, 1] (000, Sec. 2.1)."""
    return int(np.searchsorted(F, u * F[-1], side="left"))


def gumbel_max(target, n: int, rng: np.random.Generator, parallel: bool = False) -> Draws:
    """x = argmax_i log p~(i) + eps_i with eps_i ~ Gumbel(0, 1) (000, Eq. 2).

    eps_i = -log(E_i), E_i ~ Exp(1) (000, footnote 1); log p~ from :func:`factor_matrix`
    (computed anew for every draw). The maximum itself is returned as
    ``extras["gumbel_max"]``; by max-stability (001, Eq. 1) it is Gumbel(log Z). ``parallel``
    splits the rows over threads in the compiled version only (the same values).
    """
    D, N = target.D, target.N
    values = np.empty(n, dtype=np.int64)
    gmax = np.empty(n)
    for k in range(n):
        logp = log_unnormalised(factor_matrix(target), target.log_f0)
        eps = gumbel_noise(D, rng)
        perturbed = logp + eps
        x = int(np.argmax(perturbed))
        values[k] = x
        gmax[k] = perturbed[x]
    return Draws(values, n * N * D, {"gumbel_max": gmax})


def cdf_inversion(target, n: int, rng: np.random.Generator, parallel: bool = False) -> Draws:
    """Normalise p~, then invert the CDF with u ~ Uniform(0, 1] (000, Sec. 2.1); ``parallel``
    as in :func:`gumbel_max`."""
    D, N = target.log_factors.shape
    values = np.empty(n, dtype=np.int64)
    for k in range(n):
        logp = log_unnormalised(target.log_factors, target.log_f0)
        _, F = _log_sum_exp_cdf(logp)
        u = 1.0 - rng.random()
        values[k] = _invert(F, u)
    return Draws(values, n * N * D)


def truncated_gumbel(target, n: int, rng: np.random.Generator) -> Draws:
    """n independent TruncGumbel(phi, b) draws; no factor is evaluated."""
    values = np.empty(n)
    for k in range(n):
        values[k] = trunc_gumbel_from_exponential(target.phi, target.b, rng.standard_exponential())
    return Draws(values, 0)


def _new_node(
    logp: np.ndarray, lo: int, hi: int, upper: float, rng: np.random.Generator
) -> tuple[float, int]:
    """G ~ TruncGumbel(log mu(B), upper) and X ~ mu(. | B) for B = {lo, ..., hi-1}.

    ``upper = +inf`` gives the untruncated root G_1 ~ Gumbel(log mu(Omega)).
    """
    m, F = _log_sum_exp_cdf(logp[lo:hi])
    log_mass = m + math.log(F[-1])
    g = gumbel_below(log_mass, upper, rng.standard_exponential())
    u = 1.0 - rng.random()
    return g, lo + _invert(F, u)


def top_down(target, n: int, rng: np.random.Generator, full_process: bool = False) -> Draws:
    """Top-down construction of a discrete Gumbel process (001, Alg. 1).

    Each node is a block B = {lo, ..., hi-1} of states with its max G and argmax X. Popping a
    node emits (G, X) and splits B - {X} at X into L = {lo..X-1} and R = {X+1..hi-1}, whose
    maxima are Gumbels truncated at G (001, Eq. 4) and whose argmaxes are drawn from mu restricted
    to the block (001, Eq. 2). Nodes are popped from a max-heap on G, so the stream comes out in
    decreasing order of G; any processing order gives the same joint law.

    ``values`` holds X_1, an exact sample; ``extras["gumbel_max"]`` holds G_1 ~ Gumbel(log Z).
    With ``full_process=True`` each draw runs to the end and ``extras["process_values"]`` /
    ``["process_locations"]`` hold all D pairs (G_k, X_k): the G at state i is Gumbel(log p~(i)),
    independently over i.
    """
    D, N = target.log_factors.shape
    depth = D if full_process else 1
    values = np.empty(n, dtype=np.int64)
    gmax = np.empty(n)
    proc_g = np.empty((n, depth))
    proc_x = np.empty((n, depth), dtype=np.int64)
    for k in range(n):
        logp = log_unnormalised(target.log_factors, target.log_f0)
        g, x = _new_node(logp, 0, D, math.inf, rng)
        seq = 0
        heap = [(-g, seq, 0, D, x)]
        for j in range(depth):
            neg_g, _, lo, hi, x = heapq.heappop(heap)
            g = -neg_g
            proc_g[k, j] = g
            proc_x[k, j] = x
            if j + 1 == depth:
                break
            for clo, chi in ((lo, x), (x + 1, hi)):
                if chi > clo:
                    cg, cx = _new_node(logp, clo, chi, g, rng)
                    seq += 1
                    heapq.heappush(heap, (-cg, seq, clo, chi, cx))
        values[k] = proc_x[k, 0]
        gmax[k] = proc_g[k, 0]
    extras = {"gumbel_max": gmax}
    if full_process:
        extras.update(process_values=proc_g, process_locations=proc_x)
    return Draws(values, n * N * D, extras)
