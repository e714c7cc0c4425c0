"""Every feature a target kind allows is exercised by some quick-level verification problem."""

import numpy as np

from harness.checks.cases import plan_cases
from harness.registry import build_registry
from harness.spec import sample
from harness.targets.catalog import LONG_SUM, build_target, problems
from implementations.racing import RACE_PROBLEMS


def _quick(kind):
    return [build_target(p.name) for p in problems(kind, "quick")]


def test_a_discrete_problem_has_a_prior_term_as_large_as_a_factor():
    spreads = [
        (float(np.std(t.log_f0)), float(np.median(np.std(t.log_factors, axis=0))))
        for t in _quick("discrete")
    ]
    assert any(f0 > 0.5 * factor for f0, factor in spreads), spreads


def test_a_discrete_problem_has_ties_and_probability_zero_states():
    def has_both(t):
        lu = np.asarray(t.log_unnormalised)
        return np.any(t.pmf == 0.0) and np.unique(lu).size < lu.size

    assert any(has_both(t) for t in _quick("discrete"))


def test_truncated_gumbel_problems_reach_both_far_tails():
    gaps = [t.b - t.phi for t in _quick("continuous-1d")]
    assert min(gaps) <= -30 and max(gaps) >= 30


def test_the_delta_grid_includes_a_long_race():
    target = build_target("race-long-D30-N500")
    spec = build_registry().get("racing-normal")
    draws = sample(
        spec, "numba", target, 500, np.random.default_rng(0), delta=0.1, exact_answer=True
    )
    read = float(np.mean(draws.extras["draw_evals"])) / (target.D * target.N)
    assert read > 0.15  # races run through a good part of the data
    grid = {
        c.params.get("delta")
        for c in plan_cases([spec], "quick")
        if c.problem == "race-long-D30-N500"
    }
    assert "race-long-D30-N500" in RACE_PROBLEMS and {1e-3, 1e-2, 0.05, 0.1} <= grid


def test_a_factor_graph_problem_has_tied_states():
    tied = [
        t
        for t in _quick("factor-graph")
        if t.D**t.n_vars <= 4096 and np.unique(np.round(np.log(t.pmf), 12)).size < t.pmf.size
    ]
    assert tied


def test_a_chi_square_fails_any_draw_of_a_probability_zero_state():
    from harness.gates import chisquare_gof

    target = build_target("ties-zeros-D12-N50")
    zero = int(np.flatnonzero(target.pmf == 0.0)[0])
    values = np.random.default_rng(0).choice(target.D, 20000, p=target.pmf)
    assert chisquare_gof(values, target.pmf, 1e-6).passed
    values[17] = zero
    bad = chisquare_gof(values, target.pmf, 1e-6)
    assert not bad.passed and "probability-0" in bad.detail


def test_a_discrete_problem_has_log_weights_a_float32_sum_cannot_hold():
    # float32 keeps about 7 digits: a running sum of 4e4 terms near -2e4 drifts by far more than
    # the spread of log p~ a chi-square test resolves.
    target = build_target(LONG_SUM)
    lf = target.log_factors
    exact = lf.sum(axis=1)
    f32 = np.cumsum(lf.astype(np.float32), axis=1, dtype=np.float32)[:, -1].astype(float)
    drift = (f32 - exact) - np.mean(f32 - exact)
    assert LONG_SUM in {p.name for p in problems("discrete", "quick")}
    assert np.std(drift) > 0.1


def test_races_skip_the_long_sum_problem_and_exact_samplers_run_it():
    registry = build_registry()
    on_long = {c.algorithm for c in plan_cases(list(registry), "quick") if c.problem == LONG_SUM}
    assert "gumbel-max" in on_long
    assert not on_long & {"racing-normal", "racing-ebs"}
