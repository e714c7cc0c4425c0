"""Pair-independence gate: independent draws pass; draws with the right marginal law that
share randomness fail. Error-independence: the runs of an approximate sampler's errors."""

import itertools
from math import comb
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from harness.checks.cases import SAMPLE_SIZES
from harness.gates import chisquare_gof, ks_1samp
from harness.gates.independence import (
    _adjacency_law,
    discrete_bins,
    error_runs,
    pair_independence_continuous,
    pair_independence_discrete,
    pair_table_test,
)
from harness.registry import build_registry
from harness.spec import sample
from harness.targets.catalog import build_target

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


# --- error-independence (approximate samplers) ------------------------------------------------


@pytest.mark.parametrize(("n", "k"), [(7, 3), (8, 4), (6, 5), (9, 2)])
def test_adjacency_law_is_the_exact_law_of_adjacent_error_pairs(n, k):
    counts: dict[int, int] = {}
    for places in itertools.combinations(range(n), k):
        a = sum(1 for p in places if p + 1 in places)
        counts[a] = counts.get(a, 0) + 1
    values, probs = _adjacency_law(n, k)
    assert sorted(counts) == values.tolist()
    expected = np.array([counts[int(a)] / comb(n, k) for a in values])
    np.testing.assert_allclose(probs, expected, rtol=1e-12)


def test_independent_errors_give_uniform_p_values():
    """400 sequences of i.i.d. errors at rates 0.2%..10%: the randomised p-values are uniform
    (KS p >= 0.001) and about 5% fall below 0.05; the measured sweep is a slow test below."""
    rng = np.random.default_rng(11)
    rates = rng.choice([0.002, 0.01, 0.03, 0.1], 400)
    p = [error_runs(rng.random(5000) < r, 0.05).p_value for r in rates]
    assert all(v is not None for v in p)
    assert stats.kstest(p, "uniform").pvalue >= 1e-3
    assert 5 <= sum(v < 0.05 for v in p) <= 40


def test_errors_that_come_in_pairs_fail_and_say_how_much():
    """Errors that come in pairs, as when two draws share an index order: the second draw of
    a pair errs 45% of the time after the first erred, 1.7% otherwise (3% on average)."""
    rng = np.random.default_rng(12)
    first = rng.random(10_000) < 0.03
    second = np.where(first, rng.random(10_000) < 0.45, rng.random(10_000) < 0.017)
    errors = np.column_stack([first, second]).ravel()
    res = error_runs(errors, 1e-4)
    assert not res.passed and res.p_value < 1e-30, res.detail
    assert res.statistic > 100 and "adjacent error pairs" in res.detail
    assert 0.0 < res.detectable < 0.1  # P(error | previous erred) - P(error)


def test_rare_errors_are_tested_exactly_and_too_few_are_no_test():
    none = error_runs(np.zeros(20_000, bool), 1e-4)
    assert none.passed and none.p_value is None and not none.multiple_testing
    one = np.zeros(20_000, bool)
    one[5] = True
    assert error_runs(one, 1e-4).p_value is None
    # Three errors in 20000: one adjacent pair has probability ~3e-4, two ~1e-8.
    e = np.zeros(20_000, bool)
    e[[100, 101, 102]] = True
    assert not error_runs(e, 1e-4).passed
    e[[101, 102]] = False
    e[[5000, 9000]] = True
    res = error_runs(e, 1e-4)
    assert res.passed and res.p_value is not None
    with pytest.raises(ValueError, match="errors"):
        error_runs(np.zeros((3, 3), bool), 0.05)


def _calibrated(p_values: list[float], alpha: float = 0.05) -> tuple[int, float]:
    """(rejections at alpha, KS p of the p-values against uniform); the rate's 99.9%
    Clopper-Pearson interval must hold alpha (harness.verify.calibration's rule for a test gate)."""
    p = np.asarray(p_values, dtype=float)
    k = int(np.sum(p < alpha))
    low, high = stats.binomtest(k, p.size).proportion_ci(0.999)
    assert low <= alpha <= high, (k, p.size)
    return k, float(stats.kstest(p, "uniform").pvalue)


@pytest.mark.slow
@pytest.mark.parametrize(
    "problem", ["race-normal-D2-N1000-s0.3", "synthetic-normal-D10-N200", "race-long-D30-N500"]
)
def test_independence_gates_of_a_correct_race_fail_at_rate_alpha(registry, problem):
    """The correct Racing-Normal (numba, 20000 draws, delta 0.1 where errors are rare, else
    0.05) over 200 seeds: error-independence and pair-independence reject at rate 0.05 with
    uniform p-values."""
    from harness.checks.cases import gates_for

    spec = registry.get("racing-normal")
    target = build_target(problem)
    params = {"delta": 0.1 if problem.startswith("race-long") else 0.05, "exact_answer": True}
    found: dict[str, list[float]] = {}
    for seed in range(200):
        rng = np.random.default_rng([seed, 2024])
        draws = sample(spec, "numba", target, N, rng, **params)
        for r in gates_for(spec, target, draws, 0.05, params):
            if r.gate in ("error-independence", "pair-independence") and r.p_value is not None:
                found.setdefault(r.gate, []).append(r.p_value)
    assert len(found.get("error-independence", ())) >= 150
    for gate, p in found.items():
        _, ks = _calibrated(p)
        assert ks >= 1e-3, (gate, ks)
