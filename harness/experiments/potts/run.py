"""One Potts chain as a task (003_07f92522b9b1c588.txt, Sec. 4.1, Fig. 1/2).

By symmetry each marginal is uniform over the D values, so the l2 distance between the running
empirical marginals and uniform measures convergence. A chain runs in chunks; at geometric
checkpoints it records the error and the sampler time spent so far, and at the end the mean
factor counts per iteration: one record per (sampler, replicate).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from functools import lru_cache, partial
from typing import Any

import numpy as np

from harness.experiments.common import checkpoints
from harness.experiments.potts.settings import ALGORITHMS, IMPL, RunSetting
from harness.registry import build_registry
from harness.spec import Chain, sample
from harness.targets.factor_graph import FactorGraphTarget, potts_grid

#: Longest chunk handed to one sampler call: its (steps, n_vars) int64 output must fit in memory.
MAX_CHUNK = 25_000


@lru_cache(maxsize=2)
def build_target(side: int, beta: float, D: int, scale: float) -> FactorGraphTarget:
    return potts_grid(side, beta, D, scale=scale)


@lru_cache(maxsize=1)
def _kernels() -> dict[str, Callable[..., Chain]]:
    """Each sampler through the registry's one validated entry point (it carries ``x0``)."""
    registry = build_registry()
    return {name: partial(sample, registry.get(name), IMPL) for name in ALGORITHMS}


def warm() -> None:
    """Compile (or load from cache) every kernel, so no timed chunk includes it."""
    tiny = potts_grid(2, 1.0, 3)
    params: dict[str, dict[str, float]] = {
        "gibbs": {},
        "poisson-gibbs": {"lam": 2.0},
        "double-min-gibbs": {"lam": 2.0, "lam2": 2.0},
    }
    for name, kernel in _kernels().items():
        kernel(tiny, 3, np.random.default_rng(0), **params[name])


def _marginal_errors(counts: np.ndarray, t: int) -> tuple[float, float]:
    """(mean over sites of the per-site l2 error, pooled l2 error) of counts / t against 1/D."""
    diff = counts / t - 1.0 / counts.shape[1]
    per_site = np.sqrt((diff * diff).sum(axis=1))
    return float(per_site.mean()), float(math.sqrt(float((diff * diff).sum())))


def _per_call_setup(
    target: FactorGraphTarget, kernel: Callable[..., Chain], x: np.ndarray, params: dict
) -> float:
    """Seconds a one-step call takes: the set-up a wrapper repeats at every call (DoubleMIN's
    rebuilds the global alias table over all factors, ~50 ms in Python on the 20 x 20 model;
    the others only allocate their outputs), counted once, not per chunk. Its own generator,
    so the chain's stream is the same whether or not it is measured."""
    times = []
    for seed in range(3):
        t0 = time.perf_counter()
        kernel(target, 1, np.random.default_rng(seed), x0=x, **params)
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def run_chain(s: RunSetting, seed: int, *, rng: np.random.Generator) -> list[dict[str, Any]]:
    """Run one chain in chunks; record the error and the sampler time at each checkpoint.

    ``rng`` is the task's generator, ``SeedKey.from_label(seed, s.key)``.
    """
    t_start = time.perf_counter()
    target = build_target(s.side, s.beta, s.D, s.scale)
    kernel = _kernels()[s.sampler.algorithm]
    params = s.sampler.params(target.L)
    n, D = target.n_vars, target.D
    offsets = (np.arange(n, dtype=np.int64) * D)[None, :]
    counts = np.zeros((n, D), dtype=np.int64)
    x = np.zeros(n, dtype=np.int64)
    sums: dict[str, float] = {}
    errors, pooled, times = [], [], []
    done, chunks = 0, 0
    marks = checkpoints(s.sampler.n_steps, s.checkpoints)
    setup = _per_call_setup(target, kernel, x, params)
    spent = setup  # paid once, as a sampler that is not cut into chunks would
    for mark in marks:
        while done < mark:
            steps = min(MAX_CHUNK, mark - done)
            t0 = time.perf_counter()
            chain = kernel(target, steps, rng, x0=x, **params)
            spent += max(time.perf_counter() - t0 - setup, 0.0)
            chunks += 1
            flat = (chain.values + offsets).ravel()
            counts += np.bincount(flat, minlength=n * D).reshape(n, D)
            x = chain.values[-1].copy()
            for name, arr in chain.extras.items():
                sums[name] = sums.get(name, 0.0) + float(np.sum(arr))
            done += steps
        e, p = _marginal_errors(counts, done)
        errors.append(e)
        pooled.append(p)
        times.append(spent)

    def mean(name: str) -> float | None:
        return sums[name] / done if name in sums else None

    record = {
        "key": s.key,
        "label": s.sampler.label,
        "algorithm": s.sampler.algorithm,
        "replicate": s.replicate,
        "n_steps": s.sampler.n_steps,
        "params": params,
        "L": target.L,
        "n_vars": n,
        "D": D,
        "iterations": marks,
        "sampler_s": tuple(times),
        "error": tuple(errors),
        "error_pooled": tuple(pooled),
        "factors_per_iter": sums["factors_per_step"] / done,
        "draws_per_iter": mean("draws_per_step"),
        "kept_per_iter": mean("kept_per_step"),
        "second_per_iter": mean("second_per_step"),
        "accept_rate": mean("accepted"),
        "paper_factors": s.sampler.paper_factors,
        "chunks": chunks,
        "setup_s": setup,
        "wall_s": time.perf_counter() - t_start,
        "impl": IMPL,
        "type": "chain",
    }
    return [record]
