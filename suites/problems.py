"""Benchmark problems per target kind, and the cases (algorithm x implementation x size) they give.

Shared by the asv suites and the pytest-benchmark suite (bench/). Everything here is derived from
the registry and the catalog, so an algorithm added later is benchmarked with no edit: a known
target kind gets the sizes below, an unknown one the catalog's verification problems.

Sizes are chosen so that the pure-NumPy reference finishes a quick asv run in minutes on two
cores; ``n`` (draws or chain steps per timed call) is the same for both implementations so their
times compare directly.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from harness.registry import Registry, build_registry
from harness.spec import AlgorithmSpec, Chain, Draws, sample

IMPLS = ("reference", "numba")


@dataclass(frozen=True)
class Size:
    """One problem size of a target kind: a readable label, a builder, and the draws per call."""

    label: str
    build: Callable[[], Any]
    n: int


def _synthetic(D: int, N: int) -> Callable[[], Any]:
    # sigma 1e-3 is the racing regime of 000 Sec. 5.1 (races stop early); with sigma 1 every race
    # reads all N. lil'UCB's reference still needs ~1 s per draw at D30-N10000 (minutes at D100).
    def build() -> Any:
        from harness.targets.discrete import synthetic_rewards

        return synthetic_rewards(D, N, "normal", 1e-3, np.random.default_rng(0))

    return build


def _ragged(scale: int) -> Callable[[], Any]:
    def build() -> Any:
        from harness.targets.discrete import ragged_rewards

        sizes = [s * scale for s in (2, 7, 40, 150, 600, 2000, 60, 900)]
        return ragged_rewards(sizes, 1e-3, np.random.default_rng(10))

    return build


def _terms(N: int) -> Callable[[], Any]:
    # Logistic candidates far enough apart that a race drops the far ones early (000 Eq. 1 with
    # terms computed from data; harness.targets.likelihood_terms).
    def build() -> Any:
        from harness.targets.likelihood_terms import logistic_candidates

        return logistic_candidates(N, 10, 10, 1000.0, 3)

    return build


def _posterior(N: int) -> Callable[[], Any]:
    def build() -> Any:
        from harness.targets.posterior import studentt_posterior

        return studentt_posterior(N, 1.0, 4.0, np.random.default_rng(8))

    return build


def _potts(side: int) -> Callable[[], Any]:
    def build() -> Any:
        from harness.targets.factor_graph import potts_grid

        return potts_grid(side, 1.0, 3)

    return build


def _spin(side: int) -> Callable[[], Any]:
    def build() -> Any:
        from harness.targets.continuous_factor_graph import continuous_spin_grid

        return continuous_spin_grid(side)

    return build


def _trunc(phi: float, b: float) -> Callable[[], Any]:
    def build() -> Any:
        from harness.targets.continuous import TruncatedGumbelTarget

        return TruncatedGumbelTarget(phi, b)

    return build


# Smallest first, largest last (peakmem_ runs on the last one).
KNOWN_SIZES: Mapping[str, tuple[Size, ...]] = {
    "discrete": (
        Size("D10-N1000", _synthetic(10, 1000), 20),
        Size("D30-N10000", _synthetic(30, 10000), 2),
    ),
    "discrete-ragged": (
        Size("D8-N3759", _ragged(1), 20),
        Size("D8-N37590", _ragged(10), 5),
    ),
    "discrete-likelihood": (
        Size("logistic-D10-N1000", _terms(1000), 20),
        Size("logistic-D10-N10000", _terms(10_000), 2),
    ),
    "continuous-1d": (Size("phi0-b1", _trunc(0.0, 1.0), 200),),
    "posterior-1d": (
        Size("N500", _posterior(500), 100),
        Size("N10000", _posterior(10000), 50),
    ),
    "factor-graph": (
        Size("potts-5x5-D3", _potts(5), 200),
        Size("potts-10x10-D3", _potts(10), 100),
    ),
    "factor-graph-continuous": (
        Size("spin-4x4", _spin(4), 100),
        Size("spin-8x8", _spin(8), 50),
    ),
}


def _catalog_sizes(kind: str) -> tuple[Size, ...]:
    from harness.targets.catalog import build_target, problems

    found = problems(kind, "quick") or problems(kind, "full")
    return tuple(Size(p.name, functools.partial(build_target, p.name), 20) for p in found)


def catalog_kinds() -> list[str]:
    from harness.targets.catalog import PROBLEMS

    return list(dict.fromkeys(p.kind for p in PROBLEMS))


@functools.cache
def registry() -> Registry:
    return build_registry()


def kinds() -> list[str]:
    """Every target kind an algorithm accepts or the catalog holds, in a stable order."""
    found = catalog_kinds()
    for spec in registry():
        found += [k for k in spec.target_kinds if k not in found]
    return found


def sizes(kind: str) -> tuple[Size, ...]:
    return KNOWN_SIZES.get(kind) or _catalog_sizes(kind)


def size(kind: str, label: str) -> Size:
    for s in sizes(kind):
        if s.label == label:
            return s
    raise NotImplementedError(f"no size {label!r} for target kind {kind!r}")


def algorithms(kind: str, entry: str | None = None) -> list[str]:
    return [
        s.name for s in registry() if kind in s.target_kinds and (entry is None or s.entry == entry)
    ]


@functools.lru_cache(maxsize=8)
def target(kind: str, label: str) -> Any:
    return size(kind, label).build()


def bench_params(spec: AlgorithmSpec, target: Any) -> dict[str, Any]:
    """The defaults when the target accepts them; else the first verification check for this
    kind that does (e.g. Racing-Normal needs variance='marginal' on ragged targets).

    ``exact_answer`` is dropped: it only feeds the gates and would add cost to every draw.
    Raises NotImplementedError (asv's skip) when no parameter set fits the target.
    """
    candidates = [{}] + [
        {k: v for k, v in c.params.items() if k != "exact_answer"}
        for c in spec.checks
        if c.kinds is None or target.kind in c.kinds
    ]
    for params in candidates:
        try:
            checked = spec.validate(params)
            if spec.target_check is not None:
                spec.target_check(target, checked)
        except ValueError:
            continue
        return params
    raise NotImplementedError(f"{spec.name!r} takes no parameter set that fits {target.name!r}")


@dataclass(frozen=True)
class Case:
    """One runnable benchmark case; ``run(n, seed)`` is what gets timed."""

    spec: AlgorithmSpec
    impl: str
    target: Any
    n: int
    params: Mapping[str, Any]

    def run(self, n: int | None = None, seed: int = 1) -> Draws | Chain:
        rng = np.random.default_rng(seed)
        return sample(self.spec, self.impl, self.target, n or self.n, rng, **self.params)


def case(algorithm: str, impl: str, kind: str, label: str) -> Case:
    """Build a case or raise NotImplementedError for an invalid combination (asv then skips)."""
    if algorithm not in registry():
        raise NotImplementedError(f"{algorithm!r} is not registered")
    spec = registry().get(algorithm)
    if kind not in spec.target_kinds:
        raise NotImplementedError(f"{algorithm!r} does not take {kind!r} targets")
    if impl not in spec.implementations:
        raise NotImplementedError(f"{algorithm!r} has no {impl!r} implementation")
    s = size(kind, label)
    tgt = target(kind, label)
    return Case(spec, impl, tgt, s.n, bench_params(spec, tgt))


def chain_scalar(values: np.ndarray, target: Any) -> np.ndarray:
    """One number per step whose ESS stands for the chain's: the value itself for 1-D chains,
    else the log density when the target has one (as verification does), else the state mean."""
    x = np.asarray(values, dtype=np.float64)
    if x.ndim == 1:
        return x
    flat = x.reshape(x.shape[0], -1)
    log_density = getattr(target, "log_unnormalised", None)
    if callable(log_density):
        try:
            return np.asarray([float(log_density(row)) for row in flat])
        except Exception:  # a target whose density takes another shape: fall back
            pass
    return flat.mean(axis=1)


def bulk_ess(values: np.ndarray, target: Any) -> float:
    """Bulk ESS of one chain (4 segments as chains) by the harness's arviz-stats wrapper;
    0 for a chain too short or constant."""
    from harness.gates.mcmc import bulk_ess as segments_ess

    y = chain_scalar(values, target)
    m = y.size - y.size % 4
    if m < 16:
        return 0.0
    value = segments_ess(y[:m].reshape(4, -1))
    return 0.0 if value is None else value
