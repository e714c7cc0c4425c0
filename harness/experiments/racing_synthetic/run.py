"""Settings and tasks of racing-synthetic (000, Sec. 5.1, Fig. 1; Appx. C.1): one task per
(variant, algorithm, distribution, sigma, delta) cell, checked against the exact argmax under
the same Gumbel noise; one benchmark task per noise level (against exact Gumbel-max)."""

from __future__ import annotations

import dataclasses
import itertools
import os
import time
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from harness.declare import Config, Declared, param
from harness.experiments.claims import CONFIDENCE
from harness.registry import registry_for
from harness.spec import sample
from harness.targets.discrete import REWARD_DISTRIBUTIONS, DiscreteFactorTarget, synthetic_rewards
from harness.tasks import Records, SeedKey, label_words

ALGORITHMS = ("lil-ucb", "racing-ebs", "racing-normal")
EXACT_ALGORITHM = "gumbel-max"
IMPL = "numba"
INF = float("inf")
SIGMAS, QUICK_SIGMAS = (1e-5, 1e-4, 1e-3, 1e-2), (1e-5, 1e-3, 1e-2)
DELTAS = (1e-3, 3e-3, 1e-2, 3e-2, 0.1)
#: The verification problems (harness/targets/catalog.py) on which a correct Racing-Normal was
#: measured above delta = 1e-3 (implementations/racing NORMAL_PREMISE_FAILS): the three with the
#: largest spread of rewards.
PREMISE_PROBLEMS = (
    "race-normal-D10-N1000-s0.3",
    "synthetic-normal-D10-N200",
    "synthetic-f0-D10-N200",
)
#: The catalog's ragged populations (N_y per state, 000 Sec. 5.3): the only ones we have.
RAGGED_PROBLEMS = ("ragged-normal-D8-s1e-3",)
NOTE = (
    "lil-ucb: heuristic constants, scale C_i/2; racing-ebs: m1 = 2, C = reward range; "
    "racing-normal: m1 = 50 (Numba implementations, defaults of the registry)."
)


@dataclass(frozen=True)
class Variant(Declared):
    """One panel family of Fig. 1 / Appx. C.1."""

    name: str
    D: int = param(low=2)
    N: int = param(low=2)
    sigmas: tuple[float, ...] = param(low=0.0, high=INF, open=True)
    variance: str = param("pairwise", choices=("pairwise", "marginal"))
    algorithms: tuple[str, ...] = param(ALGORITHMS, choices=ALGORITHMS)
    #: lil'UCB (one reward per step) runs below this sigma only: hours per cell above it.
    lil_ucb_below: float = param(INF, low=0.0, high=INF)


@dataclass(frozen=True)
class SpeedPlan(Declared):
    D: int = param(low=2)
    N: int = param(low=2)
    sigmas: tuple[float, ...] = param(low=0.0, high=INF, open=True)
    delta: float = param(0.05, low=0.0, high=1.0, open=True)
    distribution: str = param("normal", choices=REWARD_DISTRIBUTIONS)
    draws: int = param(500, low=1)
    repeat: int = param(5, low=1)
    #: The harness's own goal: wall-clock speedup >= goal x evaluation saving.
    goal: float = param(0.7, low=0.0, high=INF, open=True)

    def key(self, sigma: float) -> str:
        return (
            f"speed|{self.distribution}|sigma={sigma:g}|D={self.D}|N={self.N}|"
            f"delta={self.delta:g}|draws={self.draws}|repeat={self.repeat}"
        )


@dataclass(frozen=True)
class PremisePlan(Declared):
    """Racing-Normal's promise P(error) <= delta where its normal premise (000, Assump. 6) is
    weakest: the far tail delta / (D - 1) after m1 rewards. The first of ``m1s`` is the
    paper's 50; a larger one (sigma_hat from more rewards) tells the premise from the rest."""

    draws: int = param(low=1)
    m1s: tuple[int, ...] = param((50,), low=2)
    problems: tuple[str, ...] = param(PREMISE_PROBLEMS)
    delta: float = param(1e-3, low=0.0, high=1.0, open=True)

    def key(self, problem: str, m1: int) -> str:
        return f"premise|{problem}|delta={self.delta:g}|m1={m1}|n={self.draws}"


@dataclass(frozen=True)
class CorefPlan(Declared):
    """Racing-Normal at the coreference experiment's delta (000 Sec. 5.3) on the catalog's
    ragged populations (a population size per state, as its clusters have)."""

    draws: int = param(low=1)
    problems: tuple[str, ...] = param(RAGGED_PROBLEMS)
    delta: float = param(0.05, low=0.0, high=1.0, open=True)

    def key(self, problem: str) -> str:
        return f"coref|{problem}|delta={self.delta:g}|n={self.draws}"


@dataclass(frozen=True, kw_only=True)
class RacingSyntheticConfig(Config):
    experiment = "racing-synthetic"
    n: int = param(low=1, quick=2000, full=10_000, doc="draws per setting")
    deltas: tuple[float, ...] = param(DELTAS, low=0.0, high=1.0, open=True, doc="delta grid")
    distributions: tuple[str, ...] = param(
        REWARD_DISTRIBUTIONS, choices=REWARD_DISTRIBUTIONS, doc="reward distributions"
    )
    # The first variant is Fig. 1; the others are Appx. C.1's.
    variants: tuple[Variant, ...] = param(
        quick=(Variant("main", 10, 10_000, QUICK_SIGMAS, lil_ucb_below=1e-2),),
        full=(
            Variant("main", 10, 100_000, SIGMAS),
            Variant("D2", 2, 100_000, SIGMAS),
            Variant("D100", 100, 100_000, SIGMAS[:3], lil_ucb_below=1e-4),
            Variant("marginal", 10, 100_000, SIGMAS, "marginal", ALGORITHMS[1:]),
        ),
        doc="variant",
    )
    speed: SpeedPlan | None = param(
        None,
        quick=SpeedPlan(10, 10_000, QUICK_SIGMAS, draws=500, repeat=5),
        full=SpeedPlan(10, 100_000, SIGMAS, draws=1000, repeat=7),
        doc="benchmark",
    )
    premise: PremisePlan | None = param(
        None,
        quick=PremisePlan(150_000, (50, 100)),
        full=PremisePlan(1_000_000, (50, 100)),
        doc="Racing-Normal at delta = 1e-3 on the verification problems of largest spread",
    )
    coref: CorefPlan | None = param(
        None,
        quick=CorefPlan(20_000),
        full=CorefPlan(100_000),
        doc="Racing-Normal at delta = 0.05 on the ragged populations (000 Sec. 5.3)",
    )
    notes: tuple[str, ...] = param((NOTE,), empty=True)


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


def error_settings(
    config: RacingSyntheticConfig, skipped: bool = False
) -> tuple[ErrorSetting, ...]:
    """The cells of the sweep that run (or, ``skipped``, that lil'UCB's limit leaves out)."""
    out = []
    for v in config.variants:
        cells = itertools.product(v.sigmas, config.distributions, v.algorithms, config.deltas)
        for sigma, dist, a, delta in cells:
            if (a == "lil-ucb" and sigma >= v.lil_ucb_below) == skipped:
                variance = None if a == "lil-ucb" else v.variance
                out.append(
                    ErrorSetting(v.name, a, dist, sigma, v.D, v.N, delta, variance, config.n)
                )
    return tuple(out)


@lru_cache(maxsize=2)
def _target(distribution: str, sigma: float, D: int, N: int, seed: int) -> DiscreteFactorTarget:
    # The raw rewards depend on (distribution, D, N) only: every sigma rescales the same draws.
    rng = SeedKey.from_label(seed, f"target|{distribution}|D={D}|N={N}").generator()
    return synthetic_rewards(D, N, distribution, sigma, rng)


def _draws(name: str, target: Any, n: int, rng: np.random.Generator, **params: Any) -> Any:
    return sample(registry_for(()).get(name), IMPL, target, n, rng, **params)


def warm() -> None:
    tiny = synthetic_rewards(3, 64, "normal", 0.01, np.random.default_rng(0))
    racing = [{"variance": v, "m1": 2} for v in ("pairwise", "marginal")]
    for name, params in [("lil-ucb", {}), *itertools.product(ALGORITHMS[1:], racing)]:
        _draws(name, tiny, 2, np.random.default_rng(0), delta=0.1, exact_answer=True, **params)
    _draws(EXACT_ALGORITHM, tiny, 2, np.random.default_rng(0))


def run_error_setting(s: ErrorSetting, seed: int, *, rng: np.random.Generator) -> Records:
    target = _target(s.distribution, s.sigma, s.D, s.N, seed)
    variance = {} if s.variance is None else {"variance": s.variance}
    t0 = time.perf_counter()
    draws = _draws(s.algorithm, target, s.n, rng, delta=s.delta, exact_answer=True, **variance)
    wall = time.perf_counter() - t0
    errors = int(np.count_nonzero(draws.values != draws.extras["exact"]))
    from statsmodels.stats.proportion import proportion_confint  # on first use

    low, high = proportion_confint(errors, s.n, alpha=1.0 - CONFIDENCE, method="beta")
    return [
        {
            "key": s.key,
            **dataclasses.asdict(s),
            "errors": errors,
            "error_rate": errors / s.n,
            "ci_low": float(low),
            "ci_high": float(high),
            # evals counts the racing rewards only; the exact answer's N * D per draw is apart.
            "reward_proportion": draws.evals / (s.n * s.N * s.D),
            "mean_evals_per_draw": draws.evals / s.n,
            # The spread of a draw's rewards gives each proportion its sampling interval.
            "evals_sd": float(np.std(draws.extras["draw_evals"], ddof=1)) if s.n > 1 else 0.0,
            "stopped_early": float(np.mean(draws.extras["stopped_early"])),
            "wall_s": wall,
            "impl": IMPL,
            "type": "error",
        }
    ]


def run_premise(p: PremisePlan, problem: str, m1: int, *, rng: np.random.Generator) -> Records:
    """Racing-Normal (pairwise) on a verification problem at ``p.delta``, against the exact
    argmax under the same Gumbel noise."""
    from harness.targets.catalog import build_target

    target = build_target(problem)
    t0 = time.perf_counter()
    params = {"delta": p.delta, "m1": m1, "exact_answer": True}
    draws = _draws("racing-normal", target, p.draws, rng, **params)
    wall = time.perf_counter() - t0
    errors = int(np.count_nonzero(draws.values != draws.extras["exact"]))
    return [
        {
            "key": p.key(problem, m1),
            "problem": problem,
            "D": target.D,
            "N": target.N,
            "delta": p.delta,
            "m1": m1,
            "n": p.draws,
            "errors": errors,
            "reward_proportion": draws.evals / (p.draws * target.N * target.D),
            "stopped_early": float(np.mean(draws.extras["stopped_early"])),
            "wall_s": wall,
            "algorithm": "racing-normal",
            "impl": IMPL,
            "type": "premise",
        }
    ]


def run_coref(p: CorefPlan, problem: str, *, rng: np.random.Generator) -> Records:
    """Racing-Normal on a ragged population at ``p.delta``, against the exact argmax under the
    same Gumbel noise; an exact draw evaluates every state's N_y factors."""
    from harness.targets.catalog import build_target

    target = build_target(problem)
    t0 = time.perf_counter()
    params = {"delta": p.delta, "variance": "marginal", "exact_answer": True}  # no shared indices
    draws = _draws("racing-normal", target, p.draws, rng, **params)
    wall = time.perf_counter() - t0
    spent = np.asarray(draws.extras["draw_evals"], dtype=float)
    return [
        {
            "key": p.key(problem),
            "problem": problem,
            "D": target.D,
            "sizes": [int(s) for s in target.sizes],
            "delta": p.delta,
            "n": p.draws,
            "errors": int(np.count_nonzero(draws.values != draws.extras["exact"])),
            "exact_evals_per_draw": int(np.sum(target.sizes)),
            "mean_evals_per_draw": float(spent.mean()),
            "evals_sd": float(spent.std(ddof=1)) if p.draws > 1 else 0.0,
            "wall_s": wall,
            "algorithm": "racing-normal",
            "impl": IMPL,
            "type": "coref",
        }
    ]


def _timed(name: str, target: Any, n: int, rng: np.random.Generator, **params: Any) -> tuple:
    t0 = time.perf_counter()
    draws = _draws(name, target, n, rng, **params)
    return (time.perf_counter() - t0) / n, draws.evals


def _load_average() -> float:
    try:
        return float(os.getloadavg()[0])
    except (AttributeError, OSError):  # no load average on this OS
        return float("nan")


def run_speed_setting(s: SpeedPlan, sigma: float, seed: int) -> Records:
    """Racing-Normal and exact Gumbel-max in alternation, both warmed; medians of repeats."""
    key = s.key(sigma)

    def rng(*words: int) -> np.random.Generator:
        return SeedKey.from_label(seed, key, *words).generator()

    t_start = time.perf_counter()
    load_before = _load_average()
    target = _target(s.distribution, sigma, s.D, s.N, seed)
    _timed("racing-normal", target, 2, rng(999), delta=s.delta)
    _timed(EXACT_ALGORITHM, target, 2, rng(999))
    racing_times, exact_times, evals = [], [], 0
    for r in range(s.repeat):
        t_r, spent = _timed("racing-normal", target, s.draws, rng(r, 0), delta=s.delta)
        racing_times.append(t_r)
        exact_times.append(_timed(EXACT_ALGORITHM, target, s.draws, rng(r, 1))[0])
        evals += spent
    mean_evals = evals / (s.repeat * s.draws)
    saving = s.N * s.D / mean_evals
    racing_s, exact_s = float(np.median(racing_times)), float(np.median(exact_times))
    speedup = exact_s / racing_s
    # Per-repeat speedups: their spread shows how much other load disturbed the timing.
    each = np.asarray(exact_times) / np.asarray(racing_times)
    plan = {k: getattr(s, k) for k in ("distribution", "D", "N", "delta", "draws", "repeat")}
    return [
        {
            "key": key,
            **plan,
            "sigma": sigma,
            "mean_evals_per_draw": mean_evals,
            "saving": saving,
            "exact_s_per_draw": exact_s,
            "racing_s_per_draw": racing_s,
            "speedup": speedup,
            "speedup_range": (float(each.min()), float(each.max())),
            "ratio": speedup / saving,
            "goal": s.goal,
            "goal_met": bool(speedup >= s.goal * saving),
            "load_avg": (load_before, _load_average()),
            "racing_times": tuple(racing_times),
            "exact_times": tuple(exact_times),
            "wall_s": time.perf_counter() - t_start,
            "seed": seed,
            "spawn_key": label_words(key),
            "algorithm": "racing-normal",
            "exact_algorithm": EXACT_ALGORITHM,
            "impl": IMPL,
            "type": "speed",
        }
    ]
