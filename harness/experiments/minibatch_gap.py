"""Spectral gaps of Poisson-Gibbs and Poisson-MH against 003_07f92522b9b1c588.txt, Thm. 1-2.

Two kinds of records land in OUT/records.jsonl, one fsynced line per finished setting:

- ``exact``: one (tiny graph, lam) setting: the exact spectral gaps (1 - lambda_2) of random-scan
  Gibbs, Poisson-Gibbs, plain single-site MH and Poisson-MH (same proposal), the ratios
  gap(PG) / gap(Gibbs) and gap(PMH) / gap(MH), Thm. 1's bound exp(-4 L^2 / lam) (only for
  lam >= 2L) and Thm. 2's bound 0.5 exp(-L^2 / (lam + L)), and how far the Poisson truncation of
  the exact matrices can move the gaps;
- ``chain``: one (graph, algorithm, lam) chain from the Numba sampler: the decay of the
  autocorrelation of a slow observable, as 1 - rho(1) and as a fitted exponential rate. On tiny
  graphs the same quantities are also computed exactly from the matrix, for comparison.

Estimator (``chain``): for an observable f, 1 - rho_f(1) = E(f, f) / Var(f) is a Rayleigh
quotient, so it is >= the gap and equals it only when f is the slowest eigenfunction. The fitted
rate r (log rho_f(k) linear in k over a window where rho_f is well above its noise) gives
1 - exp(-r), which tends to 1 - lambda_2 only when the slowest mode dominates f. Both see only
the modes f overlaps with: a symmetric observable (the energy of a Potts model) cannot see the
label-switching mode, hence the second observable, the fraction of variables equal to 0.
"""

from __future__ import annotations

import dataclasses
import math
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import poisson

from harness.experiments.store import (
    RunSummary,
    append_record,
    check_int,
    check_positive,
    check_run_args,
    lists_to_tuples,
    setting_rng,
    start_run,
)
from harness.gates.mcmc import spectral_gap
from harness.registry import build_registry
from harness.results import provenance
from harness.runner import check_seed
from harness.targets.factor_graph import FactorGraphTarget, potts_grid, random_factor_graph
from implementations.minibatch_gibbs import exact

NAME = "minibatch-gap"
PAPER = "003_07f92522b9b1c588.txt, Thm. 1 and Thm. 2"
SUMMARY = "Exact and chain-estimated spectral gaps of Poisson-Gibbs / Poisson-MH vs Thm. 1-2"
LEVELS = ("quick", "full")
PARTS = ("all", "exact", "chains")
CHAIN_ALGORITHMS = ("gibbs", "poisson-gibbs")
OBSERVABLES = ("energy", "frac0")
IMPL = "numba"
#: Steps per call of the Numba sampler: bounds memory (values are (steps, n_vars) int64).
CHUNK = 100_000
#: The fit window ends where rho_f first drops below this (well above its sampling noise).
FIT_FLOOR = 0.1
#: The exact PMH matrix can carry rounding negatives of this size on its diagonal (acceptance
#: sums to ~1 there); they are clipped and counted in the gap's error bound.
CLIP = 1e-12


@dataclass(frozen=True)
class GraphSpec:
    """A tiny random pairwise graph (harness.targets.factor_graph.random_factor_graph), with all
    tables scaled so that its L = max_i sum_{phi in A[i]} M_phi is exactly ``L``."""

    name: str
    n: int
    D: int
    L: float
    edge_prob: float = 0.7


@dataclass(frozen=True)
class ChainSpec:
    """Long chains on one graph: ``graph`` names a GraphSpec (tiny, with an exact comparison) or
    is ``"potts"`` (potts_grid(side, beta, D))."""

    name: str
    graph: str
    lam_over_L2: tuple[float, ...]
    n_steps: int
    burn_in: int
    max_lag: int
    side: int = 0
    beta: float = 0.0
    D: int = 0


@dataclass(frozen=True)
class MinibatchGapConfig:
    """Everything that determines the records (stored as the settings in experiment.json)."""

    level: str
    seed: int
    graphs: tuple[GraphSpec, ...]
    lam_over_L: tuple[float, ...]
    lam_over_L2: tuple[float, ...]
    max_grid: float
    chains: tuple[ChainSpec, ...] = ()
    tail: float = 1e-15
    notes: tuple[str, ...] = ()

    def manifest(self) -> dict[str, Any]:
        return {"experiment": NAME, **dataclasses.asdict(self)}

    @classmethod
    def from_manifest(cls, m: dict[str, Any]) -> MinibatchGapConfig:
        """The inverse of :meth:`manifest` (JSON turns tuples into lists; turn them back)."""
        return cls(
            level=m["level"],
            seed=m["seed"],
            graphs=tuple(GraphSpec(**g) for g in m["graphs"]),
            lam_over_L=tuple(m["lam_over_L"]),
            lam_over_L2=tuple(m["lam_over_L2"]),
            max_grid=m["max_grid"],
            chains=tuple(ChainSpec(**lists_to_tuples(c)) for c in m["chains"]),
            tail=m["tail"],
            notes=tuple(m["notes"]),
        )


def check_config(config: MinibatchGapConfig) -> None:
    """Raise ValueError naming the first bad parameter, before any work or any file."""
    if config.level not in LEVELS:
        raise ValueError(f"parameter 'level' = {config.level!r}; valid: {', '.join(LEVELS)}")
    check_seed(config.seed)
    names = [g.name for g in config.graphs]
    if len(set(names)) != len(names):
        raise ValueError(f"parameter 'graphs' has repeated names {names}; valid: unique names")
    for g in config.graphs:
        check_int(g.n, "graphs.n", 1)
        check_int(g.D, "graphs.D", 1)
        if g.n < 2 or g.D < 2 or g.D**g.n > 256:
            raise ValueError(
                f"parameter 'graphs' ({g.name}: n = {g.n}, D = {g.D}) is invalid; valid: "
                "n >= 2, D >= 2, D^n <= 256 (exact matrices)"
            )
        check_positive(g.L, "graphs.L")
        if not 0.0 <= g.edge_prob <= 1.0:
            raise ValueError(f"parameter 'graphs.edge_prob' = {g.edge_prob!r}; valid: [0, 1]")
    for name in ("lam_over_L", "lam_over_L2"):
        for v in getattr(config, name):
            check_positive(v, name)
    if not config.lam_over_L and not config.lam_over_L2:
        raise ValueError("parameters 'lam_over_L' and 'lam_over_L2' are both empty; valid: >= 1")
    check_positive(config.max_grid, "max_grid")
    if not 0.0 < config.tail < 1e-6:
        raise ValueError(f"parameter 'tail' = {config.tail!r}; valid: in (0, 1e-6)")
    for c in config.chains:
        if c.graph != "potts" and c.graph not in names:
            raise ValueError(
                f"parameter 'chains.graph' = {c.graph!r}; valid: 'potts' or {', '.join(names)}"
            )
        if c.graph == "potts":
            check_int(c.side, "chains.side", 1)
            check_positive(c.beta, "chains.beta")
            check_int(c.D, "chains.D", 1)
        for v in c.lam_over_L2:
            check_positive(v, "chains.lam_over_L2")
        check_int(c.n_steps, "chains.n_steps", 1)
        check_int(c.max_lag, "chains.max_lag", 1)
        check_int(c.burn_in, "chains.burn_in", 0)
        if c.n_steps < 20 * c.max_lag:
            raise ValueError(
                f"parameter 'chains.max_lag' = {c.max_lag} is too large for n_steps = "
                f"{c.n_steps}; valid: n_steps >= 20 * max_lag"
            )


def config_for_level(level: str, seed: int = 0) -> MinibatchGapConfig:
    """The settings of ``level``; see the module docstring."""
    if level not in LEVELS:
        raise ValueError(f"--level {level!r} is invalid; valid: {', '.join(LEVELS)}")
    seed = check_seed(seed)
    config = _quick(seed) if level == "quick" else _full(seed)
    check_config(config)
    return config


LAM_OVER_L = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0)


def _quick(seed: int) -> MinibatchGapConfig:
    graphs = (
        GraphSpec("g3-D2-L1", 3, 2, 1.0),
        GraphSpec("g3-D2-L2", 3, 2, 2.0),
        GraphSpec("g3-D3-L4", 3, 3, 4.0),
    )
    chains = (
        ChainSpec("tiny", "g3-D3-L4", (0.25, 1.0), 200_000, 1_000, 200),
        ChainSpec("potts", "potts", (0.25, 1.0), 300_000, 5_000, 2_000, side=3, beta=2.0, D=3),
    )
    return MinibatchGapConfig(
        level="quick",
        seed=seed,
        graphs=graphs,
        lam_over_L=LAM_OVER_L,
        lam_over_L2=(1.0, 4.0),
        max_grid=3e5,
        chains=chains,
        notes=(
            "quick level: three graphs with n = 3 variables, L in {1, 2, 4}; chains of 2e5 "
            "(tiny graph) and 3e5 (3 x 3 Potts grid) steps.",
        ),
    )


def _full(seed: int) -> MinibatchGapConfig:
    graphs = (
        GraphSpec("g3-D2-L1", 3, 2, 1.0),
        GraphSpec("g3-D3-L2", 3, 3, 2.0),
        GraphSpec("g4-D2-L2", 4, 2, 2.0),
        GraphSpec("g4-D2-L3", 4, 2, 3.0),
        GraphSpec("g3-D3-L4", 3, 3, 4.0),
        GraphSpec("g4-D3-L4", 4, 3, 4.0, edge_prob=1.0),
    )
    chains = (
        ChainSpec("tiny", "g3-D3-L4", (0.1, 0.25, 1.0, 4.0), 2_000_000, 1_000, 500),
        ChainSpec(
            "potts",
            "potts",
            (0.1, 0.25, 1.0, 4.0),
            4_000_000,
            20_000,
            20_000,
            side=4,
            beta=1.5,
            D=3,
        ),
    )
    return MinibatchGapConfig(
        level="full",
        seed=seed,
        graphs=graphs,
        lam_over_L=LAM_OVER_L,
        lam_over_L2=(0.5, 1.0, 2.0, 4.0, 8.0),
        max_grid=3e5,  # 3e6 reached a 4-variable D = 3 graph at lam = 16 L: minutes per point
        chains=chains,
        notes=(
            "full level: six graphs (n = 3-4, D = 2-3, L in 1-4); chains of 2e6 (tiny graph) "
            "and 4e6 (4 x 4 Potts grid) steps.",
        ),
    )


# ---------------------------------------------------------------- plan


@dataclass(frozen=True)
class ExactSetting:
    graph: str
    lam: float
    lam_label: str

    @property
    def key(self) -> str:
        return f"exact|{self.graph}|lam={self.lam:.12g}"


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


@dataclass(frozen=True)
class Plan:
    exact: tuple[ExactSetting, ...]
    chains: tuple[ChainSetting, ...]
    skipped: tuple[tuple[ExactSetting, str], ...] = ()


def _lams(config: MinibatchGapConfig, L: float) -> list[tuple[float, str]]:
    out = {L * m: f"{m:g} L" for m in config.lam_over_L}
    for m in config.lam_over_L2:
        out.setdefault(L * L * m, f"{m:g} L^2")
    return sorted(out.items())


def plan(config: MinibatchGapConfig) -> Plan:
    """Every setting; exact ones whose Poisson grid would exceed ``max_grid`` are skipped."""
    exact_settings, skipped = [], []
    for g in config.graphs:
        target = graph_target(g, config.seed)
        for lam, label in _lams(config, g.L):
            s = ExactSetting(g.name, lam, label)
            size = grid_size(target, lam, config.tail)
            if size > config.max_grid:
                reason = f"Poisson grid > {config.max_grid:.3g} points per (x, i)"
                skipped.append((s, reason))
            else:
                exact_settings.append(s)
    chains = []
    for c in config.chains:
        L = chain_target(c, config).L
        chains.append(ChainSetting(c.name, c.graph, "gibbs", None, None, c.n_steps))
        for m in c.lam_over_L2:
            chains.append(ChainSetting(c.name, c.graph, "poisson-gibbs", L * L * m, m, c.n_steps))
    return Plan(tuple(exact_settings), tuple(chains), tuple(skipped))


def grid_size(target: FactorGraphTarget, lam: float, tail: float) -> float:
    """Largest number of s vectors the exact matrices enumerate for one (x, i)."""
    worst = 0.0
    top = target.tables.max(axis=(1, 2))
    for i in range(target.n_vars):
        f = target.adj_factors[target.adj_indptr[i] : target.adj_indptr[i + 1]]
        rates = lam * target.M[f] / target.L + top[f]
        worst = max(worst, float(np.prod([poisson.isf(tail, r) + 2.0 for r in rates])))
    return worst


# ---------------------------------------------------------------- targets


@lru_cache(maxsize=16)
def _graph_target(
    name: str, n: int, D: int, L: float, edge_prob: float, seed: int
) -> FactorGraphTarget:
    raw = random_factor_graph(n, D, setting_rng(seed, f"graph|{name}"), edge_prob=edge_prob)
    # Scaling every table and bound by one constant sets L exactly, keeping the graph's shape.
    c = L / raw.L
    return FactorGraphTarget(n, D, raw.scopes, raw.tables * c, raw.M * c, name=name)


def graph_target(g: GraphSpec, seed: int) -> FactorGraphTarget:
    return _graph_target(g.name, g.n, g.D, g.L, g.edge_prob, seed)


def chain_target(c: ChainSpec, config: MinibatchGapConfig) -> FactorGraphTarget:
    if c.graph == "potts":
        return _potts(c.side, c.beta, c.D)
    g = next(g for g in config.graphs if g.name == c.graph)
    return graph_target(g, config.seed)


@lru_cache(maxsize=4)
def _potts(side: int, beta: float, D: int) -> FactorGraphTarget:
    return potts_grid(side, beta, D)


# ---------------------------------------------------------------- exact gaps


def _clean(P: np.ndarray) -> tuple[np.ndarray, float]:
    """Undo rounding: where a row's off-diagonal mass exceeds 1 by <= CLIP (so its diagonal went
    negative), scale that mass down to 1 and zero the diagonal. Return the largest l1 change of
    a row."""
    diag = np.diag(P).copy()
    if diag.min() >= 0.0:
        return P, 0.0
    if diag.min() < -CLIP:
        raise ValueError(f"exact kernel has a diagonal entry {diag.min():.3g} < 0 beyond rounding")
    bad = diag < 0.0
    off = 1.0 - diag[bad]  # off-diagonal mass of those rows, in (1, 1 + CLIP]
    P[bad] /= off[:, None]
    P[np.nonzero(bad)[0], np.nonzero(bad)[0]] = 0.0
    return P, float(2.0 * np.max(off - 1.0))


def _gap_error(pi: np.ndarray, tau: float, clipped: float) -> float:
    """Worst move of the gap from truncation and rounding (Weyl): every row of P moves by at most
    e = 2 tau + clipped in l1, so D^1/2 dP D^-1/2 has Frobenius norm <= sqrt(n max pi / min pi) e
    (n states); the symmetrisation in ``spectral_gap`` moves it by no more than that again."""
    ratio = float(pi.max() / pi.min())
    return 2.0 * (2.0 * tau + clipped) * math.sqrt(pi.size * ratio)


@lru_cache(maxsize=16)
def _base_gaps(
    name: str, n: int, D: int, L: float, edge_prob: float, seed: int
) -> tuple[float, float]:
    t = _graph_target(name, n, D, L, edge_prob, seed)
    return spectral_gap(exact.gibbs_matrix(t), t.pmf), spectral_gap(
        exact.metropolis_matrix(t), t.pmf
    )


def thm1_bound(L: float, lam: float) -> float | None:
    """003 Thm. 1: gap(PG) >= exp(-4 L^2 / lam) gap(Gibbs), stated for lam >= 2L only."""
    return math.exp(-4.0 * L * L / lam) if lam >= 2.0 * L else None


def thm2_bound(L: float, lam: float) -> float:
    """003 Thm. 2: gap(PMH) >= 0.5 exp(-L^2 / (lam + L)) gap(MH, same proposal), any lam > 0."""
    return 0.5 * math.exp(-L * L / (lam + L))


def run_exact_setting(s: ExactSetting, config: MinibatchGapConfig) -> dict[str, Any]:
    g = next(g for g in config.graphs if g.name == s.graph)
    t0 = time.perf_counter()
    t = graph_target(g, config.seed)
    pi = t.pmf
    gap_gibbs, gap_mh = _base_gaps(g.name, g.n, g.D, g.L, g.edge_prob, config.seed)
    pg = exact.poisson_gibbs_matrix(t, s.lam, tail=config.tail)
    pmh = exact.poisson_mh_matrix(t, s.lam, tail=config.tail)
    P_pg, clip_pg = _clean(pg.P.copy())
    P_pmh, clip_pmh = _clean(pmh.P.copy())
    gap_pg, gap_pmh = spectral_gap(P_pg, pi), spectral_gap(P_pmh, pi)
    err_pg = _gap_error(pi, pg.truncation_bound, clip_pg)
    err_pmh = _gap_error(pi, pmh.truncation_bound, clip_pmh)
    b1, b2 = thm1_bound(t.L, s.lam), thm2_bound(t.L, s.lam)
    r1, r2 = gap_pg / gap_gibbs, gap_pmh / gap_mh
    # "holds" allows the ratio to sit below the bound by the truncation's worst effect only.
    return {
        "key": s.key,
        "type": "exact",
        "experiment": NAME,
        "graph": g.name,
        "n": g.n,
        "D": g.D,
        "n_factors": t.n_factors,
        "L": t.L,
        "lam": s.lam,
        "lam_label": s.lam_label,
        "lam_over_L": s.lam / t.L,
        "gap_gibbs": gap_gibbs,
        "gap_poisson_gibbs": gap_pg,
        "gap_mh": gap_mh,
        "gap_poisson_mh": gap_pmh,
        "ratio_thm1": r1,
        "bound_thm1": b1,
        "thm1_applies": b1 is not None,
        "holds_thm1": None if b1 is None else bool(r1 >= b1 - err_pg / gap_gibbs),
        "ratio_thm2": r2,
        "bound_thm2": b2,
        "holds_thm2": bool(r2 >= b2 - err_pmh / gap_mh),
        "truncation_bound_pg": pg.truncation_bound,
        "truncation_bound_pmh": pmh.truncation_bound,
        "gap_error_pg": err_pg,
        "gap_error_pmh": err_pmh,
        "grid_size": grid_size(t, s.lam, config.tail),
        "wall_s": time.perf_counter() - t0,
        "seed": config.seed,
        "code": provenance()["source_digest"],
    }


# ---------------------------------------------------------------- chain estimates


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
    return _clean(exact.poisson_gibbs_matrix(t, float(s.lam), tail=tail).P.copy())[0]


def run_chain_setting(s: ChainSetting, config: MinibatchGapConfig) -> dict[str, Any]:
    c = next(c for c in config.chains if c.name == s.chain)
    t0 = time.perf_counter()
    target = chain_target(c, config)
    series, factors = _observable_series(s, target, c, setting_rng(config.seed, s.key))
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
    return record


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


# ---------------------------------------------------------------- run


def run(
    config: MinibatchGapConfig,
    out: Path,
    progress: bool = True,
    part: str = "all",
    workers: int = 1,
    log: Callable[[str], None] = lambda msg: print(msg, file=sys.stderr),
) -> RunSummary:
    """Run (or resume) the experiment into ``out``; return what this invocation did.

    ``workers`` is accepted for the common interface; every setting runs in this process (the
    exact part is seconds, and the chains are timed).
    """
    check_run_args(part, workers, PARTS)
    check_config(config)
    t0 = time.perf_counter()
    out = Path(out)
    path, done = start_run(out, config.manifest())
    p = plan(config)
    todo: list[ExactSetting | ChainSetting] = []
    if part in ("all", "exact"):
        todo += [s for s in p.exact if s.key not in done]
    if part in ("all", "chains"):
        todo += [s for s in p.chains if s.key not in done]
    planned = len(p.exact) + len(p.chains)
    log(_plan_message(p, planned, len(done & {s.key for s in (*p.exact, *p.chains)}), len(todo)))
    for k, s in enumerate(todo, 1):
        if isinstance(s, ExactSetting):
            record = run_exact_setting(s, config)
        else:
            record = run_chain_setting(s, config)
        append_record(path, record)
        if progress:
            log(f"  [{k}/{len(todo)}] {s.key} ({record['wall_s']:.2f} s)")
    return RunSummary(
        out=str(out),
        planned=planned,
        already_done=len(done),
        ran=len(todo),
        skipped_by_rule=len(p.skipped),
        wall_s=time.perf_counter() - t0,
    )


def _plan_message(p: Plan, planned: int, done: int, todo: int) -> str:
    msg = f"{NAME}: {planned} settings planned, {done} already on disk, {todo} to run now"
    if p.skipped:
        msg += f"\n  skipped by rule ({len(p.skipped)} settings): {p.skipped[0][1]}"
    return msg


def format_speed(records: Iterable[dict[str, Any]]) -> str:
    """No timing benchmark in this experiment; kept for the common interface."""
    return ""
