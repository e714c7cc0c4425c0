"""Typed factors and the truncated Gaussian mixture target (003, Sec. 4.3): bounds, tempering,
bad input, and reference vs Numba equality of the continuous samplers on it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from harness.targets.continuous_factor_graph import (
    BILINEAR,
    MIXTURE,
    QUADRATIC,
    ContinuousFactorGraphTarget,
    bilinear,
    factor_value,
    factor_values,
)
from harness.targets.gaussian_mixture import (
    PAPER_L,
    energy,
    gaussian_mixture_target,
    loglik_range,
    mixture_data,
    posterior_bins,
)
from implementations.minibatch_gibbs import continuous_fast, continuous_reference


@pytest.fixture(scope="module")
def small() -> ContinuousFactorGraphTarget:
    # 20 data, L = 30: cheap enough for the Python reference, still two-moded.
    return gaussian_mixture_target(mixture_data(20, np.random.default_rng(3)), 30.0)


def test_tempering_hits_the_requested_L() -> None:
    y = mixture_data(2_000, np.random.default_rng(0))
    t = gaussian_mixture_target(y)
    assert t.L == pytest.approx(PAPER_L, abs=1e-9)
    assert t.psi == pytest.approx(PAPER_L, abs=1e-9)  # every factor touches both variables
    assert t.n_factors == 2_001 and t.n_vars == 2
    assert t.types[-1] == QUADRATIC and np.all(t.types[:-1] == MIXTURE)
    meta = t.meta
    assert meta["n_eff"] == pytest.approx(meta["tau"] * 2_000)
    assert meta["untempered_L"] > 10 * PAPER_L  # why tempering is needed at all
    assert t.M[-1] == pytest.approx(0.5 * 36 / 10 + 0.5 * 36)  # prior range over [-6, 6]^2


@pytest.mark.parametrize("y", [-25.0, -13.0, -7.0, -3.0, 0.0, 0.7, 2.9, 5.5, 6.5, 11.0, 30.0])
def test_loglik_range_matches_a_dense_grid(y: float) -> None:
    g = np.linspace(-6.0, 6.0, 1201)
    u, w = np.meshgrid(g, g, indexing="ij")
    vals = np.logaddexp(-0.25 * (y - u) ** 2, -0.25 * (y - u - w) ** 2)
    lo, hi = loglik_range(np.array([y]), 0.25, -6.0, 6.0)
    assert lo[0] <= vals.min() + 1e-12 and vals.min() - lo[0] < 1e-4
    assert hi[0] >= vals.max() - 1e-12 and hi[0] - vals.max() < 1e-4


def test_factors_stay_in_bounds_on_a_fine_grid(small) -> None:
    g = np.linspace(-6.0, 6.0, 301)
    u, w = (v.reshape(-1, 1) for v in np.meshgrid(g, g, indexing="ij"))
    vals = factor_values(small.types, small.coefs, u, w)
    assert vals.min() >= 0.0
    assert np.all(vals <= small.M)
    assert np.all(vals.max(axis=0) > 0.99 * small.M)  # the bounds are tight, not loose


def test_scalar_and_vector_factor_values_agree() -> None:
    rng = np.random.default_rng(1)
    coefs = rng.normal(size=(30, 4))
    coefs[10:20, 1] = np.abs(coefs[10:20, 1])  # mixture q > 0
    types = np.repeat([BILINEAR, MIXTURE, QUADRATIC], 10)
    u, w = rng.uniform(-6, 6, size=2)
    vec = factor_values(types, coefs, u, w)
    for f in range(30):
        c = [float(v) for v in coefs[f]]
        assert factor_value(int(types[f]), *c, u, w) == pytest.approx(vec[f], rel=1e-12)
        if types[f] == BILINEAR:
            assert factor_value(BILINEAR, *c, u, w) == bilinear(*c, u, w)


def test_energy_matches_log_unnormalised(small) -> None:
    x = np.random.default_rng(2).uniform(-6, 6, size=(50, 2))
    np.testing.assert_allclose(energy(small, x[:, 0], x[:, 1]), small.log_unnormalised(x))


def test_bad_input() -> None:
    y = np.array([0.0, 1.0])
    with pytest.raises(ValueError, match="a < b"):
        gaussian_mixture_target(y, a=6.0, b=-6.0)
    with pytest.raises(ValueError, match="a < b"):
        gaussian_mixture_target(y, a=1.0, b=1.0)
    with pytest.raises(ValueError, match="non-empty"):
        gaussian_mixture_target(np.array([]))
    with pytest.raises(ValueError, match="finite"):
        gaussian_mixture_target(np.array([0.0, np.nan]))
    with pytest.raises(ValueError, match="M_prior"):
        gaussian_mixture_target(y, L=10.0)
    with pytest.raises(ValueError, match="integer"):
        mixture_data(0, np.random.default_rng(0))


def _mixture_graph(scale_m: float = 1.0, shift: float = 0.0, types=None):
    t = gaussian_mixture_target(np.array([0.5, -1.0, 2.0]), 60.0)
    coefs = np.array(t.coefs)
    coefs[:-1, 3] += shift
    return ContinuousFactorGraphTarget(
        2, t.a, t.b, t.scopes, coefs, t.M * scale_m, types=t.types if types is None else types
    )


def test_factor_outside_its_bound_is_rejected() -> None:
    _mixture_graph()  # the unmodified one is fine
    with pytest.raises(ValueError, match=r"mixture.*within \[0, M"):
        _mixture_graph(scale_m=0.5)  # M too small
    with pytest.raises(ValueError, match=r"mixture.*within \[0, M"):
        _mixture_graph(shift=1.0)  # shifted below 0
    with pytest.raises(ValueError, match="types"):
        _mixture_graph(types=np.full(4, 7))
    with pytest.raises(ValueError, match="types has shape"):
        _mixture_graph(types=np.zeros(3, dtype=np.int64))


RUNS = [
    ("its", True, {"lam": 20.0, "m": 20}),
    ("da", True, {"lam": 20.0, "m": 20, "k": 25}),
    ("its", False, {"m": 20}),
    ("da", False, {"m": 20, "k": 25}),
    ("rejection", False, {}),
    ("rejection", True, {"lam": 20.0}),
    ("rejection", False, {"max_proposals": 30, "envelope": 27.0}),
    ("rejection", True, {"lam": 20.0, "max_proposals": 5}),
]


@pytest.mark.parametrize(("method", "poisson", "params"), RUNS)
def test_reference_and_numba_are_identical_on_the_mixture(small, method, poisson, params) -> None:
    out = []
    for impl in (continuous_reference, continuous_fast):
        rng = np.random.default_rng(41)
        out.append((impl.run(small, 150, rng, None, method, poisson, **params), rng))
    (a, ra), (b, rb) = out
    np.testing.assert_array_equal(a.values, b.values)
    assert a.evals == b.evals > 0
    assert a.extras.keys() == b.extras.keys()
    for key in a.extras:
        np.testing.assert_array_equal(a.extras[key], b.extras[key])
    assert ra.bit_generator.state == rb.bit_generator.state
    assert len(np.unique(a.values[:, 0])) > 5  # the chain moves
    if "max_proposals" in params:
        assert "accepted" in a.extras
        capped = a.extras["proposals_per_step"] == params["max_proposals"]
        assert np.any(capped & (a.extras["accepted"] == 0))  # the cap was reached and kept x


def test_bad_budget_options(small) -> None:
    for impl in (continuous_reference, continuous_fast):
        with pytest.raises(ValueError, match="max_proposals"):
            impl.run(small, 2, np.random.default_rng(0), None, "rejection", False, max_proposals=-1)
        for envelope in (-math.inf, math.nan):
            with pytest.raises(ValueError, match="envelope"):
                impl.run(
                    small, 2, np.random.default_rng(0), None, "rejection", False, envelope=envelope
                )
        # +inf, the registered default, is no envelope: the exact bound.
        runs = [
            impl.run(small, 5, np.random.default_rng(3), None, "rejection", False, envelope=e)
            for e in (None, math.inf)
        ]
        np.testing.assert_array_equal(runs[0].values, runs[1].values)


def test_pgda_matches_the_quadrature_posterior(small) -> None:
    # 003 Sec. 4.3 settings except lambda (L = 30 here); exactness shows as a small TV.
    probs, _, _ = posterior_bins(small, 12, 6)
    chain = continuous_fast.run(
        small, 60_000, np.random.default_rng(9), None, "da", True, lam=20.0, m=20, k=25
    )
    idx = np.clip(((chain.values[1000:] + 6.0) / 12.0 * 12).astype(int), 0, 11)
    counts = np.zeros((12, 12))
    np.add.at(counts, (idx[:, 0], idx[:, 1]), 1.0)
    tv = 0.5 * np.abs(counts / counts.sum() - probs).sum()
    assert tv < 0.04
    # Without the MH correction the kernel is biased (negative control of the same check).
    biased = continuous_fast.run(
        small, 60_000, np.random.default_rng(9), None, "da", True, lam=20.0, m=2, k=2, mh=False
    )
    idx = np.clip(((biased.values[1000:] + 6.0) / 12.0 * 12).astype(int), 0, 11)
    counts = np.zeros((12, 12))
    np.add.at(counts, (idx[:, 0], idx[:, 1]), 1.0)
    assert 0.5 * np.abs(counts / counts.sum() - probs).sum() > 0.1


@pytest.mark.slow
def test_paper_size_target_has_paper_L() -> None:
    t = gaussian_mixture_target(mixture_data(1_000_000, np.random.default_rng(0)))
    assert t.L == pytest.approx(PAPER_L, abs=1e-6)
    assert 50.0 < t.meta["n_eff"] < 200.0
