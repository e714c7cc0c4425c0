"""The summation order both builds share (issue: exact samplers at memory speed): eight lanes a
row, paired as a fixed tree. Reference and Numba agree bit for bit at every N mod 8, the
parallel rows change no value, and the memory-speed table reports each ratio against its limit
(times are reported, never asserted)."""

import math
import os
import subprocess
import sys

import numpy as np
import pytest

from harness.speed.ratios import MEMORY_LIMIT, format_memory_speed, memory_speed
from harness.targets.discrete import synthetic_rewards
from implementations.gumbel import fast, reference


@pytest.mark.parametrize("N", [1, 3, 7, 8, 9, 15, 16, 17, 100, 1003])
def test_lane_sums_agree_bit_for_bit(N):
    rng = np.random.default_rng(N)
    log_factors = rng.normal(0.0, 30.0, (6, N))
    log_f0 = rng.normal(size=6)
    for kernel in (fast._log_unnormalised_serial, fast._log_unnormalised_parallel):
        out = np.empty(6)
        kernel(log_factors, log_f0, out)
        assert np.array_equal(out, reference.log_unnormalised(log_factors, log_f0))
    # The lane order is a sum: it matches the correctly rounded one to rounding.
    exact = np.array([math.fsum(row) for row in log_factors]) + log_f0
    np.testing.assert_allclose(out, exact, rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("name", ["gumbel_max", "cdf_inversion"])
def test_parallel_draws_equal_the_reference(name):
    target = synthetic_rewards(20, 1001, "normal", 1.0, np.random.default_rng(0))
    a = getattr(fast, name)(target, 30, np.random.default_rng(4), parallel=True)
    b = getattr(reference, name)(target, 30, np.random.default_rng(4))
    assert np.array_equal(a.values, b.values) and a.evals == b.evals
    for key in b.extras:
        assert np.array_equal(a.extras[key], b.extras[key])


def test_the_memory_speed_table_reports_each_ratio_against_its_limit():
    result = memory_speed(["gumbel-max"], [(10, 1000), (100, 50)], draws=5, repeat=3)
    assert [(r["D"], r["N"]) for r in result["rows"]] == [(10, 1000), (100, 50)]
    for r in result["rows"]:
        assert r["limit"] == MEMORY_LIMIT and r["ratio"] > 0
        assert r["within"] == (r["ratio"] <= MEMORY_LIMIT)
    assert "numpy.sum us" in format_memory_speed(result)
    with pytest.raises(ValueError, match="memory-speed"):
        memory_speed(["astar"], [(10, 100)])


SIGNATURES = """
import numpy as np
from implementations.gumbel import fast
from harness.targets.discrete import synthetic_rewards
from harness.targets.likelihood_terms import logistic_candidates

rng = np.random.default_rng(0)
terms = logistic_candidates(40, 3, 2, 10.0, 1)
rewards = synthetic_rewards(5, 30, "normal", 1.0, rng)
kernels = ("_log_unnormalised_parallel", "_terms_parallel", "_gumbel_max_parallel",
           "_gumbel_max_terms_parallel", "_cdf_inversion_parallel", "_log_unnormalised_serial",
           "_terms_serial", "gumbel_max_kernel", "gumbel_max_terms_kernel",
           "cdf_inversion_kernel", "top_down_kernel")
for parallel in (False, True):
    fast.gumbel_max(terms, 4, rng, parallel=parallel)
    fast.gumbel_max(rewards, 4, rng, parallel=parallel)
    fast.cdf_inversion(rewards, 4, rng, parallel=parallel)
    fast.top_down(rewards, 4, rng)
    print(" ".join(str(len(getattr(fast, k).signatures)) for k in kernels))
"""


def test_serial_draws_never_reach_a_parallel_kernel_and_each_kernel_has_one_signature(tmp_path):
    # A process that loaded a cached kernel calling a parfor kernel segfaulted now and then,
    # and so did one loading two cached signatures that reach one (a literal-typed n = 1, a
    # defaulted argument). So the parfor kernels, and the draw loops that call them, are uncached
    # and apart from the serial ones: the serial draws compile none of the five, and every entry
    # point, both ways, compiles one signature of each kernel. A fresh process and cache: a
    # kernel loaded from a cache brings its callees' code along, and they count no signature.
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, "-c", SIGNATURES], env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-2000:]
    serial, both = out.stdout.splitlines()[-2:]
    assert serial.split() == ["0"] * 5 + ["1"] * 6, out.stdout
    assert both.split() == ["1"] * 11, out.stdout
