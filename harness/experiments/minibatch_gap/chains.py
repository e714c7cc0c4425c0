"""The ``chain`` task: one (graph, algorithm, lam) chain of the Numba sampler, and the gap
estimated from the decay of the autocorrelation of slow observables (003_07f92522b9b1c588.txt,
Thm. 1, checked on chains).

Estimator: for an observable f, 1 - rho_f(1) = E(f, f) / Var(f) is a Rayleigh quotient, so it
is >= the gap and equals it only when f is the slowest eigenfunction. The fitted rate r (log
rho_f(k) linear in k over a window where rho_f is well above its noise) gives 1 - exp(-r), which
tends to 1 - lambda_2 only when the slowest mode dominates f. Both see only the modes f overlaps
with: a symmetric observable (the energy of a Potts model) cannot see the label-switching mode,
hence the second observable, the fraction of variables equal to 0. On tiny graphs the same
quantities are also computed exactly from the matrix, for comparison.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from harness.experiments.minibatch_gap.exact_gaps import clean_kernel
from harness.experiments.minibatch_gap.settings import NAME, ChainSpec, MinibatchGapConfig
from harness.experiments.minibatch_gap.targets import chain_target
from harness.gates.mcmc import spectral_gap
from harness.registry import build_registry
from harness.store import provenance
from harness.targets.factor_graph import FactorGraphTarget
from implementations.minibatch_gibbs import exact

CHAIN_ALGORITHMS = ("gibbs", "poisson-gibbs")
OBSERVABLES = ("energy", "frac0")
IMPL = "numba"
#: Steps per call of the Numba sampler: bounds memory (values are (steps, n_vars) int64).
CHUNK = 100_000
#: The fit window ends where rho_f first drops below this (well above its sampling noise).
FIT_FLOOR = 0.1


@dataclass(frozen=True)
class ChainSetting:
    chain: str
    graph: str
    algorithm: str
    lam: float | None
    lam_over_L2: float | None
    n_steps: int

    @property
    def key(self) -> str:
        lam = "-" if self.lam is None else f"{self.lam:.12g}"
        return f"chain|{self.chain}|{self.algorithm}|lam={lam}|steps={self.n_steps}"


def observables(target: FactorGraphTarget, values: np.ndarray) -> dict[str, np.ndarray]:
    """Energy U(x) = sum_phi phi(x) and the fraction of variables equal to 0, per row."""
    a, b = target.scopes[:, 0], target.scopes[:, 1]
    f = np.arange(target.n_factors)
    energy = np.empty(values.shape[0])
    step = max(1, 2_000_000 // max(1, target.n_factors))  # bounded temporary (rows x factors)
    for lo in range(0, values.shape[0], step):
        x = values[lo : lo + step]
        energy[lo : lo + step] = target.tables[f, x[:, a], x[:, b]].sum(axis=1)
    return {"energy": energy, "frac0": (values == 0).mean(axis=1)}


def autocorrelation(x: np.ndarray, max_lag: int) -> np.ndarray:
    """rho(0..max_lag) by FFT (biased normalisation, as usual for long series)."""
    y = np.asarray(x, dtype=np.float64) - float(np.mean(x))
    var = float(y @ y) / y.size
    if var == 0.0:
        return np.full(max_lag + 1, np.nan)
    n = 1 << int(2 * y.size - 1).bit_length()
    spec = np.fft.rfft(y, n)
    acov = np.fft.irfft(spec * np.conj(spec), n)[: max_lag + 1] / y.size
    return acov / var


def fit_rate(rho: np.ndarray) -> tuple[float, int, int]:
    """Exponential rate of rho(k) over [k_end / 3, k_end], k_end the first lag with rho below
    FIT_FLOOR (the last lag if none): the late part, where the slowest mode dominates most."""
    below = np.nonzero(~(rho >= FIT_FLOOR))[0]
    k_end = int(below[0]) if below.size else rho.size - 1
    k_end = max(k_end, 3)
    k_start = max(1, k_end // 3)
    k = np.arange(k_start, k_end + 1)
    r = rho[k]
    ok = r > 0
    if ok.sum() < 2:
        return math.nan, k_start, k_end
    slope = np.polyfit(k[ok], np.log(r[ok]), 1)[0]
    return float(-slope), k_start, k_end


def exact_acf(P: np.ndarray, pi: np.ndarray, f: np.ndarray, max_lag: int) -> np.ndarray:
    """rho_f(k) = <f - E f, P^k (f - E f)>_pi / Var_pi(f), k = 0..max_lag, from the matrix."""
    g = f - pi @ f
    var = float(pi @ (g * g))
    out = np.empty(max_lag + 1)
    h = g.copy()
    for k in range(max_lag + 1):
        out[k] = float(pi @ (g * h)) / var
        h = P @ h
    return out


@lru_cache(maxsize=1)
def _specs() -> dict[str, Any]:
    registry = build_registry()
    return {name: registry.get(name) for name in CHAIN_ALGORITHMS}


def _observable_series(
    s: ChainSetting, target: FactorGraphTarget, c: ChainSpec, rng: np.random.Generator
) -> tuple[dict[str, np.ndarray], float]:
    """Run the Numba sampler in chunks (memory stays bounded); return the observables after
    burn-in and the mean factors evaluated per step."""
    spec = _specs()[s.algorithm]
    params = spec.validate({} if s.lam is None else {"lam": s.lam})
    fn = spec.implementation(IMPL)
    x = None
    parts: dict[str, list[np.ndarray]] = {o: [] for o in OBSERVABLES}
    factors, done, total = 0.0, 0, c.burn_in + c.n_steps
    while done < total:
        steps = min(CHUNK, total - done)
        chain = fn(target, steps, rng, x0=x, **params)
        x = chain.values[-1].copy()
        keep = chain.values[max(0, c.burn_in - done) :]
        for o, v in observables(target, keep).items():
            parts[o].append(v)
        factors += float(np.sum(chain.extras["factors_per_step"]))
        done += steps
    return {o: np.concatenate(v) for o, v in parts.items()}, factors / total


def _exact_chain_kernel(s: ChainSetting, t: FactorGraphTarget, tail: float) -> np.ndarray:
    if s.algorithm == "gibbs":
        return exact.gibbs_matrix(t)
    return clean_kernel(exact.poisson_gibbs_matrix(t, float(s.lam), tail=tail).P.copy())[0]


def run_chain(
    s: ChainSetting, config: MinibatchGapConfig, *, rng: np.random.Generator
) -> list[dict[str, Any]]:
    """The task of one chain setting (``rng`` from the seed key of ``s.key``): one record."""
    c = next(c for c in config.chains if c.name == s.chain)
    t0 = time.perf_counter()
    target = chain_target(c, config)
    series, factors = _observable_series(s, target, c, rng)
    chain_s = time.perf_counter() - t0
    est: dict[str, dict[str, Any]] = {}
    for o, v in series.items():
        rho = autocorrelation(v, c.max_lag)
        rate, k0, k1 = fit_rate(rho)
        est[o] = {
            "one_minus_rho1": float(1.0 - rho[1]),
            "fit_rate": rate,
            "fit_gap": float(-math.expm1(-rate)) if math.isfinite(rate) else None,
            "fit_window": (k0, k1),
            "rho_at_max_lag": float(rho[-1]),
        }
    record: dict[str, Any] = {
        "key": s.key,
        "type": "chain",
        "experiment": NAME,
        "chain": s.chain,
        "graph": target.name,
        "n_vars": target.n_vars,
        "D": target.D,
        "L": target.L,
        "algorithm": s.algorithm,
        "lam": s.lam,
        "lam_over_L2": s.lam_over_L2,
        "n_steps": c.n_steps,
        "burn_in": c.burn_in,
        "max_lag": c.max_lag,
        "factors_per_step": factors,
        "estimates": est,
        "exact": None,
    }
    if c.graph != "potts":
        record["exact"] = _exact_comparison(s, target, config.tail, est)
    record.update(
        chain_s=chain_s,
        wall_s=time.perf_counter() - t0,
        seed=config.seed,
        code=provenance()["source_digest"],
        impl=IMPL,
    )
    return [record]


def _exact_comparison(
    s: ChainSetting, t: FactorGraphTarget, tail: float, est: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    """The same estimators applied to the exact autocorrelations, and the exact gap."""
    P = _exact_chain_kernel(s, t, tail)
    pi = t.pmf
    obs = observables(t, t.states())
    out: dict[str, Any] = {"gap": spectral_gap(P, pi)}
    for o, f in obs.items():
        k0, k1 = est[o]["fit_window"]
        rho = exact_acf(P, pi, f, k1)
        k = np.arange(k0, k1 + 1)
        slope = np.polyfit(k, np.log(np.maximum(rho[k], 1e-300)), 1)[0]
        out[o] = {"one_minus_rho1": float(1.0 - rho[1]), "fit_gap": float(-math.expm1(slope))}
    return out
