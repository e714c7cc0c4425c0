"""The chains of the continuous spin experiment as tasks (003_07f92522b9b1c588.txt, Sec. 4.2).

One long Gibbs-ITS reference chain (its per-variable histograms are the ground truth), then the
compared chains (PGITS, PGDA and an independent Gibbs-ITS), each scored at geometric checkpoints
by the symmetric KL between its running per-variable histograms and the reference's. One record
per chain.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import lru_cache, partial
from typing import Any

import numpy as np

from harness.experiments.common import checkpoints
from harness.experiments.continuous_spin.settings import (
    ALGORITHMS,
    IMPL,
    PAPER_FACTORS,
    RunSetting,
)
from harness.registry import build_registry
from harness.spec import Chain, sample
from harness.targets.continuous_factor_graph import (
    ContinuousFactorGraphTarget,
    continuous_spin_grid,
)

#: Longest chunk per sampler call: its (steps, n_vars) float64 output must fit in memory.
MAX_CHUNK = 25_000
#: Pseudo-count per bin, so that an empty bin gives a finite KL (Jeffreys' 1/2).
PSEUDO_COUNT = 0.5


@lru_cache(maxsize=2)
def build_target(side: int, beta: float, scale: float) -> ContinuousFactorGraphTarget:
    return continuous_spin_grid(side, beta, scale)


@lru_cache(maxsize=1)
def _kernels() -> dict[str, Callable[..., Chain]]:
    """Each sampler through the registry's one validated entry point (it carries ``x0``)."""
    registry = build_registry()
    return {name: partial(sample, registry.get(name), IMPL) for name in ALGORITHMS}


def warm() -> None:
    """Compile (or load from cache) every kernel, so no timed chunk includes it."""
    tiny = continuous_spin_grid(2)
    params = {"gibbs-its": {"m": 3}, "pgits": {"lam": 2.0, "m": 3}}
    params["pgda"] = {"lam": 2.0, "m": 3, "k": 10}
    for name, kernel in _kernels().items():
        kernel(tiny, 3, np.random.default_rng(0), **params[name])


def bin_counts(values: np.ndarray, n_bins: int) -> np.ndarray:
    """(n_vars, n_bins) counts of the rows of ``values`` on equal bins of [0, 1]."""
    n = values.shape[1]
    idx = np.minimum((values * n_bins).astype(np.int64), n_bins - 1)
    flat = (idx + (np.arange(n, dtype=np.int64) * n_bins)[None, :]).ravel()
    return np.bincount(flat, minlength=n * n_bins).reshape(n, n_bins)


def sym_kl(counts: np.ndarray, ref_counts: np.ndarray) -> float:
    """Mean over variables of the symmetric KL between two smoothed per-variable histograms."""
    p = counts + PSEUDO_COUNT
    q = ref_counts + PSEUDO_COUNT
    p = p / p.sum(axis=1, keepdims=True)
    q = q / q.sum(axis=1, keepdims=True)
    return float(((p - q) * np.log(p / q)).sum(axis=1).mean())


def kl_floor(n_bins: int, n_vars: int, steps: int, ref_states: int) -> float:
    """2 (n_bins - 1) n_vars (1/T + 1/R): sym KL floor of T- and R-step random-scan histograms.

    (n_bins - 1) / N is E[sym KL] of N independent draws; T / n_vars updates per variable,
    each held for a geometric number of steps (weights with CV^2 ~ 1), give N ~ T / (2 n_vars).
    """
    return 2.0 * (n_bins - 1) * n_vars * (1.0 / steps + 1.0 / ref_states)


def _run_chunks(
    s: RunSetting,
    rng: np.random.Generator,
    marks: tuple[int, ...],
    on_mark: Callable[[np.ndarray], None],
) -> tuple[list[float], dict[str, float], int, ContinuousFactorGraphTarget, dict[str, float]]:
    """Run one chain in chunks; at each mark hand the running counts to ``on_mark``.

    Counts start after ``s.burn_in`` steps; returns the sampler seconds at each mark, the
    summed extras (over counted steps), the number of chunks, the target and the parameters.
    """
    target = build_target(s.side, s.beta, s.scale)
    kernel = _kernels()[s.algorithm]
    params = s.params(target.L)
    counts = np.zeros((target.n_vars, s.n_bins), dtype=np.int64)
    x = np.zeros(target.n_vars)
    sums: dict[str, float] = {}
    times: list[float] = []
    done, chunks, spent = 0, 0, 0.0
    for mark in marks:
        while done < mark:
            steps = min(MAX_CHUNK, mark - done)
            t0 = time.perf_counter()
            chain = kernel(target, steps, rng, x0=x, **params)
            spent += time.perf_counter() - t0
            chunks += 1
            skip = max(s.burn_in - done, 0)  # only the reference drops a burn-in
            if skip < steps:
                counts += bin_counts(chain.values[skip:], s.n_bins)
                for name, arr in chain.extras.items():
                    sums[name] = sums.get(name, 0.0) + float(np.sum(arr[skip:]))
            x = chain.values[-1].copy()
            done += steps
        on_mark(counts)
        times.append(spent)
    return times, sums, chunks, target, params


def run_reference(s: RunSetting, seed: int, *, rng: np.random.Generator) -> list[dict[str, Any]]:
    """The long Gibbs-ITS chain; keeps its histograms at the half and at the end.

    ``rng`` is the task's generator, ``SeedKey.from_label(seed, s.key)``.
    """
    t_start = time.perf_counter()
    half = s.burn_in + (s.n_steps - s.burn_in) // 2
    snaps: list[np.ndarray] = []
    times, sums, _, target, params = _run_chunks(
        s, rng, (half, s.n_steps), lambda c: snaps.append(c.copy())
    )
    first, full = snaps
    n = s.n_steps - s.burn_in
    record = {
        "key": s.key,
        "algorithm": s.algorithm,
        "n_steps": s.n_steps,
        "burn_in": s.burn_in,
        "params": params,
        "L": target.L,
        "n_vars": target.n_vars,
        "n_factors": target.n_factors,
        "n_bins": s.n_bins,
        "counts": full.tolist(),
        "split_half_kl": sym_kl(first, full - first),
        "factors_per_iter": sums["factors_per_step"] / n,
        "evals_per_iter": sums["evals_per_step"] / n,
        "accept_rate": sums["accepted"] / n if "accepted" in sums else None,
        "sampler_s": times[-1],
        "wall_s": time.perf_counter() - t_start,
        "impl": IMPL,
        "type": "reference",
    }
    return [record]


def run_chain(
    s: RunSetting, seed: int, reference: dict[str, Any], *, rng: np.random.Generator
) -> list[dict[str, Any]]:
    """One compared chain, scored against the reference record at each checkpoint."""
    t_start = time.perf_counter()
    ref = np.asarray(reference["counts"], dtype=np.int64)
    ref_states = int(ref[0].sum())
    marks = checkpoints(s.n_steps, s.checkpoints)
    errors: list[float] = []
    times, sums, chunks, target, params = _run_chunks(
        s, rng, marks, lambda c: errors.append(sym_kl(c, ref))
    )
    n = s.n_steps

    def mean(name: str) -> float | None:
        return sums[name] / n if name in sums else None

    record = {
        "key": s.key,
        "label": s.algorithm,
        "algorithm": s.algorithm,
        "replicate": s.replicate,
        "n_steps": n,
        "params": params,
        "L": target.L,
        "n_vars": target.n_vars,
        "n_bins": s.n_bins,
        "iterations": marks,
        "sampler_s": tuple(times),
        "sym_kl": tuple(errors),
        "floor": tuple(kl_floor(s.n_bins, target.n_vars, t, ref_states) for t in marks),
        "reference_key": reference["key"],
        "factors_per_iter": sums["factors_per_step"] / n,
        "evals_per_iter": sums["evals_per_step"] / n,
        "draws_per_iter": mean("draws_per_step"),
        "kept_per_iter": mean("kept_per_step"),
        "accept_rate": mean("accepted"),
        "paper_factors": PAPER_FACTORS if s.algorithm != "gibbs-its" else None,
        "chunks": chunks,
        "wall_s": time.perf_counter() - t_start,
        "impl": IMPL,
        "type": "chain",
    }
    return [record]
