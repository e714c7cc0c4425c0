"""Settings of the racing-synthetic experiment (000_26bed7cc1ef3ab92.txt, Sec. 5.1, Fig. 1).

000, Sec. 5.1: D = 10 states, N = 1e5 rewards per state drawn from Normal(0, 1), Uniform[0, 1]
or LogNormal(0, 2), rescaled to a fixed pmf and a reward variance sigma^2 (the difficulty);
1e4 draws of X per setting; delta on [1e-3, 0.1]; adapted lil'UCB, Racing-EBS and Racing-Normal
with the pairwise variance. Appx. C.1 repeats it with D in {2, 100} and the marginal variance.

A config is validated once, with :class:`harness.spec.Param`, when it is made (before any work);
its settings are the (variant, algorithm, distribution, sigma, delta) cells of the error sweep,
minus the cells a level's :class:`Skip` rules leave out, and the speed benchmark's noise levels.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from harness.experiments.common import lists_to_tuples
from harness.experiments.framework import LEVELS, check_level
from harness.runner import check_seed
from harness.spec import Param
from harness.targets.discrete import REWARD_DISTRIBUTIONS

NAME = "racing-synthetic"
PAPER = "000_26bed7cc1ef3ab92.txt, Fig. 1"
ALGORITHMS = ("lil-ucb", "racing-ebs", "racing-normal")
EXACT_ALGORITHM = "gumbel-max"
PARTS = ("all", "errors", "speed")
DELTAS = (1e-3, 3e-3, 1e-2, 3e-2, 0.1)
VARIANCES = ("pairwise", "marginal")
IMPL = "numba"
#: Confidence of the error-rate intervals (two-sided Clopper-Pearson), as in Fig. 1(b)-(d).
CONFIDENCE = 0.95
#: The project's goal for the benchmark: wall-clock speedup >= 0.7 x evaluation saving.
SPEED_GOAL = 0.7

LEVEL = Param("level", "quick", kind=str, choices=LEVELS)
DRAWS_PER_SETTING = Param("n", 2000, kind=int, low=1, doc="draws of X per setting")
DELTA = Param("delta", 0.01, low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
DISTRIBUTION = Param("distribution", "normal", kind=str, choices=REWARD_DISTRIBUTIONS)
STATES = Param("D", 10, kind=int, low=2, doc="states (arms)")
REWARDS = Param("N", 10_000, kind=int, low=2, doc="rewards per state")
SIGMA = Param("sigma", 1e-3, low=0.0, high=float("inf"), low_inclusive=False, high_inclusive=False)
SIGMA_AT_LEAST = Param("sigma_at_least", 1e-2, low=0.0)
VARIANCE = Param("variance", "pairwise", kind=str, choices=VARIANCES)
ALGORITHM = Param("algorithm", "racing-normal", kind=str, choices=ALGORITHMS)
SPEED_DRAWS = Param("draws", 500, kind=int, low=1)
REPEAT = Param("repeat", 5, kind=int, low=1)
GOAL = Param("goal", SPEED_GOAL, low=0.0, low_inclusive=False)


def _check_all(param: Param, values: Any) -> None:
    """A non-empty tuple whose every entry passes ``param``."""
    if not isinstance(values, tuple) or not values:
        raise ValueError(
            f"parameter {param.name!r} = {values!r} is invalid; valid: a non-empty tuple of "
            f"{param.range_text()}"
        )
    for value in values:
        param.check(value)


@dataclass(frozen=True)
class Variant:
    """One panel family of Fig. 1 / Appx. C.1: a state count, a variance estimate, sigmas."""

    name: str
    D: int
    N: int
    sigmas: tuple[float, ...]
    variance: str = "pairwise"
    algorithms: tuple[str, ...] = ALGORITHMS
    title: str = ""

    def __post_init__(self) -> None:
        STATES.check(self.D)
        REWARDS.check(self.N)
        _check_all(SIGMA, self.sigmas)
        VARIANCE.check(self.variance)
        _check_all(ALGORITHM, self.algorithms)


@dataclass(frozen=True)
class Skip:
    """A combination left out on purpose (too slow for the level); the report lists it."""

    algorithm: str
    sigma_at_least: float
    reason: str
    variant: str = "*"

    def __post_init__(self) -> None:
        ALGORITHM.check(self.algorithm)
        SIGMA_AT_LEAST.check(self.sigma_at_least)

    def matches(self, variant: str, algorithm: str, sigma: float) -> bool:
        same_variant = self.variant in ("*", variant)
        return same_variant and algorithm == self.algorithm and sigma >= self.sigma_at_least


@dataclass(frozen=True)
class SpeedPlan:
    """Racing-Normal against exact Gumbel-max on one problem per noise level."""

    D: int
    N: int
    sigmas: tuple[float, ...]
    delta: float = 0.05
    distribution: str = "normal"
    draws: int = 500
    repeat: int = 5
    goal: float = SPEED_GOAL

    def __post_init__(self) -> None:
        STATES.check(self.D)
        REWARDS.check(self.N)
        _check_all(SIGMA, self.sigmas)
        DELTA.check(self.delta)
        DISTRIBUTION.check(self.distribution)
        SPEED_DRAWS.check(self.draws)
        REPEAT.check(self.repeat)
        GOAL.check(self.goal)


@dataclass(frozen=True)
class RacingSyntheticConfig:
    """Everything that determines the records (stored as the settings in experiment.json)."""

    level: str
    seed: int
    n: int
    deltas: tuple[float, ...]
    distributions: tuple[str, ...]
    variants: tuple[Variant, ...]
    skips: tuple[Skip, ...] = ()
    speed: SpeedPlan | None = None
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        LEVEL.check(self.level)
        check_seed(self.seed)
        DRAWS_PER_SETTING.check(self.n)
        _check_all(DELTA, self.deltas)
        _check_all(DISTRIBUTION, self.distributions)
        if not self.variants or not all(isinstance(v, Variant) for v in self.variants):
            raise ValueError(
                f"parameter 'variants' = {self.variants!r} is invalid; valid: a non-empty "
                "tuple of Variant"
            )

    def manifest(self) -> dict[str, Any]:
        return {"experiment": NAME, **dataclasses.asdict(self)}


def config_from_manifest(m: dict[str, Any]) -> RacingSyntheticConfig:
    """The inverse of :meth:`RacingSyntheticConfig.manifest` (JSON lists back to tuples)."""
    return RacingSyntheticConfig(
        level=m["level"],
        seed=m["seed"],
        n=m["n"],
        deltas=tuple(m["deltas"]),
        distributions=tuple(m["distributions"]),
        variants=tuple(Variant(**lists_to_tuples(v)) for v in m["variants"]),
        skips=tuple(Skip(**s) for s in m["skips"]),
        speed=SpeedPlan(**lists_to_tuples(m["speed"])) if m.get("speed") else None,
        notes=tuple(m["notes"]),
    )


def config_for_level(level: str, seed: int = 0) -> RacingSyntheticConfig:
    """The settings of ``level``; see the module docstring and ``harness reproduce --help``."""
    check_level(level)
    seed = check_seed(seed)
    return _quick(seed) if level == "quick" else _full(seed)


def _quick(seed: int) -> RacingSyntheticConfig:
    sigmas = (1e-5, 1e-3, 1e-2)
    main = Variant("main", 10, 10_000, sigmas, title="D = 10, pairwise variance")
    # lil'UCB pulls one reward per step; at sigma = 1e-2 it samples all N * D rewards (~4 ms
    # a draw at N = 1e4), which alone would double the quick level's time.
    skip = Skip("lil-ucb", 1e-2, "samples every reward at this noise; ~2.5 min for its 15 cells")
    return RacingSyntheticConfig(
        level="quick",
        seed=seed,
        n=2000,
        deltas=DELTAS,
        distributions=REWARD_DISTRIBUTIONS,
        variants=(main,),
        skips=(skip,),
        speed=SpeedPlan(10, 10_000, sigmas, draws=500, repeat=5),
        notes=(
            "quick level: N = 1e4 rewards per state (paper: 1e5), 2000 draws per setting "
            "(paper: 1e4), sigma in {1e-5, 1e-3, 1e-2}; D = 2, D = 100 and the marginal "
            "variance (Appx. C.1) only at --level full.",
            "With N ten times smaller the per-reward gaps (log p_i - log p_j) / N are ten times "
            "larger, so a given sigma is easier than in the paper's panels.",
            "speed benchmark at N = 1e4 (paper size N = 1e5 at --level full).",
        ),
    )


def _full(seed: int) -> RacingSyntheticConfig:
    sigmas = (1e-5, 1e-4, 1e-3, 1e-2)
    variants = (
        Variant("main", 10, 100_000, sigmas, title="D = 10, pairwise variance (Fig. 1)"),
        Variant("D2", 2, 100_000, sigmas, title="D = 2, pairwise variance (Appx. C.1)"),
        Variant("D100", 100, 100_000, sigmas[:3], title="D = 100, pairwise variance (Appx. C.1)"),
        Variant(
            "marginal",
            10,
            100_000,
            sigmas,
            variance="marginal",
            algorithms=("racing-ebs", "racing-normal"),
            title="D = 10, marginal variance (Appx. C.1)",
        ),
    )
    # At D = 100 lil'UCB samples ~1e7 rewards one at a time per draw: hours per setting.
    skip = Skip("lil-ucb", 1e-4, "~1e7 single pulls per draw at D = 100: hours per cell", "D100")
    return RacingSyntheticConfig(
        level="full",
        seed=seed,
        n=10_000,
        deltas=DELTAS,
        distributions=REWARD_DISTRIBUTIONS,
        variants=variants,
        skips=(skip,),
        speed=SpeedPlan(10, 100_000, sigmas, draws=1000, repeat=7),
        notes=(
            "full level: the paper's sizes (N = 1e5, 1e4 draws per setting); D = 100 is run at "
            "sigma <= 1e-3 only. Expect about a day on one core (lil'UCB at large sigma "
            "pulls all 1e6 rewards one by one per draw); --workers spreads the settings.",
        ),
    )


@dataclass(frozen=True)
class ErrorSetting:
    """One point of Fig. 1(b)-(h): its error rate and its proportion of rewards sampled."""

    variant: str
    algorithm: str
    distribution: str
    sigma: float
    D: int
    N: int
    delta: float
    variance: str | None
    n: int

    @property
    def key(self) -> str:
        return (
            f"error|{self.variant}|{self.algorithm}|{self.distribution}|sigma={self.sigma:g}|"
            f"D={self.D}|N={self.N}|delta={self.delta:g}|{self.variance}|n={self.n}"
        )

    @property
    def label(self) -> str:
        return f"{self.algorithm} {self.distribution} sigma={self.sigma:g} delta={self.delta:g}"

    def params(self) -> dict[str, Any]:
        out: dict[str, Any] = {"delta": self.delta, "exact_answer": True}
        if self.variance is not None:  # lil'UCB keeps no variance estimate
            out["variance"] = self.variance
        return out


@dataclass(frozen=True)
class SpeedSetting:
    """One noise level of the benchmark: Racing-Normal against exact Gumbel-max."""

    distribution: str
    sigma: float
    D: int
    N: int
    delta: float
    draws: int
    repeat: int
    goal: float

    @property
    def key(self) -> str:
        return (
            f"speed|{self.distribution}|sigma={self.sigma:g}|D={self.D}|N={self.N}|"
            f"delta={self.delta:g}|draws={self.draws}|repeat={self.repeat}"
        )


def _all_error_settings(config: RacingSyntheticConfig) -> Iterator[ErrorSetting]:
    """Every cell of the sweep, in an order where consecutive cells share a target."""
    for v in config.variants:
        cells = itertools.product(v.sigmas, config.distributions, v.algorithms, config.deltas)
        for sigma, dist, algorithm, delta in cells:
            variance = None if algorithm == "lil-ucb" else v.variance
            yield ErrorSetting(v.name, algorithm, dist, sigma, v.D, v.N, delta, variance, config.n)


def _skip_reason(skips: Iterable[Skip], s: ErrorSetting) -> str | None:
    for rule in skips:
        if rule.matches(s.variant, s.algorithm, s.sigma):
            return rule.reason
    return None


def error_settings(config: RacingSyntheticConfig) -> tuple[ErrorSetting, ...]:
    """The cells the level runs: every cell its skip rules do not leave out."""
    return tuple(s for s in _all_error_settings(config) if _skip_reason(config.skips, s) is None)


def skipped_settings(config: RacingSyntheticConfig) -> tuple[tuple[ErrorSetting, str], ...]:
    """The cells the level's skip rules leave out, each with the rule's reason."""
    out = []
    for s in _all_error_settings(config):
        reason = _skip_reason(config.skips, s)
        if reason is not None:
            out.append((s, reason))
    return tuple(out)


def skipped_lines(config: RacingSyntheticConfig) -> list[str]:
    """One line per skip reason: which cells it leaves out and why (report and summary)."""
    skipped = skipped_settings(config)
    out = []
    for reason in sorted({r for _, r in skipped}):
        settings = [s for s, r in skipped if r == reason]
        sigmas = ", ".join(sorted({f"{s.sigma:g}" for s in settings}, key=float))
        variants = ", ".join(sorted({s.variant for s in settings}))
        algorithms = ", ".join(sorted({s.algorithm for s in settings}))
        out.append(
            f"{algorithms} in variant {variants} at sigma {sigmas} ({len(settings)} settings): "
            f"{reason}"
        )
    return out


def speed_settings(config: RacingSyntheticConfig) -> tuple[SpeedSetting, ...]:
    p = config.speed
    if p is None:
        return ()
    return tuple(
        SpeedSetting(p.distribution, s, p.D, p.N, p.delta, p.draws, p.repeat, p.goal)
        for s in p.sigmas
    )
