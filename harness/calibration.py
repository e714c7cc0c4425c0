"""Measure the gates themselves: their false-failure rate on a correct sampler.

A gate at level alpha run on a correct sampler over many independent seeds should reject a
fraction alpha of the time, and its p-values should be uniform. This module runs that experiment
and reports the rejection rate with an exact (Clopper-Pearson) interval.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
from scipy import stats
from statsmodels.stats.proportion import proportion_confint
from tqdm import tqdm

from harness.registry import build_registry
from harness.spec import Param, check_sample_size, sample
from harness.targets.catalog import PROBLEMS, problem
from harness.text_table import text_table
from harness.verification import gates_for

#: At least 10 seeds, so that a rejection rate means something.
SEEDS = Param("seeds", 500, int, low=10)
ALPHA = Param("alpha", 0.05, float, 0.0, 1.0, low_inclusive=False, high_inclusive=False)


def calibrate(
    algorithm: str,
    problem: str | None = None,
    impl: str = "numba",
    seeds: int = 500,
    n: int = 5000,
    alpha: float = 0.05,
    plugins: tuple[str, ...] = (),
    progress: bool = False,
    confidence: float = 0.999,
) -> dict[str, Any]:
    """Raw p-values of every gate over ``seeds`` seeds; rejection rate vs ``alpha``."""
    seeds, n, alpha = SEEDS.check(seeds), check_sample_size(n), ALPHA.check(alpha)
    spec = build_registry(plugins).get(algorithm)
    prob = _problem_for(spec, problem)
    target = prob.build()
    pvals: dict[str, list[float]] = {}
    for seed in tqdm(range(seeds), disable=not progress, file=sys.stderr, desc="seeds"):
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(7,)))
        draws = sample(spec, impl, target, n, rng)
        for g in gates_for(spec, target, draws, alpha):
            if g.p_value is not None:
                pvals.setdefault(g.gate, []).append(g.p_value)
    gates = {}
    for gate, ps in pvals.items():
        p = np.asarray(ps)
        rejected = int(np.sum(p < alpha))
        low, high = proportion_confint(rejected, p.size, alpha=1 - confidence, method="beta")
        uniform = stats.kstest(p, "uniform")
        gates[gate] = {
            "seeds": int(p.size),
            "rejected": rejected,
            "rate": rejected / p.size,
            "interval": [float(low), float(high)],
            "alpha_inside": bool(low <= alpha <= high),
            "uniformity_ks_p": float(uniform.pvalue),
        }
    return {
        "algorithm": algorithm,
        "problem": prob.name,
        "impl": impl,
        "n": n,
        "alpha": alpha,
        "confidence": confidence,
        "gates": gates,
        "calibrated": all(g["alpha_inside"] for g in gates.values()),
    }


def _problem_for(spec, name: str | None):
    if name is not None:
        prob = problem(name)
        if prob.kind not in spec.target_kinds:
            raise ValueError(
                f"problem {name!r} is {prob.kind}; {spec.name!r} takes {spec.target_kinds}"
            )
        return prob
    for prob in PROBLEMS:
        if prob.kind in spec.target_kinds:
            return prob
    raise ValueError(f"no standard problem fits {spec.name!r}")


def format_calibration(result: dict[str, Any]) -> str:
    title = (
        f"{result['algorithm']} [{result['impl']}] on {result['problem']}, n={result['n']} "
        f"draws per seed, gates at alpha={result['alpha']}"
    )
    interval = f"{result['confidence']:.1%} interval"
    headers = ["gate", "seeds", "rejected", "rate", interval, "", "p-uniformity"]
    rows = [
        [
            gate,
            str(g["seeds"]),
            str(g["rejected"]),
            f"{g['rate']:.4f}",
            "[{:.4f}, {:.4f}]".format(*g["interval"]),
            "ok" if g["alpha_inside"] else "OFF",
            f"KS p={g['uniformity_ks_p']:.3g}",
        ]
        for gate, g in result["gates"].items()
    ]
    verdict = "calibrated" if result["calibrated"] else "NOT calibrated"
    return "\n".join([title, text_table(headers, rows, align="lrrrlll"), verdict])
