"""Properties of the top-down construction (001, Alg. 1) beyond the contract tests."""

import numpy as np

from harness.spec import sample


def test_stream_is_decreasing_and_covers_every_state_once(registry, small_discrete):
    spec = registry.get("top-down")
    for impl in ("reference", "numba"):
        out = sample(spec, impl, small_discrete, 300, np.random.default_rng(4), full_process=True)
        g = out.extras["process_values"]
        x = out.extras["process_locations"]
        assert np.all(np.diff(g, axis=1) < 0)
        assert np.all(np.sort(x, axis=1) == np.arange(small_discrete.D))
        np.testing.assert_array_equal(out.values, x[:, 0])
        np.testing.assert_array_equal(out.extras["gumbel_max"], g[:, 0])


def test_first_pair_matches_full_run_prefix(registry, small_discrete):
    # The first (G, X) only needs the root; a full run draws it first from the same stream.
    spec = registry.get("top-down")
    one = sample(spec, "numba", small_discrete, 1, np.random.default_rng(8))
    full = sample(spec, "numba", small_discrete, 1, np.random.default_rng(8), full_process=True)
    assert one.values[0] == full.values[0]
    assert one.extras["gumbel_max"][0] == full.extras["gumbel_max"][0]


def test_cost_is_n_times_n_d(registry, small_discrete):
    for name in ("gumbel-max", "cdf-inversion", "top-down"):
        out = sample(registry.get(name), "numba", small_discrete, 17, np.random.default_rng(0))
        assert out.evals == 17 * small_discrete.N * small_discrete.D
