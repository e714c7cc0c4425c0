"""Thinning by the slowest observable (harness/gates/thinning.py)."""

import numpy as np
import pytest

from harness.gates.thinning import (
    ar1_lag,
    quantile_indicators,
    slowest_linear_combination,
    state_indicators,
    thinning_lag,
)


def _ar1(rho, n, rng):
    x = np.empty(n)
    x[0] = rng.standard_normal()
    e = rng.standard_normal(n) * np.sqrt(1 - rho * rho)
    for t in range(1, n):
        x[t] = rho * x[t - 1] + e[t]
    return x


def test_ar1_lag_reaches_the_target_correlation():
    for tau in (1.5, 5.0, 19.0, 200.0):
        rho = (tau - 1) / (tau + 1)
        lag = ar1_lag(tau, 0.02)
        assert rho**lag <= 0.02 < rho ** (lag - 1)
    assert ar1_lag(1.0) == 1 and ar1_lag(float("nan")) == 1
    with pytest.raises(ValueError, match="target_correlation"):
        ar1_lag(3.0, 1.5)


def test_the_slowest_combination_finds_a_mode_no_single_trace_shows():
    # Two traces, each a mix of a slow AR(1) (rho 0.95) and a fast one: neither alone is as slow
    # as the slow mode, their difference is exactly it.
    rng = np.random.default_rng(0)
    slow, fast = _ar1(0.95, 40_000, rng), _ar1(0.2, 40_000, rng)
    obs = np.stack([fast + 0.5 * slow, fast - 0.5 * slow])
    combo = slowest_linear_combination(obs)
    assert abs(np.corrcoef(combo, slow)[0, 1]) > 0.99
    alone = thinning_lag(obs, slowest_combination=False)
    both = thinning_lag(obs)
    assert both.which == 2 and both.tau_max > 1.5 * alone.tau_max
    assert both.tau_max == pytest.approx(1.95 / 0.05, rel=0.25)


def test_independent_draws_are_kept_almost_whole():
    x = np.random.default_rng(1).random(20_000)
    rule = thinning_lag(quantile_indicators(x, np.arange(1, 10) / 10))
    assert rule.lag <= 2 and rule.kept(20_000) >= 10_000


def test_state_indicators_merge_rare_cells_past_the_limit():
    idx = np.array([0, 1, 1, 2, 99, -1, 5])
    rows = state_indicators(idx, 100, max_cells=3)
    assert rows.shape == (3, 7)
    assert rows.sum(axis=0).tolist() == [1, 1, 1, 1, 1, 0, 1]  # -1 is in no cell
    assert rows[0].tolist() == [False, True, True, False, False, False, False]  # most visited


def test_constant_traces_need_no_thinning():
    rule = thinning_lag(np.ones((3, 100)))
    assert rule.lag == 1 and rule.which == -1
    with pytest.raises(ValueError, match="shape"):
        thinning_lag(np.ones((2, 3)))
