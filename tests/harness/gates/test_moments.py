"""Moment gates (MCSE z-tests): correct chains pass, subtly biased ones fail."""

from pathlib import Path

import numpy as np
import pytest

from harness.checks.cases import SAMPLE_SIZES
from harness.gates.moments import (
    enumerated_marginals,
    marginal_moments,
    moment_mean,
    moment_variance,
    z_detectable,
)
from harness.registry import build_registry
from harness.spec import sample
from harness.targets.catalog import build_target

PLUGIN = str(Path(__file__).resolve().parents[2] / "plugins" / "planted_subtle.py")
N = SAMPLE_SIZES["quick"]  # the default verification size (Case.n at level quick)
ALPHA = 1e-4  # a run's family-wise alpha; a gate's share in a run is smaller still


@pytest.fixture(scope="module")
def planted():
    return build_registry([PLUGIN])


@pytest.fixture(scope="module")
def posterior():
    return build_target("studentt-posterior-N500")


def _chain(registry, name, target, n, seed, **params):
    spec = registry.get(name)
    return sample(spec, "reference", target, n, np.random.default_rng(seed), **params).values


def _moments(values, target, alpha=ALPHA):
    return (
        moment_mean(values, target.mean, target.sd, alpha),
        moment_variance(values, target.mean, target.sd**2, alpha),
    )


def test_detectable_is_z_alpha_plus_z_power_times_mcse():
    assert z_detectable(1.0, 0.05) == pytest.approx(2.8016, abs=1e-3)
    assert z_detectable(0.5, 1e-4) == pytest.approx(0.5 * (3.8906 + 0.8416), abs=1e-3)


def test_a_correct_mh_chain_passes_both_moments(planted, posterior):
    # Temperature 1 makes the planted sampler plain random-walk MH.
    x = _chain(planted, "planted-mh-tempered-1.02", posterior, N, 3, temperature=1.0)
    mean, var = _moments(x, posterior)
    assert mean.passed and var.passed
    # What a pass at n = 20000 rules out: about 0.07 sd in the mean, 10% in the variance.
    assert 0.04 < mean.detectable < 0.1 and 0.06 < var.detectable < 0.15


def test_an_exponent_typo_fails_the_variance_gate(planted, posterior):
    # -nu/2 for -(nu + 1)/2: pi^(1/1.25) near the mode, +25% variance; the mean is untouched.
    mean, var = _moments(_chain(planted, "planted-mh-nu-typo", posterior, N, 4), posterior)
    assert mean.passed
    assert not var.passed and var.p_value < 1e-8 and var.statistic > 0.15


def test_an_uncorrected_proposal_drift_fails_the_mean_gate(planted, posterior):
    mean, _ = _moments(_chain(planted, "planted-mh-small-drift", posterior, N, 5), posterior)
    assert not mean.passed and mean.p_value < 1e-6
    assert 0.05 < mean.statistic < 0.15  # about 0.1 posterior sd


# A demonstration of the variance gate's resolution at 48 times the default size (a million
# draws, 7 s); the gate's negative control at the default size is the exponent typo above.
@pytest.mark.slow
def test_tempering_by_1_02_needs_about_24_times_the_default_size(planted, posterior):
    """T = 1.02 moves the variance by 2%. At n = 20000 the gate states that it cannot see
    that (ESS ~ 0.24 n for this MH, so it resolves ~10%); no test could: by the Fisher
    information of pi^(1/T) (1/2 per draw on a Gaussian), power 0.8 at alpha 1e-4 needs
    ESS >= 2 (z + z_power)^2 / 0.02^2 ~ 112,000, i.e. n ~ 24 x 20000 for this MH. At 48x
    (48 lockstep chains laid end to end; power ~0.99) the variance gate rejects it."""
    small = _chain(planted, "planted-mh-tempered-1.02", posterior, N, 6)
    _, var = _moments(small, posterior)
    assert var.detectable > 0.04  # its own statement: 0.02 is below its resolution
    big = _chain(planted, "planted-mh-tempered-1.02", posterior, 48 * N, 7, chains=48)
    mean, var = _moments(big, posterior)
    assert var.detectable < 0.02
    assert not var.passed and var.statistic > 0.01
    assert mean.passed  # tempering a symmetric posterior leaves its mean


def test_moment_gates_fail_stuck_and_non_finite_chains(posterior):
    stuck = np.full(N, posterior.mean + posterior.sd)
    assert not moment_mean(stuck, posterior.mean, posterior.sd, ALPHA).passed
    bad = np.random.default_rng(0).normal(posterior.mean, posterior.sd, 100)
    bad[3] = np.nan
    assert not moment_variance(bad, posterior.mean, posterior.sd**2, ALPHA).passed
    with pytest.raises(ValueError, match="one 1-D chain"):
        moment_mean(np.zeros((10, 2)), 0.0, 1.0, ALPHA)


def test_enumerated_marginals_sum_the_joint():
    target = build_target("fg-random-n3-D3")
    marg = enumerated_marginals(target.pmf, target.n_vars, target.D)
    states = target.states()
    for i in range(target.n_vars):
        for v in range(target.D):
            assert marg[i, v] == pytest.approx(target.pmf[states[:, i] == v].sum(), abs=1e-14)


@pytest.fixture(scope="module")
def fg():
    target = build_target("fg-random-n4-D2")
    return target, enumerated_marginals(target.pmf, target.n_vars, target.D)


def test_marginals_of_gibbs_pass(registry, fg):
    target, marg = fg
    for name, seed in (("gibbs", 1), ("poisson-gibbs", 2)):
        X = sample(registry.get(name), "numba", target, N, np.random.default_rng(seed)).values
        res = marginal_moments(X, marg, ALPHA)
        assert res.passed, res.detail
        assert res.detectable < 0.05


def test_marginals_of_a_gibbs_missing_one_factor_fail(planted, fg):
    target, marg = fg
    X = _chain(planted, "planted-gibbs-drop-last-factor", target, N, 3)
    res = marginal_moments(X, marg, ALPHA)
    assert not res.passed  # p from 1e-7 to 4e-5 over seeds 3-7
    assert 0.02 < res.statistic < 0.08  # a few percent in one marginal


def test_marginals_of_a_potts_model_are_uniform_and_rare_values_are_left_out():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 3, size=(N, 5))
    assert marginal_moments(X, np.full((5, 3), 1 / 3), ALPHA).passed
    skewed = np.where(rng.random((N, 5)) < 0.03, 0, X)  # 3% extra mass on value 0
    assert not marginal_moments(skewed, np.full((5, 3), 1 / 3), ALPHA).passed
    rare = np.array([[1e-5, 1 - 1e-5]] * 5)
    res = marginal_moments(np.ones((N, 5), dtype=int), rare, ALPHA)
    assert res.passed and "too few steps" in res.detail
