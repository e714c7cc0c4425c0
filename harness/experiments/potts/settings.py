"""Settings of the Potts experiment (003_07f92522b9b1c588.txt, Sec. 4.1).

A fully connected Potts model on a 20 x 20 grid (n = 400), D = 10, beta = 4.6,
A_ij = exp(-1.5 ||p_i - p_j||^2) with grid coordinates p (L = 5.09). Plain Gibbs,
Poisson-Gibbs with lambda in {0.1, 1, 5} L^2 and DoubleMIN-Gibbs with lambda = L^2 and
lambda2 in {1, 1e4} L^2, all started from one constant state.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.declare import Config, Declared, param

ALGORITHMS = ("gibbs", "poisson-gibbs", "double-min-gibbs")
IMPL = "numba"
#: 003, Sec. 4.1: mean factors evaluated per iteration (Poisson-Gibbs) and Gibbs' neighbours.
PAPER_FACTORS = {"gibbs": 399.0, "pg-0.1": 7.0, "pg-1": 28.0, "pg-5": 132.0}
PAPER_L = 5.09


@dataclass(frozen=True)
class SamplerSetting(Declared):
    """One line of Fig. 1/2: an algorithm, its minibatch sizes in units of L^2, its length."""

    label: str
    algorithm: str = param(choices=ALGORITHMS)
    n_steps: int = param(low=1)
    lam_l2: float | None = param(None, low=0.0, high=float("inf"), open=True)
    lam2_l2: float | None = param(None, low=0.0, high=float("inf"), open=True)
    paper_factors: float | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        needs = {
            "lam_l2": self.algorithm != "gibbs",
            "lam2_l2": self.algorithm == "double-min-gibbs",
        }
        for name, needed in needs.items():
            if needed != (getattr(self, name) is not None):
                valid = "a number > 0" if needed else "None"
                raise ValueError(
                    f"parameter {name!r} = {getattr(self, name)!r} is invalid for "
                    f"{self.algorithm} ({self.label}); valid: {valid}"
                )

    def params(self, L: float) -> dict[str, float]:
        out: dict[str, float] = {}
        if self.lam_l2 is not None:
            out["lam"] = self.lam_l2 * L * L
        if self.lam2_l2 is not None:
            out["lam2"] = self.lam2_l2 * L * L
        return out

    def describe(self) -> str:
        parts = [f"{self.label}: {self.algorithm}"]
        if self.lam_l2 is not None:
            parts.append(f"lam = {self.lam_l2:g} L^2")
        if self.lam2_l2 is not None:
            parts.append(f"lam2 = {self.lam2_l2:g} L^2")
        return ", ".join(parts) + f", {self.n_steps} iterations"


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


_NOTES = (
    "DoubleMIN-Gibbs uses lambda = L^2 for its first (proposal) minibatch, as 003 sets "
    "lambda = L^2 for all minibatch methods; lambda2 is its second (M-H correction) minibatch.",
    "Error: mean over sites of the l2 distance between the running empirical marginal and "
    "uniform(1/D) (the convention of the paper's code). Every state after each single-site step "
    "counts, from step 1 (no burn-in); start: all sites at value 0.",
    "Time: only the sampler calls (Numba, compiled beforehand) are timed, chunk by chunk. The "
    "DoubleMIN wrapper rebuilds a global alias table at every call: a one-step call's time "
    "(median of 3; the set-up column) is the set-up, counted once per run and taken off every "
    "chunk. "
    "Its kernel also draws a fresh estimate of the current energy at each call, so chunk "
    "boundaries refresh its pseudo-marginal state.",
    "exp(-1.5 d^2) underflows to 0 for far pairs (d^2 > ~496), so those factors are absent: "
    "sites have 369 to 399 factors, not 399 each; their weight is below 1e-300.",
)


@dataclass(frozen=True, kw_only=True)
class PottsConfig(Config):
    """Everything that determines the records (stored as the settings in experiment.json)."""

    experiment = "potts"
    side: int = param(20, low=2, doc="grid side")
    beta: float = param(4.6, low=0.0, high=float("inf"), open=True, doc="beta")
    D: int = param(10, low=2, doc="values per site (D)")
    scale: float = param(1.5, low=0.0, high=float("inf"), open=True, doc="A_ij scale")
    replicates: int = param(low=1, quick=1, full=3, doc="runs per sampler")
    checkpoints: int = param(low=2, quick=30, full=40, doc="checkpoints per run")
    samplers: tuple[SamplerSetting, ...] = param(
        quick=paper_samplers(200_000, 3_000),
        full=paper_samplers(1_000_000, 100_000),
        doc="sampler",
    )
    notes: tuple[str, ...] = param(
        (),
        empty=True,
        quick=(
            "quick level: the paper's model, but 2e5 iterations per run (paper: 1e6), one run "
            "per sampler (paper: average of 3), DoubleMIN with lambda2 = 1e4 L^2 for 3e3 "
            "iterations only (~10 ms an iteration).",
            *_NOTES,
        ),
        full=(
            "full level: the paper's sizes (1e6 iterations, 3 runs averaged), except DoubleMIN "
            "with lambda2 = 1e4 L^2, run for 1e5 iterations (1e6 would take about 3 h a run).",
            *_NOTES,
        ),
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        labels = [s.label for s in self.samplers]
        if len(set(labels)) != len(labels):
            raise ValueError(f"samplers: labels {labels} repeat; valid: distinct labels")


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
