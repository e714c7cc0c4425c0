"""Breiman's generated sets (harness/targets/breiman_data.py; 004_b270422b62f00607.txt, Sec.
5.3.2 and Appx. C): Table 1's sizes, class balance, the defining means and variances on a large
draw, determinism under a seed, and the pm-astar experiment drawing these three from them."""

from __future__ import annotations

import math

import numpy as np
import pytest

from harness.experiments.pm_astar import NOTES, PMConfig, _data, settings
from harness.experiments.pm_astar.paper_claims import DATA
from harness.targets.breiman_data import (
    GENERATORS,
    RINGNORM_A,
    TWONORM_A,
    WAVEFORM_PAIRS,
    WAVES,
    ringnorm,
    twonorm,
    waveform,
    waveform_classes,
)
from harness.targets.logistic_box import (
    GENERATED,
    MIKA_SIZES,
    STAND_IN,
    mika_data,
    mika_kind,
    mika_logistic,
)

BIG = 40_000
Z = 5.0  # tolerance in standard errors: each test checks a few dozen statistics


def _mean_ok(x: np.ndarray, mean: np.ndarray | float, var: np.ndarray | float) -> None:
    """Column means of ``x`` within Z standard errors of ``mean`` (sd sqrt(var / n))."""
    err = Z * np.sqrt(np.asarray(var) / x.shape[0])
    assert np.all(np.abs(x.mean(axis=0) - mean) <= err)


def _var_ok(x: np.ndarray, var: np.ndarray | float) -> None:
    """Column variances of normal-ish data within Z standard errors (var sqrt(2 / n))."""
    v = np.asarray(var)
    assert np.all(np.abs(x.var(axis=0, ddof=1) - v) <= Z * v * math.sqrt(2.0 / x.shape[0]))


def test_definitions_match_breiman() -> None:
    assert TWONORM_A == pytest.approx(2 / math.sqrt(20))
    assert RINGNORM_A == pytest.approx(1 / math.sqrt(20))
    h1 = [max(6 - abs(i - 11), 0) for i in range(1, 22)]
    assert WAVES[0].tolist() == h1
    assert WAVES[1].tolist() == [max(6 - abs(i - 4 - 11), 0) for i in range(1, 22)]
    assert WAVES[2].tolist() == [max(6 - abs(i + 4 - 11), 0) for i in range(1, 22)]
    assert WAVEFORM_PAIRS == ((0, 1), (0, 2), (1, 2))


def test_twonorm_class_means_are_plus_minus_a_with_unit_covariance() -> None:
    X, y = twonorm(BIG, np.random.default_rng(1))
    for sign in (1.0, -1.0):
        part = X[y == sign]
        _mean_ok(part, sign * TWONORM_A, 1.0)
        _var_ok(part, 1.0)
        off = np.corrcoef(part, rowvar=False)[np.triu_indices(20, 1)]
        assert np.max(np.abs(off)) <= Z / math.sqrt(part.shape[0])


def test_ringnorm_class_1_has_variance_4_and_class_2_mean_a() -> None:
    X, y = ringnorm(BIG, np.random.default_rng(2))
    one, two = X[y > 0], X[y < 0]
    _mean_ok(one, 0.0, 4.0)
    _var_ok(one, 4.0)
    _mean_ok(two, RINGNORM_A, 1.0)
    _var_ok(two, 1.0)


def test_waveform_classes_are_convex_combinations_plus_unit_noise() -> None:
    X, cls = waveform_classes(BIG, np.random.default_rng(3))
    for c, (j, k) in enumerate(WAVEFORM_PAIRS, start=1):
        part = X[cls == c]
        # u ~ U(0, 1): mean (hj + hk) / 2, variance 1 + (hj - hk)^2 / 12.
        var = 1.0 + (WAVES[j] - WAVES[k]) ** 2 / 12.0
        _mean_ok(part, 0.5 * (WAVES[j] + WAVES[k]), var)
        assert np.all(np.abs(part.var(axis=0, ddof=1) - var) <= 0.1 * var)
    assert set(np.unique(cls)) == {1, 2, 3}
    # Two classes, our reading: class 1 positive.
    Xb, y = waveform(BIG, np.random.default_rng(3))
    assert np.array_equal(Xb, X) and np.array_equal(y > 0, cls == 1)


@pytest.mark.parametrize(
    ("name", "share"), [("twonorm", 0.5), ("ringnorm", 0.5), ("waveform", 1 / 3)]
)
def test_sizes_balance_and_determinism(name: str, share: float) -> None:
    dim, n = MIKA_SIZES[name]
    assert (dim, n) == {"twonorm": (20, 7400), "ringnorm": (20, 7400), "waveform": (21, 5000)}[name]
    X, y = GENERATORS[name](n, np.random.default_rng(4))
    assert X.shape == (n, dim) and y.shape == (n,) and set(np.unique(y)) == {-1.0, 1.0}
    assert abs(np.mean(y > 0) - share) <= Z * math.sqrt(share * (1 - share) / n)
    X2, y2 = GENERATORS[name](n, np.random.default_rng(4))
    assert np.array_equal(X, X2) and np.array_equal(y, y2)
    assert not np.array_equal(GENERATORS[name](n, np.random.default_rng(5))[0], X)


def test_bad_n_or_rng_is_a_value_error() -> None:
    with pytest.raises(ValueError, match=r"n = 0 is invalid"):
        twonorm(0, np.random.default_rng())
    with pytest.raises(ValueError, match=r"rng = 3 is invalid"):
        ringnorm(10, 3)  # type: ignore[arg-type]


def test_mika_data_draws_the_three_from_their_generators_standardised() -> None:
    for row, name in enumerate(MIKA_SIZES):
        X, y, source = mika_data(name, seed=2)
        kind = mika_kind(name)
        assert source.startswith(kind)
        if name not in GENERATORS:
            assert kind == STAND_IN
            continue
        assert kind == GENERATED
        raw, labels = GENERATORS[name](MIKA_SIZES[name][1], np.random.default_rng([2, row]))
        assert np.allclose(X, (raw - raw.mean(axis=0)) / raw.std(axis=0))
        assert np.array_equal(y, labels)
        assert np.allclose(X.mean(axis=0), 0.0) and np.allclose(X.std(axis=0), 1.0)
    assert np.array_equal(mika_logistic("Twonorm", seed=2).data[:, :-1], mika_data("twonorm", 2)[0])


def test_pm_astar_runs_the_three_on_their_generators_at_every_level() -> None:
    for level in ("quick", "full"):
        config = PMConfig.for_level(level, 0, logistic_sets=tuple(MIKA_SIZES))
        for args in settings(config)["logistic"]:
            generated = args["set"] in ("ringnorm", "twonorm", "waveform")
            assert mika_kind(args["set"]) == (GENERATED if generated else STAND_IN)
            # New task keys for the three, so records from their old stand-ins never resume.
            assert ("data" in args) == generated
            # Every logistic record (trace and MH) says which its data are.
            assert _data("logistic", args) == {"data": GENERATED if generated else STAND_IN}
    assert _data("clutter", {"D": 5}) == {}
    assert "generators" in DATA and "stand-ins" in DATA and "generators" in NOTES[-1]
