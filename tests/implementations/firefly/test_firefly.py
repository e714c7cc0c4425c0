"""FlyMC and its baselines (002): exact chains that pass their gates, queries counted as
Table 1 counts them, bit-identical implementations, and planted bugs that the gates catch."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from harness.checks.cases import gates_for
from harness.gates.glm_chain import posterior_sbc
from harness.gates.result import GateContext
from harness.registry import build_registry
from harness.spec import rerun_for, sample
from harness.targets.catalog import build_target
from harness.verify.config import RunConfig
from harness.verify.runner import verify
from implementations.firefly import STEPS, fast, reference
from tests.conftest import ROOT

PLANTED = str(ROOT / "tests" / "plugins" / "planted_firefly.py")
FAMILY = ("flymc-mh", "flymc-mala", "flymc-slice", "rwmh", "mala", "slice")
THETA_STEP = {
    "flymc-mh": "mh",
    "flymc-mala": "mala",
    "flymc-slice": "slice",
    "rwmh": "mh",
    "mala": "mala",
    "slice": "slice",
}


def _verify(tmp_path: Path, algorithms, impls, plugins=()):
    config = RunConfig(algorithms=tuple(algorithms), impls=tuple(impls), plugins=tuple(plugins))
    return verify(config, tmp_path / "run", workers=1, progress=False, scheduler="inprocess")


@pytest.mark.parametrize("name", FAMILY)
def test_each_chain_passes_its_gates_on_a_posterior_with_quadrature_truth(name):
    registry = build_registry()
    spec = registry.get(name)
    problem = "logistic-N100-D2-map"
    target = build_target(problem)
    params = {"step": STEPS[problem][THETA_STEP[name]]}
    rng = np.random.default_rng(7)
    chain = sample(spec, "numba", target, 5000, rng, **params)
    context = GateContext(rerun_for(spec, "numba", params), rng)
    gates = {g.gate: g for g in gates_for(spec, target, chain, 1e-3, params, context)}
    expected = {"ess", "ks-marginals", "exact-start-moments", "exact-start-ks"}
    if name.startswith("flymc"):
        expected |= {"z-conditional", "exact-start-bright"}
    assert set(gates) == expected
    assert all(g.passed for g in gates.values()), [g.detail for g in gates.values()]


def test_flymc_passes_simulation_based_calibration_on_a_d10_model():
    spec = build_registry().get("flymc-mh")
    target = build_target("logistic-N200-D10-map")
    context = GateContext(rerun_for(spec, "numba", {"step": 0.3}), np.random.default_rng(3))
    # The negative control's size (below): 30 replications of 300 steps, where the correct chain
    # gave p from 0.045 to 0.84 over seeds 3-12; the bug, 1e-13 to 4e-11.
    got = posterior_sbc(target, context, 1e-3, replications=30, steps=300)
    assert got.passed and got.gate == "sbc" and "11 parameters" in got.detail


def test_the_calibration_gate_catches_a_z_update_without_its_mh_ratio_on_a_d10_model():
    registry = build_registry([PLANTED])
    spec = registry.get("planted-flymc-z-no-ratio")
    target = build_target("logistic-N200-D10-map")
    context = GateContext(rerun_for(spec, "reference", {"step": 0.3}), np.random.default_rng(3))
    # 300 steps a replication: at this size the correct flymc-mh gave p from 0.045 to 0.84 over
    # seeds 3-12, and this bug 1e-13 to 4e-11 over seeds 3-7.
    got = posterior_sbc(target, context, 1e-3, replications=30, steps=300)
    assert not got.passed and got.p_value < 1e-6
    assert "worst log p(theta | data)" in got.detail


@pytest.mark.parametrize(
    ("bug", "gates"),
    [
        # The two slowest (40 s each): z-conditional keeps its negative controls in
        # tests/harness/gates/test_glm_chain.py, ks-marginals in the cases below.
        pytest.param(
            "planted-flymc-z-ratio-without-q",
            {"z-conditional", "ks-marginals"},
            marks=pytest.mark.slow,
        ),
        pytest.param(
            "planted-flymc-raised-bound", {"z-conditional", "ks-marginals"}, marks=pytest.mark.slow
        ),
        ("planted-flymc-z-frozen", {"ks-marginals"}),
        ("planted-mala-no-reverse", {"ks-marginals"}),
        ("planted-mh-asymmetric", {"ks-marginals"}),
    ],
)
def test_planted_firefly_bugs_fail_the_gates_they_name(tmp_path, bug, gates):
    summary = _verify(tmp_path, (bug,), ("reference",), (PLANTED,))
    failed = {v["gate"] for v in summary["verdicts"] if v["verdict"] == "fail"}
    assert not summary["passed"] and gates <= failed, failed


@pytest.mark.slow
def test_planted_z_update_without_its_ratio_fails_verify_on_the_d10_model(tmp_path):
    summary = _verify(tmp_path, ("planted-flymc-z-no-ratio",), ("reference",), (PLANTED,))
    failed = {v["gate"] for v in summary["verdicts"] if v["verdict"] == "fail"}
    assert {"sbc", "z-conditional"} <= failed


@pytest.mark.slow
def test_the_firefly_family_verifies_with_both_implementations(tmp_path):
    summary = _verify(tmp_path, FAMILY, ("reference", "numba"))
    assert summary["passed"]
    gates = {v["gate"] for v in summary["verdicts"]}
    assert {"ess", "ks-marginals", "sbc", "z-conditional", "agreement"} <= gates


def test_theta_fixed_runs_agree_bit_for_bit(small_glm):
    for z_update in ("implicit", "explicit"):
        runs = [
            impl.flymc(small_glm, 300, np.random.default_rng(4), None, "mh", 0.5, z_update)
            for impl in (reference, fast)
        ]
        fixed = [
            impl.flymc(
                small_glm,
                300,
                np.random.default_rng(4),
                None,
                "mh",
                0.5,
                z_update,
                theta_fixed=True,
            )
            for impl in (reference, fast)
        ]
        for a, b in (runs, fixed):
            np.testing.assert_array_equal(a.values, b.values)
            assert a.evals == b.evals and set(a.extras) == set(b.extras)
            for key in a.extras:
                np.testing.assert_array_equal(a.extras[key], b.extras[key])
        assert {"bright_steps", "darkenings"} <= set(fixed[0].extras)


def test_regular_mh_pays_n_queries_at_every_new_theta(small_glm):
    chain = fast.rwmh(small_glm, 50, np.random.default_rng(1), step=0.5)
    # The start and every proposal are new thetas; value and gradient at one theta are one.
    assert chain.evals == small_glm.N * 51
    assert chain.extras["draw_evals"][0] == 2 * small_glm.N
    assert np.all(chain.extras["draw_evals"][1:] == small_glm.N)
    assert fast.mala(small_glm, 50, np.random.default_rng(1), step=0.2).evals == small_glm.N * 51


def test_flymc_counts_a_cache_hit_once(small_glm):
    # Every proposal rejected (step 1e3), every dark point proposed (q_db = 1): after the first
    # iteration the dark candidates are cached at the unchanged theta, so an iteration costs
    # only the bright points at the proposal.
    for impl in (reference, fast):
        chain = impl.flymc(small_glm, 30, np.random.default_rng(2), None, "mh", 1e3, q_db=1.0)
        per, bright = chain.extras["draw_evals"], chain.extras["bright"]
        assert not chain.extras["accepted"].any()
        assert per[0] == small_glm.N
        np.testing.assert_array_equal(per[1:], bright[:-1])
        assert chain.evals == per.sum()


def test_flymc_touches_few_data_with_map_tuned_bounds():
    target = build_target("logistic-N200-D10-map")
    chain = fast.flymc(target, 2000, np.random.default_rng(5), None, "mh", 0.3, q_db=0.05)
    per_step = chain.evals / 2000
    assert per_step < 0.15 * target.N
    assert chain.extras["bright"].mean() < 0.05 * target.N


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"q_db": 0.0}, r"'q_db' = 0.0 is invalid; valid: a number in \(0.0, 1.0\]"),
        ({"q_db": 1.5}, "'q_db' = 1.5 is invalid"),
        ({"resample_fraction": -0.1}, "'resample_fraction' = -0.1 is invalid"),
        ({"z_update": "sometimes"}, "'z_update' = 'sometimes' is invalid"),
        ({"step": 0.0}, r"'step' = 0.0 is invalid; valid: a number in \(0.0, inf\)"),
    ],
)
def test_bad_parameters_are_named(small_glm, params, message):
    spec = build_registry().get("flymc-mh")
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    with pytest.raises(ValueError, match=message):
        sample(spec, "numba", small_glm, 10, rng, **params)
    assert rng.bit_generator.state == state


def test_a_start_of_the_wrong_size_is_named(small_glm):
    spec = build_registry().get("rwmh")
    with pytest.raises(ValueError, match=r"x0 has 3 values; valid: None or D = 2"):
        sample(spec, "reference", small_glm, 10, np.random.default_rng(0), x0=[0.0, 1.0, 2.0])


# Slow set (about 15-30 s on 2 cores): keeps the default suite under its 10 minutes.
@pytest.mark.slow
def test_calibration_is_offered_to_a_plugin_posterior_that_can_simulate(tmp_path):
    plugin = str(ROOT / "tests" / "plugins" / "sbc_posterior.py")
    summary = _verify(tmp_path, ("sbc-correct-mh", "sbc-tempered-mh"), ("reference",), (plugin,))
    verdicts = {(v["algorithm"], v["gate"]): v["verdict"] for v in summary["verdicts"]}
    assert verdicts[("sbc-correct-mh", "sbc")] == "pass"
    assert verdicts[("sbc-tempered-mh", "sbc")] == "fail"
