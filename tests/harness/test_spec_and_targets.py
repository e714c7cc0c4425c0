import math

import numpy as np
import pytest

from harness.spec import AlgorithmSpec, Chain, Check, Param, check_x0, sample
from harness.targets import DiscreteFactorTarget, TruncatedGumbelTarget, synthetic_rewards
from harness.targets.catalog import PROBLEMS, problems
from harness.targets.factor_graph import random_factor_graph
from harness.targets.posterior import studentt_posterior


def test_param_checks_name_value_and_range():
    p = Param("delta", 0.1, float, 0.0, 1.0, low_inclusive=False, high_inclusive=False)
    assert p.check(0.5) == 0.5
    for bad in (0.0, 1.0, -1, math.nan, "x", True):
        with pytest.raises(ValueError, match=r"'delta' = .* valid: a number in \(0.0, 1.0\)"):
            p.check(bad)
    m1 = Param("m1", 50, int, 2)
    assert m1.check(10.0) == 10
    with pytest.raises(ValueError, match="m1"):
        m1.check(2.5)
    with pytest.raises(ValueError, match="one of"):
        Param("variance", "pairwise", str, choices=("pairwise", "marginal")).check("both")


def _fn(target, n, rng):
    raise AssertionError("must not be called")


def test_spec_rejects_inconsistent_declarations():
    with pytest.raises(ValueError, match="guarantee"):
        AlgorithmSpec("x", "f", "p", "maybe", ("discrete",), {"reference": _fn})
    with pytest.raises(ValueError, match="delta"):
        AlgorithmSpec("x", "f", "p", "approximate", ("discrete",), {"reference": _fn})
    with pytest.raises(ValueError, match="no implementations"):
        AlgorithmSpec("x", "f", "p", "exact", ("discrete",), {})
    with pytest.raises(ValueError, match="flag"):
        AlgorithmSpec(
            "x",
            "f",
            "p",
            "exact",
            ("discrete",),
            {"reference": _fn},
            params=(Param("flag", False, bool),),
            checks=(Check({"flag": 3}),),
        )


def test_a_stated_conditional_error_needs_gibbs_steps_and_a_valid_value():
    def gibbs(**extra):
        kind = ("factor-graph",)
        return AlgorithmSpec(
            "x", "f", "p", "mcmc", kind, {"reference": _fn}, entry="run_chain", **extra
        )

    assert gibbs(conditional_steps=True, conditional_error=0.01).conditional_error == 0.01
    with pytest.raises(ValueError, match=r"'conditional_error' = 1.5 is invalid.*\[0.0, 1.0\)"):
        gibbs(conditional_steps=True, conditional_error=1.5)
    with pytest.raises(ValueError, match="unless conditional_steps=True"):
        gibbs(conditional_error=0.01)


def test_sample_validates_before_calling(small_discrete):
    spec = AlgorithmSpec("x", "f", "p", "exact", ("discrete",), {"reference": _fn})
    with pytest.raises(ValueError, match="no implementation 'numba'"):
        sample(spec, "numba", small_discrete, 5, np.random.default_rng(0))
    with pytest.raises(ValueError, match="continuous-1d"):
        sample(spec, "reference", TruncatedGumbelTarget(0, 1), 5, np.random.default_rng(0))


def _recording_chain(calls):
    def run_chain(target, n_steps, rng, x0=None, **params):
        calls.append(x0)
        return Chain(np.zeros(n_steps), 0)

    return run_chain


def _chain_spec(kinds, calls):
    return AlgorithmSpec(
        "walk", "f", "p", "mcmc", kinds, {"reference": _recording_chain(calls)}, entry="run_chain"
    )


def test_sample_passes_x0_to_a_chain_only_when_given():
    calls = []
    spec = _chain_spec(("posterior-1d",), calls)
    target = studentt_posterior(50, 1.0, 4.0, np.random.default_rng(0))
    sample(spec, "reference", target, 3, np.random.default_rng(0))
    sample(spec, "reference", target, 3, np.random.default_rng(0), x0=1.5)
    sample(spec, "reference", target, 3, np.random.default_rng(0), x0=np.float64(-2))
    assert calls == [None, 1.5, -2.0]


@pytest.mark.parametrize(
    ("x0", "why"),
    [
        ([1.0, 2.0], r"shape \(2,\), expected \(\)"),
        (math.nan, "not finite"),
        ("1.0", "expected numbers"),
        (True, "expected numbers"),
    ],
)
def test_sample_checks_x0_of_a_1d_target(x0, why):
    calls = []
    target = studentt_posterior(50, 1.0, 4.0, np.random.default_rng(0))
    with pytest.raises(ValueError, match=rf"x0 = .* is invalid \({why}\); valid: None or a single"):
        sample(_chain_spec(("posterior-1d",), calls), "reference", target, 3, rng(), x0=x0)
    assert calls == []


def test_sample_checks_x0_length_on_a_factor_graph():
    calls = []
    spec = _chain_spec(("factor-graph",), calls)
    target = random_factor_graph(3, 2, np.random.default_rng(0))
    sample(spec, "reference", target, 2, rng(), x0=[0, 1, 0])
    assert [list(c) for c in calls] == [[0, 1, 0]]
    for bad, why in (([0, 1], r"shape \(2,\)"), ([0, 1, np.inf], "not finite")):
        with pytest.raises(ValueError, match=rf"x0 = .*\({why}.*valid: None or 3 finite numbers"):
            sample(spec, "reference", target, 2, rng(), x0=bad)
    with pytest.raises(ValueError, match="not array-like"):
        sample(spec, "reference", target, 2, rng(), x0=[[0], [1, 0]])
    assert len(calls) == 1


def test_x0_summary_is_short_for_long_states():
    target = random_factor_graph(3, 2, np.random.default_rng(0))
    with pytest.raises(ValueError) as info:
        check_x0(np.arange(1000.0), target)
    assert "ndarray of shape (1000,)" in str(info.value) and len(str(info.value)) < 200


def test_sample_rejects_x0_for_independent_draws(small_discrete):
    spec = AlgorithmSpec("x", "f", "p", "exact", ("discrete",), {"reference": _fn})
    with pytest.raises(ValueError, match=r"x0 = 0 is invalid: 'x' draws independent samples"):
        sample(spec, "reference", small_discrete, 5, rng(), x0=0)


def test_real_chains_take_x0_through_sample():
    from harness.registry import build_registry

    spec = build_registry().get("gibbs")
    target = random_factor_graph(3, 2, np.random.default_rng(0))
    x0 = np.array([1, 0, 1])
    default = sample(spec, "reference", target, 1, rng())
    started = sample(spec, "reference", target, 1, rng(), x0=x0)
    assert np.sum(started.values[0] != x0) <= 1  # one Gibbs update from x0
    direct = spec.implementation("reference")(target, 1, rng(), x0=x0, **spec.validate({}))
    assert np.array_equal(started.values, direct.values)
    assert default.values.shape == started.values.shape


def rng():
    return np.random.default_rng(0)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_discrete_target_rejects_non_finite_weights(bad):
    lf = np.zeros((3, 4))
    lf[1, 2] = bad
    with pytest.raises(ValueError, match=r"log_factors\[1, 2\] = .*valid: finite"):
        DiscreteFactorTarget(lf)
    with pytest.raises(ValueError, match=r"log_f0\[0\]"):
        DiscreteFactorTarget(np.zeros((3, 4)), np.array([bad, 0.0, 0.0]))


def test_discrete_target_rejects_empty_and_misshapen_input():
    with pytest.raises(ValueError, match="D >= 1"):
        DiscreteFactorTarget(np.zeros((0, 5)))
    with pytest.raises(ValueError, match="2-dimensional"):
        DiscreteFactorTarget(np.zeros(5))
    with pytest.raises(ValueError, match="log_f0 has 2"):
        DiscreteFactorTarget(np.zeros((3, 5)), np.zeros(2))


def test_exact_pmf_of_a_factor_target():
    lf = np.log(np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))
    t = DiscreteFactorTarget(lf, np.log([1.0, 1.0, 2.0]))
    w = np.array([2.0, 12.0, 60.0])
    np.testing.assert_allclose(t.pmf, w / w.sum(), rtol=1e-15)
    assert t.log_normaliser == pytest.approx(math.log(74.0), rel=1e-15)


@pytest.mark.parametrize("dist", ["normal", "uniform", "lognormal"])
def test_synthetic_family_hits_its_pmf_and_variance(dist):
    pmf = np.array([0.5, 0.3, 0.2])
    t = synthetic_rewards(3, 5000, dist, 0.7, np.random.default_rng(1), pmf=pmf)
    np.testing.assert_allclose(t.pmf, pmf, rtol=1e-9)
    np.testing.assert_allclose(t.log_factors.std(axis=1), 0.7, rtol=1e-9)
    with pytest.raises(ValueError, match="distribution"):
        synthetic_rewards(3, 10, "cauchy", 1.0, np.random.default_rng(0))
    with pytest.raises(ValueError, match="D = 0"):
        synthetic_rewards(0, 10, dist, 1.0, np.random.default_rng(0))


def test_truncated_gumbel_target():
    t = TruncatedGumbelTarget(0.0, 1.0)
    g = np.linspace(-3, 1, 9)
    assert np.all(np.diff(t.cdf(g)) > 0) and t.cdf(np.array([1.0]))[0] == 1.0
    with pytest.raises(ValueError, match="b = nan"):
        TruncatedGumbelTarget(0.0, math.nan)


def test_catalog_builds_every_problem_deterministically():
    assert problems("discrete", "quick") and problems("continuous-1d", "quick")
    for p in PROBLEMS:
        a, b = p.build(), p.build()
        if p.kind == "discrete":
            np.testing.assert_array_equal(a.log_factors, b.log_factors)
    with pytest.raises(ValueError, match="level"):
        problems("discrete", "medium")
