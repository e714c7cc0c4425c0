"""Settings of the continuous spin experiment (003_07f92522b9b1c588.txt, Sec. 4.2).

003, Sec. 4.2: U(x) = sum_ij beta A_ij (x_i x_j + 1) on [0, 1]^n, beta = 1, L = 13.71,
lambda = L^2; PGITS with m = 3, PGDA with m = 3 and k = 10; ground truth from Gibbs-ITS run for
1e7 iterations. 003 does not state A; ``continuous_spin_grid`` uses A_ij = exp(-0.4 ||p_i -
p_j||^2) on a 20 x 20 grid, which reproduces L = 13.708 (notes-minibatch-gibbs.md, Sec. 10).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

from harness.experiments.framework import check_level
from harness.runner import check_seed
from harness.spec import Param

NAME = "continuous-spin"
ALGORITHMS = ("gibbs-its", "pgits", "pgda")
REFERENCE_ALGORITHM = "gibbs-its"
IMPL = "numba"
PAPER_L = 13.71
#: 003, Sec. 4.2: "the average number of evaluated factors per iteration of Poisson-Gibbs is 190".
PAPER_FACTORS = 190.0
PAPER_REFERENCE_STEPS = 10_000_000


def _positive(name: str) -> Param:
    """A finite number > 0."""
    return Param(name, 1.0, low=0.0, low_inclusive=False, high=math.inf, high_inclusive=False)


PARAMS = (
    Param("side", 20, kind=int, low=2),
    _positive("beta"),
    _positive("scale"),
    _positive("lam_l2"),
    Param("m", 3, kind=int, low=1),
    Param("k", 10, kind=int, low=1),
    Param("n_bins", 20, kind=int, low=2),
    Param("reference_steps", 2_000_000, kind=int, low=2),
    Param("n_steps", 300_000, kind=int, low=1),
    Param("replicates", 1, kind=int, low=1),
    Param("checkpoints", 25, kind=int, low=2),
)


@dataclass(frozen=True)
class ContinuousSpinConfig:
    """Everything that determines the records (stored as the settings in experiment.json)."""

    level: str
    seed: int
    side: int
    beta: float
    scale: float
    lam_l2: float
    m: int
    k: int
    n_bins: int
    reference_steps: int
    reference_burn_in: int
    n_steps: int
    replicates: int
    checkpoints: int
    algorithms: tuple[str, ...] = ALGORITHMS
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # Fail before any work, naming the offending parameter. Param coerces (20.0 -> 20): the
        # stored value is the checked one, so the task keys stay stable.
        check_level(self.level)
        object.__setattr__(self, "seed", check_seed(self.seed))
        for param in PARAMS:
            object.__setattr__(self, param.name, param.check(getattr(self, param.name)))
        # Both halves of the reference must hold states (its split-half KL).
        burn_in = Param(
            "reference_burn_in",
            0,
            kind=int,
            low=0,
            high=self.reference_steps // 2,
            high_inclusive=False,
        )
        object.__setattr__(self, "reference_burn_in", burn_in.check(self.reference_burn_in))
        algorithms = tuple(self.algorithms)
        if not algorithms or len(set(algorithms)) != len(algorithms):
            raise ValueError(f"algorithms = {algorithms!r} is invalid; valid: distinct names")
        for a in algorithms:
            Param("algorithms", ALGORITHMS[0], choices=ALGORITHMS).check(a)
        object.__setattr__(self, "algorithms", algorithms)
        object.__setattr__(self, "notes", tuple(self.notes))

    @property
    def n_vars(self) -> int:
        return self.side * self.side

    def manifest(self) -> dict[str, Any]:
        return {"experiment": NAME, **dataclasses.asdict(self)}


def config_from_manifest(settings: dict[str, Any]) -> ContinuousSpinConfig:
    """The inverse of :meth:`ContinuousSpinConfig.manifest` (JSON turns tuples into lists)."""
    keep = {f.name for f in dataclasses.fields(ContinuousSpinConfig)}
    args = {k: v for k, v in settings.items() if k in keep}
    args["algorithms"] = tuple(settings["algorithms"])
    args["notes"] = tuple(settings.get("notes", ()))
    return ContinuousSpinConfig(**args)


_COMMON_NOTES = (
    "Error: for each variable, the symmetric KL sum_b (p_b - q_b) log(p_b / q_b) between the "
    "chain's running histogram p and the reference histogram q on n_bins equal bins of [0, 1], "
    "each smoothed with 0.5 pseudo-counts per bin; then averaged over the variables. Every "
    "state after each single-site step counts, from step 1 (no burn-in); start: all x_i = 0 "
    "(003 states neither).",
    "Floor: with T states per chain and R reference states, independent draws would give "
    "E[sym KL] ~ (n_bins - 1)(1/T + 1/R). Under random scan a variable is updated about T / "
    "n_vars times and holds each value for a geometric number of steps, which halves the "
    "effective count again, so the floor for independent update values is 2 (n_bins - 1) "
    "n_vars (1/T + 1/R) (drawn dashed); MCMC correlation raises it by the integrated "
    "autocorrelation time. The reference's own share is also measured: the sym KL between its "
    "two halves, / 4.",
    "The compared Gibbs-ITS chain is independent of the reference (its own random stream).",
    "Time: only the sampler calls (Numba, compiled beforehand) are timed, chunk by chunk; the "
    "histogram bookkeeping between chunks is not. Each call copies the n_vars-long state into "
    "its output after every step, a cost all samplers share.",
    "Factors per iteration: 'draws' (Poisson envelope draws B, expected (lam/L + 1) sum M over "
    "the site's factors) and 'kept' (sum of s_phi after thinning) are the minibatch size that "
    "003's 190 describes; 'distinct' counts the factors with s_phi > 0.",
)


def config_for_level(level: str, seed: int = 0) -> ContinuousSpinConfig:
    """The settings of ``level``; see the module docstring."""
    check_level(level)
    seed = check_seed(seed)
    common = {"seed": seed, "beta": 1.0, "scale": 0.4, "lam_l2": 1.0, "m": 3, "k": 10}
    if level == "quick":
        return ContinuousSpinConfig(
            level="quick",
            side=20,
            n_bins=20,
            reference_steps=2_000_000,
            reference_burn_in=100_000,
            n_steps=300_000,
            replicates=1,
            checkpoints=25,
            notes=(
                "quick level: the paper's model (20 x 20, L = 13.708), a 2e6-iteration "
                "reference (paper: 1e7), 3e5 iterations per chain, one run per sampler "
                "(paper: average of 3).",
                *_COMMON_NOTES,
            ),
            **common,
        )
    return ContinuousSpinConfig(
        level="full",
        side=20,
        n_bins=20,
        reference_steps=PAPER_REFERENCE_STEPS,
        reference_burn_in=500_000,
        n_steps=1_000_000,
        replicates=3,
        checkpoints=40,
        notes=(
            "full level: the paper's model (20 x 20, L = 13.708) and reference length (1e7 "
            "Gibbs-ITS iterations, first 5e5 dropped as burn-in; 003 states no burn-in), 3 runs "
            "per sampler as in 003. 003 does not state the compared chains' length; 1e6 "
            "iterations as in its Sec. 4.1.",
            *_COMMON_NOTES,
        ),
        **common,
    )


@dataclass(frozen=True)
class RunSetting:
    """One chain: the reference (``replicate = -1``) or a compared sampler and replicate."""

    algorithm: str
    replicate: int
    n_steps: int
    burn_in: int
    side: int
    beta: float
    scale: float
    lam_l2: float
    m: int
    k: int
    n_bins: int
    checkpoints: int

    @property
    def is_reference(self) -> bool:
        return self.replicate < 0

    @property
    def key(self) -> str:
        role = "reference" if self.is_reference else "chain"
        return (
            f"{role}|{self.algorithm}|steps={self.n_steps}|burn={self.burn_in}|side={self.side}|"
            f"beta={self.beta:g}|scale={self.scale:g}|lam={self.lam_l2:g}L2|m={self.m}|"
            f"k={self.k}|bins={self.n_bins}|cp={self.checkpoints}|rep={self.replicate}"
        )

    def params(self, L: float) -> dict[str, float]:
        if self.algorithm == "gibbs-its":
            return {"m": self.m}
        out: dict[str, float] = {"lam": self.lam_l2 * L * L, "m": self.m}
        if self.algorithm == "pgda":
            out["k"] = self.k
        return out


def _setting(
    config: ContinuousSpinConfig, algorithm: str, rep: int, steps: int, burn: int
) -> RunSetting:
    return RunSetting(
        algorithm, rep, steps, burn, config.side, config.beta, config.scale, config.lam_l2,
        config.m, config.k, config.n_bins, config.checkpoints,
    )  # fmt: skip


def reference_setting(config: ContinuousSpinConfig) -> RunSetting:
    """The long Gibbs-ITS chain whose histograms are the ground truth."""
    return _setting(
        config, REFERENCE_ALGORITHM, -1, config.reference_steps, config.reference_burn_in
    )


def chain_settings(config: ContinuousSpinConfig) -> tuple[RunSetting, ...]:
    """The compared chains: each algorithm times each replicate."""
    return tuple(
        _setting(config, a, r, config.n_steps, 0)
        for a in config.algorithms
        for r in range(config.replicates)
    )
