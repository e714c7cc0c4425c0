"""Exactness gates: each positive case has a planted-bug negative control beside it."""

import numpy as np
import pytest
from scipy import stats

from harness.gates import chisquare_2samp, chisquare_gof, ks_1samp, ks_2samp, pool_cells

PMF = np.array([0.4, 0.25, 0.15, 0.1, 0.06, 0.03, 0.01])


def draws(pmf, n, seed):
    return np.random.default_rng(seed).choice(pmf.size, size=n, p=pmf)


def test_chisquare_passes_a_correct_sampler_and_rejects_a_tempered_one():
    assert chisquare_gof(draws(PMF, 20_000, 1), PMF, 1e-4).passed
    hot = PMF ** (1 / 1.2)
    hot /= hot.sum()
    bad = chisquare_gof(draws(hot, 20_000, 1), PMF, 1e-4)
    assert not bad.passed and bad.p_value < 1e-10


def test_chisquare_reports_what_it_could_detect():
    small = chisquare_gof(draws(PMF, 1_000, 2), PMF, 0.01)
    large = chisquare_gof(draws(PMF, 100_000, 2), PMF, 0.01)
    assert 0 < large.detectable < small.detectable < 1
    assert large.detectable_measure == "Cohen's w"


def test_chisquare_rejects_draws_outside_the_domain():
    vals = draws(PMF, 1000, 3)
    vals[5] = PMF.size
    assert not chisquare_gof(vals, PMF, 1e-4).passed


def test_pooling_makes_every_cell_expect_at_least_five():
    exp = np.array([100.0, 3.0, 1.0, 0.5, 50.0, 2.0, 0.2])
    labels = pool_cells(exp)
    pooled = np.bincount(labels, weights=exp)
    assert pooled.min() >= 5.0
    assert pooled.sum() == pytest.approx(exp.sum())


def test_ks_against_exact_cdf_and_a_shifted_control():
    rng = np.random.default_rng(4)
    x = rng.gumbel(size=5000)
    cdf = stats.gumbel_r.cdf
    assert ks_1samp(x, cdf, 1e-4).passed
    assert not ks_1samp(x + 0.15, cdf, 1e-4).passed
    assert not ks_1samp(np.append(x, np.nan), cdf, 1e-4).passed


def test_ks_detectable_shrinks_like_one_over_root_n():
    cdf = stats.norm.cdf
    a = ks_1samp(np.random.default_rng(0).standard_normal(400), cdf, 0.01).detectable
    b = ks_1samp(np.random.default_rng(0).standard_normal(40_000), cdf, 0.01).detectable
    assert a / b == pytest.approx(10, rel=0.15)


def test_two_sample_gates_and_controls():
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal(4000), rng.standard_normal(4000)
    assert ks_2samp(a, b, 1e-4).passed
    assert not ks_2samp(a, b + 0.3, 1e-4).passed
    da, db = draws(PMF, 10_000, 6), draws(PMF, 10_000, 7)
    assert chisquare_2samp(da, db, PMF.size, 1e-4).passed
    flat = np.full(PMF.size, 1 / PMF.size)
    assert not chisquare_2samp(da, draws(flat, 10_000, 8), PMF.size, 1e-4).passed


def test_ks_keeps_scipy_s_verdict_and_adds_its_band_and_power():
    rng = np.random.default_rng(9)
    cdf = stats.gumbel_r.cdf
    for x in (rng.gumbel(size=3000), rng.gumbel(size=12_000)):  # exact and asymptotic p
        got = ks_1samp(x, cdf, 1e-3)
        ref = stats.ks_1samp(x, cdf, method="exact" if x.size <= 10_000 else "asymp")
        assert got.statistic == ref.statistic and got.p_value == ref.pvalue
        (band,) = got.ecdf
        assert band.n == x.size and band.label == "ks" and band.exits().size == 0
        assert abs(band.peak) == pytest.approx(got.statistic, abs=1e-6)
        assert got.false_pass.bound and got.false_pass.effect == 0.05
    # Negative control: a shifted sample fails and its band marks where.
    bad = ks_1samp(rng.gumbel(size=3000) + 0.15, cdf, 1e-3)
    assert not bad.passed and bad.ecdf[0].exits().size > 0
    assert bad.to_dict()["ecdf"][0]["n"] == 3000  # records carry the summary as plain data


def test_ks_on_non_finite_draws_fails_without_a_band():
    res = ks_1samp(np.array([0.1, np.inf, 0.3]), stats.norm.cdf, 0.01, name="ks-x")
    assert not res.passed and res.ecdf == () and res.false_pass is not None


def test_chisquare_states_its_false_pass_rate():
    res = chisquare_gof(draws(PMF, 20_000, 11), PMF, 1e-4)
    assert res.false_pass.measure == "Cohen's w" and res.false_pass.effect == 0.1
    # At n = 20000 a law at w = 0.1 is caught almost surely; at n = 300 mostly missed.
    assert res.false_pass.rate < 1e-6
    assert chisquare_gof(draws(PMF, 300, 11), PMF, 1e-4).false_pass.rate > 0.5


def test_a_result_rebuilt_from_its_dict_keeps_its_band_and_power_typed():
    from harness.gates.result import GateResult

    res = ks_1samp(np.random.default_rng(12).random(500), lambda u: u, 0.01)
    again = GateResult(**{**res.to_dict(), "gate": "renamed"})
    assert again.ecdf == res.ecdf and again.false_pass == res.false_pass
    assert again.to_dict() == {**res.to_dict(), "gate": "renamed"}
