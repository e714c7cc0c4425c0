"""Poisson-MH (003, Sec. 2 / Thm. 2) and the De Sa et al. 2018 baselines of 003's Table 1
(MIN-Gibbs, MGPMH, DoubleMIN-Gibbs): reference = Numba, exactness, Thm. 2, cost accounting."""

import math

import numpy as np
import pytest

from harness.gates.mcmc import invariance, spectral_gap
from harness.spec import sample
from harness.targets.factor_graph import potts_grid, random_factor_graph
from implementations.minibatch_gibbs import MINIBATCH_GIBBS_FAMILY
from implementations.minibatch_gibbs.exact import (
    metropolis_matrix,
    mgpmh_matrix,
    poisson_mh_matrix,
)
from tests.implementations.minibatch_gibbs.test_minibatch_gibbs import TINY, transition_pvalue

SPECS = {s.name: s for s in MINIBATCH_GIBBS_FAMILY}
NEW = ("poisson-mh", "min-gibbs", "mgpmh", "double-min-gibbs")
PARAMS = {
    "poisson-mh": {"lam": 3.0},
    "min-gibbs": {"lam": 5.0},
    "mgpmh": {"lam": 3.0},
    "double-min-gibbs": {"lam": 3.0, "lam2": 20.0},
}


@pytest.fixture(scope="module")
def tiny():
    return [random_factor_graph(n, D, np.random.default_rng(seed)) for n, D, seed in TINY]


@pytest.fixture(scope="module")
def paper_potts():
    """003, Sec. 4.1: 20x20 fully connected grid, D = 10, beta = 4.6 (L = 5.09, degree 399)."""
    return potts_grid(20, 4.6, 10)


def batch_means_z(chain, target, n_batches: int = 50) -> float:
    """max over states of |empirical pi - pi| / (batch-means standard error): the chain is
    autocorrelated, so the batches (not the steps) are the roughly independent replicates."""
    idx = np.ravel_multi_index(tuple(chain.values.T), (target.D,) * target.n_vars)
    n = idx.size // n_batches * n_batches
    freq = np.stack(
        [np.bincount(b, minlength=target.pmf.size) / b.size for b in idx[:n].reshape(n_batches, -1)]
    )
    se = freq.std(axis=0, ddof=1) / math.sqrt(n_batches)
    return float(np.max(np.abs(freq.mean(axis=0) - target.pmf) / se))


@pytest.mark.parametrize("name", NEW)
@pytest.mark.parametrize("which", ["tiny", "potts"])
def test_reference_and_numba_are_identical(name, which, tiny):
    target = tiny[0] if which == "tiny" else potts_grid(4, 1.0, 3)
    out = []
    for impl in ("reference", "numba"):
        rng = np.random.default_rng(2024)
        out.append((sample(SPECS[name], impl, target, 2000, rng, **PARAMS[name]), rng))
    (a, ra), (b, rb) = out
    np.testing.assert_array_equal(a.values, b.values)
    assert a.evals == b.evals > 0
    assert a.extras.keys() == b.extras.keys()
    for key in a.extras:
        np.testing.assert_array_equal(a.extras[key], b.extras[key])
    assert ra.bit_generator.state == rb.bit_generator.state
    assert len(np.unique(a.values, axis=0)) > 1  # the chain moves


@pytest.mark.parametrize("impl", ["reference", "numba"])
@pytest.mark.parametrize("name", NEW)
@pytest.mark.parametrize("key", ["lam", "lam2"])
@pytest.mark.parametrize("value", [0.0, -1.0, math.nan, math.inf])
def test_bad_sizes_raise_before_work(value, key, name, impl, tiny):
    if key == "lam2" and name != "double-min-gibbs":
        return
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    params = {**PARAMS[name], key: value}
    with pytest.raises(ValueError, match=rf"'{key}'.*valid: a number in \(0"):
        sample(SPECS[name], impl, tiny[0], 10, rng, **params)
    # the implementations check on their own too (called without the spec's validation)
    with pytest.raises(ValueError, match=rf"'{key}'.*valid: a number in \(0"):
        SPECS[name].implementation(impl)(tiny[0], 10, rng, **params)
    assert rng.bit_generator.state == state


@pytest.mark.parametrize("index", range(len(TINY)))
def test_exact_kernels_leave_pi_invariant(index, tiny):
    t = tiny[index]
    assert invariance(metropolis_matrix(t), t.pmf, 1e-14).passed
    for lam in (0.5 * t.L, 2.0 * t.L, t.L**2 + 2.0 * t.L):
        for K in (poisson_mh_matrix(t, lam), mgpmh_matrix(t, lam)):
            assert K.truncation_bound < 1e-14
            # truncation moves each entry by <= tau, hence each residual by <= 2 tau
            res = invariance(K.P, t.pmf, 2 * K.truncation_bound + 1e-14)
            assert res.passed, res.detail


def test_theorem_2_gap_bound_on_a_lam_grid():
    """Thm. 2: gap(Poisson-MH) >= 0.5 exp(-L^2 / (lam + L)) gap(MH, same proposal). Per site the
    rates are lam M / L on A[i] with sum M = m_i <= L, so the global L bounds every site."""
    t = random_factor_graph(3, 3, np.random.default_rng(5), edge_prob=1.0, max_M=3.0)
    gap_mh = spectral_gap(metropolis_matrix(t), t.pmf)
    assert gap_mh > 0
    for mult in (0.25, 1.0, 4.0, 16.0):
        lam = mult * t.L
        ratio = spectral_gap(poisson_mh_matrix(t, lam).P, t.pmf) / gap_mh
        assert ratio >= 0.5 * math.exp(-(t.L**2) / (lam + t.L)) - 1e-12
        assert ratio <= 1.0 + 1e-9  # minibatching never helped here (not a theorem claim)


@pytest.mark.parametrize("name", ["poisson-mh", "mgpmh"])
def test_chain_transitions_follow_the_exact_kernel(name, tiny):
    t = tiny[0]
    lam = 2.0 * t.L
    P = (poisson_mh_matrix if name == "poisson-mh" else mgpmh_matrix)(t, lam).P
    c = sample(SPECS[name], "numba", t, 200_000, np.random.default_rng(3), lam=lam)
    assert transition_pvalue(c, t, P) > 1e-4


@pytest.mark.parametrize("name", NEW)
@pytest.mark.parametrize("index", range(len(TINY)))
def test_long_run_marginal_matches_the_enumerated_joint(name, index, tiny):
    """MIN-Gibbs and DoubleMIN keep a continuous estimate in their state (no finite matrix), so
    their exactness is checked on 1e6 steps; small minibatches make any bias largest."""
    t = tiny[index]
    params = {"lam": 2.0, "lam2": 2.0} if name == "double-min-gibbs" else {"lam": 2.0}
    c = sample(SPECS[name], "numba", t, 1_000_000, np.random.default_rng(3), **params)
    assert batch_means_z(c, t) < 5.0


def test_evaluation_counts_and_minibatch_sizes(tiny):
    t = tiny[1]
    n = 20_000
    rng = np.random.default_rng(1)
    pmh = sample(SPECS["poisson-mh"], "numba", t, n, rng, lam=4.0)
    ex = pmh.extras
    assert pmh.evals == ex["draws_per_step"].sum() + 2 * ex["factors_per_step"].sum()
    assert np.all(ex["factors_per_step"] <= ex["kept_per_step"])
    assert np.all(ex["kept_per_step"] <= ex["draws_per_step"])

    lam = 3.0
    mg = sample(SPECS["min-gibbs"], "numba", t, n, rng, lam=lam)
    # D - 1 fresh global minibatches of size ~ Poisson(lam) per step
    sd = math.sqrt((t.D - 1) * lam / n)
    assert abs(mg.extras["factors_per_step"].mean() - (t.D - 1) * lam) < 5 * sd

    mh = sample(SPECS["mgpmh"], "numba", t, n, rng, lam=lam)
    ex = mh.extras
    assert mh.evals == t.D * ex["factors_per_step"].sum() + 2 * ex["exact_per_step"].sum()
    assert set(np.unique(ex["exact_per_step"])) <= {0, *np.diff(t.adj_indptr).tolist()}

    lam2 = 7.0
    dm = sample(SPECS["double-min-gibbs"], "numba", t, n, rng, lam=lam, lam2=lam2)
    ex = dm.extras
    second = ex["second_per_step"]
    assert abs(second.mean() - lam2) < 5 * math.sqrt(lam2 / n)  # one Poisson(lam2) per step
    assert dm.evals >= t.D * ex["factors_per_step"].sum() + second.sum()


def test_local_minibatches_on_the_paper_potts_model(paper_potts):
    """003's Potts model (L = 5.09, degree 399) with lam = L^2: Poisson-MH and MGPMH touch few
    factors, but MGPMH's exact correction still costs 2 |A[i]| (<= 798) whenever v != x(i)."""
    t = paper_potts
    lam = t.L**2
    n = 5000
    pmh = sample(SPECS["poisson-mh"], "numba", t, n, np.random.default_rng(11), lam=lam)
    assert pmh.extras["draws_per_step"].mean() <= lam + t.L
    assert pmh.evals / n < 0.1 * 2 * t.delta  # plain single-site MH: 2 |A[i]| = 798
    mg = sample(SPECS["mgpmh"], "numba", t, n, np.random.default_rng(11), lam=lam)
    assert mg.extras["factors_per_step"].mean() < 0.1 * t.delta
    exact = mg.extras["exact_per_step"]
    assert set(np.unique(exact)) <= {0, *np.diff(t.adj_indptr).tolist()}  # 0 or |A[i]|
    assert mg.evals / n > exact.mean() * 2 > 0
