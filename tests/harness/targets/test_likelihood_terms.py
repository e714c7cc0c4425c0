"""Discrete targets of likelihood terms computed on demand (harness.targets.likelihood_terms)."""

import math

import numpy as np
import pytest
from numba import njit

from harness.checks.draws import approximate_gates, exactness_gates
from harness.checks.gate_sets import check_target
from harness.gates.exactness import chisquare_gof
from harness.spec import sample
from harness.speed.ratios import format_racing_speed, racing_speed
from harness.targets.catalog import build_target
from harness.targets.likelihood_terms import (
    LikelihoodTarget,
    log_term,
    logistic_candidates,
    studentt_candidates,
)
from implementations.racing import reference as racing_reference

PROBLEMS = ("logistic-terms-D6-N500", "studentt-terms-D5-N400")


@njit
def _compiled_terms(model, X, y, theta, nu, scale):
    out = np.empty((theta.shape[0], X.shape[0]))
    for i in range(theta.shape[0]):
        for n in range(X.shape[0]):
            out[i, n] = log_term(model, X, y, theta, nu, scale, i, n)
    return out


@pytest.mark.parametrize("name", PROBLEMS)
def test_reference_terms_equal_the_compiled_terms_bit_for_bit(name):
    t = build_target(name)
    compiled = _compiled_terms(t.model_code, t.X, t.y, t.theta, t.nu, t.scale)
    assert np.array_equal(t.terms(range(t.D), range(t.N)), compiled)
    check_target(name, "discrete-likelihood", t)


def test_the_truth_is_the_exact_sum_of_the_terms():
    t = logistic_candidates(300, 4, 3, 10.0, 1)
    X, theta = t.X, t.theta
    z = t.y[None, :] * (theta @ X.T)
    direct = -np.logaddexp(0.0, -z).sum(axis=1)
    assert np.allclose(t.log_unnormalised, direct, rtol=0, atol=1e-9)
    assert math.isclose(t.pmf.sum(), 1.0)
    assert np.all(t.reward_range > 0)


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"model": "probit"}, "'model' = 'probit'"),
        ({"y": np.array([1.0, 0.0, 1.0])}, "y contains 0.0"),
        ({"theta": np.zeros((2, 3))}, r"theta has shape \(2, 3\)"),
        ({"X": np.full((3, 2), np.nan)}, r"X\[0, 0\] = nan"),
        ({"nu": -1.0}, "'nu' = -1.0"),
        ({"X": np.zeros((0, 2)), "y": np.zeros(0)}, r"X has shape \(0, 2\)"),
    ],
)
def test_bad_input_is_refused_naming_the_value(change, match):
    args = {
        "model": "logistic",
        "X": np.ones((3, 2)),
        "y": np.array([1.0, -1.0, 1.0]),
        "theta": np.zeros((2, 2)),
    }
    args.update(change)
    with pytest.raises(ValueError, match=match):
        LikelihoodTarget(**args)


@pytest.mark.parametrize("name", PROBLEMS)
@pytest.mark.parametrize(
    ("algorithm", "params"),
    [
        ("gumbel-max", {}),
        ("racing-normal", {"exact_answer": True}),
        ("racing-normal", {"exact_answer": True, "variance": "marginal"}),
        ("racing-ebs", {"exact_answer": True, "m1": 3}),
    ],
)
def test_reference_and_numba_agree_on_computed_terms(registry, name, algorithm, params):
    t = build_target(name)
    spec = registry.get(algorithm)
    out = {}
    for impl in ("reference", "numba"):
        rng = np.random.default_rng(11)
        draws = sample(spec, impl, t, 40, rng, **params)
        out[impl] = (draws, rng.bit_generator.state)
    (a, sa), (b, sb) = out["reference"], out["numba"]
    assert np.array_equal(a.values, b.values) and a.evals == b.evals and sa == sb
    assert a.extras.keys() == b.extras.keys()
    assert all(np.array_equal(a.extras[k], b.extras[k]) for k in a.extras)


def test_exact_draws_pass_and_a_sampler_that_reads_half_the_data_fails(registry):
    """Negative control: gumbel-max on the first N/2 data only (a subsample taken for the
    whole) draws from another pmf, which the chi-square gate must reject."""
    t = build_target("logistic-terms-D6-N500")
    spec = registry.get("gumbel-max")
    good = sample(spec, "numba", t, 20_000, np.random.default_rng(3))
    verdicts = exactness_gates(spec, t, good, 1e-3)
    assert all(v.passed for v in verdicts), verdicts
    half = LikelihoodTarget("logistic", t.X[:250], t.y[:250], t.theta)
    bad = sample(spec, "numba", half, 20_000, np.random.default_rng(3))
    assert not chisquare_gof(bad.values, t.pmf, 1e-3).passed


def test_a_race_without_its_bound_fails_the_error_rate_gate(registry):
    """Negative control: B_Normal left at 0 eliminates every arm but the leader after the first
    mini-batch; on close candidates the answer then differs from the exact one far above delta."""
    t = build_target("logistic-terms-D6-N500")
    spec = registry.get("racing-normal")
    params = {"delta": 0.05, "exact_answer": True}
    good = sample(spec, "numba", t, 4000, np.random.default_rng(4), **params)
    assert all(v.passed for v in approximate_gates(spec, t, good, 1e-3, params))
    # 1,000 draws of the Python race: it errs in about 64% of them (Clopper-Pearson [0.59,
    # 0.70] against delta 0.05; 2563 of 4000 at the earlier size, 7 s of the test's 8).
    bad = racing_reference.racing(
        t, 1000, np.random.default_rng(4), 0.05, 50, "normal", "pairwise", True,
        solve_b=lambda d, N, m1: 0.0,
    )  # fmt: skip
    gates = {v.gate: v for v in approximate_gates(spec, t, bad, 1e-3, params)}
    assert not gates["error-rate"].passed


def test_the_racing_speed_table_holds_computed_rows_to_the_limit():
    cases = (("precomputed", "normal", 1e-3), ("computed", "student-t", 300.0))
    result = racing_speed(D=4, N=4000, repeat=3, cases=cases)
    pre, comp = result["rows"]
    assert pre["limit"] is None and pre["within"] is None
    assert comp["limit"] == 0.7 and comp["within"] == (comp["ratio"] >= 0.7)
    assert all(r["saving"] >= 1.0 and r["speedup"] > 0 for r in result["rows"])
    table = format_racing_speed(result)
    assert "speedup/saving" in table and ">= 0.7" in table


def test_studentt_candidates_fall_off_with_their_distance():
    t = studentt_candidates(2000, 6, 4, 200.0, 5)
    assert int(np.argmax(t.pmf)) == 0 and t.pmf[-1] < 1e-6
