"""Simulation-based calibration (Talts et al. 2018): a gate for posterior samplers on models
without ground truth, needing only a simulator of the prior.

Draw theta ~ prior and data ~ p(data | theta), run the sampler on the data, and rank theta among
the sampler's posterior draws. If the sampler is right, theta is one more draw from the same
posterior, so its rank among L independent draws is uniform on {0, ..., L}. That holds for
independent draws; an MCMC chain is therefore thinned first (Talts et al. Sec. 4.2) by its slowest
decile indicator (harness/gates/thinning.py), so the kept draws are near independent.

Any test quantity f(theta, data) may be ranked beside the parameters (Talts et al. Sec. 4.3):
the true theta and the posterior draws are exchangeable given the data, so the rank of f at the
true theta is uniform too. The log posterior density is the one this harness adds for posterior
targets: a posterior that is too wide (or too narrow) barely moves each coordinate's rank but
puts f(theta_true) above (below) most draws' f.

Each rank is turned into a randomised PIT, (rank + U) / (L + 1) with U ~ Uniform(0, 1): exactly
Uniform(0, 1) under the null whatever L each replication kept, so one KS test per parameter
reads all replications, and Holm combines the parameters.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from harness.gates.exactness import ks_1samp, ks_detectable
from harness.gates.multiple import holm
from harness.gates.power import ks_false_pass
from harness.gates.result import GateResult
from harness.gates.thinning import quantile_indicators, thinning_lag

#: The prior simulator: rng -> (theta of shape (d,), data).
Simulate = Callable[[np.random.Generator], tuple[Any, Any]]
#: The sampler under test: (data, n, rng) -> posterior draws of shape (n, d) or (n,).
Posterior = Callable[[Any, int, np.random.Generator], Any]
#: A test quantity: (data, thetas of shape (m, d)) -> m values.
Statistic = Callable[[Any, np.ndarray], np.ndarray]

#: Deciles of the chain itself: the points at which the ranks' empirical CDF is read.
DECILES = np.arange(1, 10) / 10


def _as_draws(draws: Any, d: int, n: int) -> np.ndarray:
    x = np.asarray(draws, dtype=np.float64)
    if x.ndim == 1:
        x = x[:, None]
    if x.ndim != 2 or x.shape[1] != d or x.shape[0] < 4:
        raise ValueError(
            f"the posterior sampler returned draws of shape {np.shape(draws)}; valid: ({n}, {d}) "
            "(n draws of the d parameters the prior simulator returns), n >= 4"
        )
    return x


def thinned_rank(theta: float, chain: np.ndarray, mcmc: bool) -> tuple[int, int]:
    """(rank of theta among the kept draws, how many were kept)."""
    kept = chain
    if mcmc and np.all(np.isfinite(chain)):
        lag = thinning_lag(quantile_indicators(chain, np.quantile(chain, DECILES))).lag
        kept = chain[::lag]
    return int(np.sum(kept < theta)), int(kept.size)


def sbc_pit(
    simulate: Simulate,
    posterior: Posterior,
    replications: int,
    n: int,
    rng: np.random.Generator,
    mcmc: bool = True,
    statistic: Statistic | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Randomised PIT values, shape (replications, d), and the draws each kept after thinning;
    with ``statistic``, a last column ranks f(theta, data) among the draws' f."""
    pits, kept = [], []
    for _ in range(replications):
        theta, data = simulate(rng)
        theta = np.atleast_1d(np.asarray(theta, dtype=np.float64))
        chain = _as_draws(posterior(data, n, rng), theta.size, n)
        truth = theta
        if statistic is not None:
            values = np.asarray(statistic(data, np.vstack([theta, chain])), dtype=np.float64)
            truth = np.append(theta, values[0])
            chain = np.column_stack([chain, values[1:]])
        row, kept_row = [], []
        for j in range(truth.size):
            rank, L = thinned_rank(float(truth[j]), chain[:, j], mcmc)
            row.append((rank + rng.random()) / (L + 1))
            kept_row.append(L)
        pits.append(row)
        kept.append(kept_row)
    return np.asarray(pits), np.asarray(kept)


def sbc_uniformity(
    pits: np.ndarray, alpha: float, kept: np.ndarray | None = None, names: list[str] | None = None
) -> GateResult:
    """KS of each parameter's PIT values against Uniform(0, 1), Holm across parameters.

    ``detectable`` is the smallest sup |F - U| of the ranks' law the KS finds at its Holm share
    (alpha / d) with power about 0.8: a posterior that is too narrow or shifted by less than
    that passes unseen. ``false_pass`` bounds the chance of passing a rank law off by
    KS_EFFECT in one parameter; ``ecdf`` holds each parameter's rank-PIT ECDF difference with
    its band (the SBC plot of Säilynoja et al. 2022), labelled by ``names``.
    """
    pits = np.asarray(pits, dtype=np.float64)
    if pits.ndim != 2 or pits.shape[0] < 2:
        raise ValueError(f"pits must have shape (replications >= 2, d), got {pits.shape}")
    R, d = pits.shape
    names = names or [f"theta[{j}]" for j in range(d)]
    results = [
        ks_1samp(pits[:, j], lambda u: np.clip(u, 0.0, 1.0), alpha, name=names[j]) for j in range(d)
    ]
    p = np.array([r.p_value for r in results])
    _, adjusted = holm(p, alpha)
    worst = int(np.argmin(adjusted))
    thin = ""
    if kept is not None:
        thin = f"; draws kept per replication after thinning: median {int(np.median(kept))}"
    measure = "sup |F - U| of a parameter's rank law"
    return GateResult(
        gate="sbc",
        statistic=float(results[worst].statistic),
        p_value=float(adjusted[worst]),
        alpha=alpha,
        passed=bool(adjusted[worst] >= alpha),
        n=R,
        detectable=ks_detectable(R, alpha / d),
        detectable_measure=measure,
        detail=f"{R} replications, {d} parameters, Holm; worst {names[worst]} "
        f"(KS {results[worst].statistic:.4f}){thin}",
        false_pass=ks_false_pass(R, alpha / d, measure=measure),
        ecdf=tuple(band for r in results for band in r.ecdf),
    )
