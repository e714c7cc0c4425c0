"""The targets of the minibatch-gap experiment: tiny random graphs with an exact L, the Potts
grid of the chains, and how many Poisson vectors the exact matrices would enumerate."""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy.stats import poisson

from harness.engine import SeedKey
from harness.experiments.minibatch_gap.settings import ChainSpec, GraphSpec, MinibatchGapConfig
from harness.targets.factor_graph import FactorGraphTarget, potts_grid, random_factor_graph


@lru_cache(maxsize=16)
def _graph_target(
    name: str, n: int, D: int, L: float, edge_prob: float, seed: int
) -> FactorGraphTarget:
    rng = SeedKey.from_label(seed, f"graph|{name}").generator()
    raw = random_factor_graph(n, D, rng, edge_prob=edge_prob)
    # Scaling every table and bound by one constant sets L exactly, keeping the graph's shape.
    c = L / raw.L
    return FactorGraphTarget(n, D, raw.scopes, raw.tables * c, raw.M * c, name=name)


def graph_target(g: GraphSpec, seed: int) -> FactorGraphTarget:
    return _graph_target(g.name, g.n, g.D, g.L, g.edge_prob, seed)


def find_graph(config: MinibatchGapConfig, name: str) -> GraphSpec:
    return next(g for g in config.graphs if g.name == name)


def chain_target(c: ChainSpec, config: MinibatchGapConfig) -> FactorGraphTarget:
    if c.graph == "potts":
        return _potts(c.side, c.beta, c.D)
    return graph_target(find_graph(config, c.graph), config.seed)


@lru_cache(maxsize=4)
def _potts(side: int, beta: float, D: int) -> FactorGraphTarget:
    return potts_grid(side, beta, D)


def grid_size(target: FactorGraphTarget, lam: float, tail: float) -> float:
    """Largest number of s vectors the exact matrices enumerate for one (x, i)."""
    worst = 0.0
    top = target.tables.max(axis=(1, 2))
    for i in range(target.n_vars):
        f = target.adj_factors[target.adj_indptr[i] : target.adj_indptr[i + 1]]
        rates = lam * target.M[f] / target.L + top[f]
        worst = max(worst, float(np.prod([poisson.isf(tail, r) + 2.0 for r in rates])))
    return worst
