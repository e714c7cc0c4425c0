"""Box densities (the target kind of A* sampling): proposal masses and draws on sub-boxes,
validation, and the quadrature ground truth."""

import math

import mpmath as mp
import numpy as np
import pytest
from scipy import stats

from harness.targets.box_density import (
    EXPONENTIAL,
    NORMAL,
    box_density,
    log_mass_1d,
    peaky_exponential,
    quadrature_truth,
    sample_1d,
)


@pytest.mark.parametrize(("lo", "hi"), [(-1.0, 2.0), (3.0, 9.0), (-40.0, -35.0), (30.0, math.inf)])
def test_normal_mass_and_draws_on_a_side_match_scipy_even_in_the_tails(lo, hi):
    mean, sd = 1.0, 2.0
    a, b = (lo - mean) / sd, (hi - mean) / sd
    want = stats.truncnorm(a, b, loc=mean, scale=sd)
    # The reference works from the tail the side sits in, where scipy keeps the digits.
    if lo > mean:
        tail = stats.norm.logsf(a)
        log_ref = tail + math.log(-math.expm1(stats.norm.logsf(b) - tail))
    else:
        log_ref = math.log(stats.norm.cdf(b) - stats.norm.cdf(a))
    assert log_mass_1d(NORMAL, mean, sd, 0.0, lo, hi) == pytest.approx(log_ref, rel=1e-9)
    u = np.random.default_rng(0).random(4000)
    x = np.array([sample_1d(NORMAL, mean, sd, 0.0, lo, hi, v) for v in u])
    assert np.all((x >= lo) & (x <= hi))
    assert stats.kstest(x, want.cdf).pvalue > 1e-3


def test_exponential_mass_and_draws_on_a_sub_side():
    rate, origin, lo, hi = 2.0, 0.5, 1.0, 3.0
    mass = math.exp(-rate * (lo - origin)) - math.exp(-rate * (hi - origin))
    assert log_mass_1d(EXPONENTIAL, 0.0, rate, origin, lo, hi) == pytest.approx(math.log(mass))
    u = np.random.default_rng(1).random(4000)
    x = np.array([sample_1d(EXPONENTIAL, 0.0, rate, origin, lo, hi, v) for v in u])
    want = stats.truncexpon(b=rate * (hi - lo), loc=lo, scale=1.0 / rate)
    assert stats.kstest(x, want.cdf).pvalue > 1e-3


def _zero(x, data):
    return 0.0


def _zero_bound(lo, hi, data):
    return 0.0


def test_truth_of_a_flat_likelihood_is_the_proposal_mass():
    target = box_density([-1.0], [2.5], [("normal", 0.0, 1.0)], _zero, _zero_bound, np.ones(1))
    truth = quadrature_truth(target)
    assert truth.log_z == pytest.approx(target.log_mass(target.lo, target.hi), abs=1e-9)
    x = np.linspace(-1.0, 2.5, 7)
    ref = (stats.norm.cdf(x) - stats.norm.cdf(-1.0)) / (stats.norm.cdf(2.5) - stats.norm.cdf(-1.0))
    assert np.max(np.abs(truth.cdf(x) - ref)) < 1e-7
    assert truth.log_z_error < 1e-9 and truth.cdf_error < 1e-6


@pytest.mark.parametrize("a", [10.0, 1e4])
def test_truth_of_the_peaky_target_matches_mpmath_and_states_a_small_error(a):
    # At a = 1e4 the mass lies within 1e-3 of 0: the grid must find it (a grid over the whole
    # side puts one point there; scipy's quad is off by 5e-5 in log Z).
    truth = quadrature_truth(peaky_exponential(a))
    x = 3.0 / a
    with mp.workdps(30):
        f = lambda t: mp.e ** (-t) * (1 + t) ** (-a)  # noqa: E731
        ref = mp.quad(f, [0, 1 / a, 10 / a, 100 / a, 1, mp.inf])
        log_z, cdf = float(mp.log(ref)), float(mp.quad(f, [0, 1 / a, x]) / ref)
    assert truth.log_z == pytest.approx(log_z, abs=1e-9)
    assert truth.cdf(x) == pytest.approx(cdf, abs=1e-6)
    assert truth.log_z_error < 1e-9 and truth.cdf_error < 1e-5


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"lo": [1.0], "hi": [1.0]}, "lo < hi"),
        ({"lo": [], "hi": []}, "d >= 1"),
        ({"lo": [0.0, 0.0], "hi": [1.0]}, "hi ="),
        ({"data": np.array([np.nan])}, "no NaN"),
        ({"data": np.array([])}, "data is empty"),
        ({"proposal": [("cauchy", 0.0, 1.0)]}, "valid kinds"),
        ({"proposal": [("normal", 0.0, -1.0)]}, "sd > 0"),
        ({"lo": [-math.inf], "proposal": [("uniform",)]}, "finite side"),
        ({"lo": [-math.inf], "proposal": [("exponential", 1.0)]}, "finite lower end"),
        ({"mode": 5.0}, "mode = 5.0"),
    ],
)
def test_bad_boxes_and_proposals_name_the_value_and_the_valid_range(kwargs, needle):
    args = {
        "lo": [0.0],
        "hi": [1.0],
        "proposal": [("normal", 0.0, 1.0)],
        "log_lik": _zero,
        "bound": _zero_bound,
        "data": np.ones(1),
        **kwargs,
    }
    with pytest.raises(ValueError, match=needle):
        box_density(**args)


def test_clutter_settings_change_only_what_they_name():
    from harness.targets.box_density import clutter

    base = clutter(3, seed=7)
    wide = clutter(3, seed=7, prior_sd=10.0)
    line = clutter(3, seed=7, layout="diagonal")
    assert base.name == "clutter-D3" and np.all(base.proposal[:, 2] == 2.0)
    assert np.array_equal(wide.data, base.data) and np.all(wide.proposal[:, 2] == 10.0)
    # Diagonal: every coordinate equal, half the points on each cube's diagonal.
    assert np.all(line.data == line.data[:, :1]) and line.data.shape == (20, 3)
    assert np.all((line.data[:10] >= -5) & (line.data[:10] <= -3))
    assert np.all((line.data[10:] >= 2) & (line.data[10:] <= 4))
    assert len({base.name, wide.name, line.name}) == 3
    x = np.array([1.0, -2.0, 0.5])
    assert wide.o(x) == base.o(x)  # the prior is the proposal, not part of o


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [({"prior_sd": 0.0}, "prior_sd = 0.0"), ({"layout": "grid"}, "uniform, diagonal")],
)
def test_bad_clutter_settings_name_the_value(kwargs, needle):
    from harness.targets.box_density import clutter

    with pytest.raises(ValueError, match=needle):
        clutter(2, **kwargs)
