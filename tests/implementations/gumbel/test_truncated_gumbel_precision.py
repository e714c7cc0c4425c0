"""TruncGumbel(phi, b) by inversion must stay accurate in both tails (001, footnote 1).

The truth is G = phi - log(E + exp(phi - b)) evaluated with 800 significant digits (mpmath).
"""

import math

import mpmath
import numpy as np
import pytest

from implementations.shared import fast, reference

mpmath.mp.dps = 800  # enough that 1 + 1e-300 and e^-700 stay exact
E_GRID = [1e-300, 1e-30, 1e-12, 1e-6, 0.01, 0.3, 1.0, 2.5, 10.0, 40.0, 700.0]
GAPS = [-700.0, -30.0, -5.0, -1e-9, 0.0, 1e-9, 5.0, 30.0, 700.0]  # b - phi


def exact(phi, b, e):
    phi, b, e = mpmath.mpf(phi), mpmath.mpf(b), mpmath.mpf(e)
    return phi - mpmath.log(e + mpmath.exp(phi - b))


def ulps(value, truth, *scale):
    """Error in units in the last place of the largest magnitude involved.

    G = phi - log(...) cancels when G is near 0 but phi is not; no double-precision formula
    does better than an ulp of phi there, so that is the yardstick.
    """
    return abs(value - float(truth)) / math.ulp(max([abs(float(truth)), *(abs(v) for v in scale)]))


@pytest.mark.parametrize("phi", [0.0, 3.7, -12.0])
@pytest.mark.parametrize("gap", GAPS)
def test_both_implementations_within_a_few_ulps(phi, gap):
    b = phi + gap
    for e in E_GRID:
        truth = exact(phi, b, e)
        ref = reference.trunc_gumbel_from_exponential(phi, b, e)
        got = fast.trunc_gumbel_from_exponential(phi, b, e)
        assert ref == got
        assert ulps(ref, truth, phi, b) <= 4, (phi, b, e, ref, float(truth))
        assert ref <= b


def test_the_tails_named_in_the_issue():
    # b - phi = -30: G sits within E * e^-30 of b; b - phi = +30: G is nearly Gumbel(phi).
    for e in (1e-3, 1.0, 7.0):
        below = reference.trunc_gumbel_from_exponential(0.0, -30.0, e)
        assert ulps(below, exact(0.0, -30.0, e)) <= 2
        above = reference.trunc_gumbel_from_exponential(0.0, 30.0, e)
        assert ulps(above, exact(0.0, 30.0, e)) <= 2
        assert above < -math.log(e)  # the truncation only ever lowers the draw


def naive(phi, b, e):
    """The CDF inverted literally: G = phi - log(-log(U F(b))), U = exp(-E) times F(b)."""
    u = math.exp(-e) * math.exp(-math.exp(phi - b))
    return phi - math.log(-math.log(u)) if 0.0 < u < 1.0 else math.nan


def test_negative_control_the_naive_inversion_fails_in_the_tails():
    # Lower tail: F(b) = exp(-e^30) underflows to 0. Upper tail: U F(b) rounds to 1 for small E.
    assert math.isnan(naive(0.0, -30.0, 1.0))
    bad = naive(0.0, 30.0, 1e-17)
    assert math.isnan(bad) or ulps(bad, exact(0.0, 30.0, 1e-17)) > 1e6


def test_cdf_of_the_target_is_stable(small_trunc):
    from harness.targets.continuous import TruncatedGumbelTarget

    t = TruncatedGumbelTarget(0.0, -30.0)
    g = np.array([-30.0 - 1e-12, -30.0 - 1e-14, -30.0])
    cdf = t.cdf(g)
    truth = [
        float(mpmath.exp(-mpmath.exp(30) * mpmath.expm1(mpmath.mpf(-30.0) - mpmath.mpf(x))))
        for x in g
    ]
    np.testing.assert_allclose(cdf, truth, rtol=1e-9)
    assert small_trunc.cdf(np.array([small_trunc.b + 1.0]))[0] == 1.0
