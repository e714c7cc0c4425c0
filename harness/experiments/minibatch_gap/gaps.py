"""Settings and tasks: the exact gaps of one (tiny graph, lam), and gaps estimated from a chain.

A chain's 1 - rho_f(1) is a Rayleigh quotient (>= the gap); its fitted late decay rate r gives
1 - exp(-r), the gap only when the slowest mode dominates f. An energy cannot see the
label-switching mode, hence a second observable: the fraction of variables at 0.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from scipy.stats import poisson

from harness.declare import Config, Declared, param
from harness.gates.mcmc import clean_kernel, gap_with_error, spectral_gap
from harness.registry import build_registry, registry_for
from harness.targets.factor_graph import FactorGraphTarget, potts_grid, random_factor_graph
from harness.tasks import Records, SeedKey

OBSERVABLES = ("energy", "frac0")
IMPL = "numba"
#: Steps per sampler call: bounds memory (values are (steps, n_vars) int64).
CHUNK = 100_000
#: The fit window ends where rho_f first drops below this (well above its sampling noise).
FIT_FLOOR = 0.1
POSITIVE: dict[str, Any] = {"low": 0.0, "high": math.inf, "open": True}
FULL_LAMS = (0.1, 0.25, 1.0, 4.0)  # lam / L^2 of the full level's chains


@dataclass(frozen=True)
class GraphSpec(Declared):
    """A tiny random pairwise graph, its tables scaled so that its L is exactly ``L``."""

    name: str
    n: int = param(low=2)
    D: int = param(low=2)
    L: float = param(**POSITIVE)
    edge_prob: float = param(0.7, low=0.0, high=1.0)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.D**self.n > 256:  # exact matrices are D^n x D^n
            raise ValueError(
                f"parameter 'graphs' ({self.name}: D^n = {self.D**self.n}) is invalid; "
                "valid: D^n <= 256"
            )


@dataclass(frozen=True)
class ChainSpec(Declared):
    """Gibbs and Poisson-Gibbs chains on a GraphSpec (named) or on potts_grid(side, beta, D)."""

    name: str
    graph: str
    lam_over_L2: tuple[float, ...] = param(**POSITIVE)
    n_steps: int = param(low=1)
    burn_in: int = param(low=0)
    max_lag: int = param(low=1)
    side: int = 0
    beta: float = 0.0
    D: int = 0

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.graph == "potts" and min(self.side, self.beta, self.D) <= 0:
            raise ValueError(
                f"parameter 'side', 'beta' or 'D' of {self.name!r} is invalid; valid: > 0"
            )
        if self.n_steps < 20 * self.max_lag:
            raise ValueError(
                f"parameter 'max_lag' = {self.max_lag} is invalid; valid: <= n_steps / 20"
            )


@dataclass(frozen=True, kw_only=True)
class MinibatchGapConfig(Config):
    experiment = "minibatch-gap"
    graphs: tuple[GraphSpec, ...] = param(
        quick=(
            GraphSpec("g3-D2-L1", 3, 2, 1.0),
            GraphSpec("g3-D2-L2", 3, 2, 2.0),
            GraphSpec("g3-D3-L4", 3, 3, 4.0),
        ),
        full=(
            GraphSpec("g3-D2-L1", 3, 2, 1.0),
            GraphSpec("g3-D3-L2", 3, 3, 2.0),
            GraphSpec("g4-D2-L2", 4, 2, 2.0),
            GraphSpec("g4-D2-L3", 4, 2, 3.0),
            GraphSpec("g3-D3-L4", 3, 3, 4.0),
            GraphSpec("g4-D3-L4", 4, 3, 4.0, edge_prob=1.0),
        ),
        doc="graph",
    )
    lam_over_L: tuple[float, ...] = param(
        (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0), empty=True, doc="lam / L", **POSITIVE
    )
    lam_over_L2: tuple[float, ...] = param(
        quick=(1.0, 4.0), full=(0.5, 1.0, 2.0, 4.0, 8.0), empty=True, doc="lam / L^2", **POSITIVE
    )
    # 3e6 reached a 4-variable D = 3 graph at lam = 16 L: minutes per point.
    max_grid: float = param(3e5, doc="most s vectors per (x, i) (more: skipped)", **POSITIVE)
    chains: tuple[ChainSpec, ...] = param(
        (),
        empty=True,
        quick=(
            ChainSpec("tiny", "g3-D3-L4", (0.25, 1.0), 200_000, 1_000, 200),
            ChainSpec("potts", "potts", (0.25, 1.0), 300_000, 5_000, 2_000, side=3, beta=2.0, D=3),
        ),
        full=(
            ChainSpec("tiny", "g3-D3-L4", FULL_LAMS, 2_000_000, 1_000, 500),
            ChainSpec(
                "potts", "potts", FULL_LAMS, 4_000_000, 20_000, 20_000, side=4, beta=1.5, D=3
            ),
        ),
        doc="chains",
    )
    tail: float = param(1e-15, low=0.0, high=1e-6, open=True, doc="Poisson tail cut per factor")

    def __post_init__(self) -> None:
        super().__post_init__()
        names = [g.name for g in self.graphs]
        if len(set(names)) != len(names):
            raise ValueError(f"parameter 'graphs' has repeated names {names}; valid: unique")
        if not self.lam_over_L and not self.lam_over_L2:
            raise ValueError("parameters 'lam_over_L' and 'lam_over_L2' are both empty")
        for c in self.chains:
            if c.graph != "potts" and c.graph not in names:
                raise ValueError(f"parameter 'chains.graph' = {c.graph!r}; valid: 'potts', {names}")


@lru_cache(maxsize=16)
def graph_target(g: GraphSpec, seed: int) -> FactorGraphTarget:
    rng = SeedKey.from_label(seed, f"graph|{g.name}").generator()
    raw = random_factor_graph(g.n, g.D, rng, edge_prob=g.edge_prob)
    c = g.L / raw.L  # one constant on every table sets L exactly, keeping the graph's shape
    return FactorGraphTarget(g.n, g.D, raw.scopes, raw.tables * c, raw.M * c, name=g.name)


@lru_cache(maxsize=4)
def chain_target(c: ChainSpec, config: MinibatchGapConfig) -> FactorGraphTarget:
    if c.graph == "potts":
        return potts_grid(c.side, c.beta, c.D)
    return graph_target(next(g for g in config.graphs if g.name == c.graph), config.seed)


def grid_size(target: FactorGraphTarget, lam: float, tail: float) -> float:
    """Largest number of s vectors the exact matrices enumerate for one (x, i)."""
    worst = 0.0
    top = target.tables.max(axis=(1, 2))
    for i in range(target.n_vars):
        f = target.adj_factors[target.adj_indptr[i] : target.adj_indptr[i + 1]]
        rates = lam * target.M[f] / target.L + top[f]
        worst = max(worst, float(np.prod([poisson.isf(tail, r) + 2.0 for r in rates])))
    return worst


def exact_matrix(algorithm: str, part: str) -> Any:
    """The registered ``algorithm``'s exact transition matrix builder ``part``: the one its
    invariance and gap gates use."""
    return registry_for(()).get(algorithm).part(part)


def exact_key(g: GraphSpec, lam: float) -> str:
    return f"exact|{g.name}|lam={lam:.12g}"


def run_exact(g: GraphSpec, lam: float, label: str, config: MinibatchGapConfig) -> Records:
    t0 = time.perf_counter()
    t = graph_target(g, config.seed)
    pi, L = t.pmf, t.L
    gap_gibbs = spectral_gap(exact_matrix("gibbs", "gibbs_matrix")(t), pi)
    gap_mh = spectral_gap(exact_matrix("poisson-mh", "metropolis_matrix")(t), pi)
    pg = exact_matrix("poisson-gibbs", "poisson_gibbs_matrix")(t, lam, tail=config.tail)
    pmh = exact_matrix("poisson-mh", "poisson_mh_matrix")(t, lam, tail=config.tail)
    gap_pg, err_pg = gap_with_error(pg.P, pi, pg.truncation_bound)
    gap_pmh, err_pmh = gap_with_error(pmh.P, pi, pmh.truncation_bound)
    b1 = math.exp(-4.0 * L * L / lam) if lam >= 2.0 * L else None  # Thm. 1: lam >= 2L only
    b2 = 0.5 * math.exp(-L * L / (lam + L))
    r1, r2 = gap_pg / gap_gibbs, gap_pmh / gap_mh
    return [
        {
            "key": exact_key(g, lam),
            "type": "exact",
            "graph": g.name,
            "n": g.n,
            "D": g.D,
            "n_factors": t.n_factors,
            "L": L,
            "lam": lam,
            "lam_label": label,
            "lam_over_L": lam / L,
            "gap_gibbs": gap_gibbs,
            "gap_poisson_gibbs": gap_pg,
            "gap_mh": gap_mh,
            "gap_poisson_mh": gap_pmh,
            "ratio_thm1": r1,
            "bound_thm1": b1,
            "thm1_applies": b1 is not None,
            # "holds" lets the ratio sit below the bound by the truncation's worst effect only.
            "holds_thm1": None if b1 is None else bool(r1 >= b1 - err_pg / gap_gibbs),
            "ratio_thm2": r2,
            "bound_thm2": b2,
            "holds_thm2": bool(r2 >= b2 - err_pmh / gap_mh),
            "truncation_bound_pg": pg.truncation_bound,
            "truncation_bound_pmh": pmh.truncation_bound,
            "gap_error_pg": err_pg,
            "gap_error_pmh": err_pmh,
            "grid_size": grid_size(t, lam, config.tail),
            "wall_s": time.perf_counter() - t0,
            "seed": config.seed,  # an unseeded task: the framework does not stamp it
        }
    ]


def chain_key(c: ChainSpec, lam: float | None) -> str:  # lam None: Gibbs
    what = "gibbs|lam=-" if lam is None else f"poisson-gibbs|lam={lam:.12g}"
    return f"chain|{c.name}|{what}|steps={c.n_steps}"


def observables(target: FactorGraphTarget, values: np.ndarray) -> dict[str, np.ndarray]:
    """Energy U(x) = sum_phi phi(x) and the fraction of variables equal to 0, per row."""
    a, b = target.scopes[:, 0], target.scopes[:, 1]
    f = np.arange(target.n_factors)
    energy = np.empty(values.shape[0])
    step = max(1, 2_000_000 // max(1, target.n_factors))  # bounded (rows x factors) temporary
    for lo in range(0, values.shape[0], step):
        x = values[lo : lo + step]
        energy[lo : lo + step] = target.tables[f, x[:, a], x[:, b]].sum(axis=1)
    return {"energy": energy, "frac0": (values == 0).mean(axis=1)}


def autocorrelation(x: np.ndarray, max_lag: int) -> np.ndarray:
    """rho(0..max_lag) by FFT (biased normalisation). harness.gates.mcmc.autocorrelation pads
    to another length and differs in the last bits, which would change the records."""
    y = np.asarray(x, dtype=np.float64) - float(np.mean(x))
    var = float(y @ y) / y.size
    if var == 0.0:
        return np.full(max_lag + 1, np.nan)
    n = 1 << int(2 * y.size - 1).bit_length()
    spec = np.fft.rfft(y, n)
    return np.fft.irfft(spec * np.conj(spec), n)[: max_lag + 1] / y.size / var


def fit_rate(rho: np.ndarray) -> tuple[float, int, int]:
    """Exponential rate of rho(k) over [k_end / 3, k_end], k_end the first lag with rho below
    FIT_FLOOR: the late part, where the slowest mode dominates most."""
    below = np.nonzero(~(rho >= FIT_FLOOR))[0]
    k_end = max(int(below[0]) if below.size else rho.size - 1, 3)
    k_start = max(1, k_end // 3)
    k = np.arange(k_start, k_end + 1)
    ok = rho[k] > 0
    if ok.sum() < 2:
        return math.nan, k_start, k_end
    return float(-np.polyfit(k[ok], np.log(rho[k][ok]), 1)[0]), k_start, k_end


def run_chain(
    c: ChainSpec, m: float | None, config: MinibatchGapConfig, *, rng: np.random.Generator
) -> Records:
    """Gibbs (``m`` None) or Poisson-Gibbs at lam = m L^2."""
    t0 = time.perf_counter()
    target = chain_target(c, config)
    lam = None if m is None else target.L * target.L * m
    algorithm = "gibbs" if lam is None else "poisson-gibbs"
    spec = build_registry().get(algorithm)
    params = spec.validate({} if lam is None else {"lam": lam})
    fn = spec.implementation(IMPL)
    x = None
    parts: dict[str, list[np.ndarray]] = {o: [] for o in OBSERVABLES}
    factors, done, total = 0.0, 0, c.burn_in + c.n_steps
    while done < total:
        steps = min(CHUNK, total - done)
        chain = fn(target, steps, rng, x0=x, **params)
        x = chain.values[-1].copy()
        for o, v in observables(target, chain.values[max(0, c.burn_in - done) :]).items():
            parts[o].append(v)
        factors += float(np.sum(chain.extras["factors_per_step"]))
        done += steps
    chain_s = time.perf_counter() - t0
    est: dict[str, dict[str, Any]] = {}
    for o, v in parts.items():
        rho = autocorrelation(np.concatenate(v), c.max_lag)
        rate, k0, k1 = fit_rate(rho)
        est[o] = {
            "one_minus_rho1": float(1.0 - rho[1]),
            "fit_rate": rate,
            "fit_gap": float(-math.expm1(-rate)) if math.isfinite(rate) else None,
            "fit_window": (k0, k1),
            "rho_at_max_lag": float(rho[-1]),
        }
    cmp: dict[str, Any] | None = None
    if c.graph != "potts":  # the exact gap; the same estimators on the exact rho_f(k)
        if lam is None:
            P = exact_matrix("gibbs", "gibbs_matrix")(target)
        else:
            build = exact_matrix("poisson-gibbs", "poisson_gibbs_matrix")
            P = clean_kernel(build(target, lam, tail=config.tail).P.copy())[0]
        pi = target.pmf
        cmp = {"gap": spectral_gap(P, pi)}
        for o, f in observables(target, target.states()).items():
            k0, k1 = est[o]["fit_window"]
            g = f - pi @ f  # rho_f(k) = <g, P^k g>_pi / Var_pi(f)
            var = float(pi @ (g * g))
            rho, h = np.empty(k1 + 1), g.copy()
            for k in range(k1 + 1):
                rho[k] = float(pi @ (g * h)) / var
                h = P @ h
            k = np.arange(k0, k1 + 1)
            slope = np.polyfit(k, np.log(np.maximum(rho[k], 1e-300)), 1)[0]
            cmp[o] = {"one_minus_rho1": float(1.0 - rho[1]), "fit_gap": float(-math.expm1(slope))}
    record: dict[str, Any] = {
        "key": chain_key(c, lam),
        "type": "chain",
        "chain": c.name,
        "graph": target.name,
        "n_vars": target.n_vars,
        "D": target.D,
        "L": target.L,
        "algorithm": algorithm,
        "lam": lam,
        "lam_over_L2": m,
        "n_steps": c.n_steps,
        "burn_in": c.burn_in,
        "max_lag": c.max_lag,
        "factors_per_step": factors / total,
        "estimates": est,
        "exact": cmp,
    }
    return [{**record, "chain_s": chain_s, "wall_s": time.perf_counter() - t0, "impl": IMPL}]
