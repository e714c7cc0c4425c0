"""Gibbs and Poisson-Gibbs (003, Alg. 1-2): reference = Numba, exact invariance, Thm. 1, cost."""

import math

import numpy as np
import pytest
from scipy.stats import chi2

from harness.gates.mcmc import invariance, spectral_gap
from harness.spec import sample
from harness.targets.factor_graph import potts_grid, random_factor_graph
from implementations.minibatch_gibbs import MINIBATCH_GIBBS_FAMILY
from implementations.minibatch_gibbs.exact import gibbs_matrix, poisson_gibbs_matrix

SPECS = {s.name: s for s in MINIBATCH_GIBBS_FAMILY}
#: Tiny graphs with enumerable state spaces: (n, D, seed).
TINY = ((3, 3, 1), (4, 2, 2))


@pytest.fixture(scope="module")
def tiny():
    return [random_factor_graph(n, D, np.random.default_rng(seed)) for n, D, seed in TINY]


@pytest.fixture(scope="module")
def paper_potts():
    """003, Sec. 4.1: 20x20 fully connected grid, D = 10, beta = 4.6 (L = 5.09, degree 399)."""
    return potts_grid(20, 4.6, 10)


def run_both(spec, target, n_steps, seed, **params):
    out = []
    for impl in ("reference", "numba"):
        rng = np.random.default_rng(seed)
        out.append((sample(spec, impl, target, n_steps, rng, **params), rng))
    return out


def transition_pvalue(chain, target, P):
    """Chi-square of one-step transition counts against P, cells with expectation > 5."""
    idx = np.ravel_multi_index(tuple(chain.values.T), (target.D,) * target.n_vars)
    counts = np.zeros_like(P)
    np.add.at(counts, (idx[:-1], idx[1:]), 1.0)
    expected = counts.sum(axis=1, keepdims=True) * P
    cells = expected > 5.0
    assert np.all(counts[P == 0.0] == 0)  # transitions impossible under P never occur
    stat = float(np.sum((counts[cells] - expected[cells]) ** 2 / expected[cells]))
    return float(chi2.sf(stat, int(cells.sum() - P.shape[0])))


@pytest.mark.parametrize(("name", "params"), [("gibbs", {}), ("poisson-gibbs", {"lam": 3.0})])
@pytest.mark.parametrize("which", ["tiny", "potts"])
def test_reference_and_numba_are_identical(name, params, which, tiny, paper_potts):
    target = tiny[0] if which == "tiny" else paper_potts
    steps = 3000 if which == "tiny" else 300
    if which == "potts" and name == "poisson-gibbs":
        params = {"lam": paper_potts.L**2}
    (a, ra), (b, rb) = run_both(SPECS[name], target, steps, 2024, **params)
    np.testing.assert_array_equal(a.values, b.values)
    assert a.evals == b.evals > 0
    assert a.extras.keys() == b.extras.keys()
    for key in a.extras:
        np.testing.assert_array_equal(a.extras[key], b.extras[key])
    assert ra.bit_generator.state == rb.bit_generator.state
    assert len(np.unique(a.values, axis=0)) > 1  # the chain moves


def test_x0_is_used_and_checked(tiny):
    t = tiny[0]
    spec = SPECS["poisson-gibbs"]
    x0 = np.array([2, 1, 0])
    for impl in ("reference", "numba"):
        c = spec.implementation(impl)(t, 1, np.random.default_rng(0), x0=x0, lam=2.0)
        assert np.sum(c.values[0] != x0) <= 1
        with pytest.raises(ValueError, match=r"valid: values in 0..2"):
            spec.implementation(impl)(t, 1, np.random.default_rng(0), x0=[0, 3, 0])
        with pytest.raises(ValueError, match="valid: 3 integers"):
            spec.implementation(impl)(t, 1, np.random.default_rng(0), x0=[0, 1])


@pytest.mark.parametrize("lam", [0.0, -1.0, math.nan, math.inf, "big"])
def test_bad_lam_raises_before_work(lam, tiny):
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    with pytest.raises(ValueError, match="'lam'"):
        sample(SPECS["poisson-gibbs"], "numba", tiny[0], 10, rng, lam=lam)
    assert rng.bit_generator.state == state


def test_evals_count_draws_and_minibatch(tiny):
    t = tiny[1]
    c = sample(SPECS["poisson-gibbs"], "numba", t, 500, np.random.default_rng(1), lam=4.0)
    ex = c.extras
    assert c.evals == t.D * ex["factors_per_step"].sum() + ex["draws_per_step"].sum()
    assert np.all(ex["factors_per_step"] <= ex["kept_per_step"])
    assert np.all(ex["kept_per_step"] <= ex["draws_per_step"])
    g = sample(SPECS["gibbs"], "numba", t, 500, np.random.default_rng(1))
    assert g.evals == t.D * g.extras["factors_per_step"].sum()


@pytest.mark.parametrize("index", range(len(TINY)))
def test_exact_kernels_leave_pi_invariant(index, tiny):
    t = tiny[index]
    assert invariance(gibbs_matrix(t), t.pmf, 1e-14).passed
    for lam in (0.5 * t.L, 2.0 * t.L, t.L**2 + 2.0 * t.L):
        K = poisson_gibbs_matrix(t, lam)
        assert K.truncation_bound < 1e-14
        # |P_trunc - P| <= tau entrywise moves both residuals by <= 2 tau; 1e-14 covers rounding
        res = invariance(K.P, t.pmf, 2 * K.truncation_bound + 1e-14)
        assert res.passed, res.detail


@pytest.mark.parametrize("variant", ["no-phi-rate", "no-multiplicity"])
@pytest.mark.parametrize("index", range(len(TINY)))
def test_planted_bugs_break_invariance(variant, index, tiny):
    t = tiny[index]
    K = poisson_gibbs_matrix(t, 2.0 * t.L, variant=variant)
    res = invariance(K.P, t.pmf, 2 * K.truncation_bound + 1e-14)
    assert not res.passed
    assert res.statistic > 1e-5  # far above the tolerance, not a rounding accident


def test_theorem_1_gap_bound_on_a_lam_grid():
    """Thm. 1: for lam >= 2L, gap(Poisson-Gibbs) >= exp(-4 L^2 / lam) gap(Gibbs)."""
    t = random_factor_graph(3, 3, np.random.default_rng(5), edge_prob=1.0, max_M=3.0)
    gap_gibbs = spectral_gap(gibbs_matrix(t), t.pmf)
    assert gap_gibbs > 0
    for mult in (2.0, 4.0, 8.0, 16.0):
        lam = mult * t.L
        K = poisson_gibbs_matrix(t, lam)
        ratio = spectral_gap(K.P, t.pmf) / gap_gibbs
        assert ratio >= math.exp(-4.0 * t.L**2 / lam) - 1e-12
        assert ratio <= 1.0 + 1e-9  # minibatching never helped here (not a theorem claim)


@pytest.mark.parametrize("name", ["gibbs", "poisson-gibbs"])
def test_chain_transitions_follow_the_exact_kernel(name, tiny):
    """One-step transition counts of the compiled chain against the exact P (chi-square)."""
    t = tiny[0]
    lam = 2.0 * t.L
    P = gibbs_matrix(t) if name == "gibbs" else poisson_gibbs_matrix(t, lam).P
    params = {} if name == "gibbs" else {"lam": lam}
    c = sample(SPECS[name], "numba", t, 200_000, np.random.default_rng(3), **params)
    assert transition_pvalue(c, t, P) > 1e-4


def test_factors_per_step_is_order_lam_plus_L(paper_potts):
    """Statement 1 on 003's Potts model. Per step at site i, B ~ Poisson((lam/L + 1) m_i) with
    m_i = sum_{A[i]} M_phi <= L, and E[sum_phi s_phi | x] = sum_{A[i]} lam M_phi / L + phi(x),
    between lam m_i / L and lam + L."""
    t = paper_potts
    lam = t.L**2
    n = 20_000
    c = sample(SPECS["poisson-gibbs"], "numba", t, n, np.random.default_rng(11), lam=lam)
    B, kept = c.extras["draws_per_step"], c.extras["kept_per_step"]
    rates = (lam / t.L + 1.0) * t.m_sum
    mean_B = rates.mean()
    sd_B = math.sqrt((rates.mean() + rates.var()) / n)
    assert abs(B.mean() - mean_B) < 5 * sd_B
    assert B.mean() <= lam + t.L
    assert lam * t.m_sum.mean() / t.L - 5 * sd_B < kept.mean() < lam + t.L
    # the whole point: far fewer factors than the degree (399) plain Gibbs evaluates
    assert c.extras["factors_per_step"].mean() < 0.05 * t.delta
    assert c.evals / n < 0.05 * t.D * t.delta


@pytest.mark.parametrize("variant", ["no-phi-rate", "no-multiplicity"])
def test_transition_check_has_power_against_planted_bugs(variant, tiny):
    """The chi-square above must reject the correct chain against a buggy kernel's P."""
    t = tiny[0]
    lam = 0.5 * t.L  # small lam: the planted bugs move P the most
    P = poisson_gibbs_matrix(t, lam, variant=variant).P
    c = sample(SPECS["poisson-gibbs"], "numba", t, 200_000, np.random.default_rng(4), lam=lam)
    assert transition_pvalue(c, t, P) < 1e-6


@pytest.mark.parametrize("name", sorted(SPECS))
def test_thin_keeps_every_thin_th_state_and_all_step_costs(name, tiny):
    """thin = 3 stores states 3, 6, ... of the same chain; extras and evals stay per step."""
    target = tiny[0]
    params = {"lam": 20.0} if "lam" in {p.name for p in SPECS[name].params} else {}
    for impl in ("reference", "numba"):
        full = sample(SPECS[name], impl, target, 30, np.random.default_rng(5), **params)
        thinned = sample(SPECS[name], impl, target, 30, np.random.default_rng(5), thin=3, **params)
        np.testing.assert_array_equal(thinned.values, full.values[2::3])
        assert thinned.evals == full.evals
        for key, value in full.extras.items():
            np.testing.assert_array_equal(thinned.extras[key], value)


@pytest.mark.parametrize("thin", [0, -2, 2.5, True, 31])
def test_bad_thin_raises_before_work(thin, tiny):
    for impl in ("reference", "numba"):
        with pytest.raises(ValueError, match="thin"):
            sample(SPECS["poisson-gibbs"], impl, tiny[0], 30, np.random.default_rng(0), thin=thin)
