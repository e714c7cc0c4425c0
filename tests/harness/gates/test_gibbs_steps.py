"""Per-step gates of declared Gibbs updates on discrete factor graphs: the registered Gibbs chain
passes on every catalog graph, a chain at a slightly wrong temperature fails, a chain that is
not a Gibbs chain fails, and an approximate sampler is held to the bound it states."""

import numpy as np
import pytest
from scipy import stats

from harness.gates.gibbs_steps import (
    conditional_energies,
    gibbs_step_gates,
    pit_against_bound,
)
from harness.spec import sample
from harness.targets.catalog import build_target
from harness.targets.factor_graph import FactorGraphTarget, random_factor_graph

ALPHA = 1e-4
STEPS = 20_000


def _gibbs_at(target, n_steps, rng, temperature=1.0):
    """Random-scan Gibbs with every conditional at ``temperature`` (1: the exact kernel)."""
    tab = target.tables[target.adj_factors]
    T = np.where((target.adj_pos == 0)[:, None, None], tab.transpose(0, 2, 1), tab)
    ip, other = target.adj_indptr, target.adj_other
    x = np.zeros(target.n_vars, dtype=np.int64)
    out = np.empty((n_steps, target.n_vars), dtype=np.int64)
    for t in range(n_steps):
        i = int(rng.integers(0, target.n_vars))
        slots = np.arange(ip[i], ip[i + 1])
        U = T[slots, x[other[slots]], :].sum(axis=0) / temperature
        w = np.cumsum(np.exp(U - U.max()))
        x[i] = min(int(np.searchsorted(w, rng.random() * w[-1], side="right")), target.D - 1)
        out[t] = x
    return out


@pytest.fixture(scope="module")
def wide():
    """Three variables of ten values, factors up to 6 nats: conditionals spread over several
    values, so each step says much about its temperature (planted_slips.py's graph)."""
    return random_factor_graph(3, 10, np.random.default_rng(5), edge_prob=1.0, max_M=6.0)


def test_conditional_energies_match_the_factors():
    target = build_target("fg-ties-n4-D3")
    X = np.random.default_rng(0).integers(0, target.D, size=(50, target.n_vars))
    U = conditional_energies(target, X)
    for r in range(X.shape[0]):
        for i in range(target.n_vars):
            for v in range(target.D):
                y = X[r].copy()
                y[i] = v
                x_rest = X[r].copy()
                # U_i(v) = U(y) - (the factors not touching i), which do not depend on v.
                rest = sum(
                    target.tables[f, x_rest[a], x_rest[b]]
                    for f, (a, b) in enumerate(target.scopes.tolist())
                    if i not in (a, b)
                )
                assert U[r, i, v] == pytest.approx(target.log_unnormalised(y) - rest, abs=1e-12)


@pytest.mark.parametrize(
    "problem", ["fg-random-n4-D2", "fg-random-n3-D3", "fg-ties-n4-D3", "potts-grid-5x5-D3-beta1"]
)
def test_the_registered_gibbs_chain_passes(registry, problem):
    target = build_target(problem)
    chain = sample(registry.get("gibbs"), "numba", target, STEPS, np.random.default_rng(3))
    pit, energy = gibbs_step_gates(target, chain.values, ALPHA)
    assert (pit.gate, energy.gate) == ("gibbs-step-pit", "gibbs-step-energy")
    assert pit.passed and energy.passed, (pit.detail, energy.detail)
    assert pit.n == STEPS - 1 and pit.detectable < 0.03
    assert np.isfinite(energy.detectable) and energy.multiple_testing


def test_a_temperature_slip_fails(wide):
    """Conditionals at temperature 1.05 (TV about 1.7% from the exact ones): the energy score
    moves by about 0.8 sqrt(steps) (1 - 1/T), z -6.2 to -7.0 at 30000 steps (seeds 0-2). The
    1.02 slip of planted_slips.py (TV 0.7%) needs 2e5 steps: its verify run is a slow test."""
    rng = np.random.default_rng(1)
    good = gibbs_step_gates(wide, _gibbs_at(wide, 30_000, rng), ALPHA)
    assert all(r.passed for r in good), [r.detail for r in good]
    bad = {r.gate: r for r in gibbs_step_gates(wide, _gibbs_at(wide, 30_000, rng, 1.05), ALPHA)}
    assert not bad["gibbs-step-energy"].passed and bad["gibbs-step-energy"].statistic < 0
    assert bad["gibbs-step-energy"].detectable < 0.05


def test_steps_that_are_not_gibbs_steps_fail_every_gate(wide):
    X = _gibbs_at(wide, 200, np.random.default_rng(2))
    X[50] = (X[49] + 1) % wide.D  # every coordinate changes at once
    res = gibbs_step_gates(wide, X, ALPHA)
    assert [r.passed for r in res] == [False, False]
    assert "two or more coordinates" in res[0].detail
    X[50] = wide.D  # a value outside 0..D-1
    assert "outside" in gibbs_step_gates(wide, X, ALPHA)[0].detail
    with pytest.raises(ValueError, match="n_steps"):
        gibbs_step_gates(wide, X[:2], ALPHA)


def test_a_stated_conditional_error_is_the_bound_tested(wide):
    """A sampler at temperature 1.05 within a stated 3% passes gibbs-step-error (a bound gate);
    a PIT sup-distance 0.035 from uniform fails a stated 0.1% and passes a stated 5%."""
    X = _gibbs_at(wide, 30_000, np.random.default_rng(4), 1.05)
    (within,) = gibbs_step_gates(wide, X, ALPHA, error=0.03)
    assert within.gate == "gibbs-step-error" and within.passed and not within.multiple_testing
    assert within.interval[0] <= 0.03 <= within.detectable
    u = np.random.default_rng(5).random(100_000) ** 1.1  # sup |G - U| ~ 0.035
    assert not pit_against_bound(u, ALPHA, 0.001, "test").passed
    assert pit_against_bound(u, ALPHA, 0.05, "test").passed
    with pytest.raises(ValueError, match="conditional_error"):
        gibbs_step_gates(wide, X, ALPHA, error=1.5)


def test_a_chain_stuck_on_a_flat_graph_fails_the_pit_and_has_no_energy_test():
    """Constant factors: every conditional is uniform and every energy change 0, so the energy
    score has nothing to test (no p-value); a chain that never moves fails the PIT (each step
    stays with probability 1/2)."""
    flat = FactorGraphTarget(3, 2, [(0, 1), (1, 2)], np.zeros((2, 2, 2)), [1.0, 1.0])
    pit, energy = gibbs_step_gates(flat, np.zeros((200, 3), dtype=np.int64), ALPHA)
    assert not pit.passed
    assert energy.p_value is None and energy.passed and not energy.multiple_testing


@pytest.mark.slow
@pytest.mark.parametrize("problem", ["fg-random-n4-D2", "fg-ties-n4-D3", "potts-grid-5x5-D3-beta1"])
def test_the_per_step_gates_fail_a_correct_chain_at_rate_alpha(registry, problem):
    """The registered Gibbs chain (numba, 20000 steps) over 200 seeds: each gate at alpha 0.05
    rejects at a rate whose 99.9% interval holds 0.05, with uniform p-values (KS p >= 0.001)."""
    target = build_target(problem)
    spec = registry.get("gibbs")
    p: dict[str, list[float]] = {"gibbs-step-pit": [], "gibbs-step-energy": []}
    for seed in range(200):
        chain = sample(spec, "numba", target, STEPS, np.random.default_rng([seed, 2025]))
        for r in gibbs_step_gates(target, chain.values, 0.1):
            p[r.gate].append(r.p_value)
    for gate, values in p.items():
        values = np.asarray(values)
        k = int(np.sum(values < 0.05))
        low, high = stats.binomtest(k, values.size).proportion_ci(0.999)
        assert low <= 0.05 <= high, (gate, k)
        assert stats.kstest(values, "uniform").pvalue >= 1e-3, gate
