"""Power stated both ways: beside the smallest effect a gate detects with power 0.8
(``GateResult.detectable``), the probability that it passes a bug of a named size at its n and
alpha (its false-pass rate), as TensorFlow Probability's ``statistical_testing`` module states
both error rates of its DKWM-based assertions.

The named sizes are fixed, so that gates and runs compare: a CDF off by 0.05 somewhere (KS), a
law at Cohen's w = 0.1 ("small", Cohen 1988), an error rate twice the promised delta.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy import stats

#: The named bug of each measure (module docstring).
KS_EFFECT = 0.05
CHISQUARE_EFFECT = 0.1
ERROR_RATE_FACTOR = 2.0
#: KS: scipy's exact p-value up to this n, the asymptotic one above (as in ks_1samp).
KS_EXACT_MAX_N = 10_000
#: Points of F(x*) over which the KS bound is maximised.
_KS_GRID = 2001


@dataclass(frozen=True)
class FalsePass:
    """``rate``: the probability of passing a bug of size ``effect`` (in ``measure``) at the
    gate's n and alpha; ``bound`` says whether it holds for every such bug (an upper bound) or
    for the usual model of one (an approximation)."""

    rate: float
    effect: float
    measure: str
    bound: bool

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any] | FalsePass) -> FalsePass:
        if isinstance(d, FalsePass):
            return d
        return cls(float(d["rate"]), float(d["effect"]), str(d["measure"]), bool(d["bound"]))

    def text(self) -> str:
        """E.g. 'a bug of sup |F - F0| = 0.05 passes with probability <= 0.003'."""
        rel = "<=" if self.bound else "~"
        return (
            f"a bug of {self.measure} = {self.effect:.3g} passes with probability {rel} "
            f"{self.rate:.2g}"
        )


def _check(name: str, value: float, low: float, high: float) -> None:
    if not (low < value < high):
        raise ValueError(f"{name} = {value!r} is invalid; valid: {low} < {name} < {high}")


def ks_critical(n: int, alpha: float) -> float:
    """The largest sup |F_n - F0| the one-sample KS passes at level alpha (the p-value ks_1samp
    computes: exact up to KS_EXACT_MAX_N draws, asymptotic above)."""
    if n <= KS_EXACT_MAX_N:
        return float(stats.kstwo.isf(alpha, n))
    return float(stats.kstwobign.isf(alpha)) / math.sqrt(n)


def ks_false_pass(
    n: int, alpha: float, effect: float = KS_EFFECT, measure: str = "sup |F - F0|"
) -> FalsePass:
    """Largest probability that the one-sample KS at ``alpha`` passes n draws from any law whose
    CDF F is ``effect`` away from F0 somewhere: an upper bound for every such bug.

    At a point x* with F(x*) = F0(x*) + effect, n F_n(x*) ~ Binomial(n, p = F(x*)), and a pass
    needs F_n(x*) <= F0(x*) + c (c the critical value), so P(pass) <= P(Bin(n, p) <= n (p -
    effect + c)); maximised over p (the other sign mirrors it). With the binomial's spread at
    p = 1/2 this is the normal approximation ``ks_detectable`` inverts at power 0.8.
    """
    _check("alpha", alpha, 0.0, 1.0)
    _check("effect", effect, 0.0, 1.0)
    if n < 1:
        raise ValueError(f"n = {n!r} is invalid; valid: n >= 1")
    c = ks_critical(n, alpha)
    p = np.linspace(effect, 1.0, _KS_GRID)
    # The small slack keeps n (p - effect + c) from flooring below an integer it equals.
    k = np.floor(n * (p - effect + c) + 1e-9)
    rate = float(np.max(stats.binom.cdf(k, n, p)))
    return FalsePass(min(rate, 1.0), effect, measure, True)


def chisquare_false_pass(
    n: int, bins: int, alpha: float, effect: float = CHISQUARE_EFFECT
) -> FalsePass:
    """1 - power of Pearson's chi-square over ``bins`` cells at Cohen's w = ``effect``
    (noncentral chi-square with n w^2, statsmodels): the usual approximation, not a bound."""
    _check("alpha", alpha, 0.0, 1.0)
    if bins < 2:
        return FalsePass(1.0, effect, "Cohen's w", False)
    from statsmodels.stats.power import GofChisquarePower  # pandas with it: on first use

    power = GofChisquarePower().power(effect_size=effect, nobs=n, alpha=alpha, n_bins=bins)
    return FalsePass(float(min(max(1.0 - power, 0.0), 1.0)), effect, "Cohen's w", False)


def error_rate_false_pass(
    n: int, delta: float, alpha: float, factor: float = ERROR_RATE_FACTOR
) -> FalsePass:
    """Probability that the error-rate gate (rates.error_rate: pass when the one-sided
    Clopper-Pearson upper bound at ``alpha`` is <= delta) passes a sampler whose error rate is
    ``factor * delta``: exact (binomial), for every such sampler."""
    _check("alpha", alpha, 0.0, 1.0)
    _check("delta", delta, 0.0, 1.0)
    if n < 1:
        raise ValueError(f"n = {n!r} is invalid; valid: n >= 1")
    bad = min(factor * delta, 1.0)
    k = np.arange(0, math.ceil(n * delta) + 1)
    # One-sided Clopper-Pearson upper bound of k errors in n (k = n has bound 1).
    upper = np.where(k < n, stats.beta.ppf(1.0 - alpha, k + 1, np.maximum(n - k, 1)), 1.0)
    passing = k[upper <= delta]
    rate = float(stats.binom.cdf(passing.max(), n, bad)) if passing.size else 0.0
    return FalsePass(rate, bad, "error rate", True)
