"""The gates' false-failure rate on correct samplers matches their nominal alpha (slow).

For each exact algorithm, 500 independent seeds: each gate's rejection rate at alpha = 0.05
must contain 0.05 in its 99.9% Clopper-Pearson interval, and the p-values must not be far from
uniform. The negative control runs the same sweep on a tempered sampler, which must be rejected
far more often than alpha.
"""

import json

import numpy as np
import pytest
from scipy import stats

from harness.verify.calibration import calibrate, format_calibration, gate_rate
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
    from harness.cli.main import _parse_params

    assert _parse_params(["extra_draws=1", "reuse=true", "name=x"]) == {
        "extra_draws": 1,
        "reuse": True,
        "name": "x",
    }
    with pytest.raises(ValueError, match="is not NAME=VALUE"):
        _parse_params(["reuse"])


def test_looks_double_from_fifty_and_end_at_the_last_seed():
    from harness.verify.calibration import looks

    assert looks(500) == (50, 100, 200, 400, 500)
    assert looks(400) == (50, 100, 200, 400)
    assert looks(20) == (20,)


def test_a_rate_is_accepted_inside_its_zone_and_rejected_outside_both_ways():
    from harness.verify.calibration import decide_rate, zone

    assert zone("test", 0.05, 1.5) == pytest.approx((0.05 / 1.5, 0.075))
    assert zone("bound", 0.05, 1.5) == pytest.approx((0.0, 0.075))
    e = 1e-3
    assert decide_rate(500, 10_000, "test", 0.05, 1.5, e)[0] == "accept"
    assert decide_rate(60, 200, "test", 0.05, 1.5, e)[0] == "reject"  # above
    assert decide_rate(20, 10_000, "test", 0.05, 1.5, e)[0] == "reject"  # below: too cautious
    assert decide_rate(20, 10_000, "combined", 0.05, 1.5, e)[0] == "accept"  # allowed there
    assert decide_rate(10, 200, "test", 0.05, 1.5, e)[0] == "undecided"


def _sequential(p_values: np.ndarray, alpha: float, factor: float, error: float):
    """calibrate's decision on one test gate whose seeds gave ``p_values``, look by look."""
    from harness.verify.calibration import _look, looks

    rows = [{"p_value": float(p), "passed": True, "multiple_testing": True} for p in p_values]
    schedule = looks(len(rows))
    for at in schedule:
        got = _look({"g": rows[:at]}, {}, alpha, factor, error, len(schedule), at, at == len(rows))
        if got:
            return got["g"]
    raise AssertionError("the last look must decide or say undecided")


@pytest.mark.parametrize(
    ("rate_over_alpha", "wrong", "right", "least"),
    [
        (1.0, "reject", "accept", 0.5),
        (1.75, "accept", "reject", 0.2),
        (0.55, "accept", "reject", 0.1),
    ],
)
def test_a_decision_is_wrong_no_more_often_than_its_error_bound(
    rate_over_alpha, wrong, right, least
):
    """At alpha itself a reject is wrong; outside the zone (alpha / 1.5 to 1.5 alpha) an accept
    is. Over 100 simulated calibrations of 1600 seeds at error 0.2, the wrong decision's rate
    stays <= 0.2 (the union bound over looks makes it far smaller: 1 in 400 at alpha, 3 in 400
    at 1.6 alpha), while the right one is taken on a good share of the runs."""
    alpha, runs = 0.05, 100
    c = np.log(alpha) / np.log(rate_over_alpha * alpha)  # P(U^c < alpha) = rate
    rng = np.random.default_rng(int(rate_over_alpha * 100))
    outcomes = [_sequential(rng.random(1600) ** c, alpha, 1.5, 0.2).outcome for _ in range(runs)]
    bad = outcomes.count(wrong)
    assert stats.binomtest(bad, runs, 0.2, alternative="greater").pvalue > 1e-3, outcomes
    assert outcomes.count(right) >= least * runs, outcomes


def test_calibrate_decides_states_power_and_keeps_the_p_value_band():
    result = calibrate("gumbel-max", problem="synthetic-normal-D10-N200", seeds=20, n=300)
    assert result["seeds"] == 20 and result["error"] == 0.001 and result["factor"] == 1.5
    chi = result["gates"]["chi-square"]
    assert chi["decision"]["outcome"] == "undecided" and chi["decision"]["seeds"] == 20
    assert chi["decision_text"].startswith("undecided after 20 seeds: [")
    assert chi["ecdf"]["n"] == 20 and chi["ecdf_side"] == "two-sided"
    assert chi["false_pass"]["measure"] == "Cohen's w" and 0 < chi["detectable"] < 1
    assert chi["gate_n"] == 300
    json.dumps(result)  # what --json writes
    text = format_calibration(result)
    assert "undecided after 20 seeds" in text and "a bug of Cohen's w = 0.1 passes" in text


def test_calibrate_rejects_a_broken_sampler_early_and_stops():
    """Negative control: a tempered sampler's chi-square fails at almost every seed; the first
    look (50 seeds) rejects it, and with every gate decided the run stops there."""
    result = calibrate(
        "broken-temperature",
        problem="synthetic-normal-D10-N200",
        impl="reference",
        seeds=400,
        n=2000,
        alpha=0.05,
        plugins=(BROKEN,),
    )
    chi = result["gates"]["chi-square"]
    assert chi["decision"]["outcome"] == "reject" and chi["decision"]["seeds"] == 50
    assert chi["decision_text"].startswith("reject: rate above 0.075")
    assert not chi["calibrated"] and not result["calibrated"]
    assert chi["ecdf_exits"] > 0  # its p-values leave their band above


def test_calibrate_refuses_a_bad_factor_or_error_before_any_seed():
    with pytest.raises(ValueError, match=r"'factor' = 1\.0"):
        calibrate("gumbel-max", seeds=10, factor=1.0)
    with pytest.raises(ValueError, match=r"'error' = 0\.7"):
        calibrate("gumbel-max", seeds=10, error=0.7)


def test_an_error_rate_gate_states_its_false_pass_rate_in_calibrate():
    result = calibrate("racing-normal", problem="race-normal-D2-N1000-s0.3", seeds=10, n=500)
    fp = result["gates"]["error-rate"]["false_pass"]
    assert fp["measure"] == "error rate" and fp["bound"]
