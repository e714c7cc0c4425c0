"""Gates for chains on continuous factor graphs: exact draws and the registered-style samplers
pass, shifted chains and PGDA without its MH step fail."""

import dataclasses
import itertools

import numpy as np
import pytest
from scipy import integrate

from harness.gates.continuous_chain import (
    continuous_factor_graph_gates,
    gibbs_step_pit,
    linear_coefficients,
    log_density,
    reflection_symmetric,
    truncated_exp_cdf,
)
from harness.spec import Chain, sample
from harness.targets.continuous_factor_graph import (
    ContinuousFactorGraphTarget,
    continuous_spin_grid,
    tiny_continuous_graph,
)
from harness.targets.gaussian_mixture import gaussian_mixture_target
from implementations.minibatch_gibbs import continuous_fast
from implementations.minibatch_gibbs.continuous import CONTINUOUS_FAMILY

SPECS = {s.name: s for s in CONTINUOUS_FAMILY}
ALPHA = 1e-3
STEPS = 20_000


def gates(target, values: np.ndarray, name: str = "pgda") -> dict:
    chain = Chain(np.asarray(values), 0)
    return {r.gate: r for r in continuous_factor_graph_gates(SPECS[name], target, chain, ALPHA, {})}


@pytest.fixture(scope="module")
def tiny() -> ContinuousFactorGraphTarget:
    return tiny_continuous_graph()


@pytest.fixture(scope="module")
def exact(tiny) -> np.ndarray:
    return tiny.exact_draws(STEPS, np.random.default_rng(1))


@pytest.fixture(scope="module")
def symmetric() -> ContinuousFactorGraphTarget:
    """Five fully coupled spins w (1 + x_i x_j) on [-1, 1]: invariant under x -> -x, and too
    large for quadrature, so only the symmetry and conditional gates can test it."""
    scopes = list(itertools.combinations(range(5), 2))
    w = 0.3
    return ContinuousFactorGraphTarget(
        5, -1.0, 1.0, scopes, [(w, 0.0, 0.0, w)] * len(scopes), [2 * w] * len(scopes)
    )


def test_log_density_and_conditional_slopes(tiny) -> None:
    rng = np.random.default_rng(0)
    for target in (tiny, continuous_spin_grid(4)):
        X = rng.random((300, target.n_vars))
        np.testing.assert_allclose(log_density(target, X), target.log_unnormalised(X), rtol=1e-12)
        # U is linear in each variable: the slope is the difference over a unit step.
        var = rng.integers(0, target.n_vars, X.shape[0])
        moved = X.copy()
        moved[np.arange(X.shape[0]), var] += 1.0
        slope = log_density(target, moved) - log_density(target, X)
        np.testing.assert_allclose(linear_coefficients(target, X, var), slope, atol=1e-10)


@pytest.mark.parametrize("g", [-700.0, -3.0, -1e-9, 0.0, 2.5, 800.0])
def test_truncated_exp_cdf(g) -> None:
    a, b = -0.5, 1.5
    x = np.linspace(a, b, 9)
    F = truncated_exp_cdf(x, np.full(x.size, g), a, b)
    assert np.all(np.isfinite(F)) and F[0] == 0.0 and F[-1] == pytest.approx(1.0)
    assert np.all(np.diff(F) >= 0.0)
    if abs(g) < 10:
        z = integrate.quad(lambda t: np.exp(g * t), a, b)[0]
        want = [integrate.quad(lambda t: np.exp(g * t), a, v)[0] / z for v in x]
        np.testing.assert_allclose(F, want, atol=1e-12)


def test_reflection_symmetry_is_read_from_the_factors(tiny, symmetric) -> None:
    assert reflection_symmetric(symmetric)
    assert not reflection_symmetric(tiny)
    # 003's spin model lives on [0, 1]: beta A (x_i x_j + 1) is not invariant under x -> 1 - x.
    assert not reflection_symmetric(continuous_spin_grid(3))


def test_exact_draws_pass_every_gate(tiny, exact) -> None:
    out = gates(tiny, exact)
    assert list(out) == ["ess", "chi-square-thinned", "conditional-pit"]
    assert all(r.passed for r in out.values()), {k: r.detail for k, r in out.items()}
    assert out["ess"].statistic > 0.8 * STEPS  # independent draws: no thinning
    assert out["chi-square-thinned"].alpha == out["conditional-pit"].alpha == ALPHA / 2


@pytest.mark.parametrize("shift", [0.2, 0.05])
def test_shifted_draws_fail(tiny, exact, shift) -> None:
    out = gates(tiny, np.clip(exact + shift, tiny.a, tiny.b))
    assert not out["chi-square-thinned"].passed and not out["conditional-pit"].passed


def test_one_sign_fails(symmetric) -> None:
    chain = sample(SPECS["pgits"], "numba", symmetric, STEPS, np.random.default_rng(3))
    out = gates(symmetric, np.abs(chain.values))
    assert not out["sign-symmetry"].passed and not out["conditional-pit"].passed


def test_states_outside_the_domain_fail(tiny, exact) -> None:
    values = exact.copy()
    values[::7, 1] = 1.5
    out = gates(tiny, values)
    assert not out["chi-square-thinned"].passed and not out["conditional-pit"].passed


def test_frozen_chain_fails_ess(tiny) -> None:
    assert not gates(tiny, np.full((1000, 3), 0.5))["ess"].passed


@pytest.mark.parametrize("name", ["pgits", "pgda"])
def test_samplers_pass_on_the_tiny_graph(tiny, name) -> None:
    chain = sample(SPECS[name], "numba", tiny, STEPS, np.random.default_rng(2))
    out = gates(tiny, chain.values, name)
    assert all(r.passed for r in out.values()), {k: (r.p_value, r.detail) for k, r in out.items()}


def test_pgda_without_mh_fails(tiny) -> None:
    """k = 1 without the MH step samples a linear density in place of the conditional.

    Twice the usual steps: thinning to the slowest box indicator keeps about 2.4 times fewer
    states than thinning by the log density's ESS did (p = 1.5e-3 at STEPS, 5e-10 at 2 STEPS).
    """
    rng = np.random.default_rng(3)
    n = 2 * STEPS
    chain = continuous_fast.run(tiny, n, rng, None, "da", True, lam=10.0, m=3, k=1, mh=False)
    out = gates(tiny, chain.values)
    assert out["ess"].passed
    assert out["chi-square-thinned"].p_value < 1e-6


@pytest.mark.parametrize("name", ["pgits", "pgda"])
def test_symmetric_target(symmetric, name) -> None:
    chain = sample(SPECS[name], "numba", symmetric, STEPS, np.random.default_rng(1))
    out = gates(symmetric, chain.values, name)
    assert list(out) == ["ess", "sign-symmetry", "conditional-pit"]
    assert all(r.passed for r in out.values()), {k: (r.p_value, r.detail) for k, r in out.items()}
    shifted = gates(symmetric, np.clip(chain.values + 0.2, -1.0, 1.0), name)
    assert not shifted["sign-symmetry"].passed and not shifted["conditional-pit"].passed


def test_large_asymmetric_target_gets_the_conditional_gate_only() -> None:
    target = continuous_spin_grid(4)
    values = np.random.default_rng(0).random((2000, target.n_vars))  # uniform: not pi
    out = gates(target, values)
    assert list(out) == ["ess", "conditional-pit"]
    assert not out["conditional-pit"].passed


def test_non_bilinear_targets_are_refused() -> None:
    gmm = gaussian_mixture_target(np.array([0.0, 1.0, 0.5]), 40.0)
    with pytest.raises(ValueError, match="non-bilinear"):
        gates(gmm, np.zeros((64, 2)))


def _gibbs_chain(target, n, rng, scale):
    """Random-scan Gibbs with each conditional's exponent scaled by ``scale`` (1: exact)."""
    x = np.full(target.n_vars, 0.5 * (target.a + target.b))
    out = np.empty((n, target.n_vars))
    width = target.b - target.a
    for t in range(n):
        i = int(rng.integers(target.n_vars))
        g = scale * float(linear_coefficients(target, x[None, :], np.array([i]))[0])
        u = rng.random()
        # Inverse CDF of the density ∝ exp(g x) on [a, b].
        x[i] = target.a + (width * u if g == 0 else np.log1p(u * np.expm1(g * width)) / g)
        out[t] = x
    return out


def test_declared_gibbs_steps_are_checked_update_by_update(tiny) -> None:
    spec = dataclasses.replace(SPECS["pgda"], conditional_steps=True)
    rng = np.random.default_rng(5)
    good = continuous_factor_graph_gates(
        spec, tiny, Chain(_gibbs_chain(tiny, 20000, rng, 1.0), 0), ALPHA, {}
    )
    assert all(r.passed for r in good), [(r.gate, r.p_value) for r in good]
    pit = {r.gate: r for r in good}["gibbs-step-pit"]
    assert pit.n == 19999 and pit.detectable < 0.03
    # Conditionals 30% too sharp in their exponent (the weak couplings of the tiny graph make
    # that a small change of law): the update PITs see it.
    bad = {
        r.gate: r
        for r in continuous_factor_graph_gates(
            spec, tiny, Chain(_gibbs_chain(tiny, 20000, rng, 1.3), 0), ALPHA, {}
        )
    }
    assert not bad["gibbs-step-pit"].passed
    # A step that moves two coordinates is not a Gibbs step.
    two = _gibbs_chain(tiny, 200, rng, 1.0)
    two[50:, 0] += 1e-9
    res = gibbs_step_pit(tiny, two, ALPHA)
    assert not res.passed and "change 2 coordinates" in res.detail


def test_a_stated_conditional_error_replaces_the_exactness_test(tiny) -> None:
    """A spec with approximate conditionals states sup |G - F| of each update; its chain is
    tested against that bound (gibbs-step-error, a bound gate), not against exactness."""
    rng = np.random.default_rng(6)
    sharp = _gibbs_chain(tiny, 20000, rng, 1.3)  # the exponent 30% too sharp, as above
    assert not gibbs_step_pit(tiny, sharp, ALPHA).passed
    loose = gibbs_step_pit(tiny, sharp, ALPHA, error=0.2)
    assert loose.gate == "gibbs-step-error" and loose.passed and not loose.multiple_testing
    tight = gibbs_step_pit(tiny, sharp, ALPHA, error=1e-4)
    assert not tight.passed and tight.interval[0] > 1e-4
    spec = dataclasses.replace(SPECS["pgda"], conditional_steps=True, conditional_error=0.2)
    gates = {r.gate for r in continuous_factor_graph_gates(spec, tiny, Chain(sharp, 0), ALPHA, {})}
    assert "gibbs-step-error" in gates and "gibbs-step-pit" not in gates
    with pytest.raises(ValueError, match="conditional_error"):
        dataclasses.replace(SPECS["pgda"], conditional_error=0.1)  # no Gibbs steps declared
