"""Settings of the minibatch-gap experiment (003_07f92522b9b1c588.txt, Thm. 1-2): the graphs,
the lam grid, the chains, and their ``quick`` and ``full`` levels, validated once with Param."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from harness.experiments.common import lists_to_tuples
from harness.experiments.framework import check_level
from harness.runner import check_seed
from harness.spec import Param

NAME = "minibatch-gap"


def _positive(name: str) -> Param:
    """A finite number > 0 (Param rejects NaN; the upper bound excludes infinity)."""
    return Param(name, 1.0, low=0.0, low_inclusive=False, high=float("inf"), high_inclusive=False)


N_VARS = Param("graphs.n", 3, kind=int, low=2, doc="variables of a tiny graph")
N_LABELS = Param("graphs.D", 2, kind=int, low=2, doc="labels per variable")
GRAPH_L = _positive("graphs.L")
EDGE_PROB = Param("graphs.edge_prob", 0.7, low=0.0, high=1.0)
LAM_OVER_L = _positive("lam_over_L")
LAM_OVER_L2 = _positive("lam_over_L2")
MAX_GRID = _positive("max_grid")
TAIL = Param("tail", 1e-15, low=0.0, high=1e-6, low_inclusive=False, high_inclusive=False)
#: Exact matrices are D^n x D^n: this many states at most.
MAX_STATES = 256
SIDE = Param("chains.side", 3, kind=int, low=1)
BETA = _positive("chains.beta")
POTTS_D = Param("chains.D", 3, kind=int, low=1)
CHAIN_LAM = _positive("chains.lam_over_L2")
N_STEPS = Param("chains.n_steps", 1000, kind=int, low=1)
MAX_LAG = Param("chains.max_lag", 10, kind=int, low=1)
BURN_IN = Param("chains.burn_in", 0, kind=int, low=0)


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

    def __post_init__(self) -> None:
        check_config(self)

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
    check_level(config.level)
    check_seed(config.seed)
    names = [g.name for g in config.graphs]
    if len(set(names)) != len(names):
        raise ValueError(f"parameter 'graphs' has repeated names {names}; valid: unique names")
    for g in config.graphs:
        N_VARS.check(g.n)
        N_LABELS.check(g.D)
        if g.D**g.n > MAX_STATES:
            raise ValueError(
                f"parameter 'graphs' ({g.name}: n = {g.n}, D = {g.D}) is invalid; valid: "
                f"D^n <= {MAX_STATES} (exact matrices)"
            )
        GRAPH_L.check(g.L)
        EDGE_PROB.check(g.edge_prob)
    for v in config.lam_over_L:
        LAM_OVER_L.check(v)
    for v in config.lam_over_L2:
        LAM_OVER_L2.check(v)
    if not config.lam_over_L and not config.lam_over_L2:
        raise ValueError("parameters 'lam_over_L' and 'lam_over_L2' are both empty; valid: >= 1")
    MAX_GRID.check(config.max_grid)
    TAIL.check(config.tail)
    for c in config.chains:
        if c.graph != "potts" and c.graph not in names:
            raise ValueError(
                f"parameter 'chains.graph' = {c.graph!r} is invalid; valid: 'potts' or "
                f"{', '.join(names)}"
            )
        if c.graph == "potts":
            SIDE.check(c.side)
            BETA.check(c.beta)
            POTTS_D.check(c.D)
        for v in c.lam_over_L2:
            CHAIN_LAM.check(v)
        N_STEPS.check(c.n_steps)
        MAX_LAG.check(c.max_lag)
        BURN_IN.check(c.burn_in)
        if c.n_steps < 20 * c.max_lag:
            raise ValueError(
                f"parameter 'chains.max_lag' = {c.max_lag} is too large for n_steps = "
                f"{c.n_steps}; valid: n_steps >= 20 * max_lag"
            )


LAM_GRID = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0)


def config_for_level(level: str, seed: int = 0) -> MinibatchGapConfig:
    """The settings of ``level`` (``quick``: seconds; ``full``: minutes)."""
    check_level(level)
    seed = check_seed(seed)
    return _quick(seed) if level == "quick" else _full(seed)


def config_from_manifest(settings: dict[str, Any]) -> MinibatchGapConfig:
    return MinibatchGapConfig.from_manifest(settings)


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
        lam_over_L=LAM_GRID,
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
        lam_over_L=LAM_GRID,
        lam_over_L2=(0.5, 1.0, 2.0, 4.0, 8.0),
        max_grid=3e5,  # 3e6 reached a 4-variable D = 3 graph at lam = 16 L: minutes per point
        chains=chains,
        notes=(
            "full level: six graphs (n = 3-4, D = 2-3, L in 1-4); chains of 2e6 (tiny graph) "
            "and 4e6 (4 x 4 Potts grid) steps.",
        ),
    )
