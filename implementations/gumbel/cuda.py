"""CUDA kernels (numba-cuda) for exact Gumbel-max and CDF-inversion draws, and thin wrappers
with the reference's signatures: the ``cuda`` implementation key.

Every draw reads all N x D log-factors, as the reference's cost model says (000, Sec. 2.1); on
the ``discrete-likelihood`` kind every term is computed on the device from X, y and theta by
the same :func:`harness.targets.likelihood_terms.log_term` the Numba kernels call.

Randomness. The noise is small (D exponentials a draw), so it comes from the host Generator in
the order ``fast.py`` draws it: a ``cuda`` draw and a ``numba`` draw see the same noise and
leave the Generator in the same state. The sums are not in the lane order: a block reduces its
slice of a row as a tree, so each log p~(i) can differ from the Numba value by summation-order
rounding. Each draw therefore reports its ``margin`` (Gumbel-max: the gap between the two best
perturbed values; CDF inversion: the distance of u F(D) from the nearest CDF step, in the same
units) and a ``tolerance``: a rigorous bound, 2 (N + chunks) eps sum_n |l_n(i)|, on the
difference two summation orders can make. A ``cuda`` draw may differ from the ``numba`` draw
only where its margin is within its tolerance (``harness.gates.device_agreement``).

numba-cuda is optional (``sampler-harness[cuda]``); nothing here imports it until a draw is
asked for, and :func:`implementations.shared.cuda.require` says in one line why a machine
cannot run the key.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from harness.spec import Draws
from harness.targets.likelihood_terms import KIND as LIKELIHOOD
from implementations.shared.cuda import require, split_row, tolerance

#: Blocks to aim for, so that a row split into chunks keeps every SM busy when D is small.
TARGET_BLOCKS = 1024
#: The fewest factors a block sums: below it the launch costs more than the reads.
MIN_CHUNK = 4096


class Kernels(NamedTuple):
    threads: int
    stored_sums: Any
    computed_sums: Any
    pick_max: Any
    invert_cdf: Any


def kernels() -> Kernels:
    """The compiled kernels (numba-cuda compiles each once per process and signature); raises
    RuntimeError naming the reason where this machine cannot run them."""
    require()
    from implementations.gumbel import cuda_kernels as k

    return Kernels(k.THREADS, k.stored_sums, k.computed_sums, k.pick_max, k.invert_cdf)


def chunking(D: int, N: int, n: int) -> tuple[int, int]:
    """(chunk, chunks): a row's factors split so that D x chunks x n blocks fill the device."""
    return split_row(N, max(1, -(-TARGET_BLOCKS // max(D * n, 1))), MIN_CHUNK)


class Resident(NamedTuple):
    """A target's data on the device: the stored D x N log-factors, or (X, y, theta) and the
    model's scalars for computed terms; uploaded once, read by every draw."""

    D: int
    N: int
    log_f0: Any
    factors: Any = None
    terms: tuple = ()


def resident(target) -> Resident:
    """Copy ``target``'s data to the device (what :func:`gumbel_max` does on every call)."""
    from numba import cuda

    kernels()
    log_f0 = cuda.to_device(np.ascontiguousarray(target.log_f0, dtype=np.float64))
    if target.kind == LIKELIHOOD:
        model, X, y, theta, nu, scale = target.kernel_args
        arrays = tuple(cuda.to_device(np.ascontiguousarray(a)) for a in (X, y, theta))
        return Resident(target.D, target.N, log_f0, terms=(model, *arrays, nu, scale))
    factors = cuda.to_device(np.ascontiguousarray(target.log_factors, dtype=np.float64))
    return Resident(target.D, target.N, log_f0, factors=factors)


def row_sums(data: Resident, n: int) -> tuple[Any, Any]:
    """Device arrays (n, D, chunks) of partial sums of log-factors and of their magnitudes:
    ``n`` independent reads of every factor (every term computed anew on the computed kind)."""
    from numba import cuda

    k = kernels()
    chunk, chunks = chunking(data.D, data.N, n)
    out = cuda.device_array((n, data.D, chunks))
    out_abs = cuda.device_array((n, data.D, chunks))
    grid = (data.D, chunks, n)
    if data.terms:
        k.computed_sums[grid, k.threads](*data.terms, chunk, out, out_abs)
    else:
        k.stored_sums[grid, k.threads](data.factors, chunk, out, out_abs)
    return out, out_abs


def gumbel_max(target, n: int, rng: np.random.Generator, parallel: bool = False) -> Draws:
    """fast.gumbel_max on the device (``parallel`` is a Numba option and changes nothing)."""
    return gumbel_max_resident(resident(target), n, rng)


def gumbel_max_resident(data: Resident, n: int, rng: np.random.Generator) -> Draws:
    """n Gumbel-max draws from data already on the device."""
    from numba import cuda

    D, N = data.D, data.N
    expo = rng.standard_exponential((n, D))  # fast.py's order: draw k's D exponentials
    partial, partial_abs = row_sums(data, n)
    values = cuda.device_array(n, dtype=np.int64)
    gmax, margin, mag = (cuda.device_array(n) for _ in range(3))
    k = kernels()
    k.pick_max[n, k.threads](
        partial, partial_abs, data.log_f0, cuda.to_device(expo),
        values, gmax, margin, mag,
    )  # fmt: skip
    extras = {
        "gumbel_max": gmax.copy_to_host(),
        "margin": margin.copy_to_host(),
        "tolerance": tolerance(N, partial.shape[2], mag.copy_to_host()),
    }
    return Draws(values.copy_to_host(), n * N * D, extras)


def cdf_inversion(target, n: int, rng: np.random.Generator, parallel: bool = False) -> Draws:
    """fast.cdf_inversion on the device: u = 1 - U(0, 1) from the host, one per draw."""
    from numba import cuda

    data = resident(target)
    D, N = data.D, data.N
    u = 1.0 - rng.random(n)
    partial, partial_abs = row_sums(data, n)
    values = cuda.device_array(n, dtype=np.int64)
    margin, mag = cuda.device_array(n), cuda.device_array(n)
    F = cuda.device_array((n, D))
    k = kernels()
    k.invert_cdf[-(-n // k.threads), k.threads](
        partial, partial_abs, data.log_f0, cuda.to_device(u), F,
        values, margin, mag,
    )  # fmt: skip
    # A log p~ error of tol moves each weight by a factor e^(+-tol): F(x) / F(D) by 2 tol.
    extras = {
        "margin": margin.copy_to_host(),
        "tolerance": 2.0 * tolerance(N, partial.shape[2], mag.copy_to_host()),
    }
    return Draws(values.copy_to_host(), n * N * D, extras)
