"""Power stated both ways: each false-pass rate checked against the gate it describes, run on
planted bugs of the named size."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from harness.gates.exactness import chisquare_gof, ks_1samp, ks_detectable
from harness.gates.power import (
    FalsePass,
    chisquare_false_pass,
    error_rate_false_pass,
    ks_false_pass,
)
from harness.gates.rates import error_rate


def _interval(passes: int, trials: int) -> tuple[float, float]:
    res = stats.binomtest(passes, trials)
    ci = res.proportion_ci(0.999, method="exact")
    return ci.low, ci.high


def test_the_ks_bound_holds_for_a_bug_of_the_named_size():
    """A CDF with a step of 0.05 at 1/2 (F = F0 + 0.05 on [0.45, 0.5)): the gate passes it no
    more often than the bound says, and the bound is not vacuous there."""
    n, alpha, effect = 1500, 0.01, 0.05
    bound = ks_false_pass(n, alpha, effect)
    assert bound.bound and 0.05 < bound.rate < 0.95
    rng = np.random.default_rng(0)
    passes, trials = 0, 300
    for _ in range(trials):
        u = rng.random(n)
        # Mass of [0.45, 0.5) moved to [0.4, 0.45): F(x) - x = 0.05 at x = 0.45.
        u = np.where((u >= 0.45) & (u < 0.5), u - 0.05, u)
        passes += ks_1samp(u, lambda x: np.clip(x, 0, 1), alpha).passed
    low, _ = _interval(passes, trials)
    assert low <= bound.rate, (passes, bound.rate)


def test_the_ks_bound_meets_the_detectable_effect_at_power_0_8():
    for n, alpha in ((200, 0.05), (20_000, 1e-6)):
        rate = ks_false_pass(n, alpha, ks_detectable(n, alpha)).rate
        assert 0.1 < rate < 0.3, (n, alpha, rate)
    # More draws, fewer false passes.
    assert ks_false_pass(400, 0.01).rate > ks_false_pass(4000, 0.01).rate


def test_the_chisquare_rate_matches_the_gate_on_a_law_at_w_0_1():
    pmf = np.full(4, 0.25)
    # q - p = +-0.025 in each cell: w = sqrt(sum (q - p)^2 / p) = 0.1.
    bad = pmf + np.array([0.025, -0.025, 0.025, -0.025])
    n, alpha = 1000, 0.01
    predicted = chisquare_false_pass(n, 4, alpha)
    assert not predicted.bound and predicted.effect == 0.1
    rng = np.random.default_rng(1)
    trials = 400
    passes = sum(chisquare_gof(rng.choice(4, n, p=bad), pmf, alpha).passed for _ in range(trials))
    low, high = _interval(passes, trials)
    assert low <= predicted.rate <= high, (passes, predicted.rate)
    assert chisquare_gof(rng.choice(4, n, p=pmf), pmf, alpha).false_pass == predicted


def test_the_error_rate_rate_is_exact_against_the_gate():
    n, delta, alpha = 2000, 0.01, 0.01
    fp = error_rate_false_pass(n, delta, alpha)
    assert fp.effect == 2 * delta and fp.bound
    # The gate itself over every error count: the pass set it implies, weighted exactly.
    passing = [k for k in range(0, 41) if error_rate(k, n, delta, alpha).passed]
    assert passing == list(range(len(passing)))
    exact = stats.binom.cdf(passing[-1], n, 2 * delta) if passing else 0.0
    assert fp.rate == pytest.approx(exact, rel=1e-12)
    # Too few draws to prove delta at all: the gate passes nothing, buggy or not.
    assert error_rate_false_pass(100, 0.01, 0.01).rate == 0.0


def test_false_pass_text_and_round_trip():
    fp = ks_false_pass(1000, 0.01)
    assert FalsePass.from_dict(fp.to_dict()) == fp
    assert fp.text().startswith("a bug of sup |F - F0| = 0.05 passes with probability <= ")


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: ks_false_pass(100, 0.0), "alpha = 0.0"),
        (lambda: ks_false_pass(100, 0.01, effect=1.5), "effect = 1.5"),
        (lambda: ks_false_pass(0, 0.01), "n = 0"),
        (lambda: error_rate_false_pass(100, 0.0, 0.01), "delta = 0.0"),
        (lambda: chisquare_false_pass(100, 3, 1.0), "alpha = 1.0"),
    ],
)
def test_bad_parameters_are_refused_by_name(call, name):
    with pytest.raises(ValueError, match=name):
        call()
