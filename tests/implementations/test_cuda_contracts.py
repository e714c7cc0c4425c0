"""The ``cuda`` key's contracts, for every spec that has one, in numba-cuda's simulator
(tests/conftest.py sets NUMBA_ENABLE_CUDASIM=1 unless HARNESS_REAL_CUDA=1): the same noise as
the Numba build, equal draws except within the summation-order tolerance, n/2 + n/2 = n, and
the agreement gate that must reject a device build that is wrong. Tiny sizes: the simulator
runs each device thread as a Python thread."""

import os
import sys

import numpy as np
import pytest

from harness.checks.reference_modes import agreement_outputs
from harness.devices import cuda_unavailable, runnable, simulated
from harness.gates.device_agreement import device_agreement
from harness.registry import build_registry
from harness.spec import sample
from harness.targets.discrete import DiscreteFactorTarget
from harness.targets.likelihood_terms import LikelihoodTarget
from tests.conftest import ROOT, run_command

#: The draw specs with a cuda key; chains have their own contracts (test_cuda_chain_contracts).
SPECS = [s for s in build_registry() if "cuda" in s.implementations and s.entry == "draw"]


def _targets():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(30, 2))
    yield "stored-D5-N37", DiscreteFactorTarget(rng.normal(size=(5, 37)), rng.normal(size=5))
    # N > 2 x MIN_CHUNK with few blocks: each row is split into chunks summed by separate blocks.
    big = DiscreteFactorTarget(rng.normal(size=(3, 8200)) * 0.01, np.zeros(3))
    yield "stored-D3-N8200-chunked", big
    theta = rng.normal(size=(4, 2))
    yield (
        "logistic-D4-N30",
        LikelihoodTarget("logistic", X, np.sign(X[:, 0]) + (X[:, 0] == 0), theta),
    )
    yield "student-t-D4-N30", LikelihoodTarget("student-t", X, X @ [0.5, -1.0], theta)


CASES = [
    pytest.param(spec, target, id=f"{spec.name}-{name}")
    for spec in SPECS
    for name, target in _targets()
    if target.kind in spec.target_kinds
]


REAL = os.environ.get("HARNESS_REAL_CUDA") == "1"


def test_the_simulator_is_what_runs_here():
    assert SPECS, "no spec registers a cuda implementation"
    assert cuda_unavailable() is None and simulated() is not REAL
    if REAL:
        assert "cuda" in runnable()
    else:
        assert "cuda" not in runnable(), "a simulator must not join `--impl all`"
        assert "cuda" in runnable(simulator=True)


@pytest.mark.parametrize(("spec", "target"), CASES)
def test_cuda_sees_numba_noise_and_agrees(spec, target):
    n = 4
    ra, rb = np.random.default_rng(8), np.random.default_rng(8)
    fast = sample(spec, "numba", target, n, ra)
    dev = sample(spec, "cuda", target, n, rb)
    assert dev.values.shape == (n,) and dev.values.dtype == np.int64
    assert set(dev.extras) >= {"margin", "tolerance"} | set(fast.extras)
    assert np.all(dev.extras["tolerance"] > 0) and np.all(dev.extras["tolerance"] < 1e-6)
    verdict = device_agreement(agreement_outputs(fast, ra), agreement_outputs(dev, rb), 0.01)
    assert verdict.passed, verdict.detail


@pytest.mark.parametrize("spec", SPECS, ids=[s.name for s in SPECS])
def test_cuda_halves_equal_whole(spec):
    _, target = next(_targets())
    rng_whole, rng = np.random.default_rng(2), np.random.default_rng(2)
    whole = sample(spec, "cuda", target, 4, rng_whole)
    first, second = sample(spec, "cuda", target, 2, rng), sample(spec, "cuda", target, 2, rng)
    np.testing.assert_array_equal(whole.values, np.concatenate([first.values, second.values]))
    assert whole.evals == first.evals + second.evals == 4 * target.D * target.N
    assert rng.bit_generator.state == rng_whole.bit_generator.state


@pytest.mark.parametrize("spec", SPECS, ids=[s.name for s in SPECS])
def test_cuda_bad_input_raises_before_work(spec):
    _, target = next(_targets())
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    for bad_n in (0, -1, 2.5):
        with pytest.raises(ValueError, match="n"):
            sample(spec, "cuda", target, bad_n, rng)
    with pytest.raises(ValueError, match="parallel"):
        sample(spec, "cuda", target, 2, rng, parallel="yes")
    assert rng.bit_generator.state == state


def _device_run(n=6):
    spec = build_registry().get("gumbel-max")
    _, target = next(_targets())
    ra, rb = np.random.default_rng(5), np.random.default_rng(5)
    fast = agreement_outputs(sample(spec, "numba", target, n, ra), ra)
    dev = agreement_outputs(sample(spec, "cuda", target, n, rb), rb)
    return fast, dev


def test_device_agreement_rejects_a_wrong_draw_and_lists_near_ties():
    fast, dev = _device_run()
    wrong = {**dev, "values": dev["values"].copy()}
    wrong["values"][3] = (wrong["values"][3] + 1) % 5  # a clear margin, yet another state
    failed = device_agreement(fast, wrong, 0.01)
    assert not failed.passed and "#3" in failed.detail, failed.detail
    # The same change where the device says it was within summation order of a tie: allowed,
    # and listed.
    tie = {**wrong, "extras": {**dev["extras"], "margin": dev["extras"]["margin"].copy()}}
    tie["extras"]["margin"][3] = 0.0
    allowed = device_agreement(fast, tie, 0.01)
    assert allowed.passed and "1 draws differ within" in allowed.detail, allowed.detail
    stale = {**dev, "rng_state": "other"}
    assert not device_agreement(fast, stale, 0.01).passed
    drifted = {**dev, "extras": {**dev["extras"], "gumbel_max": dev["extras"]["gumbel_max"] + 1e-3}}
    assert "gumbel_max" in device_agreement(fast, drifted, 0.01).detail


@pytest.mark.skipif(REAL, reason="this machine has a device")
def test_verify_cuda_without_a_device_says_so_in_one_line_and_exits_2(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    cmd = [sys.executable, "-m", "harness.cli", "verify", "--impl", "cuda", "--out", str(tmp_path)]
    done = run_command(cmd, timeout=300, cwd=ROOT, env=env)
    assert done.returncode == 2, done.stderr
    lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "cuda" in lines[0] and "Traceback" not in done.stderr, lines
    assert not any(tmp_path.iterdir()), "nothing is written before the check"
