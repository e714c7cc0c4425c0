"""ECDF-difference bands: their coverage measured, and a band that cannot see is caught."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

from harness.gates.ecdf_bands import (
    BAND_LEVEL,
    BAND_SEED,
    LADDER,
    PRECOMPUTED,
    PRECOMPUTED_SIMULATIONS,
    EcdfBand,
    band,
    ecdf_band,
    grid,
    rung,
)


def exit_rate(n: int, trials: int, rng: np.random.Generator, level: float = BAND_LEVEL) -> float:
    """Share of uniform samples of size n whose ECDF leaves the band somewhere on the grid.
    The ECDF at the grid points of n uniforms is the running sum of a multinomial over the
    grid's cells, so each trial costs 100 draws, not n."""
    g = grid()
    cells = np.diff(np.concatenate([[0.0], g, [1.0]]))
    ecdf = np.cumsum(rng.multinomial(n, cells, size=trials)[:, :-1], axis=1) / n
    lower, upper = band(n, level)
    return float(np.mean(((ecdf < lower) | (ecdf > upper)).any(axis=1)))


@pytest.mark.parametrize("n", [20, 300, 5000, 200_000])
def test_a_uniform_ecdf_leaves_the_band_at_about_its_level(n):
    # 40 000 trials: about 40 exits expected at level 0.999; 3x that is 12 sd away.
    rate = exit_rate(n, 40_000, np.random.default_rng(n))
    assert 0.0002 < rate < 0.003, rate


def test_a_band_at_a_lower_level_is_caught_by_the_same_measurement():
    """Negative control: the coverage check sees a band that is too narrow (level 0.99 read as
    0.999 leaves ten times as often)."""
    rate = exit_rate(100, 40_000, np.random.default_rng(1), level=0.99)
    assert rate > 0.005, rate


def test_each_n_takes_the_rung_below_it_and_the_stored_levels_rise_with_draws():
    assert [rung(n) for n in (1, 16, 22, 23, 1000, 10**6)] == [16, 16, 16, 23, 724, 1024]
    levels = [PRECOMPUTED[d] for d in LADDER]
    assert all(BAND_LEVEL < g < 1 for g in levels) and levels == sorted(levels)


@pytest.mark.slow
def test_the_stored_level_is_arviz_stats_simulation_again():
    from arviz_stats.ecdf_utils import simulate_confidence_bands

    again = simulate_confidence_bands(
        16, 1, grid(), BAND_LEVEL, PRECOMPUTED_SIMULATIONS, np.random.default_rng(BAND_SEED)
    )
    assert float(again) == PRECOMPUTED[16]


def test_uniform_values_stay_inside_and_a_shift_leaves_above():
    rng = np.random.default_rng(2)
    good = ecdf_band(rng.random(4000), "u")
    assert good.exits().size == 0 and good.n == 4000 and len(good.diff) == 99
    shifted = ecdf_band(rng.random(4000) ** 1.15, "u")  # values pushed down: ECDF above u
    exits = shifted.exits()
    assert exits.size > 0
    assert np.all(np.asarray(shifted.diff)[exits] > np.asarray(shifted.upper)[exits])
    assert shifted.exits("above").size == exits.size


def test_a_law_too_narrow_changes_sign_at_the_middle():
    narrow = ecdf_band(np.random.default_rng(3).beta(1.3, 1.3, 4000))
    d, exits = np.asarray(narrow.diff), narrow.exits()
    u = narrow.grid[exits]
    assert np.all(d[exits][u < 0.5] < 0) and np.all(d[exits][u > 0.5] > 0)
    assert (u < 0.5).any() and (u > 0.5).any()
    assert narrow.exits("above").size < exits.size  # "above" ignores the lower half's exits


def test_the_peak_is_the_ks_statistic():
    u = np.random.default_rng(4).random(777) ** 1.05
    b = ecdf_band(u)
    res = stats.kstest(u, "uniform")
    assert abs(b.peak) == pytest.approx(res.statistic, abs=1e-6)
    assert b.peak_at == pytest.approx(res.statistic_location, abs=1e-6)
    assert np.sign(b.peak) == res.statistic_sign


def test_the_summary_round_trips_through_json_and_stays_small():
    b = ecdf_band(np.random.default_rng(5).random(20_000), "theta[0]")
    text = json.dumps(b.to_dict())
    assert len(text) < 6000
    assert EcdfBand.from_dict(json.loads(text)) == b


def test_the_band_is_a_function_of_n_only():
    rng = np.random.default_rng(6)
    state = rng.bit_generator.state
    a = band(1234)
    assert np.array_equal(a, band(1234)) and rng.bit_generator.state == state
    lower, upper = a
    assert np.all(lower <= grid()) and np.all(grid() <= upper)


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: band(0), "n = 0"),
        (lambda: band(10, level=1.0), "level = 1.0"),
        (lambda: band(10, points=0), "points = 0"),
        (lambda: ecdf_band(np.array([0.2, np.nan])), "1 not finite"),
        (lambda: ecdf_band(np.array([])), "got 0 values"),
    ],
)
def test_bad_inputs_are_refused_by_name(call, name):
    with pytest.raises(ValueError, match=name):
        call()
