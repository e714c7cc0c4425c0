"""Regular random-walk MH on a GLM posterior (002_3c1996bf78df7865.txt, Table 1's baseline;
``fast.rwmh``) with the full-data log-likelihood summed on a CUDA device: the ``cuda`` key of
``rwmh``.

Every new theta reads all N likelihood terms, as the baseline's cost model says; on the device
a block sums a chunk of them (:mod:`implementations.firefly.cuda_kernels`) and the host adds
the chunks. The proposal noise and the acceptance uniform come from the host Generator in
``fast.py``'s order (D normals, then one uniform, per step), and theta' = theta + step z is
formed on the host as the Numba kernel forms it, so the two chains are equal step for step
until an acceptance decision lands within summation-order rounding of its threshold. There the
device's log ratio may fall on the other side, and from that step on the chains take different
paths. Each step reports its ``margin`` |log u - log ratio| and its ``tolerance``
(:func:`implementations.shared.cuda.tolerance` of both log posteriors), and
``harness.gates.device_agreement`` allows a chain to part from the Numba chain only at a step
whose margin is within its tolerance.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numpy.random import Generator

from harness.spec import Chain
from harness.targets.glm_kernels import log_prior_value
from implementations.firefly.reference import start
from implementations.shared.cuda import require, split_row, tolerance
from implementations.shared.reference import log_or_minus_inf

#: Blocks to aim for on large N; a block sums at least MIN_CHUNK terms (below that the launch
#: costs more than the work).
TARGET_BLOCKS = 1024
MIN_CHUNK = 512


class Resident(NamedTuple):
    """A GLM posterior's data on the device, and buffers for theta and the partial sums."""

    model: int
    X: Any
    t: Any
    nu: float
    prior_sd: float
    chunk: int
    chunks: int
    theta: Any
    out: Any


class Evaluation(NamedTuple):
    """log p(theta | data) and the sum of the magnitudes of its terms."""

    log_posterior: float
    magnitude: float


def resident(target: Any) -> Resident:
    """Copy ``target``'s data to the device, once per chain."""
    require()
    from numba import cuda

    from implementations.firefly.cuda_kernels import MAX_CLASSES

    if target.K > MAX_CLASSES:
        raise ValueError(
            f"target {target.name!r} has K = {target.K} classes; valid for the cuda key: "
            f"1 to {MAX_CLASSES}"
        )
    chunk, chunks = split_row(target.N, TARGET_BLOCKS, MIN_CHUNK)
    return Resident(
        target.code,
        cuda.to_device(np.ascontiguousarray(target.X, dtype=np.float64)),
        cuda.to_device(np.ascontiguousarray(target.t, dtype=np.float64)),
        float(target.nu),
        float(target.prior_sd),
        chunk,
        chunks,
        cuda.device_array(target.D),
        cuda.device_array((2, chunks)),
    )


def log_posterior(data: Resident, theta: np.ndarray) -> Evaluation:
    """log prior + sum_n log L_n(theta), the sum over all N data computed on the device."""
    from implementations.firefly import cuda_kernels as k

    data.theta.copy_to_device(theta)
    k.log_lik_sums[data.chunks, k.THREADS](
        data.model, data.X, data.t, data.nu, data.theta, data.chunk, data.out
    )
    sums = data.out.copy_to_host()
    prior = log_prior_value(theta, data.prior_sd)
    return Evaluation(prior + float(np.sum(sums[0])), abs(prior) + float(np.sum(sums[1])))


def rwmh(target: Any, n_steps: int, rng: Generator, x0: Any = None, step: float = 0.3) -> Chain:
    """fast.rwmh with each log posterior on the device. Extras: ``draw_evals``,
    ``accepted``, and per step ``margin`` and ``tolerance`` (module docstring)."""
    return rwmh_resident(resident(target), target, n_steps, rng, x0, step)


def rwmh_resident(
    data: Resident, target: Any, n_steps: int, rng: Generator, x0: Any = None, step: float = 0.3
) -> Chain:
    """:func:`rwmh` on ``target``'s data already on the device (``resident(target)``)."""
    N, D = target.N, target.D
    cur = start(target, x0)
    here = None
    values = np.empty((n_steps, D))
    per_step = np.full(n_steps, N, dtype=np.int64)
    accepted = np.zeros(n_steps, dtype=bool)
    margin = np.empty(n_steps)
    tol = np.empty(n_steps)
    for i in range(n_steps):
        prop = cur + step * rng.standard_normal(D)
        log_u = log_or_minus_inf(rng.random())
        there = log_posterior(data, prop)
        if here is None:  # the start's density, read once (N more queries in step 0)
            here = log_posterior(data, cur)
            per_step[i] += N
        log_ratio = there.log_posterior - here.log_posterior
        margin[i] = abs(log_u - log_ratio)
        tol[i] = tolerance(N, data.chunks, there.magnitude) + tolerance(
            N, data.chunks, here.magnitude
        )
        if log_u < log_ratio:
            cur, here = prop, there
            accepted[i] = True
        values[i] = cur
    extras = {"draw_evals": per_step, "accepted": accepted, "margin": margin, "tolerance": tol}
    return Chain(values, int(per_step.sum()), extras)
