"""Contract tests, driven by the registry: every algorithm, built-in or plugin, gets them.

DESIGN.md, Contracts: same seed gives the same output; n/2 + n/2 draws equal n draws where the
algorithm allows it; the Generator advances; reference and Numba agree (values, evaluation
counts, final Generator state); bad parameters raise; a Numba kernel compiles once per signature.
"""

import numpy as np
import pytest

from harness.checks.output_contract import output_breach
from harness.registry import build_registry
from harness.spec import sample
from tests.conftest import distinct_settings, readme_plugin_path, target_for

# Built-in algorithms plus the README's plugin example: a plugin gets these tests for free.
SPECS = list(build_registry([readme_plugin_path()]))
IDS = [s.name for s in SPECS]


def cpu_keys(spec):
    """The keys these contracts run at their sizes; the ``cuda`` key's run in numba-cuda's
    simulator at tiny sizes in test_cuda_contracts.py (a simulated block costs ~ms a thread)."""
    return [impl for impl in spec.implementations if impl != "cuda"]


def _draw(spec, impl, target, n, seed, params=None):
    rng = np.random.default_rng(seed)
    out = sample(spec, impl, target, n, rng, **(params or {}))
    return out, rng


def _checked_params(spec):
    return [dict(c.params) for c in distinct_settings(spec, spec.checks)]


@pytest.fixture(params=SPECS, ids=IDS)
def spec(request):
    return request.param


@pytest.fixture
def target(
    spec,
    small_discrete,
    small_trunc,
    small_posterior,
    small_factor_graph,
    small_continuous_graph,
    small_box,
    small_glm,
):
    return target_for(
        spec.target_kinds[0],
        small_discrete,
        small_trunc,
        small_posterior,
        small_factor_graph,
        small_continuous_graph,
        small_box,
        small_glm,
    )


def test_same_seed_same_output(spec, target):
    for impl in cpu_keys(spec):
        for params in _checked_params(spec):
            a, _ = _draw(spec, impl, target, 50, 3, params)
            b, _ = _draw(spec, impl, target, 50, 3, params)
            np.testing.assert_array_equal(a.values, b.values)
            assert a.evals == b.evals
            assert a.evals >= 0


def test_output_keeps_the_output_contract(spec, target):
    """What `harness verify` checks before any statistic (harness/checks/output_contract.py)."""
    for impl in cpu_keys(spec):
        for params in _checked_params(spec):
            out, _ = _draw(spec, impl, target, 40, 4, params)
            assert output_breach(target, out, 40) is None, (impl, params)


def test_generator_advances_and_seeds_differ(spec, target):
    for impl in cpu_keys(spec):
        rng = np.random.default_rng(5)
        before = rng.bit_generator.state
        out = sample(spec, impl, target, 30, rng)
        assert rng.bit_generator.state != before
        other, _ = _draw(spec, impl, target, 30, 6)
        assert not np.array_equal(out.values, other.values)


def test_halves_equal_whole(spec, target):
    if not spec.splittable:
        pytest.skip(f"{spec.name} declares that n/2 + n/2 != n")
    for impl in cpu_keys(spec):
        whole, rng_whole = _draw(spec, impl, target, 40, 9)
        rng = np.random.default_rng(9)
        first = sample(spec, impl, target, 20, rng)
        second = sample(spec, impl, target, 20, rng)
        np.testing.assert_array_equal(whole.values, np.concatenate([first.values, second.values]))
        assert whole.evals == first.evals + second.evals
        assert rng.bit_generator.state == rng_whole.bit_generator.state


def test_reference_and_numba_agree(spec, target):
    if not {"reference", "numba"} <= set(spec.implementations):
        pytest.skip(f"{spec.name} has only {list(spec.implementations)}")
    for params in _checked_params(spec):
        ref, rng_ref = _draw(spec, "reference", target, 200, 21, params)
        fast, rng_fast = _draw(spec, "numba", target, 200, 21, params)
        assert ref.evals == fast.evals
        assert rng_ref.bit_generator.state == rng_fast.bit_generator.state
        if spec.agreement.rtol == 0.0:
            np.testing.assert_array_equal(ref.values, fast.values)
        else:
            np.testing.assert_allclose(ref.values, fast.values, rtol=spec.agreement.rtol)
        assert set(ref.extras) == set(fast.extras)
        for key in ref.extras:
            np.testing.assert_array_equal(ref.extras[key], fast.extras[key])


def test_bad_parameters_raise_before_work(spec, target):
    impl = next(iter(spec.implementations))
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    with pytest.raises(ValueError, match="no parameter 'no_such_param'"):
        sample(spec, impl, target, 10, rng, no_such_param=1)
    for bad_n in (0, -3, 2.5):
        with pytest.raises(ValueError, match="n"):
            sample(spec, impl, target, bad_n, rng)
    with pytest.raises(ValueError, match=r"numpy\.random\.Generator"):
        sample(spec, impl, target, 10, 123)
    with pytest.raises(ValueError, match="target kind"):
        sample(spec, impl, object(), 10, rng)
    for p in spec.params:
        bad = "not-a-value" if p.kind is not str else object()
        with pytest.raises(ValueError, match=p.name):
            sample(spec, impl, target, 10, rng, **{p.name: bad})
    assert rng.bit_generator.state == state, "validation must run before any draw"


def test_numba_compiles_once_per_signature(spec, target):
    if "numba" not in spec.implementations:
        pytest.skip("no Numba implementation")
    assert spec.kernels, f"{spec.name} must list its Numba kernels"
    # Counted from here: a kernel that takes a target's own compiled functions (A*'s log_lik
    # and bound) holds one signature per target that other tests ran it on.
    before = [len(k.signatures) for k in spec.kernels]
    for params in _checked_params(spec):
        _draw(spec, "numba", target, 5, 1, params)
    counts = [len(k.signatures) for k in spec.kernels]
    for params in _checked_params(spec):
        _draw(spec, "numba", target, 7, 2, params)
        _draw(spec, "numba", target, 9, 3, params)
    assert [len(k.signatures) for k in spec.kernels] == counts
    # A kernel that serves another target kind (e.g. racing-normal's ragged one) may stay
    # uncompiled here; none may compile twice, and at least one must have run.
    added = [c - b for c, b in zip(counts, before, strict=True)]
    assert all(a <= 1 for a in added) and any(c >= 1 for c in counts), (
        f"kernels compiled {added} more times"
    )
