"""Goodness-of-fit gates for exact samplers: chi-square and Kolmogorov-Smirnov.

Each gate reports the smallest discrepancy it detects with power 0.8 at its n and alpha, so a
pass is never silent about what it could have missed.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy import stats

from harness.gates.ecdf_bands import ecdf_band
from harness.gates.power import chisquare_false_pass, ks_false_pass
from harness.gates.result import GateResult

POWER = 0.8
_Z_POWER = float(stats.norm.ppf(POWER))


def pool_cells(expected: np.ndarray, min_expected: float = 5.0) -> np.ndarray:
    """Group labels that merge cells, smallest expected first, until each group has
    expected count >= ``min_expected`` (the usual validity rule for the chi-square test)."""
    expected = np.asarray(expected, dtype=np.float64)
    order = np.argsort(expected, kind="stable")
    labels = np.empty(expected.size, dtype=np.int64)
    group, acc = 0, 0.0
    for idx in order:
        labels[idx] = group
        acc += expected[idx]
        if acc >= min_expected:
            group, acc = group + 1, 0.0
    if acc > 0.0 and group > 0:
        # The leftover small cells join the last full group.
        labels[labels == group] = group - 1
    return labels


def chisquare_detectable(n: int, bins: int, alpha: float) -> float:
    if bins < 2:
        return math.nan
    from statsmodels.stats.power import GofChisquarePower  # pandas with it: on first use

    return float(
        GofChisquarePower().solve_power(
            effect_size=None, nobs=n, alpha=alpha, power=POWER, n_bins=bins
        )
    )


def _impossible(n: int, size: int, alpha: float, detail: str) -> GateResult:
    """The chi-square gate's verdict on a draw the law cannot produce: failed, p = 0."""
    return GateResult.of_test(
        "chi-square",
        math.inf,
        0.0,
        alpha,
        n,
        chisquare_detectable(n, size, alpha),
        "Cohen's w",
        detail=detail,
        false_pass=chisquare_false_pass(n, size, alpha),
    )


def chisquare_gof(values: np.ndarray, pmf: np.ndarray, alpha: float) -> GateResult:
    """Pearson chi-square of the counts of ``values`` (0..D-1) against ``pmf``, with pooling.

    Detectable effect: Cohen's w = sqrt(sum (q - p)^2 / p) over the pooled cells.
    """
    values = np.asarray(values)
    pmf = np.asarray(pmf, dtype=np.float64)
    n = int(values.size)
    if n == 0:
        raise ValueError("chisquare_gof needs at least one draw")
    outside = (values < 0) | (values >= pmf.size)
    if outside.any():
        bad = values[outside][0]
        return _impossible(
            n, pmf.size, alpha, f"draw {bad!r} lies outside the domain 0..{pmf.size - 1}"
        )
    counts = np.bincount(values.astype(np.int64), minlength=pmf.size).astype(np.float64)
    # Pooling would hide a draw of a probability-0 state among its neighbours; any such draw
    # is an error outright.
    impossible = (pmf == 0.0) & (counts > 0)
    if impossible.any():
        state = int(np.flatnonzero(impossible)[0])
        return _impossible(
            n,
            pmf.size,
            alpha,
            f"{int(counts[impossible].sum())} draws of probability-0 states (first: "
            f"state {state}, drawn {int(counts[state])} times)",
        )
    labels = pool_cells(n * pmf)
    bins = int(labels.max()) + 1
    obs = np.bincount(labels, weights=counts, minlength=bins)
    exp = np.bincount(labels, weights=n * pmf, minlength=bins)
    exp *= n / exp.sum()
    if bins < 2:
        return GateResult.of_test(
            "chi-square",
            0.0,
            1.0,
            alpha,
            n,
            math.nan,
            "Cohen's w",
            detail="one pooled cell: too few draws to test",
            false_pass=chisquare_false_pass(n, bins, alpha),
        )
    stat, p = stats.chisquare(obs, exp)
    return GateResult.of_test(
        "chi-square",
        stat,
        p,
        alpha,
        n,
        chisquare_detectable(n, bins, alpha),
        "Cohen's w",
        detail=f"{bins} cells after pooling (expected >= 5) of {pmf.size}",
        false_pass=chisquare_false_pass(n, bins, alpha),
    )


def ks_detectable(n: int, alpha: float) -> float:
    """Smallest sup|F - F0| detected with power 0.8: the critical value plus the spread of the
    empirical CDF at the point of largest discrepancy (sd <= 0.5 / sqrt(n))."""
    crit = float(stats.kstwo.isf(alpha, n))
    return crit + _Z_POWER * 0.5 / math.sqrt(n)


def ks_1samp(
    values: np.ndarray, cdf: Callable[[np.ndarray], np.ndarray], alpha: float, name: str = "ks"
) -> GateResult:
    """One-sample Kolmogorov-Smirnov against an exact CDF (exact p-value for continuous F0).

    Keeps the PIT values' ECDF difference with its simultaneous band (``ecdf``, for the report's
    plot) and the probability of passing a CDF off by KS_EFFECT (``false_pass``, a bound).
    """
    values = np.asarray(values, dtype=np.float64)
    n = int(values.size)
    if n == 0:
        raise ValueError("ks_1samp needs at least one draw")
    measure = "sup |F - F0|"
    false_pass = ks_false_pass(n, alpha)
    if not np.all(np.isfinite(values)):
        return GateResult.of_test(
            name,
            math.inf,
            0.0,
            alpha,
            n,
            ks_detectable(n, alpha),
            measure,
            detail="non-finite draws",
            false_pass=false_pass,
        )
    xs = np.sort(values)
    u = np.asarray(cdf(xs), dtype=np.float64)
    # F0 is evaluated once: scipy sorts the draws (already sorted here) and calls the CDF on
    # them; handing it the values just computed leaves its statistic and p-value unchanged.
    res = stats.ks_1samp(xs, lambda _: u, method="exact" if n <= 10_000 else "asymp")
    band = (ecdf_band(u, name),) if np.all(np.isfinite(u)) else ()
    return GateResult.of_test(
        name,
        res.statistic,
        res.pvalue,
        alpha,
        n,
        ks_detectable(n, alpha),
        measure,
        false_pass=false_pass,
        ecdf=band,
    )


def ks_2samp(a: np.ndarray, b: np.ndarray, alpha: float) -> GateResult:
    """Two-sample Kolmogorov-Smirnov: do two samplers draw from one continuous law?"""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    res = stats.ks_2samp(a, b)
    n, m = a.size, b.size
    c_alpha = math.sqrt(-math.log(alpha / 2.0) / 2.0)
    scale = math.sqrt((n + m) / (n * m))
    detectable = c_alpha * scale + _Z_POWER * 0.5 * scale
    return GateResult.of_test(
        "ks-2samp", res.statistic, res.pvalue, alpha, n + m, detectable, "sup |F_a - F_b|"
    )


def chisquare_2samp(a: np.ndarray, b: np.ndarray, D: int, alpha: float) -> GateResult:
    """Two-sample chi-square (homogeneity) on counts over 0..D-1, pooling sparse cells."""
    ca = np.bincount(np.asarray(a, dtype=np.int64), minlength=D).astype(np.float64)
    cb = np.bincount(np.asarray(b, dtype=np.int64), minlength=D).astype(np.float64)
    total = ca + cb
    n, m = ca.sum(), cb.sum()
    labels = pool_cells(total * min(n, m) / (n + m))
    bins = int(labels.max()) + 1
    table = np.vstack(
        [
            np.bincount(labels, weights=ca, minlength=bins),
            np.bincount(labels, weights=cb, minlength=bins),
        ]
    )
    if bins < 2:
        return GateResult.of_test(
            "chi-square-2samp",
            0.0,
            1.0,
            alpha,
            n + m,
            math.nan,
            "Cohen's w",
            detail="one pooled cell: too few draws to test",
        )
    stat, p, _, _ = stats.chi2_contingency(table, correction=False)
    n_eff = int(n * m / (n + m))
    return GateResult.of_test(
        "chi-square-2samp",
        stat,
        p,
        alpha,
        n + m,
        chisquare_detectable(max(n_eff, 1), bins, alpha),
        "Cohen's w (approx., n*m/(n+m))",
        detail=f"{bins} cells after pooling",
    )
