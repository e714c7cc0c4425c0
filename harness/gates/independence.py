"""Independence of the draws of one call, for samplers that promise independent draws.

Every marginal test (chi-square, KS) looks at the draws one at a time, so draws with the right
law that share randomness (a draw repeated, Gumbel noise reused by the next draw, antithetic
uniforms) pass them all. This gate looks at consecutive pairs (x_t, x_{t+lag}).

Each draw is put into one of K bins: for a discrete law, its values pooled (rarest first, as the
exactness gate pools cells) into bins of probability >= max(1 / max_bins, sqrt(5 / n)) under the
target pmf (as many bins as the pairs allow: a repeat bug's w^2 grows with K); for a continuous
law, the K = ``bins`` equal-probability bins of the exact CDF, floor(K F(x)). The K x K table of
the overlapping pairs (t = 0 .. n - 1 - lag) is tested against the product of its margins with
Pearson's chi-square on (K - 1)^2 degrees of freedom.

Overlapping pairs are not independent of each other, yet the statistic keeps its null law: with
A_t the centred bin indicator of draw t, the table's departure from independence is, to first
order, (1/n) sum_t A_t (x) A_{t+lag}, whose terms are uncorrelated under independence with the
same covariance as for disjoint pairs, so the statistic is asymptotically chi-square with
(K - 1)^2 degrees of freedom (the serial test of Good 1953, with margins estimated). Using all
n - lag pairs doubles the power of disjoint pairs. Testing against the table's own margins keeps
this a test of dependence only; the marginal law is the exactness gate's business.

Detectable: Cohen's w of the pair law against the product of its margins (sqrt of the pair
table's chi-square noncentrality per pair) with power 0.8. Draws repeated with probability r add
about r (1 - p_a) p_a to each diagonal cell, so w^2 ~ r^2 (K - 1) on K equal bins.

An approximate sampler's draws are also tested through their errors (:func:`error_runs`): the
indicators of "draw != the exact answer under its own noise" of consecutive draws, by the exact
law of their runs given the error count. Draws that share an index order (000, Alg. 1's
mini-batches) err together while each keeps the right law and error rate.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable

import numpy as np
from scipy import special, stats

from harness.gates.exactness import chisquare_detectable, pool_cells
from harness.gates.result import GateResult
from harness.spec import Param

LAG = Param("lag", 1, int, low=1)
BINS = Param("bins", 10, int, low=2)
#: Each cell of the pair table should expect at least this many pairs.
MIN_EXPECTED = 5.0


def pair_table_test(codes: np.ndarray, K: int, alpha: float, lag: int = 1) -> GateResult:
    """Pearson chi-square of the K x K table of (codes[t], codes[t + lag]) against the product
    of its margins (see the module docstring). ``codes`` are bin labels 0..K-1."""
    c = np.asarray(codes, dtype=np.int64)
    lag = LAG.check(lag)
    if c.ndim != 1 or c.size <= lag + 1:
        raise ValueError(f"codes has shape {c.shape}; valid: one sequence longer than lag + 1")
    if np.any((c < 0) | (c >= K)):
        raise ValueError(f"codes must lie in 0..{K - 1}")
    m = c.size - lag
    table = np.zeros((K, K))
    np.add.at(table, (c[:-lag], c[lag:]), 1.0)
    rows, cols = table.sum(axis=1) > 0, table.sum(axis=0) > 0
    table = table[rows][:, cols]
    r, k = table.shape
    df = (r - 1) * (k - 1)
    measure = "Cohen's w of the pair law against the product of its margins"
    if df < 1:
        # No test was made: no p-value, so Holm and the calibration do not count it as one.
        return GateResult.nothing_to_test(
            "pair-independence",
            0.0,
            alpha,
            int(c.size),
            measure,
            "one bin observed: nothing to test",
        )
    expected = np.outer(table.sum(axis=1), table.sum(axis=0)) / m
    stat = float(np.sum((table - expected) ** 2 / expected))
    p = float(stats.chi2.sf(stat, df))
    # The strongest single departure, as observed / expected - 1 (the repeat bug: the diagonal).
    ratio = table / expected - 1.0
    a, b = np.unravel_index(int(np.argmax(np.abs(ratio))), ratio.shape)
    diag = float(np.trace(table) / np.trace(expected) - 1.0) if r == k == K else math.nan
    return GateResult.of_test(
        "pair-independence",
        stat,
        p,
        alpha,
        int(c.size),
        chisquare_detectable(m, df + 1, alpha),
        measure,
        detail=f"{m} overlapping pairs at lag {lag}, {r} x {k} bins, {df} df; "
        f"chi2 = {stat:.1f}; largest cell departure {ratio[a, b]:+.3f} (observed / expected - 1)"
        + (f"; diagonal {diag:+.4f}" if math.isfinite(diag) else ""),
    )


def discrete_bins(pmf: np.ndarray, n: int, max_bins: int = 32) -> np.ndarray:
    """Bin label of each value 0..D-1: values pooled, rarest first, into bins of probability
    >= max(1 / max_bins, sqrt(5 / n)), so every cell of the pair table expects >= 5 pairs."""
    pmf = np.asarray(pmf, dtype=np.float64)
    floor = max(1.0 / BINS.check(max_bins), math.sqrt(MIN_EXPECTED / max(n - 1, 1)))
    # pool_cells closes a bin at >= floor; a hair below keeps 1 / max_bins bins from spilling.
    return pool_cells(pmf, floor * (1.0 - 1e-9))


def pair_independence_discrete(
    values: np.ndarray, pmf: np.ndarray, alpha: float, lag: int = 1, max_bins: int = 32
) -> GateResult:
    """Independence of consecutive discrete draws (values 0..D-1), on bins of the target
    ``pmf`` (:func:`discrete_bins`). A draw outside 0..D-1 gets a bin of its own (the exactness
    gate fails it; here it still counts as a draw)."""
    x = np.asarray(values, dtype=np.int64)
    labels = discrete_bins(pmf, x.size, max_bins)
    K = int(labels.max()) + 1
    inside = (x >= 0) & (x < labels.size)
    codes = np.where(inside, labels[np.clip(x, 0, labels.size - 1)], K)
    res = pair_table_test(codes, K + 1, alpha, lag)
    return GateResult(
        **{**res.__dict__, "detail": f"{res.detail}; {K} bins of {labels.size} values by the pmf"}
    )


def pair_independence_continuous(
    values: np.ndarray,
    cdf: Callable[[np.ndarray], np.ndarray],
    alpha: float,
    lag: int = 1,
    bins: int = 10,
) -> GateResult:
    """Independence of consecutive continuous draws, on ``bins`` equal-probability bins of the
    exact CDF (floor(bins F(x)); fewer when n < 5 bins^2). A non-finite draw fails the gate."""
    x = np.asarray(values, dtype=np.float64)
    K = BINS.check(bins)
    if not np.all(np.isfinite(x)):
        return GateResult.of_test(
            "pair-independence",
            math.inf,
            0.0,
            alpha,
            x.size,
            math.nan,
            "Cohen's w of the pair law against the product of its margins",
            detail="non-finite draws",
        )
    # Fewer bins for few draws, so each cell of the table expects >= 5 pairs.
    K = max(2, min(K, math.isqrt(max(int((x.size - lag) / MIN_EXPECTED), 0))))
    u = np.clip(np.asarray(cdf(x), dtype=np.float64), 0.0, 1.0)
    codes = np.minimum((u * K).astype(np.int64), K - 1)
    res = pair_table_test(codes, K, alpha, lag)
    return GateResult(**{**res.__dict__, "detail": f"{res.detail}; bins by the exact CDF"})


#: Seed of the uniform that randomises the error-runs test at its atoms; the stream is keyed by
#: a hash of the whole error sequence, which given the counts is a pseudo-random function of
#: where the errors fell, so the uniform varies across samples and keeps the gate pure.
RUNS_SEED = 20_141
#: The power at which the detectable clustering is stated.
POWER = 0.8


def _adjacency_law(n: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(a, P(A = a)) for A, the number of adjacent pairs (t, t + 1) that are both errors, when
    k errors sit at uniformly random places among n (exchangeable indicators). A = k - R with R
    the number of runs of errors: P(R = r) = C(k - 1, r - 1) C(n - k + 1, r) / C(n, k)."""
    r = np.arange(1, min(k, n - k + 1) + 1)
    log_p = (
        special.gammaln(k) - special.gammaln(r) - special.gammaln(k - r + 1)
        + special.gammaln(n - k + 2) - special.gammaln(r + 1) - special.gammaln(n - k - r + 2)
        - (special.gammaln(n + 1) - special.gammaln(k + 1) - special.gammaln(n - k + 1))
    )  # fmt: skip
    p = np.exp(log_p - log_p.max())
    return (k - r)[::-1], (p / p.sum())[::-1]


def error_runs(errors: np.ndarray, alpha: float) -> GateResult:
    """Independence of the error indicators of consecutive draws (e_t = draw t differs from the
    exact answer under its own noise, 000 Prop. 1's event): draws that share randomness err
    together, which no error-rate bound sees (each draw's rate is right; one-sided bounds pass
    a rate that is too low).

    Given the k errors of n draws, independent draws place them exchangeably, so the number A
    of adjacent error pairs has the exact law of :func:`_adjacency_law` (runs of ones, as in
    the Wald-Wolfowitz runs test), whatever the error rate. Errors are rare, where a 2 x 2
    chi-square of consecutive indicators has no valid null, and this test is exact at any k.
    Two-sided and randomised at its atoms (:data:`RUNS_SEED`), so the p-value is uniform under
    independence: the calibration's check of uniform p-values applies.

    Detectable: the smallest P(e_{t+1} | e_t) - P(e) found with power 0.8, from the critical
    count c (P(A >= c) <= alpha / 2) and A ~ Poisson((k - 1) q) under clustering q.
    """
    e = np.asarray(errors, dtype=bool)
    if e.ndim != 1 or e.size < 2:
        raise ValueError(f"errors has shape {e.shape}; valid: one sequence of >= 2 indicators")
    n, k = int(e.size), int(e.sum())
    a = int(np.sum(e[1:] & e[:-1]))
    measure = "P(error | previous draw erred) - P(error)"
    if k < 2 or k == n:
        return GateResult.nothing_to_test(
            "error-independence",
            float(a),
            alpha,
            n,
            measure,
            f"{k} errors in {n} draws: no arrangement to test",
        )
    values, probs = _adjacency_law(n, k)
    above = float(probs[values > a].sum())
    at = float(probs[values == a].sum())
    v = np.random.default_rng([RUNS_SEED, zlib.crc32(np.packbits(e).tobytes())]).random()
    upper = min(1.0, above + v * at)
    p = min(1.0, 2.0 * min(upper, 1.0 - upper))
    mean = float(np.sum(values * probs))
    tail = np.cumsum(probs[::-1])[::-1]  # P(A >= values[j])
    reach = values[tail <= alpha / 2.0]
    detail = (
        f"{k} errors in {n} draws, {a} adjacent error pairs (expected {mean:.2f} if "
        f"independent); P(error | previous erred) = {a / max(k - 1, 1):.3g} vs P(error) = "
        f"{k / n:.3g}"
    )
    if reach.size:
        lam = float(special.gammaincinv(float(reach.min()), POWER))
        detectable = lam / (k - 1) - k / n
    else:
        detectable = math.nan
        detail += "; too few errors for any arrangement to be significant"
    return GateResult.of_test(
        "error-independence", a, p, alpha, n, detectable, measure, detail=detail
    )
