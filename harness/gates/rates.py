"""Gates for approximate samplers: error rate against delta, and total variation.

000, Prop. 1: if a sampler returns the exact argmax with probability >= 1 - delta for any
Gumbel noise, the total variation to the target is <= delta. The error-rate gate checks the
premise directly (same noise, exact answer known); the TV gate checks the conclusion.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from harness.gates.power import error_rate_false_pass
from harness.gates.result import GateResult
from harness.spec import Param


def clopper_pearson(k: ArrayLike, n: ArrayLike, alpha: float) -> tuple[Any, Any]:
    """The two-sided Clopper-Pearson interval of k successes in n at level 1 - alpha
    (statsmodels' "beta"); k and n may be arrays. statsmodels is imported here, on first use:
    it brings pandas, about 0.3 s that every CLI call and worker would otherwise pay."""
    from statsmodels.stats.proportion import proportion_confint

    return proportion_confint(k, n, alpha=alpha, method="beta")


#: The promised error of an approximate sampler (000, Prop. 1).
DELTA = Param("delta", 0.01, float, 0.0, 1.0, low_inclusive=False, high_inclusive=False)


def error_rate(errors: int, n: int, delta: float, alpha: float) -> GateResult:
    """Pass when the one-sided Clopper-Pearson upper bound of the error rate is <= delta.

    Equivalently, the exact binomial test rejects "rate >= delta" at level alpha; its p-value is
    reported. Not a rejection test of correctness, so it stays out of the Holm family. A failure
    whose lower bound is still <= delta is marked for escalation (more draws), not final.
    Detectable: with zero errors the bound is 1 - alpha^(1/n); a smaller delta needs more draws.
    """
    DELTA.check(delta)
    if n < 1 or not 0 <= errors <= n:
        raise ValueError(f"errors = {errors!r} of n = {n!r}; valid: 0 <= errors <= n, n >= 1")
    low, high = clopper_pearson(errors, n, 2 * alpha)
    p = float(stats.binomtest(errors, n, delta, alternative="less").pvalue)
    resolution = 1.0 - alpha ** (1.0 / n)
    return GateResult(
        gate="error-rate",
        statistic=errors / n,
        p_value=p,
        alpha=alpha,
        passed=bool(high <= delta),
        n=n,
        detectable=resolution,
        detectable_measure="smallest provable error bound (zero errors)",
        interval=(float(low), float(high)),
        multiple_testing=False,
        detail=f"{errors} errors in {n}; Clopper-Pearson [{low:.3g}, {high:.3g}] "
        f"vs delta {delta:g}",
        # Not proven yet but not disproven either: more draws can settle it.
        escalate_when_failed=bool(low <= delta),
        false_pass=error_rate_false_pass(n, delta, alpha),
    )


def tv_half_width(n: int, support: int, alpha: float) -> float:
    """Half-width h with P(TV(empirical, truth) >= h) <= alpha.

    From the L1 deviation bound P(||p_hat - p||_1 >= eps) <= (2^k - 2) exp(-n eps^2 / 2) over
    k cells (Weissman et al. 2003), with TV = L1 / 2. Exact for every n, conservative for large k.
    """
    log_sets = support * math.log(2.0) if support > 1 else 0.0
    eps = math.sqrt(2.0 * (log_sets + math.log(1.0 / alpha)) / n)
    return 0.5 * eps


def tv_estimate(
    values: np.ndarray, pmf: np.ndarray, alpha: float, delta: float | None = None
) -> GateResult:
    """TV(sample histogram, pmf) with a (1 - alpha) interval for the sampler's true TV.

    With ``delta`` the gate fails only when the interval lies wholly above delta.
    """
    values = np.asarray(values, dtype=np.int64)
    pmf = np.asarray(pmf, dtype=np.float64)
    n = int(values.size)
    counts = np.bincount(values, minlength=pmf.size)[: pmf.size]
    tv = 0.5 * float(np.abs(counts / n - pmf).sum() + (n - counts.sum()) / n)
    support = int(np.count_nonzero((pmf > 0) | (counts > 0)))
    h = tv_half_width(n, support, alpha)
    low, high = max(0.0, tv - h), min(1.0, tv + h)
    passed = True if delta is None else bool(low <= delta)
    if delta is not None:
        DELTA.check(delta)
    return GateResult.of_bound(
        "tv",
        tv,
        passed,
        n,
        2 * h,
        "TV",
        alpha,
        interval=(low, high),
        detail="" if delta is None else f"interval [{low:.3g}, {high:.3g}] vs delta {delta:g}",
    )
