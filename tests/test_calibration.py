"""The gates' false-failure rate on correct samplers matches their nominal alpha (slow).

For each exact algorithm, 500 independent seeds: each gate's rejection rate at alpha = 0.05
must contain 0.05 in its 99.9% Clopper-Pearson interval, and the p-values must not be far from
uniform. The negative control runs the same sweep on a tempered sampler, which must be rejected
far more often than alpha.
"""

import numpy as np
import pytest

from harness.calibration import calibrate, gate_rate
from tests.conftest import BROKEN


@pytest.mark.slow
@pytest.mark.parametrize(
    ("algorithm", "problem"),
    [
        ("gumbel-max", "synthetic-normal-D10-N200"),
        ("cdf-inversion", "synthetic-normal-D10-N200"),
        ("top-down", "synthetic-normal-D10-N200"),
        ("truncated-gumbel", "truncgumbel-phi0-b1"),
        ("truncated-gumbel", "truncgumbel-phi0-b-3"),
    ],
)
def test_false_failure_rate_matches_alpha(algorithm, problem):
    result = calibrate(algorithm, problem=problem, seeds=500, n=5000, alpha=0.05)
    for gate, g in result["gates"].items():
        assert g["calibrated"], (gate, g)


@pytest.mark.slow
def test_calibration_sweep_rejects_a_broken_sampler():
    result = calibrate(
        "broken-temperature",
        problem="synthetic-normal-D10-N200",
        impl="reference",
        seeds=100,
        n=5000,
        alpha=0.05,
        plugins=(BROKEN,),
    )
    assert result["gates"]["chi-square"]["rate"] > 0.5
    assert not result["calibrated"]


def test_calibrate_runs_an_approximate_sampler_with_its_verify_parameters():
    result = calibrate("racing-normal", problem="race-normal-D2-N1000-s0.3", seeds=10, n=500)
    assert result["params"]["exact_answer"] is True
    kinds = {g: r["kind"] for g, r in result["gates"].items()}
    assert kinds["error-rate"] == "bound" and kinds["tv"] == "bound"


def test_gate_rate_judges_each_kind_by_its_own_null():
    rng = np.random.default_rng(0)
    uniform = [{"p_value": p, "passed": True, "multiple_testing": True} for p in rng.random(2000)]
    assert gate_rate("chi-square", uniform, 0.05).calibrated
    # Too many small p-values: a miscalibrated test, whatever its kind.
    small = [{**r, "p_value": r["p_value"] ** 1.5} for r in uniform]
    assert not gate_rate("chi-square", small, 0.05).calibrated
    assert not gate_rate("transition-consistency", small, 0.05).calibrated
    # Bonferroni-merged p-values are super-uniform: calibrated as "combined", not as a test.
    merged = [{**r, "p_value": min(1.0, 2 * r["p_value"])} for r in uniform]
    assert gate_rate("transition-consistency", merged, 0.05).calibrated
    assert not gate_rate("chi-square", merged, 0.05).calibrated
    # A bound gate: failures counted, must not exceed alpha.
    bound = [
        {"p_value": None, "passed": i % 10 != 0, "multiple_testing": False} for i in range(500)
    ]
    assert gate_rate("error-rate", bound, 0.05).kind == "bound"
    assert not gate_rate("error-rate", bound, 0.05).calibrated


def test_seeds_where_a_test_gate_made_no_test_are_no_trials():
    rng = np.random.default_rng(1)
    tested = [
        {"p_value": p, "passed": p >= 0.01, "multiple_testing": True} for p in rng.random(900)
    ]
    untested = [{"p_value": None, "passed": True, "multiple_testing": False}] * 100
    rate = gate_rate("pair-independence", tested + untested, 0.05)
    assert rate.kind == "test" and rate.trials == 900
    assert rate.failed == sum(r["p_value"] < 0.05 for r in tested)
    # A failure without a p-value is still a failure, judged as a bound.
    failed = [{"p_value": None, "passed": False, "multiple_testing": False}]
    assert gate_rate("pair-independence", tested + failed, 0.05).failed >= 1


def test_calibrate_takes_a_variant_s_parameters_and_checks_them_first():
    result = calibrate(
        "os-star", problem="peaky-exponential-a10", seeds=10, n=200, params={"strategy": 2}
    )
    assert result["params"] == {"strategy": 2}
    # ks-marginals merges one KS per coordinate by Holm: judged as a combined gate.
    assert (
        gate_rate(
            "ks-marginals", [{"p_value": 0.5, "passed": True, "multiple_testing": True}], 0.05
        ).kind
        == "combined"
    )
    with pytest.raises(ValueError, match="no parameter 'strategi'"):
        calibrate("os-star", problem="peaky-exponential-a10", seeds=10, params={"strategi": 2})


def test_the_cli_reads_param_values_as_json():
    from harness.cli import _parse_params

    assert _parse_params(["extra_draws=1", "reuse=true", "name=x"]) == {
        "extra_draws": 1,
        "reuse": True,
        "name": "x",
    }
    with pytest.raises(ValueError, match="is not NAME=VALUE"):
        _parse_params(["reuse"])
