"""The tasks of the racing-synthetic experiment: one setting in, its records out.

- :func:`run_error_setting`: one (variant, algorithm, distribution, sigma, delta) cell of
  000_26bed7cc1ef3ab92.txt, Fig. 1(b)-(h): errors against the exact argmax under the same Gumbel
  noise, a 95% Clopper-Pearson interval, the proportion of the N * D rewards sampled, the
  fraction of draws that stopped before T = N, wall time;
- :func:`run_speed_setting`: Racing-Normal against the exact Gumbel-max sampler, both Numba,
  timed in alternation in one process: evaluation saving, wall-clock speedup and their ratio.
"""

from __future__ import annotations

import os
import time
from functools import lru_cache
from typing import Any

import numpy as np
from statsmodels.stats.proportion import proportion_confint

from harness.engine import SeedKey, label_words
from harness.experiments.racing_synthetic.settings import (
    ALGORITHMS,
    CONFIDENCE,
    EXACT_ALGORITHM,
    IMPL,
    ErrorSetting,
    SpeedSetting,
)
from harness.registry import build_registry
from harness.spec import AlgorithmSpec, sample
from harness.targets.discrete import DiscreteFactorTarget, synthetic_rewards

Records = list[dict[str, Any]]


@lru_cache(maxsize=2)
def _target(distribution: str, sigma: float, D: int, N: int, seed: int) -> DiscreteFactorTarget:
    # The raw rewards depend on (distribution, D, N) only, so every sigma rescales the same
    # draws and every algorithm and delta faces exactly the same problem.
    rng = SeedKey.from_label(seed, f"target|{distribution}|D={D}|N={N}").generator()
    return synthetic_rewards(D, N, distribution, sigma, rng)


@lru_cache(maxsize=1)
def _registry_specs() -> dict[str, AlgorithmSpec]:
    registry = build_registry()
    return {name: registry.get(name) for name in (*ALGORITHMS, EXACT_ALGORITHM)}


def _spec(name: str) -> AlgorithmSpec:
    return _registry_specs()[name]


def warm() -> None:
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


def run_error_setting(s: ErrorSetting, seed: int, *, rng: np.random.Generator) -> Records:
    """Draw ``s.n`` samples with the exact answer under the same noise; count the misses.

    ``rng`` is the setting's own stream, ``SeedKey.from_label(seed, s.key)``; ``seed`` also
    picks the rewards (shared by every algorithm and delta).
    """
    target = _target(s.distribution, s.sigma, s.D, s.N, seed)
    t0 = time.perf_counter()
    draws = sample(_spec(s.algorithm), IMPL, target, s.n, rng, **s.params())
    wall = time.perf_counter() - t0
    errors = int(np.count_nonzero(draws.values != draws.extras["exact"]))
    low, high = _interval(errors, s.n)
    record = {
        "key": s.key,
        "variant": s.variant,
        "algorithm": s.algorithm,
        "distribution": s.distribution,
        "sigma": s.sigma,
        "D": s.D,
        "N": s.N,
        "delta": s.delta,
        "variance": s.variance,
        "n": s.n,
        "errors": errors,
        "error_rate": errors / s.n,
        "ci_low": low,
        "ci_high": high,
        # evals counts the racing rewards only; the exact answer's N * D per draw is apart.
        "reward_proportion": draws.evals / (s.n * s.N * s.D),
        "mean_evals_per_draw": draws.evals / s.n,
        "stopped_early": float(np.mean(draws.extras["stopped_early"])),
        "wall_s": wall,
        "impl": IMPL,
        "type": "error",
    }
    return [record]


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


def run_speed_setting(s: SpeedSetting, seed: int) -> Records:
    """Racing-Normal and exact Gumbel-max in alternation on one target; medians of repeats.

    saving = N * D / (mean rewards per racing draw); speedup = exact s/draw / racing s/draw.
    Both kernels are warmed on this very target first (compiled, data in cache). Each call
    has its own stream, ``SeedKey.from_label(seed, s.key, *words)``.
    """

    def rng(*words: int) -> np.random.Generator:
        return SeedKey.from_label(seed, s.key, *words).generator()

    t_start = time.perf_counter()
    load_before = _load_average()
    target = _target(s.distribution, s.sigma, s.D, s.N, seed)
    racing, exact = _spec("racing-normal"), _spec(EXACT_ALGORITHM)
    _timed_draws(racing, target, 2, rng(999), delta=s.delta)
    _timed_draws(exact, target, 2, rng(999))
    racing_times, exact_times, evals = [], [], 0
    for r in range(s.repeat):
        t_r, spent = _timed_draws(racing, target, s.draws, rng(r, 0), delta=s.delta)
        t_e, _ = _timed_draws(exact, target, s.draws, rng(r, 1))
        racing_times.append(t_r)
        exact_times.append(t_e)
        evals += spent
    mean_evals = evals / (s.repeat * s.draws)
    saving = s.N * s.D / mean_evals
    racing_s, exact_s = float(np.median(racing_times)), float(np.median(exact_times))
    speedup = exact_s / racing_s
    # Per-repeat speedups: their spread shows how much other load on the machine disturbed it.
    each = np.asarray(exact_times) / np.asarray(racing_times)
    record = {
        "key": s.key,
        "distribution": s.distribution,
        "sigma": s.sigma,
        "D": s.D,
        "N": s.N,
        "delta": s.delta,
        "draws": s.draws,
        "repeat": s.repeat,
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
        "spawn_key": label_words(s.key),
        "algorithm": "racing-normal",
        "exact_algorithm": EXACT_ALGORITHM,
        "impl": IMPL,
        "type": "speed",
    }
    return [record]
