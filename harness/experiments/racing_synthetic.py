"""Synthetic racing experiment: error and cost against delta (000_26bed7cc1ef3ab92.txt, Fig. 1).

000, Sec. 5.1: D = 10 states, N = 1e5 rewards per state drawn from Normal(0, 1), Uniform[0, 1]
or LogNormal(0, 2), rescaled to a fixed pmf and a reward variance sigma^2 (the difficulty);
1e4 draws of X per setting; delta on [1e-3, 0.1]; adapted lil'UCB, Racing-EBS and Racing-Normal
with the pairwise variance. Appx. C.1 repeats it with D in {2, 100} and the marginal variance.

Two kinds of records land in OUT/records.jsonl, one line per finished setting:

- ``error``: one (variant, algorithm, distribution, sigma, delta) setting: errors against the
  exact argmax under the same Gumbel noise, a 95% Clopper-Pearson interval, the proportion of
  the N * D rewards sampled, the fraction of draws that stopped before T = N, wall time;
- ``speed``: Racing-Normal against the exact Gumbel-max sampler, both Numba, timed in
  alternation in one process: evaluation saving, wall-clock speedup and their ratio.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import sys
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from statsmodels.stats.proportion import proportion_confint
from tqdm import tqdm

from harness.experiments.store import (
    RunSummary,
    append_record,
    check_run_args,
    lists_to_tuples,
    setting_rng,
    spawn_key,
    start_run,
)
from harness.registry import build_registry
from harness.results import provenance
from harness.runner import check_seed
from harness.spec import AlgorithmSpec, sample
from harness.targets.discrete import REWARD_DISTRIBUTIONS, DiscreteFactorTarget, synthetic_rewards

NAME = "racing-synthetic"
PAPER = "000_26bed7cc1ef3ab92.txt, Fig. 1"
SUMMARY = "Error rate and rewards sampled against delta for lil'UCB, Racing-EBS, Racing-Normal"
ALGORITHMS = ("lil-ucb", "racing-ebs", "racing-normal")
EXACT_ALGORITHM = "gumbel-max"
LEVELS = ("quick", "full")
PARTS = ("all", "errors", "speed")
DELTAS = (1e-3, 3e-3, 1e-2, 3e-2, 0.1)
IMPL = "numba"
#: Confidence of the error-rate intervals (two-sided Clopper-Pearson), as in Fig. 1(b)-(d).
CONFIDENCE = 0.95
#: The project's goal for the benchmark: wall-clock speedup >= 0.7 x evaluation saving.
SPEED_GOAL = 0.7


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


@dataclass(frozen=True)
class Skip:
    """A combination left out on purpose (too slow for the level); the report lists it."""

    algorithm: str
    sigma_at_least: float
    reason: str
    variant: str = "*"

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

    def manifest(self) -> dict[str, Any]:
        return {"experiment": NAME, **dataclasses.asdict(self)}

    @classmethod
    def from_manifest(cls, m: dict[str, Any]) -> RacingSyntheticConfig:
        """The inverse of :meth:`manifest` (JSON turns tuples into lists; turn them back)."""
        variants = tuple(Variant(**lists_to_tuples(v)) for v in m["variants"])
        skips = tuple(Skip(**s) for s in m["skips"])
        speed = SpeedPlan(**lists_to_tuples(m["speed"])) if m.get("speed") else None
        return cls(
            level=m["level"],
            seed=m["seed"],
            n=m["n"],
            deltas=tuple(m["deltas"]),
            distributions=tuple(m["distributions"]),
            variants=variants,
            skips=skips,
            speed=speed,
            notes=tuple(m["notes"]),
        )


def config_for_level(level: str, seed: int = 0) -> RacingSyntheticConfig:
    """The settings of ``level``; see the module docstring and ``harness reproduce --help``."""
    if level not in LEVELS:
        raise ValueError(f"--level {level!r} is invalid; valid: {', '.join(LEVELS)}")
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

    def params(self) -> dict[str, Any]:
        out: dict[str, Any] = {"delta": self.delta, "exact_answer": True}
        if self.variance is not None:  # lil'UCB keeps no variance estimate
            out["variance"] = self.variance
        return out


@dataclass(frozen=True)
class SpeedSetting:
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


@dataclass(frozen=True)
class ErrorRecord:
    key: str
    variant: str
    algorithm: str
    distribution: str
    sigma: float
    D: int
    N: int
    delta: float
    variance: str | None
    n: int
    errors: int
    error_rate: float
    ci_low: float
    ci_high: float
    reward_proportion: float
    mean_evals_per_draw: float
    stopped_early: float
    wall_s: float
    seed: int
    spawn_key: tuple[int, ...]
    code: str
    impl: str = IMPL
    type: str = "error"
    experiment: str = NAME


@dataclass(frozen=True)
class SpeedRecord:
    key: str
    distribution: str
    sigma: float
    D: int
    N: int
    delta: float
    draws: int
    repeat: int
    mean_evals_per_draw: float
    saving: float
    exact_s_per_draw: float
    racing_s_per_draw: float
    speedup: float
    speedup_range: tuple[float, float]
    ratio: float
    goal: float
    goal_met: bool
    load_avg: tuple[float, float]
    racing_times: tuple[float, ...]
    exact_times: tuple[float, ...]
    wall_s: float
    seed: int
    spawn_key: tuple[int, ...]
    code: str
    algorithm: str = "racing-normal"
    exact_algorithm: str = EXACT_ALGORITHM
    impl: str = IMPL
    type: str = "speed"
    experiment: str = NAME


@dataclass(frozen=True)
class Plan:
    """The settings a config asks for, and the ones its skip rules leave out."""

    errors: tuple[ErrorSetting, ...]
    speed: tuple[SpeedSetting, ...]
    skipped: tuple[tuple[ErrorSetting, str], ...] = field(default=())


def plan(config: RacingSyntheticConfig) -> Plan:
    """All settings, grouped so that consecutive ones share a target (built once)."""
    errors, skipped = [], []
    for s in _error_settings(config):
        reason = _skip_reason(config.skips, s)
        if reason is None:
            errors.append(s)
        else:
            skipped.append((s, reason))
    return Plan(tuple(errors), _speed_settings(config.speed), tuple(skipped))


def _error_settings(config: RacingSyntheticConfig) -> Iterable[ErrorSetting]:
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


def _speed_settings(p: SpeedPlan | None) -> tuple[SpeedSetting, ...]:
    if p is None:
        return ()
    return tuple(
        SpeedSetting(p.distribution, s, p.D, p.N, p.delta, p.draws, p.repeat, p.goal)
        for s in p.sigmas
    )


@lru_cache(maxsize=2)
def _target(distribution: str, sigma: float, D: int, N: int, seed: int) -> DiscreteFactorTarget:
    # The raw rewards depend on (distribution, D, N) only, so every sigma rescales the same
    # draws and every algorithm and delta faces exactly the same problem.
    rng = setting_rng(seed, f"target|{distribution}|D={D}|N={N}")
    return synthetic_rewards(D, N, distribution, sigma, rng)


@lru_cache(maxsize=1)
def _registry_specs() -> dict[str, AlgorithmSpec]:
    registry = build_registry()
    return {name: registry.get(name) for name in (*ALGORITHMS, EXACT_ALGORITHM)}


def _spec(name: str) -> AlgorithmSpec:
    return _registry_specs()[name]


def warm_kernels() -> None:
    """Compile (or load from cache) every kernel first, so no setting's wall time includes it."""
    tiny = synthetic_rewards(3, 64, "normal", 0.01, np.random.default_rng(0))
    for name in ALGORITHMS:
        for variance in ("pairwise", "marginal") if name != "lil-ucb" else (None,):
            params = {"delta": 0.1, "exact_answer": True}
            if variance is not None:
                params.update(variance=variance, m1=2)
            sample(_spec(name), IMPL, tiny, 2, np.random.default_rng(0), **params)
    sample(_spec(EXACT_ALGORITHM), IMPL, tiny, 2, np.random.default_rng(0))


def _interval(errors: int, n: int) -> tuple[float, float]:
    low, high = proportion_confint(errors, n, alpha=1.0 - CONFIDENCE, method="beta")
    return float(low), float(high)


def run_error_setting(s: ErrorSetting, seed: int) -> ErrorRecord:
    """Draw ``s.n`` samples with the exact answer under the same noise; count the misses."""
    target = _target(s.distribution, s.sigma, s.D, s.N, seed)
    rng = setting_rng(seed, s.key)
    t0 = time.perf_counter()
    draws = sample(_spec(s.algorithm), IMPL, target, s.n, rng, **s.params())
    wall = time.perf_counter() - t0
    errors = int(np.count_nonzero(draws.values != draws.extras["exact"]))
    low, high = _interval(errors, s.n)
    return ErrorRecord(
        key=s.key,
        variant=s.variant,
        algorithm=s.algorithm,
        distribution=s.distribution,
        sigma=s.sigma,
        D=s.D,
        N=s.N,
        delta=s.delta,
        variance=s.variance,
        n=s.n,
        errors=errors,
        error_rate=errors / s.n,
        ci_low=low,
        ci_high=high,
        # evals counts the racing rewards only; the exact answer's N * D per draw is apart.
        reward_proportion=draws.evals / (s.n * s.N * s.D),
        mean_evals_per_draw=draws.evals / s.n,
        stopped_early=float(np.mean(draws.extras["stopped_early"])),
        wall_s=wall,
        seed=seed,
        spawn_key=spawn_key(s.key),
        code=provenance()["source_digest"],
    )


def _timed_draws(
    spec: AlgorithmSpec, target: DiscreteFactorTarget, n: int, rng: np.random.Generator, **params
) -> tuple[float, int]:
    """Seconds per draw of one call, and the rewards it evaluated."""
    t0 = time.perf_counter()
    draws = sample(spec, IMPL, target, n, rng, **params)
    return (time.perf_counter() - t0) / n, draws.evals


def _load_average() -> float:
    """The 1-minute load average (NaN where the OS has none): timings are only as quiet as this."""
    try:
        return float(os.getloadavg()[0])
    except (AttributeError, OSError):
        return float("nan")


def run_speed_setting(s: SpeedSetting, seed: int) -> SpeedRecord:
    """Racing-Normal and exact Gumbel-max in alternation on one target; medians of repeats.

    saving = N * D / (mean rewards per racing draw); speedup = exact s/draw / racing s/draw.
    Both kernels are warmed on this very target first (compiled, data in cache).
    """
    t_start = time.perf_counter()
    load_before = _load_average()
    target = _target(s.distribution, s.sigma, s.D, s.N, seed)
    racing, exact = _spec("racing-normal"), _spec(EXACT_ALGORITHM)
    _timed_draws(racing, target, 2, setting_rng(seed, s.key, 999), delta=s.delta)
    _timed_draws(exact, target, 2, setting_rng(seed, s.key, 999))
    racing_times, exact_times, evals = [], [], 0
    for r in range(s.repeat):
        t_r, spent = _timed_draws(
            racing, target, s.draws, setting_rng(seed, s.key, r, 0), delta=s.delta
        )
        t_e, _ = _timed_draws(exact, target, s.draws, setting_rng(seed, s.key, r, 1))
        racing_times.append(t_r)
        exact_times.append(t_e)
        evals += spent
    mean_evals = evals / (s.repeat * s.draws)
    saving = s.N * s.D / mean_evals
    racing_s, exact_s = float(np.median(racing_times)), float(np.median(exact_times))
    speedup = exact_s / racing_s
    # Per-repeat speedups: their spread shows how much other load on the machine disturbed it.
    each = np.asarray(exact_times) / np.asarray(racing_times)
    return SpeedRecord(
        key=s.key,
        distribution=s.distribution,
        sigma=s.sigma,
        D=s.D,
        N=s.N,
        delta=s.delta,
        draws=s.draws,
        repeat=s.repeat,
        mean_evals_per_draw=mean_evals,
        saving=saving,
        exact_s_per_draw=exact_s,
        racing_s_per_draw=racing_s,
        speedup=speedup,
        speedup_range=(float(each.min()), float(each.max())),
        ratio=speedup / saving,
        goal=s.goal,
        goal_met=bool(speedup >= s.goal * saving),
        load_avg=(load_before, _load_average()),
        racing_times=tuple(racing_times),
        exact_times=tuple(exact_times),
        wall_s=time.perf_counter() - t_start,
        seed=seed,
        spawn_key=spawn_key(s.key),
        code=provenance()["source_digest"],
    )


def run(
    config: RacingSyntheticConfig,
    out: Path,
    progress: bool = True,
    part: str = "all",
    workers: int = 1,
    log: Callable[[str], None] = lambda msg: print(msg, file=sys.stderr),
) -> RunSummary:
    """Run (or resume) the experiment into ``out``; return what this invocation did."""
    check_run_args(part, workers, PARTS)
    t0 = time.perf_counter()
    out = Path(out)
    path, done = start_run(out, config.manifest())
    p = plan(config)
    todo_err = [s for s in p.errors if s.key not in done] if part != "speed" else []
    todo_speed = [s for s in p.speed if s.key not in done] if part != "errors" else []
    planned = len(p.errors) + len(p.speed)
    log(_plan_message(p, planned, len(done), len(todo_err) + len(todo_speed)))
    warm_kernels()
    _run_errors(todo_err, config.seed, path, progress, workers)
    # Timed alone, after every worker has exited: the benchmark must not share the CPU.
    speed = _run_speeds(todo_speed, config.seed, path, progress)
    return RunSummary(
        out=str(out),
        planned=planned,
        already_done=len(done),
        ran=len(todo_err) + len(todo_speed),
        skipped_by_rule=len(p.skipped),
        wall_s=time.perf_counter() - t0,
        speed=tuple(speed),
    )


def _plan_message(p: Plan, planned: int, done: int, todo: int) -> str:
    msg = f"{NAME}: {planned} settings planned, {done} already on disk, {todo} to run now"
    reasons = sorted({reason for _, reason in p.skipped})
    for reason in reasons:
        count = sum(r == reason for _, r in p.skipped)
        msg += f"\n  skipped by level rule ({count} settings): {reason}"
    return msg


def _bar(total: int, desc: str, progress: bool) -> tqdm:
    return tqdm(total=total, desc=desc, unit="setting", disable=not progress, file=sys.stderr)


def _run_errors(
    todo: list[ErrorSetting], seed: int, path: Path, progress: bool, workers: int
) -> None:
    if not todo:
        return
    with _bar(len(todo), "error vs delta", progress) as bar:
        if workers <= 1:
            for s in todo:
                bar.set_postfix_str(f"{s.algorithm} {s.distribution} sigma={s.sigma:g}")
                append_record(path, dataclasses.asdict(run_error_setting(s, seed)))
                bar.update()
            return
        with ProcessPoolExecutor(max_workers=workers, initializer=warm_kernels) as pool:
            futures = [pool.submit(run_error_setting, s, seed) for s in todo]
            for fut in as_completed(futures):
                append_record(path, dataclasses.asdict(fut.result()))
                bar.update()


def _run_speeds(
    todo: list[SpeedSetting], seed: int, path: Path, progress: bool
) -> list[dict[str, Any]]:
    results = []
    with _bar(len(todo), "speed benchmark", progress and bool(todo)) as bar:
        for s in todo:
            record = dataclasses.asdict(run_speed_setting(s, seed))
            append_record(path, record)
            results.append(record)
            bar.update()
    return results


def format_speed(records: Iterable[dict[str, Any]]) -> str:
    """The speed records as a plain-text table (for the terminal)."""
    lines = [
        f"{'sigma':>8} {'D':>4} {'N':>7} {'evals/draw':>11} {'saving':>9} {'speedup':>9} "
        f"{'ratio':>7}  goal (speedup >= {SPEED_GOAL:g} x saving)"
    ]
    for r in sorted(records, key=lambda r: (r["N"], r["sigma"])):
        verdict = "met" if r["goal_met"] else "NOT met"
        lines.append(
            f"{r['sigma']:>8g} {r['D']:>4} {r['N']:>7} {r['mean_evals_per_draw']:>11.4g} "
            f"{r['saving']:>9.3g} {r['speedup']:>9.3g} {r['ratio']:>7.3f}  {verdict}"
        )
    return "\n".join(lines)
