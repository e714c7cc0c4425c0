"""Settings of the Potts experiment (003_07f92522b9b1c588.txt, Sec. 4.1): levels and validation.

003, Sec. 4.1 (Fig. 1a/1b, 2a/2b): a fully connected Potts model on a 20 x 20 grid (n = 400),
D = 10, beta = 4.6, A_ij = exp(-1.5 ||p_i - p_j||^2) with grid coordinates p (L = 5.09).
Plain Gibbs, Poisson-Gibbs with lambda in {0.1, 1, 5} L^2 and DoubleMIN-Gibbs with lambda = L^2
and lambda2 in {1, 1e4} L^2, all started from one constant state.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

from harness.experiments.framework import check_level
from harness.runner import check_seed
from harness.spec import Param

NAME = "potts"
ALGORITHMS = ("gibbs", "poisson-gibbs", "double-min-gibbs")
IMPL = "numba"
#: 003, Sec. 4.1: mean factors evaluated per iteration (Poisson-Gibbs) and Gibbs' neighbours.
PAPER_FACTORS = {"gibbs": 399.0, "pg-0.1": 7.0, "pg-1": 28.0, "pg-5": 132.0}
PAPER_L = 5.09


def _positive(name: str) -> Param:
    """A finite number > 0."""
    return Param(name, 1.0, low=0.0, low_inclusive=False, high=math.inf, high_inclusive=False)


SIDE = Param("side", 20, kind=int, low=2)
D_VALUES = Param("D", 10, kind=int, low=2)
REPLICATES = Param("replicates", 1, kind=int, low=1)
CHECKPOINTS = Param("checkpoints", 30, kind=int, low=2)
BETA = _positive("beta")
SCALE = _positive("scale")


@dataclass(frozen=True)
class SamplerSetting:
    """One line of Fig. 1/2: an algorithm, its minibatch sizes in units of L^2, its length."""

    label: str
    algorithm: str
    n_steps: int
    lam_l2: float | None = None
    lam2_l2: float | None = None
    paper_factors: float | None = None

    def params(self, L: float) -> dict[str, float]:
        out: dict[str, float] = {}
        if self.lam_l2 is not None:
            out["lam"] = self.lam_l2 * L * L
        if self.lam2_l2 is not None:
            out["lam2"] = self.lam2_l2 * L * L
        return out

    def describe(self) -> str:
        parts = [self.algorithm]
        if self.lam_l2 is not None:
            parts.append(f"lam = {self.lam_l2:g} L^2")
        if self.lam2_l2 is not None:
            parts.append(f"lam2 = {self.lam2_l2:g} L^2")
        return ", ".join(parts) + f", {self.n_steps} iterations"


def _checked_sampler(s: SamplerSetting) -> SamplerSetting:
    """``s`` with its numbers coerced; errors name ``samplers['LABEL'].FIELD``."""
    where = f"samplers[{s.label!r}]"
    Param(f"{where}.algorithm", "gibbs", choices=ALGORITHMS).check(s.algorithm)
    n_steps = Param(f"{where}.n_steps", 1, kind=int, low=1).check(s.n_steps)
    needs = {"lam_l2": s.algorithm != "gibbs", "lam2_l2": s.algorithm == "double-min-gibbs"}
    lams: dict[str, float | None] = {}
    for name, needed in needs.items():
        value = getattr(s, name)
        if needed:
            lams[name] = _positive(f"{where}.{name}").check(value)
        elif value is not None:
            raise ValueError(
                f"{where}.{name} = {value!r} is invalid for {s.algorithm}; valid: None"
            )
        else:
            lams[name] = None
    return dataclasses.replace(s, n_steps=n_steps, **lams)


@dataclass(frozen=True)
class PottsConfig:
    """Everything that determines the records (stored as the settings in experiment.json)."""

    level: str
    seed: int
    side: int
    beta: float
    D: int
    scale: float
    replicates: int
    checkpoints: int
    samplers: tuple[SamplerSetting, ...]
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # Fail before any work, naming the offending parameter.
        check_level(self.level)
        object.__setattr__(self, "seed", check_seed(self.seed))
        # Param coerces (20.0 -> 20): the stored value is the checked one, so keys stay stable.
        for param in (SIDE, D_VALUES, REPLICATES, CHECKPOINTS, BETA, SCALE):
            object.__setattr__(self, param.name, param.check(getattr(self, param.name)))
        if not self.samplers:
            raise ValueError("samplers is empty; valid: at least one SamplerSetting")
        labels = [s.label for s in self.samplers]
        if len(set(labels)) != len(labels):
            raise ValueError(f"samplers: labels {labels} repeat; valid: distinct labels")
        object.__setattr__(self, "samplers", tuple(_checked_sampler(s) for s in self.samplers))
        object.__setattr__(self, "notes", tuple(self.notes))

    @property
    def n_vars(self) -> int:
        return self.side * self.side

    def manifest(self) -> dict[str, Any]:
        return {"experiment": NAME, **dataclasses.asdict(self)}


def config_from_manifest(settings: dict[str, Any]) -> PottsConfig:
    """The inverse of :meth:`PottsConfig.manifest` (JSON turns tuples into lists)."""
    keep = {f.name for f in dataclasses.fields(PottsConfig)}
    args = {k: v for k, v in settings.items() if k in keep}
    args["samplers"] = tuple(SamplerSetting(**s) for s in settings["samplers"])
    args["notes"] = tuple(settings.get("notes", ()))
    return PottsConfig(**args)


def paper_samplers(n_steps: int, double_min_big_steps: int) -> tuple[SamplerSetting, ...]:
    """003, Sec. 4.1's six lines; DoubleMIN's first (proposal) minibatch is lambda = L^2."""
    return (
        SamplerSetting("gibbs", "gibbs", n_steps, paper_factors=PAPER_FACTORS["gibbs"]),
        SamplerSetting("pg-0.1", "poisson-gibbs", n_steps, 0.1, None, PAPER_FACTORS["pg-0.1"]),
        SamplerSetting("pg-1", "poisson-gibbs", n_steps, 1.0, None, PAPER_FACTORS["pg-1"]),
        SamplerSetting("pg-5", "poisson-gibbs", n_steps, 5.0, None, PAPER_FACTORS["pg-5"]),
        SamplerSetting("dmin-1", "double-min-gibbs", n_steps, 1.0, 1.0),
        SamplerSetting("dmin-1e4", "double-min-gibbs", double_min_big_steps, 1.0, 1e4),
    )


_COMMON_NOTES = (
    "DoubleMIN-Gibbs uses lambda = L^2 for its first (proposal) minibatch, as 003 sets "
    "lambda = L^2 for all minibatch methods; lambda2 is its second (M-H correction) minibatch.",
    "Error: mean over sites of the l2 distance between the running empirical marginal and "
    "uniform(1/D) (the convention of the paper's code); the records also hold the pooled "
    "sqrt(sum over sites and values of (marginal - 1/D)^2). Every state after each "
    "single-site step counts, from step 1 (no burn-in); start: all sites at value 0.",
    "Time: only the sampler calls (Numba, compiled beforehand) are timed, chunk by chunk; the "
    "histogram bookkeeping between chunks is not. Each call also copies the n_vars-long state "
    "into its output after every step, a cost all samplers share.",
    "The DoubleMIN kernel draws a fresh estimate of the current energy at the start of every "
    "call, so each chunk boundary refreshes its pseudo-marginal state (about "
    "n_steps / 25000 + checkpoints times per run); this can unstick a stuck chain. Its "
    "wrapper also rebuilds a global alias table at every call (~50 ms here): that set-up is "
    "timed apart and counted once per run, not once per chunk.",
    "exp(-1.5 d^2) underflows to 0 for far pairs (d^2 > ~496), so those factors are absent: "
    "sites have 369 to 399 factors, not 399 each; their weight is below 1e-300.",
)


def config_for_level(level: str, seed: int = 0) -> PottsConfig:
    """The settings of ``level``; see the module docstring."""
    check_level(level)
    seed = check_seed(seed)
    if level == "quick":
        return PottsConfig(
            level="quick",
            seed=seed,
            side=20,
            beta=4.6,
            D=10,
            scale=1.5,
            replicates=1,
            checkpoints=30,
            # DoubleMIN with lambda2 = 1e4 L^2 draws ~2.6e5 factors a step (~10 ms).
            samplers=paper_samplers(200_000, 3_000),
            notes=(
                "quick level: the paper's model (20 x 20, D = 10, beta = 4.6), but 2e5 "
                "iterations per run (paper: 1e6; code: 1e6), one run per sampler (paper: "
                "average of 3), DoubleMIN with lambda2 = 1e4 L^2 for 3e3 iterations only.",
                *_COMMON_NOTES,
            ),
        )
    return PottsConfig(
        level="full",
        seed=seed,
        side=20,
        beta=4.6,
        D=10,
        scale=1.5,
        replicates=3,
        checkpoints=40,
        samplers=paper_samplers(1_000_000, 100_000),
        notes=(
            "full level: the paper's sizes (1e6 iterations, 3 runs averaged), except DoubleMIN "
            "with lambda2 = 1e4 L^2, run for 1e5 iterations (~10 ms an iteration: 1e6 would "
            "take about 3 h per run).",
            *_COMMON_NOTES,
        ),
    )


@dataclass(frozen=True)
class RunSetting:
    """One chain: a sampler setting and a replicate index."""

    sampler: SamplerSetting
    replicate: int
    side: int
    beta: float
    D: int
    scale: float
    checkpoints: int

    @property
    def key(self) -> str:
        s = self.sampler
        return (
            f"chain|{s.label}|{s.algorithm}|lam={s.lam_l2}|lam2={s.lam2_l2}|steps={s.n_steps}|"
            f"side={self.side}|D={self.D}|beta={self.beta:g}|scale={self.scale:g}|"
            f"cp={self.checkpoints}|rep={self.replicate}"
        )


def run_settings(config: PottsConfig) -> tuple[RunSetting, ...]:
    """Every chain of ``config``: each sampler times each replicate."""
    return tuple(
        RunSetting(s, r, config.side, config.beta, config.D, config.scale, config.checkpoints)
        for s in config.samplers
        for r in range(config.replicates)
    )
