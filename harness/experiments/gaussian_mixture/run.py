"""The tasks of the truncated Gaussian mixture experiment (003_07f92522b9b1c588.txt, Sec. 4.3,
Fig. 3): the exact posterior (``truth``), then one Numba chain per sampler scored against it.

003 Sec. 4.3: x1 ~ N(0, 10), x2 ~ N(0, 1), y_i ~ 1/2 N(x1, 2) + 1/2 N(x1 + x2, 2), data at
(0, 1), box [-6, 6]^2, N = 1e6, L = 1581.14, lambda = 500, m = 20, k = 25, 1e6 samples per
method, 1802 factors per iteration of Poisson-Gibbs on average; Gibbs with rejection (proposal
Unif[-6, 6], w tuned to ~1000 proposals per acceptance) "completely failed".

**Target.** 003 does not say how L = 1581.14 arises; untempered, the factors' ranges sum to
~1.4e7 at N = 1e6. We temper every likelihood factor by one constant tau chosen so that L = 1581.14
at the chosen N (:mod:`harness.targets.gaussian_mixture`): the posterior is worth N_eff = tau N
~ 111 untempered data, at N = 1e4 (quick) as at N = 1e6 (full).

``truth``: the exact posterior's mass on an n_bins x n_bins grid of the box, by tensor
Gauss-Legendre, with its error estimated against fewer nodes; and the rejection envelope. Each
chain is scored by its 2-D histogram against it: total variation, Hellinger and symmetric KL.

Gibbs-rejection: the exact bound E_max = L would need ~e^60 proposals per acceptance here, so, as
in 003, the envelope is tuned: log w = max U + log(1000 Zbar / (b - a)), where Zbar is the mean of
int exp(U - max U) along the two conditionals through the posterior mode, i.e. ~1000 proposals
per acceptance there. log w >= max U, so the envelope still dominates (exact draws) wherever the
quadrature max is the true max. Each step gives up after ``rejection_cap`` proposals (x(i) kept:
a bias, reported as the share of capped steps). Its number of steps is set so that its factor
evaluations are about those of PGDA (at N = 1e6 each step costs ~1e9 evaluations, so 003's 1e6
samples for every method cannot have been at that cost).
"""

from __future__ import annotations

import math
import time
from functools import lru_cache
from typing import Any

import numpy as np

from harness.engine import SeedKey, label_words
from harness.experiments.gaussian_mixture.metrics import distances, hist2d, iid_tv
from harness.experiments.gaussian_mixture.settings import PAPER_FACTORS, RunSetting
from harness.targets.continuous_factor_graph import ContinuousFactorGraphTarget
from harness.targets.gaussian_mixture import (
    energy,
    gaussian_mixture_target,
    mixture_data,
    posterior_bins,
)
from implementations.minibatch_gibbs import continuous_fast

IMPL = "numba"
#: Longest chunk per sampler call.
MAX_CHUNK = 50_000
#: Points per side of the trapezoid rule along the conditionals that set the envelope.
LINE_POINTS = 4001
#: (method, poisson) of each sampler, as in ``continuous_fast.run``.
_KERNELS = {"pgits": ("its", True), "pgda": ("da", True), "gibbs-rejection": ("rejection", False)}


@lru_cache(maxsize=2)
def build_target(seed: int, n_data: int, L: float) -> ContinuousFactorGraphTarget:
    """The data (their own stream of ``seed``) and the tempered target."""
    rng = SeedKey.from_label(seed, f"data|{n_data}").generator()
    return gaussian_mixture_target(mixture_data(n_data, rng), L)


def envelope_for(
    target: ContinuousFactorGraphTarget, mode: tuple[float, float], top: float, per_accept: float
) -> tuple[float, list[float]]:
    """log w with ~``per_accept`` uniform proposals per acceptance on the two conditionals
    through ``mode`` (mean acceptance), and the integrals Z_i of exp(U - top) along them."""
    v = np.linspace(target.a, target.b, LINE_POINTS)
    zs = []
    for i in range(2):
        x1 = v if i == 0 else np.full_like(v, mode[0])
        x2 = np.full_like(v, mode[1]) if i == 0 else v
        zs.append(float(np.trapezoid(np.exp(energy(target, x1, x2) - top), v)))
    width = target.b - target.a
    return top + math.log(per_accept * float(np.mean(zs)) / width), zs


def run_truth(s: RunSetting, seed: int) -> list[dict[str, Any]]:
    """The exact posterior on the grid (and a check with two fewer nodes), and log w."""
    t0 = time.perf_counter()
    target = build_target(seed, s.n_data, s.L)
    build_s = time.perf_counter() - t0
    probs, top, mode = posterior_bins(target, s.n_bins, s.quad_points)
    coarse, _, _ = posterior_bins(target, s.n_bins, max(1, s.quad_points - 2))
    envelope, zs = envelope_for(target, mode, top, s.rejection_target)
    meta = target.meta
    record = {
        "key": s.key,
        "type": "truth",
        "n_data": s.n_data,
        "L": target.L,
        "requested_L": meta["requested_L"],
        "tau": meta["tau"],
        "n_eff": meta["n_eff"],
        "untempered_L": meta["untempered_L"],
        "m_prior": meta["m_prior"],
        "n_factors": target.n_factors,
        "n_bins": s.n_bins,
        "quad_points": s.quad_points,
        "probs": [[float(v) for v in row] for row in probs.tolist()],
        "quad_check_tv": 0.5 * float(np.abs(probs - coarse).sum()),
        "top": top,
        "mode": mode,
        "envelope": envelope,
        "envelope_z": list(zs),
        "build_s": build_s,
        "wall_s": time.perf_counter() - t0,
        "seed": seed,
    }
    return [record]


def run_chain(
    s: RunSetting, seed: int, truth: dict[str, Any], *, rng: np.random.Generator
) -> list[dict[str, Any]]:
    """One chain from (0, 0), in chunks, histogrammed after the burn-in and scored against the
    ``truth`` record (``rng`` from the seed key of ``s.key``)."""
    t_start = time.perf_counter()
    target = build_target(seed, s.n_data, s.L)
    method, poisson = _KERNELS[s.algorithm]
    params = s.params(truth["envelope"])
    counts = np.zeros((s.n_bins, s.n_bins), dtype=np.int64)
    x = np.zeros(2)
    sums: dict[str, float] = {}
    done, chunks, spent = 0, 0, 0.0
    while done < s.n_steps:
        steps = min(MAX_CHUNK, s.n_steps - done)
        t0 = time.perf_counter()
        chain = continuous_fast.run(target, steps, rng, x, method, poisson, **params)
        spent += time.perf_counter() - t0
        chunks += 1
        skip = max(s.burn_in - done, 0)
        if skip < steps:
            counts += hist2d(chain.values[skip:], s.n_bins, target.a, target.b)
            for name, arr in chain.extras.items():
                sums[name] = sums.get(name, 0.0) + float(np.sum(arr[skip:]))
            if method == "rejection":
                capped = chain.extras["proposals_per_step"][skip:] >= s.rejection_cap
                capped &= chain.extras["accepted"][skip:] == 0
                sums["capped"] = sums.get("capped", 0.0) + float(np.sum(capped))
        x = chain.values[-1].copy()
        done += steps
    n = s.n_steps - s.burn_in
    probs = np.asarray(truth["probs"])
    dist = distances(counts, probs)

    def mean(name: str) -> float | None:
        return sums[name] / n if name in sums else None

    iid_rng = SeedKey.from_label(seed, s.key + "|iid").generator()
    record = {
        "key": s.key,
        "type": "chain",
        "label": s.algorithm,
        "algorithm": s.algorithm,
        "n_steps": s.n_steps,
        "burn_in": s.burn_in,
        "params": params,
        "L": target.L,
        "n_bins": s.n_bins,
        "counts": counts.tolist(),
        "tv": dist["tv"],
        "hellinger": dist["hellinger"],
        "sym_kl": dist["sym_kl"],
        "iid_tv": iid_tv(probs, n, iid_rng),
        "factors_per_iter": sums["factors_per_step"] / n,
        "evals_per_iter": sums["evals_per_step"] / n,
        "draws_per_iter": mean("draws_per_step"),
        "kept_per_iter": mean("kept_per_step"),
        "accept_rate": mean("accepted"),
        "proposals_per_iter": mean("proposals_per_step"),
        "capped_share": mean("capped"),
        "final_state": (float(x[0]), float(x[1])),
        "paper_factors": PAPER_FACTORS if poisson else None,
        "sampler_s": spent,
        "chunks": chunks,
        "wall_s": time.perf_counter() - t_start,
        "seed": seed,
        "spawn_key": list(label_words(s.key)),
        "impl": IMPL,
    }
    return [record]


def warm() -> None:
    """Compile (or load from cache) the kernel and the quadrature, so no timing includes it."""
    tiny = gaussian_mixture_target(np.array([0.0, 1.0]), 40.0)
    continuous_fast.run(tiny, 2, np.random.default_rng(0), None, "da", True, lam=2.0, m=3, k=4)
    energy(tiny, np.zeros(1), np.zeros(1))
