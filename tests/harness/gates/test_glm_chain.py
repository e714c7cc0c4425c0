"""The z-conditional gate on two-state chains with known laws: calibrated on correct ones
(false-failure rate measured over seeds), rejecting a stationary law that is off."""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.proportion import proportion_confint

from harness.gates.glm_chain import z_conditional


def implicit_rates(p: np.ndarray, q: float) -> tuple[np.ndarray, np.ndarray]:
    """Flip rates of 002's implicit z update at fixed theta: dark to bright min(q, L~), bright
    to dark min(1, q / L~), L~ = p / (1 - p)."""
    lt = p / (1.0 - p)
    return np.minimum(q, lt), np.minimum(1.0, q / lt)


def two_state_runs(p, a, b, T, seeds, rng, start_p=None):
    """Bright steps and darkenings of independent two-state chains (one row per seed), started
    from Bernoulli(start_p) (the stationary p by default)."""
    z = rng.random((seeds, p.size)) < (p if start_p is None else start_p)
    bright = np.zeros(z.shape, dtype=np.int64)
    darkenings = np.zeros(z.shape, dtype=np.int64)
    for _ in range(T):
        u = rng.random(z.shape)
        new = np.where(z, u >= b, u < a)
        darkenings += z & ~new
        z = new
        bright += z
    return bright, darkenings


P = np.concatenate([np.full(60, 1e-4), np.geomspace(1e-3, 0.6, 40)])


def test_a_correct_z_chain_fails_at_about_alpha():
    # 400 seeds of 100 data at fixed theta (60 nearly never bright, as with tight bounds):
    # 21/400 = 0.0525 failed at alpha 0.05 when this test was written.
    rng = np.random.default_rng(0)
    a, b = implicit_rates(P, 0.1)
    bright, flips = two_state_runs(P, a, b, 2000, 400, rng)
    fails = sum(not z_conditional(P, bright[s], flips[s], 2000, 0.05).passed for s in range(400))
    lo, hi = proportion_confint(fails, 400, alpha=0.001, method="beta")
    assert lo <= 0.05 <= hi or fails / 400 < 0.05, f"{fails}/400 failed at alpha 0.05"


@pytest.mark.parametrize("factor", [0.7, 1.4])
def test_a_bright_fraction_off_by_a_constant_factor_fails(factor):
    rng = np.random.default_rng(1)
    wrong = np.clip(P * factor, 0.0, 0.99)
    a, b = implicit_rates(wrong, 0.1)
    bright, flips = two_state_runs(wrong, a, b, 2000, 1, rng, start_p=P)
    got = z_conditional(P, bright[0], flips[0], 2000, 1e-3)
    assert not got.passed and got.gate == "z-conditional"
    assert got.detectable < abs(factor - 1.0)


def test_the_verdict_names_the_worst_group():
    rng = np.random.default_rng(3)
    a, b = implicit_rates(P, 0.1)
    bright, flips = two_state_runs(P, a, b, 2000, 1, rng)
    got = z_conditional(P, bright[0], flips[0], 2000, 1e-3)
    assert got.passed and "groups by 1 - B/L" in got.detail and got.n == 2000
