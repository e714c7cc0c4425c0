"""Pair-independence gate: independent draws pass; draws with the right marginal law that
share randomness fail."""

from pathlib import Path

import numpy as np
import pytest

from harness.gates import chisquare_gof, ks_1samp
from harness.gates.independence import (
    discrete_bins,
    pair_independence_continuous,
    pair_independence_discrete,
    pair_table_test,
)
from harness.registry import build_registry
from harness.spec import sample
from harness.targets.catalog import build_target
from harness.verification import SAMPLE_SIZES

PLUGIN = str(Path(__file__).resolve().parents[2] / "plugins" / "planted_subtle.py")
N = SAMPLE_SIZES["quick"]
ALPHA = 1e-4


@pytest.fixture(scope="module")
def planted():
    return build_registry([PLUGIN])


@pytest.fixture(scope="module")
def discrete():
    return build_target("synthetic-normal-D10-N200")


@pytest.fixture(scope="module")
def trunc():
    return build_target("truncgumbel-phi0-b1")


def _draws(registry, name, target, impl, seed, n=N):
    return sample(registry.get(name), impl, target, n, np.random.default_rng(seed)).values


def test_exact_samplers_pass(registry, discrete, trunc):
    for name in ("gumbel-max", "cdf-inversion", "top-down"):
        res = pair_independence_discrete(
            _draws(registry, name, discrete, "numba", 1), discrete.pmf, ALPHA
        )
        assert res.passed, (name, res.detail)
    res = pair_independence_continuous(
        _draws(registry, "truncated-gumbel", trunc, "numba", 2), trunc.cdf, ALPHA
    )
    assert res.passed and "10 x 10 bins" in res.detail
    assert 0.03 < res.detectable < 0.1  # Cohen's w at 20000 pairs, 81 df


@pytest.mark.parametrize(
    "name", ["planted-gumbel-max-repeat", "planted-gumbel-max-shared-noise"], ids=str
)
def test_discrete_draws_sharing_randomness_fail_only_this_gate(planted, discrete, name):
    x = _draws(planted, name, discrete, "reference", 3)
    assert chisquare_gof(x, discrete.pmf, ALPHA).passed  # the marginal law is right
    res = pair_independence_discrete(x, discrete.pmf, ALPHA)
    # Over seeds 3-7: p 1e-35..1e-59 (repeat), 3e-7..1e-21 (shared noise).
    assert not res.passed and res.p_value < 1e-6, res.detail


def test_antithetic_continuous_draws_fail_only_this_gate(planted, trunc):
    x = _draws(planted, "planted-trunc-gumbel-antithetic", trunc, "reference", 4)
    assert ks_1samp(x, trunc.cdf, ALPHA).passed  # the marginal law is right
    res = pair_independence_continuous(x, trunc.cdf, ALPHA)
    assert not res.passed and res.p_value < 1e-10, res.detail


def test_detectable_says_a_one_percent_repeat_is_out_of_reach(discrete):
    """A repeat with probability r has w^2 ~ r^2 (K - 1): r = 0.01 on 7 bins is w ~ 0.024,
    below what a pass at 20000 draws rules out; r = 0.05 (w ~ 0.12) is far above it."""
    rng = np.random.default_rng(5)
    x = rng.choice(discrete.pmf.size, N, p=discrete.pmf)
    res = pair_independence_discrete(x, discrete.pmf, ALPHA)
    assert res.passed and res.detectable > 0.024 * 1.5


def test_bins_keep_every_pair_cell_at_five_expected():
    pmf = np.array([0.5, 0.2, 0.1, 0.1, 0.05, 0.03, 0.02])
    for n in (200, 20_000):
        labels = discrete_bins(pmf, n)
        mass = np.bincount(labels, weights=pmf)
        assert mass.min() ** 2 * (n - 1) >= 5.0
    assert int(discrete_bins(pmf, 10**6, max_bins=4).max()) + 1 <= 4


def test_few_draws_use_fewer_bins_and_bad_input_is_handled(trunc):
    x = np.random.default_rng(6).gumbel(size=300)
    small = pair_independence_continuous(np.minimum(x, trunc.b), trunc.cdf, ALPHA)
    assert "7 x 7 bins" in small.detail
    assert not pair_independence_continuous(np.append(x, np.inf), trunc.cdf, ALPHA).passed
    with pytest.raises(ValueError, match="codes"):
        pair_table_test(np.array([0, 1, 5]), 2, ALPHA)
    # A sampler that only ever returns one value: nothing to test, not a crash.
    assert pair_independence_discrete(np.zeros(100, int), np.array([0.5, 0.5]), ALPHA).passed


def test_one_bin_is_no_test_at_all():
    # pmf (0.989, 0.011): the rare value cannot fill a cell of the pair table, so it is pooled
    # and one bin is left; the gate passes without a p-value (nothing for Holm or calibration).
    x = (np.random.default_rng(0).random(20000) < 0.011).astype(np.int64)
    res = pair_independence_discrete(x, np.array([0.989, 0.011]), 1e-4)
    assert res.passed and res.p_value is None and not res.multiple_testing
