"""The MCMC baseline of 001 Sec. 6.4: a random-direction slice sampler (Neal 2003, with
stepping out and shrinkage) on the robust-regression posterior, given a budget of likelihood
evaluations, and how often it switches between the modes near +w* and -w*."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import njit

from harness.engine import SeedKey, Task

#: The initial bracket width along a direction (the posterior's modes are about 0.1 wide and
#: 5.7 apart at D = 2; stepping out doubles nothing, it adds widths).
WIDTH = 1.0


def _log_density(target: Any):
    """phi = i + o inside the box, -inf outside (i is uniform there, a constant)."""
    o = njit(cache=False)(target.log_lik)
    lo, hi, data = target.lo, target.hi, target.data

    def phi(x: np.ndarray) -> float:
        if np.any(x < lo) or np.any(x > hi):
            return -math.inf
        return float(o(x, data))

    return phi


def mode_of(x: np.ndarray) -> int:
    """+1 near +w* = (2, ..., 2), -1 near -w*, 0 in between (hysteresis for switches)."""
    m = float(np.mean(x))
    return 1 if m > 1.0 else (-1 if m < -1.0 else 0)


def slice_chain(target: Any, budget: int, rng: np.random.Generator) -> dict[str, Any]:
    """Slice steps along random directions until ``budget`` density evaluations are spent;
    the number of mode switches (sign changes of the confident mode) and the states' modes."""
    phi = _log_density(target)
    x = target.lo + rng.random(target.d) * (target.hi - target.lo)  # a draw of the prior
    fx = phi(x)
    evals, steps, switches, last = 1, 0, 0, mode_of(x)
    plus = 0
    while evals < budget:
        d = rng.standard_normal(target.d)
        d /= np.linalg.norm(d)
        level = fx - rng.standard_exponential()
        left = -WIDTH * rng.random()
        right = left + WIDTH
        while phi(x + left * d) > level and evals < budget:
            left -= WIDTH
            evals += 1
        while phi(x + right * d) > level and evals < budget:
            right += WIDTH
            evals += 1
        evals += 2  # the two evaluations that ended the stepping out
        while evals < budget:
            t = left + rng.random() * (right - left)
            y = x + t * d
            fy = phi(y)
            evals += 1
            if fy > level:
                x, fx = y, fy
                break
            if t < 0:
                left = t
            else:
                right = t
        steps += 1
        m = mode_of(x)
        plus += m > 0
        if m != 0:
            if last != 0 and m != last:
                switches += 1
            last = m
    return {
        "steps": steps,
        "evals": evals,
        "switches": switches,
        "share_plus": plus / max(steps, 1),
    }


def run_slice(
    D: int, N: int, data_seed: int, budget: int, rng: np.random.Generator
) -> list[dict[str, Any]]:
    from harness.targets.robust_regression import robust_regression

    target = robust_regression(D, N, "constant", data_seed)
    out = slice_chain(target, budget, rng)
    return [{"type": "slice", "D": D, "N": N, "data_seed": data_seed, "budget": budget, **out}]


def slice_task(seed: int, D: int, N: int, data_seed: int, budget: int) -> Task:
    key = f"slice|D={D}|N={N}|data={data_seed}|budget={budget}"
    return Task(
        key=key,
        fn=run_slice,
        inputs=(D, N, data_seed, budget),
        seed=SeedKey.from_label(seed, key),
        label=f"slice D={D} data {data_seed}",
    )
