"""SBC's plot: each parameter's rank-PIT ECDF difference with its band, and its false-pass rate;
a posterior too narrow leaves the band in the U shape SBC readers know."""

from __future__ import annotations

import numpy as np

from harness.gates.power import ks_false_pass
from harness.gates.sbc import sbc_pit, sbc_uniformity
from tests.harness.gates.test_sbc import exact_posterior, simulate


def _pits(sd_factor: float, seed: int = 0) -> np.ndarray:
    posterior = lambda d, n, r: exact_posterior(d, n, r, sd_factor=sd_factor)  # noqa: E731
    pits, _ = sbc_pit(simulate, posterior, 300, 100, np.random.default_rng(seed), mcmc=False)
    return pits


def test_a_correct_posterior_keeps_every_parameter_inside_its_band():
    got = sbc_uniformity(_pits(1.0), 1e-3, names=["mu[0]", "mu[1]"])
    assert got.passed and [b.label for b in got.ecdf] == ["mu[0]", "mu[1]"]
    assert all(b.n == 300 and b.exits().size == 0 for b in got.ecdf)
    # The Holm share alpha / d is what a bug in one parameter has to beat.
    assert got.false_pass == ks_false_pass(300, 1e-3 / 2, measure=got.detectable_measure)


def test_a_posterior_too_narrow_leaves_the_band_above_then_below():
    got = sbc_uniformity(_pits(0.6), 1e-3)
    assert not got.passed
    for b in got.ecdf:
        d, exits = np.asarray(b.diff), b.exits()
        assert exits.size > 0
        # True values fall outside a narrow posterior: ranks pile up at both ends, so the
        # ECDF rises fast (above u) and ends slowly (below u).
        u = b.grid[exits]
        assert np.all(d[exits][u < 0.4] > 0) and np.all(d[exits][u > 0.6] < 0)
