"""Error-rate, TV, ESS, invariance and spectral-gap gates, each with a negative control."""

import numpy as np
import pytest

from harness.gates import (
    autocorrelation,
    bulk_ess,
    error_rate,
    ess_rhat,
    invariance,
    spectral_gap,
    spectral_gap_bound,
    tv_estimate,
)


def test_error_rate_clopper_pearson_against_delta():
    assert error_rate(3, 20_000, 1e-3, 1e-4).passed
    assert not error_rate(40, 20_000, 1e-3, 1e-4).passed  # 2e-3 > delta
    assert not error_rate(0, 100, 1e-3, 1e-4).passed  # too few draws to prove 1e-3
    # Unproven but not disproven: the runner may escalate; decisively above delta: it may not.
    assert error_rate(0, 100, 1e-3, 1e-4).escalate_when_failed
    assert error_rate(18, 20_000, 1e-3, 1e-4).escalate_when_failed
    assert not error_rate(40, 20_000, 1e-3, 1e-4).escalate_when_failed
    with pytest.raises(ValueError, match="delta"):
        error_rate(0, 10, 1.5, 0.01)
    with pytest.raises(ValueError, match="errors"):
        error_rate(11, 10, 0.1, 0.01)


def test_tv_interval_covers_truth_and_flags_a_biased_sampler():
    pmf = np.array([0.5, 0.3, 0.2])
    rng = np.random.default_rng(0)
    ok = tv_estimate(rng.choice(3, 50_000, p=pmf), pmf, 1e-3, delta=0.01)
    assert ok.passed and ok.interval[0] <= 0.0 + 1e-12 <= ok.interval[1]
    biased = np.array([0.6, 0.25, 0.15])  # TV = 0.1
    bad = tv_estimate(rng.choice(3, 50_000, p=biased), pmf, 1e-3, delta=0.05)
    assert not bad.passed
    assert bad.interval[0] <= 0.1 <= bad.interval[1]


def ar1(phi, n, chains, seed):
    rng = np.random.default_rng(seed)
    x = np.zeros((chains, n))
    for t in range(1, n):
        x[:, t] = phi * x[:, t - 1] + np.sqrt(1 - phi**2) * rng.standard_normal(chains)
    return x


def test_ess_matches_the_ar1_formula_and_fails_a_sticky_chain():
    x = ar1(0.5, 4000, 4, 1)
    res = ess_rhat(x, min_ess=1000)
    expected = x.size * (1 - 0.5) / (1 + 0.5)  # ESS of AR(1) = n (1 - phi) / (1 + phi)
    assert res.passed
    assert res.statistic == pytest.approx(expected, rel=0.2)
    assert not ess_rhat(ar1(0.995, 4000, 4, 2), min_ess=1000).passed


def test_bulk_ess_is_the_gates_estimate_and_none_when_constant():
    x = ar1(0.5, 4000, 4, 1)
    assert bulk_ess(x) == ess_rhat(x).statistic
    assert bulk_ess(x[0]) == bulk_ess(x[:1])  # one chain as (draws,)
    assert bulk_ess(np.full((4, 100), 2.5)) is None
    with pytest.raises(ValueError, match="chains"):
        bulk_ess(np.zeros((2, 3, 4)))


def test_autocorrelation_of_an_ar1_chain_decays_as_phi_to_the_lag():
    x = ar1(0.5, 20_000, 1, 4)[0]
    rho = autocorrelation(x, lags=3)
    assert len(rho) == 4 and rho[0] == 1.0
    assert rho[1:] == pytest.approx([0.5, 0.25, 0.125], abs=0.03)
    assert len(autocorrelation(x[:50])) == 50
    assert autocorrelation(np.ones(10)) is None and autocorrelation(np.ones(1)) is None
    with pytest.raises(ValueError, match="lags"):
        autocorrelation(x, lags=-1)


def test_rhat_fails_chains_stuck_in_different_places():
    x = ar1(0.3, 1000, 4, 3)
    x[0] += 3.0
    assert not ess_rhat(x, min_ess=10).passed


def metropolis_on_path(pi):
    """Reversible random-walk Metropolis on {0..k-1}."""
    k = pi.size
    P = np.zeros((k, k))
    for i in range(k):
        for j in (i - 1, i + 1):
            if 0 <= j < k:
                P[i, j] = 0.5 * min(1.0, pi[j] / pi[i])
        P[i, i] = 1.0 - P[i].sum()
    return P


def test_invariance_and_spectral_gap_on_exact_kernels():
    pi = np.array([0.1, 0.2, 0.3, 0.4])
    P = metropolis_on_path(pi)
    assert invariance(P, pi, 1e-12).passed
    # Negative control: the acceptance ratio inverted breaks stationarity.
    bad = metropolis_on_path(1.0 / pi / (1.0 / pi).sum())
    assert not invariance(bad, pi, 1e-6).passed
    # Lazy symmetric walk on 2 states: eigenvalues 1 and 1 - 2a.
    a = 0.3
    P2 = np.array([[1 - a, a], [a, 1 - a]])
    assert spectral_gap(P2, np.array([0.5, 0.5])) == pytest.approx(2 * a)
    gap = spectral_gap(P, pi)
    assert spectral_gap_bound(P, pi, 0.9 * gap).passed
    assert not spectral_gap_bound(P, pi, 1.1 * gap).passed
    with pytest.raises(ValueError, match="stochastic"):
        spectral_gap(P * 0.5, pi)
