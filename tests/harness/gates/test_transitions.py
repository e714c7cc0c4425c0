"""Transition consistency: a sampler's observed steps against the kernel its spec declares.

The planted plugins declare plain Gibbs's exact kernel (so the invariance gate, which reads
only the declaration, passes them) while their code steps differently."""

from pathlib import Path

import numpy as np
import pytest

from harness.checks.cases import SAMPLE_SIZES
from harness.gates import invariance
from harness.gates.transitions import chain_state_indices, transition_consistency
from harness.registry import build_registry
from harness.spec import sample
from harness.targets.catalog import build_target

PLUGIN = str(Path(__file__).resolve().parents[2] / "plugins" / "planted_subtle.py")
N = SAMPLE_SIZES["quick"]
ALPHA = 1e-4


@pytest.fixture(scope="module")
def planted():
    return build_registry([PLUGIN])


def _gate(registry, name, problem, seed, impl="numba", **params):
    target = build_target(problem)
    spec = registry.get(name)
    P, err = spec.exact_kernel(target, spec.validate(params))
    chain = sample(spec, impl, target, N, np.random.default_rng(seed), **params)
    thin = spec.validate(params).get("thin", 1)
    idx = chain_state_indices(chain.values, target.D)
    return transition_consistency(idx, P, ALPHA, thin=thin, err=err), P, target


@pytest.mark.parametrize("name", ["gibbs", "poisson-gibbs", "poisson-mh", "mgpmh"])
@pytest.mark.parametrize("problem", ["fg-random-n4-D2", "fg-random-n3-D3"])
def test_registered_kernels_match_their_code(registry, name, problem):
    res, _, _ = _gate(registry, name, problem, 11)
    assert res.passed, res.detail
    assert res.detectable < 0.1  # RMS Cohen's w over the rows


def test_a_thinned_chain_is_compared_with_p_to_the_thin(registry):
    res, _, _ = _gate(registry, "gibbs", "fg-random-n3-D3", 12, thin=3)
    assert res.passed and "P^3" in res.detail
    # The same chain against P itself (as if unthinned) is rejected: the rows differ.
    target = build_target("fg-random-n3-D3")
    spec = registry.get("gibbs")
    chain = sample(spec, "numba", target, N, np.random.default_rng(12), thin=3)
    P, _ = spec.exact_kernel(target, {})
    wrong = transition_consistency(chain_state_indices(chain.values, target.D), P, ALPHA)
    assert not wrong.passed


@pytest.mark.parametrize(
    ("name", "problem", "worst_p"),
    [
        # Rows off by up to 5% (exp(1.5 U)); over seeds 0-4 p ~ 7e-9..2e-18 (n3-D3),
        # 3e-9..1e-13 (n4-D2).
        ("planted-gibbs-tempered-1.5", "fg-random-n3-D3", 1e-6),
        ("planted-gibbs-tempered-1.5", "fg-random-n4-D2", 1e-6),
        # Stale neighbour values: p ~ 2e-7..7e-14 on this graph (on n4-D2 1..6e-8: a miss).
        ("planted-gibbs-stale-cache", "fg-random-n3-D3", 1e-5),
        # One factor of A[i] left out: p ~ 4e-19..5e-26.
        ("planted-gibbs-drop-last-factor", "fg-random-n4-D2", 1e-10),
        # pi-invariant, but not the declared kernel: only this gate can tell.
        ("planted-gibbs-metropolized", "fg-random-n3-D3", 1e-10),
    ],
)
def test_code_that_differs_from_its_declared_kernel_fails(planted, name, problem, worst_p):
    res, P, target = _gate(planted, name, problem, 0, impl="reference")
    assert invariance(P, target.pmf, 1e-12).passed  # the declaration itself is fine
    assert not res.passed and res.p_value < worst_p, res.detail


def test_a_forbidden_transition_and_a_state_outside_the_space_fail():
    P = np.array([[0.5, 0.5, 0.0], [0.25, 0.5, 0.25], [0.0, 0.5, 0.5]])
    rng = np.random.default_rng(0)
    idx = [0]
    for _ in range(5000):
        idx.append(int(rng.choice(3, p=P[idx[-1]])))
    idx = np.array(idx)
    assert transition_consistency(idx, P, ALPHA).passed
    jumped = idx.copy()
    jumped[np.flatnonzero(jumped[:-1] == 0)[5] + 1] = 2  # 0 -> 2 is impossible
    res = transition_consistency(jumped, P, ALPHA)
    assert not res.passed and res.p_value == 0.0
    outside = idx.copy()
    outside[10] = -1
    assert not transition_consistency(outside, P, ALPHA).passed


def test_state_indices_follow_the_enumeration():
    target = build_target("fg-random-n3-D3")
    states = target.states()
    idx = chain_state_indices(states, target.D)
    assert np.array_equal(idx, np.arange(states.shape[0]))
    assert idx[5] == target.state_index(states[5])
    assert chain_state_indices(np.array([[0, 3, 1]]), 3)[0] == -1
