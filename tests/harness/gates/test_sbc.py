"""Simulation-based calibration: a correct posterior passes and a wrong one fails, drawn
independently or as an autocorrelated chain."""

from __future__ import annotations

import numpy as np
import pytest

from harness.gates.sbc import sbc_pit, sbc_uniformity

SIGMA, PRIOR_SD, N_DATA = 2.0, 1.0, 10


def simulate(rng):
    mu = rng.normal(0.0, PRIOR_SD, size=2)
    return mu, rng.normal(mu, SIGMA, size=(N_DATA, 2))


def _moments(data):
    precision = 1.0 / PRIOR_SD**2 + N_DATA / SIGMA**2
    return data.sum(axis=0) / SIGMA**2 / precision, 1.0 / np.sqrt(precision)


def exact_posterior(data, n, rng, sd_factor=1.0):
    mean, sd = _moments(data)
    return rng.normal(mean, sd * sd_factor, size=(n, 2))


def ar_posterior(data, n, rng, rho=0.95, sd_factor=1.0):
    """The posterior's law (sd times sd_factor) as an AR(1) chain: correlated draws."""
    mean, sd = _moments(data)
    z = np.empty((n, 2))
    z[0] = rng.standard_normal(2)
    e = rng.standard_normal((n, 2)) * np.sqrt(1 - rho**2)
    for i in range(1, n):
        z[i] = rho * z[i - 1] + e[i]
    return mean + sd * sd_factor * z


def _gate(posterior, mcmc, seed=0, replications=300, n=200):
    pits, kept = sbc_pit(simulate, posterior, replications, n, np.random.default_rng(seed), mcmc)
    return sbc_uniformity(pits, 1e-3, kept)


def test_a_correct_posterior_passes_and_states_what_it_could_detect():
    got = _gate(exact_posterior, mcmc=False)
    assert got.passed and got.gate == "sbc" and got.n == 300
    assert 0.05 < got.detectable < 0.2 and "Holm" in got.detail


def test_a_posterior_too_narrow_fails():
    got = _gate(lambda d, n, r: exact_posterior(d, n, r, sd_factor=0.7), mcmc=False)
    assert not got.passed and got.p_value < 1e-3


def test_a_correct_chain_passes_after_thinning_and_a_narrow_one_fails():
    good = _gate(ar_posterior, mcmc=True)
    assert good.passed
    kept = int(good.detail.rsplit("median ", 1)[1])
    assert 2 <= kept <= 40  # rho = 0.95 over 200 steps: an effective sample of about 5
    assert not _gate(lambda d, n, r: ar_posterior(d, n, r, sd_factor=0.6), mcmc=True).passed


def test_bad_shapes_are_value_errors():
    with pytest.raises(ValueError, match=r"valid: \(50, 2\)"):
        sbc_pit(simulate, lambda d, n, r: np.zeros((n, 3)), 5, 50, np.random.default_rng(0))
    with pytest.raises(ValueError, match="replications >= 2"):
        sbc_uniformity(np.zeros((1, 2)), 0.01)


def log_density(data, thetas):
    """log p(theta | data) of the conjugate model, up to a constant: the SBC test quantity."""
    mean, sd = _moments(data)
    return -0.5 * np.sum(((thetas - mean) / sd) ** 2, axis=1)


def test_the_log_density_ranks_a_posterior_too_wide_that_each_coordinate_misses():
    # 1.4x too wide in each of 2 coordinates: each coordinate's rank law is off by less than
    # 100 replications resolve at 1e-3 (Holm p 0.005-0.02 over seeds 3-6), while the true
    # theta's log density sits above most draws' in every data set (p 1e-12 to 3e-5).
    wide = lambda d, n, r: exact_posterior(d, n, r, sd_factor=1.4)  # noqa: E731
    rng = np.random.default_rng(3)
    pits, kept = sbc_pit(simulate, wide, 100, 200, rng, False, statistic=log_density)
    assert pits.shape == (100, 3)
    per_coordinate = sbc_uniformity(pits[:, :2], 1e-3, kept[:, :2])
    with_density = sbc_uniformity(pits, 1e-3, kept, ["mu0", "mu1", "log p"])
    assert per_coordinate.passed
    assert not with_density.passed and "worst log p" in with_density.detail


def test_the_log_density_column_passes_a_correct_posterior():
    rng = np.random.default_rng(4)
    pits, kept = sbc_pit(simulate, exact_posterior, 200, 200, rng, False, statistic=log_density)
    assert sbc_uniformity(pits, 1e-3, kept).passed
