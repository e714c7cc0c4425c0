"""The ``cuda`` key of the MCMC specs (rwmh: every new theta's N likelihood terms summed on the
device), in numba-cuda's simulator unless HARNESS_REAL_CUDA=1: the same proposals and uniforms
as the Numba chain, equal steps until a decision within the summation-order tolerance, and the
chain rule of the device-agreement gate with its negative controls. Tiny chains: the simulator
runs each device thread as a Python thread."""

import functools
from typing import Any

import numpy as np
import pytest

from harness.checks.reference_modes import agreement_outputs
from harness.gates.device_agreement import device_agreement
from harness.registry import build_registry
from harness.spec import sample
from harness.targets.glm import glm_posterior

CHAIN_SPECS = [s for s in build_registry() if "cuda" in s.implementations and s.entry != "draw"]
STEPS = 12


#: Target name -> the MH step at which both branches of the decision occur in 12 steps.
MH_STEP = {"logistic-N40": 0.5, "robust-N40": 0.5, "softmax-N40-K3": 0.2}
FIRST = next(iter(MH_STEP))


@functools.cache
def _targets() -> dict[str, Any]:
    """The targets by name. Built on first use, not at collection: each target's bound check
    compiles kernels."""
    rng = np.random.default_rng(11)
    X = rng.normal(size=(40, 2))
    labels = (X @ [1.0, -0.5] + rng.normal(size=40) > 0).astype(float)
    logistic = glm_posterior(X, labels, "logistic")
    robust = glm_posterior(X, X @ [0.5, 1.0] + rng.standard_t(4, 40), "robust")
    softmax = glm_posterior(X, rng.integers(0, 3, 40).astype(float), "softmax")
    return dict(zip(MH_STEP, (logistic, robust, softmax), strict=True))


def _pair(spec, target, step, steps=STEPS, seed=8):
    ra, rb = np.random.default_rng(seed), np.random.default_rng(seed)
    fast = sample(spec, "numba", target, steps, ra, step=step)
    dev = sample(spec, "cuda", target, steps, rb, step=step)
    return fast, agreement_outputs(fast, ra), dev, agreement_outputs(dev, rb)


def test_an_mcmc_spec_has_a_cuda_key():
    assert [s.name for s in CHAIN_SPECS] == ["rwmh"]


@pytest.mark.parametrize("spec", CHAIN_SPECS, ids=[s.name for s in CHAIN_SPECS])
@pytest.mark.parametrize("name", MH_STEP)
def test_cuda_chain_sees_numba_noise_and_agrees(spec, name):
    target = _targets()[name]
    fast, a, dev, b = _pair(spec, target, MH_STEP[name])
    assert dev.values.shape == (STEPS, target.D)
    assert dev.evals == fast.evals == target.N * (STEPS + 1)
    np.testing.assert_array_equal(dev.extras["draw_evals"], fast.extras["draw_evals"])
    assert np.all(dev.extras["tolerance"] > 0) and np.all(dev.extras["tolerance"] < 1e-8)
    assert 0 < dev.extras["accepted"].sum() < STEPS, "both branches of the decision ran"
    verdict = device_agreement(a, b, 0.01, chain=True)
    assert verdict.passed, verdict.detail


def _rwmh_pair():
    return _pair(CHAIN_SPECS[0], _targets()[FIRST], MH_STEP[FIRST])


def test_chain_agreement_rejects_a_wrong_step_and_allows_a_parting_within_tolerance():
    _, a, _, b = _rwmh_pair()
    k = 5
    moved = {**b, "values": b["values"].copy()}
    moved["values"][k:] += 0.25  # a different path from step k on, at a clear margin
    failed = device_agreement(a, moved, 0.01, chain=True)
    assert not failed.passed and f"#{k}" in failed.detail, failed.detail
    # The same parting where the device's decision at step k was within its tolerance: allowed,
    # later steps are not compared, and the detail says where the chains parted.
    tie = {**moved, "extras": {**b["extras"], "margin": b["extras"]["margin"].copy()}}
    tie["extras"]["margin"][k] = 0.0
    allowed = device_agreement(a, tie, 0.01, chain=True)
    assert allowed.passed and f"part at step #{k}" in allowed.detail, allowed.detail
    assert f"{STEPS - 1 - k} later steps not compared" in allowed.detail
    # Without the chain rule the same outputs fail: later steps differ at a clear margin.
    assert not device_agreement(a, tie, 0.01).passed
    # A difference before the parting step is not excused by it.
    early = {**tie, "values": tie["values"].copy()}
    early["values"][k - 2] += 1e-3
    assert not device_agreement(a, early, 0.01, chain=True).passed
    counted = {**b, "extras": {**b["extras"], "draw_evals": b["extras"]["draw_evals"] + 1}}
    assert "draw_evals" in device_agreement(a, counted, 0.01, chain=True).detail
    assert not device_agreement(a, {**b, "evals": b["evals"] + 1}, 0.01, chain=True).passed


def test_cuda_chain_bad_input_raises_before_work():
    target = _targets()[FIRST]
    spec = CHAIN_SPECS[0]
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    for bad in (0, -1, 2.5):
        with pytest.raises(ValueError, match="n_steps"):
            sample(spec, "cuda", target, bad, rng)
    with pytest.raises(ValueError, match="step"):
        sample(spec, "cuda", target, 3, rng, step=-1.0)
    with pytest.raises(ValueError, match="x0"):
        sample(spec, "cuda", target, 3, rng, x0=[1.0, 2.0, 3.0])
    assert rng.bit_generator.state == state


def test_cuda_chain_refuses_more_classes_than_its_kernel_holds():
    from implementations.firefly import cuda
    from implementations.firefly.cuda_kernels import MAX_CLASSES

    rng = np.random.default_rng(1)
    K = MAX_CLASSES + 1
    X = rng.normal(size=(2 * K, 1))
    target = glm_posterior(X, np.arange(2 * K) % K * 1.0, "softmax", tuning="untuned")
    with pytest.raises(ValueError, match=f"K = {K}"):
        cuda.rwmh(target, 2, rng)
