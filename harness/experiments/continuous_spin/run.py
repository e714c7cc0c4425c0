"""Settings and chains: a long Gibbs-ITS reference (its per-variable histograms are the ground
truth), and compared chains scored against it at geometric checkpoints by the symmetric KL.

U(x) = sum_ij beta A_ij (x_i x_j + 1) on [0, 1]^n. 003 does not state A; ``continuous_spin_grid``
uses A_ij = exp(-0.4 ||p_i - p_j||^2) on a 20 x 20 grid (notes-minibatch-gibbs.md, Sec. 10).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache, partial
from typing import Any

import numpy as np

from harness.declare import Config, param
from harness.experiments.common import checkpoints
from harness.registry import build_registry
from harness.spec import Chain, sample
from harness.targets.continuous_factor_graph import continuous_spin_grid

ALGORITHMS = ("gibbs-its", "pgits", "pgda")
POSITIVE: dict[str, Any] = {"low": 0.0, "high": float("inf"), "open": True}
IMPL = "numba"
#: Longest chunk per sampler call: its (steps, n_vars) float64 output must fit in memory.
MAX_CHUNK = 25_000
#: Pseudo-count per bin, so that an empty bin gives a finite KL (Jeffreys' 1/2).
PSEUDO_COUNT = 0.5
#: States of a Gibbs-ITS chain's second half at which the cost of rejection is computed.
REJECTION_STATES = 400
build_target = lru_cache(maxsize=2)(continuous_spin_grid)


@dataclass(frozen=True, kw_only=True)
class ContinuousSpinConfig(Config):
    experiment = "continuous-spin"
    side: int = param(20, low=2, doc="grid side")
    beta: float = param(1.0, doc="beta", **POSITIVE)
    scale: float = param(0.4, doc="A_ij = exp(-scale d^2)", **POSITIVE)
    lam_l2: float = param(1.0, doc="lambda / L^2", **POSITIVE)
    m: int = param(3, low=1, doc="Chebyshev degree m")
    k: int = param(10, low=1, doc="PGDA's second degree k")
    n_bins: int = param(20, low=2, doc="histogram bins on [0, 1]")
    reference_steps: int = param(low=2, quick=2_000_000, full=10_000_000, doc="reference steps")
    reference_burn_in: int = param(low=0, quick=100_000, full=500_000, doc="reference burn-in")
    n_steps: int = param(low=1, quick=300_000, full=1_000_000, doc="iterations per chain")
    replicates: int = param(low=1, quick=1, full=3, doc="runs per sampler")
    checkpoints: int = param(low=2, quick=25, full=40, doc="checkpoints per run")
    algorithms: tuple[str, ...] = param(ALGORITHMS, choices=ALGORITHMS, doc="samplers")
    notes: tuple[str, ...] = param(
        (
            "003 states neither the start nor the compared chains' length: all x_i = 0, every "
            "state after each single-site step counted; 1e6 iterations at the full level, as in "
            "its Sec. 4.1. Factors per iteration: 'draws' are the Poisson draws B, 'kept' the "
            "sum of s_phi after thinning, 'distinct' those with s_phi > 0.",
        ),
        empty=True,
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.reference_burn_in >= self.reference_steps // 2:  # both halves must hold states
            raise ValueError(
                f"parameter 'reference_burn_in' = {self.reference_burn_in} is invalid; valid: "
                "< reference_steps / 2"
            )
        if len(set(self.algorithms)) != len(self.algorithms):
            raise ValueError(f"parameter 'algorithms' = {self.algorithms} repeats; valid: distinct")


@dataclass(frozen=True)
class RunSetting:
    """One chain of ``config``: the Gibbs-ITS reference (``replicate = -1``) or a compared one."""

    config: ContinuousSpinConfig
    algorithm: str
    replicate: int
    n_steps: int
    burn_in: int = 0

    @property
    def key(self) -> str:
        c = self.config
        return (
            f"{'reference' if self.replicate < 0 else 'chain'}|{self.algorithm}|"
            f"steps={self.n_steps}|burn={self.burn_in}|side={c.side}|beta={c.beta:g}|"
            f"scale={c.scale:g}|lam={c.lam_l2:g}L2|m={c.m}|k={c.k}|bins={c.n_bins}|"
            f"cp={c.checkpoints}|rep={self.replicate}"
        )


@lru_cache(maxsize=1)
def kernels() -> dict[str, Callable[..., Chain]]:
    """Each sampler through the registry's one validated entry point (it carries ``x0``)."""
    registry = build_registry()
    return {name: partial(sample, registry.get(name), IMPL) for name in ALGORITHMS}


def bin_counts(values: np.ndarray, n_bins: int) -> np.ndarray:
    """(n_vars, n_bins) counts of the rows of ``values`` on equal bins of [0, 1]."""
    n = values.shape[1]
    idx = np.minimum((values * n_bins).astype(np.int64), n_bins - 1)
    flat = (idx + (np.arange(n, dtype=np.int64) * n_bins)[None, :]).ravel()
    return np.bincount(flat, minlength=n * n_bins).reshape(n, n_bins)


def sym_kl(counts: np.ndarray, ref_counts: np.ndarray) -> float:
    """Mean over variables of the symmetric KL between two smoothed per-variable histograms."""
    p, q = counts + PSEUDO_COUNT, ref_counts + PSEUDO_COUNT
    p, q = p / p.sum(axis=1, keepdims=True), q / q.sum(axis=1, keepdims=True)
    return float(((p - q) * np.log(p / q)).sum(axis=1).mean())


def kl_floor(n_bins: int, n_vars: int, steps: int, ref_states: int) -> float:
    """(n_bins - 1) / N is E[sym KL] of N independent draws; T / n_vars updates per variable,
    each held a geometric number of steps (weights with CV^2 ~ 1), give N ~ T / (2 n_vars)."""
    return 2.0 * (n_bins - 1) * n_vars * (1.0 / steps + 1.0 / ref_states)


def rejection_cost(target: Any, x: np.ndarray) -> dict[str, float]:
    """Expected proposals per acceptance of a rejection step at state ``x``, over a uniformly
    drawn site: w (b - a) / int_a^b exp(E_i(v)) dv, E_i linear in v (bilinear factors). log w
    is the constant L ("constant": the least constant at or above every conditional's energy)
    or the site's own sum of M_phi ("per_site": the envelope of our gibbs-rejection kernel)."""
    p, q, n = target.scopes[:, 0], target.scopes[:, 1], target.n_vars
    c0, c1, c2, c3 = target.coefs.T
    const = np.bincount(p, c0 + c2 * x[q], n) + np.bincount(q, c0 + c1 * x[p], n)
    slope = np.bincount(p, c1 + c3 * x[q], n) + np.bincount(q, c2 + c3 * x[p], n)
    width, mag = target.b - target.a, np.maximum(np.abs(slope), 1e-12)
    top = np.maximum(slope * target.a, slope * target.b)
    log_z = const + top + np.log(-np.expm1(-mag * width) / mag)  # log int exp(E_i)
    site_m = np.bincount(p, target.M, n) + np.bincount(q, target.M, n)
    base = np.log(width) - log_z
    return {
        "constant": float(np.mean(np.exp(target.L + base))),
        "per_site": float(np.mean(np.exp(site_m + base))),
    }


def run_chain(
    s: RunSetting, reference: dict[str, Any] | None, *, rng: np.random.Generator
) -> list[dict[str, Any]]:
    """The Gibbs-ITS reference (``reference`` None), its histograms kept at the half and at
    the end; or a compared chain, scored against the reference record at each checkpoint."""
    t_start = time.perf_counter()
    c = s.config
    target = build_target(c.side, c.beta, c.scale)
    kernel = kernels()[s.algorithm]
    params: dict[str, float] = {"m": c.m}
    if s.algorithm != "gibbs-its":
        params = {"lam": c.lam_l2 * target.L * target.L, "m": c.m}
        params |= {"k": c.k} if s.algorithm == "pgda" else {}
    if reference is None:
        marks: tuple[int, ...] = (s.burn_in + (s.n_steps - s.burn_in) // 2, s.n_steps)
    else:
        marks = checkpoints(s.n_steps, c.checkpoints)
    counts = np.zeros((target.n_vars, c.n_bins), dtype=np.int64)
    x = np.zeros(target.n_vars)
    sums: dict[str, float] = {}
    snaps: list[np.ndarray] = []
    times: list[float] = []
    done, chunks, spent = 0, 0, 0.0
    # the states at which a Gibbs-ITS chain prices rejection: its second half, evenly spaced
    half = s.n_steps // 2
    stride = max(1, (s.n_steps - half) // REJECTION_STATES)
    priced = reference is not None and s.algorithm == "gibbs-its"
    cost: dict[str, list[float]] = {"constant": [], "per_site": []}
    for mark in marks:
        while done < mark:
            steps = min(MAX_CHUNK, mark - done)
            t0 = time.perf_counter()
            chain = kernel(target, steps, rng, x0=x, **params)
            spent += time.perf_counter() - t0
            chunks += 1
            skip = max(s.burn_in - done, 0)
            if skip < steps:
                counts += bin_counts(chain.values[skip:], c.n_bins)
                for name, arr in chain.extras.items():
                    sums[name] = sums.get(name, 0.0) + float(np.sum(arr[skip:]))
            if priced:
                for row in range(max(half - done, 0), steps):
                    if (done + row - half) % stride == 0:
                        for name, v in rejection_cost(target, chain.values[row]).items():
                            cost[name].append(v)
            x = chain.values[-1].copy()
            done += steps
        snaps.append(counts.copy())
        times.append(spent)
    n = s.n_steps - s.burn_in
    means = {
        f"{k}_per_iter": sums[f"{k}_per_step"] / n if f"{k}_per_step" in sums else None
        for k in ("factors", "evals", "draws", "kept")
    }
    means["accept_rate"] = sums["accepted"] / n if "accepted" in sums else None
    record = {"key": s.key, "algorithm": s.algorithm, "n_steps": s.n_steps, "params": params}
    record |= {"L": target.L, "n_vars": target.n_vars, "n_bins": c.n_bins, "impl": IMPL}
    if reference is None:
        first, full = snaps
        record |= {
            "burn_in": s.burn_in,
            "n_factors": target.n_factors,
            "counts": full.tolist(),
            "split_half_kl": sym_kl(first, full - first),
            **{k: means[k] for k in ("factors_per_iter", "evals_per_iter", "accept_rate")},
            "sampler_s": times[-1],
        }
        return [{**record, "wall_s": time.perf_counter() - t_start, "type": "reference"}]
    ref = np.asarray(reference["counts"], dtype=np.int64)
    record |= {
        "label": s.algorithm,
        "replicate": s.replicate,
        "iterations": marks,
        "sampler_s": tuple(times),
        "sym_kl": tuple(sym_kl(h, ref) for h in snaps),
        "floor": tuple(kl_floor(c.n_bins, target.n_vars, t, int(ref[0].sum())) for t in marks),
        "reference_key": reference["key"],
        **means,
        "paper_factors": 190.0 if s.algorithm != "gibbs-its" else None,
        "chunks": chunks,
    }
    if priced:
        record["rejection_proposals"] = cost
    return [{**record, "wall_s": time.perf_counter() - t_start, "type": "chain"}]
