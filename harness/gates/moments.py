"""Moment gates for Markov chains on targets with known moments: z-tests with Monte Carlo
standard errors (MCSE) from arviz-stats.

For a trace f(x_1), ..., f(x_n) of a chain whose stationary law is pi, the chain average
m = (1/n) sum f(x_t) is asymptotically N(E_pi f, mcse^2) with mcse = sd(f) / sqrt(ESS(f))
(arviz-stats ``mcse(method="mean")``: split-chain ESS, Geyer's initial monotone sequence;
Vehtari et al. 2021). Each gate is the two-sided z-test of Z = (m - truth) / mcse.

- :func:`moment_mean`: f(x) = x against the known mean;
- :func:`moment_variance`: f(x) = (x - mu)^2 with the *true* mu, against the known variance
  (a mean bias b shows here too, as var + b^2);
- :func:`marginal_moments`: on a discrete factor graph, f(x) = 1[x_i = v] against
  P(x_i = v) for every variable i and value v (the D - 1 free coordinates of each marginal;
  the last is their complement), Holm across coordinates.

Detectable effect. Under a true discrepancy d, Z ~ N(d / mcse, 1), and the test rejects when
|Z| > z_{1 - alpha/2}; ignoring the far tail (probability < alpha/2) its power is
Phi(d / mcse - z_{1 - alpha/2}), which reaches ``power`` at

    d = (z_{1 - alpha/2} + z_power) * mcse           (2.80 mcse at alpha 0.05, power 0.8).

For a family of m coordinates under Holm, the first step runs at alpha / m, so the smallest
discrepancy detectable at one coordinate is (z_{1 - alpha/(2m)} + z_power) * mcse there.

Why the variance test and not KS: tempering pi to pi^(1/T) multiplies the variance of a
near-Gaussian posterior by T, a change of T - 1 in the variance but only about
0.24 (T - 1) in sup |F - F0|. On a Gaussian the Fisher information about 1/T is 1/2 per
independent draw, so no test separates T from 1 with fewer than about
2 (z_{1-alpha/2} + z_power)^2 / (T - 1)^2 effective draws: the variance test attains that bound.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from scipy import stats

from harness.gates.mcmc import array_stats
from harness.gates.multiple import holm
from harness.gates.result import GateResult

POWER = 0.8
_Z_POWER = float(stats.norm.ppf(POWER))
#: A coordinate of :func:`marginal_moments` is tested only when the chain should have visited
#: both sides of it this many times (n * min(p, 1 - p)); below it the normal approximation of an
#: indicator average is poor and a rare value's absence proves nothing.
MIN_EXPECTED = 20.0


def z_detectable(mcse: float, alpha: float, power: float = POWER) -> float:
    """Smallest |E f - truth| a two-sided z-test with standard error ``mcse`` detects with
    ``power`` at level ``alpha``: (z_{1 - alpha/2} + z_power) * mcse (see the module
    docstring)."""
    return (float(stats.norm.isf(alpha / 2.0)) + float(stats.norm.ppf(power))) * mcse


def mcse_of_mean(trace: np.ndarray) -> tuple[float, float]:
    """(MCSE of the mean, ESS for the mean) of one chain's trace, from arviz-stats.

    The trace is passed as one chain (shape (1, n)); arviz-stats splits it in two halves.
    """
    x = np.asarray(trace, dtype=np.float64)[None, :]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        arviz = array_stats()  # not scipy's ``stats``, which this module also uses
        mcse = float(arviz.mcse(x, method="mean"))
        ess = float(arviz.ess(x, method="mean"))
    return mcse, ess


def _z_test(
    trace: np.ndarray, truth: float, tau: float | None = None
) -> tuple[float, float, float, float, str]:
    """(z, two-sided p, mcse, ess, problem) for the chain average of ``trace`` against truth.

    ``tau``: an integrated autocorrelation time to use in place of the trace's own estimate
    (MCSE = sd * sqrt(tau / n)), e.g. the chain's slowest one from harness/gates/thinning.py.
    """
    trace = np.asarray(trace, dtype=np.float64)
    if trace.size < 8:
        raise ValueError(f"the trace has {trace.size} values; valid: at least 8")
    if not np.all(np.isfinite(trace)):
        return math.inf, 0.0, math.nan, math.nan, "non-finite values"
    m = float(trace.mean())
    if np.all(trace == trace[0]):
        # No estimate of the error: a stuck chain, or an indicator never (or always) hit.
        if m == truth:
            return 0.0, 1.0, 0.0, math.nan, "constant trace equal to the truth"
        return math.inf, 0.0, 0.0, math.nan, f"constant trace at {m:.6g}"
    if tau is None:
        mcse, ess = mcse_of_mean(trace)
    else:
        ess = trace.size / max(tau, 1.0)
        mcse = float(trace.std()) / math.sqrt(ess)
    if not (math.isfinite(mcse) and mcse > 0.0):
        return math.inf, 0.0, mcse, ess, "MCSE not finite"
    z = (m - truth) / mcse
    return z, float(2.0 * stats.norm.sf(abs(z))), mcse, ess, ""


def _check_chain(values: np.ndarray) -> np.ndarray:
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 1:
        raise ValueError(f"values has shape {x.shape}; valid: one 1-D chain (n_steps,)")
    return x


def moment_mean(values: np.ndarray, mean: float, sd: float, alpha: float) -> GateResult:
    """z-test of a 1-D chain's average against the target's ``mean``, with the MCSE of the
    mean (arviz-stats). ``sd`` (the target's) only scales the reported numbers: statistic and
    detectable are in posterior standard deviations."""
    x = _check_chain(values)
    z, p, mcse, ess, problem = _z_test(x, mean)
    bias = (float(x.mean()) - mean) / sd if np.all(np.isfinite(x)) else math.inf
    detectable = z_detectable(mcse, alpha) / sd if math.isfinite(mcse) else math.nan
    detail = problem or (
        f"chain mean {x.mean():.6g} vs {mean:.6g}: z = {z:.2f}, MCSE {mcse:.3g} "
        f"(ESS {ess:.0f} of {x.size})"
    )
    return GateResult.of_test(
        "moment-mean", bias, p, alpha, x.size, detectable, "|E x - mean| / sd", detail=detail
    )


def moment_variance(values: np.ndarray, mean: float, variance: float, alpha: float) -> GateResult:
    """z-test of the chain average of (x - mean)^2 against the target's ``variance``, with the
    MCSE of that transformed trace (arviz-stats). Statistic and detectable are relative:
    E(x - mean)^2 / variance - 1 (a tempering pi^(1/T) of a near-Gaussian target moves it by
    about T - 1)."""
    x = _check_chain(values)
    sq = (x - mean) ** 2
    z, p, mcse, ess, problem = _z_test(sq, variance)
    ratio = float(sq.mean()) / variance - 1.0 if np.all(np.isfinite(sq)) else math.inf
    detectable = z_detectable(mcse, alpha) / variance if math.isfinite(mcse) else math.nan
    detail = problem or (
        f"E (x - mean)^2 = {sq.mean():.6g} vs variance {variance:.6g} (ratio - 1 = {ratio:+.4f}): "
        f"z = {z:.2f}, MCSE {mcse:.3g} (ESS {ess:.0f} of {x.size})"
    )
    return GateResult.of_test(
        "moment-variance",
        ratio,
        p,
        alpha,
        x.size,
        detectable,
        "|E (x - mean)^2 / variance - 1|",
        detail=detail,
    )


def enumerated_marginals(pmf: np.ndarray, n_vars: int, D: int) -> np.ndarray:
    """The (n_vars, D) marginals P(x_i = v) of a joint ``pmf`` over {0..D-1}^n_vars enumerated
    with variable 0 most significant (the order of ``FactorGraphTarget.states``)."""
    joint = np.asarray(pmf, dtype=np.float64).reshape((D,) * n_vars)
    axes = tuple(range(n_vars))
    return np.stack([joint.sum(axis=axes[:i] + axes[i + 1 :]) for i in range(n_vars)])


def marginal_moments(
    states: np.ndarray, marginals: np.ndarray, alpha: float, tau: float | None = None
) -> GateResult:
    """Every marginal P(x_i = v) of a discrete chain as the average of the indicator trace
    1[x_i(t) = v], z-tested with its MCSE (arviz-stats); Holm across the coordinates.

    ``states`` has shape (n_steps, n_vars) with values in 0..D-1; ``marginals`` has shape
    (n_vars, D) (e.g. :func:`enumerated_marginals`, or 1/D everywhere on a Potts model).
    Coordinates v = 0..D-2 of each variable are tested (v = D-1 is their complement); one with
    n * min(p, 1 - p) < ``MIN_EXPECTED`` is left out. ``tau``: the chain's slowest integrated
    autocorrelation time (harness/gates/thinning.py), used for every coordinate's MCSE. Each
    coordinate's own ESS estimate is noisy where the chain mixes slowly, and the smallest of
    many noisy MCSEs made the Holm family reject a correct Potts chain 11% of the time at
    alpha 0.05 (750 seeds); the slowest time bounds every coordinate's from above. The p-value
    is the smallest Holm-adjusted one; detectable is the smallest |P_chain(x_i = v) - P(x_i = v)|
    detectable at the best-mixed coordinate at its Holm-Bonferroni level alpha / m.
    """
    X = np.asarray(states)
    marg = np.asarray(marginals, dtype=np.float64)
    if X.ndim != 2 or marg.ndim != 2 or marg.shape[0] != X.shape[1]:
        raise ValueError(
            f"states has shape {X.shape} and marginals {marg.shape}; valid: (n_steps, n_vars) "
            "and (n_vars, D)"
        )
    n, (n_vars, D) = X.shape[0], marg.shape
    coords = [
        (i, v)
        for i in range(n_vars)
        for v in range(D - 1)
        if n * min(marg[i, v], 1.0 - marg[i, v]) >= MIN_EXPECTED
    ]
    skipped = n_vars * (D - 1) - len(coords)
    if not coords:
        return GateResult.of_test(
            "moment-marginals",
            0.0,
            1.0,
            alpha,
            n,
            math.nan,
            "|P_chain(x_i = v) - P(x_i = v)|",
            detail=f"no coordinate with n * min(p, 1 - p) >= {MIN_EXPECTED:g}: too few steps",
        )
    tests = [_z_test((X[:, i] == v).astype(np.float64), marg[i, v], tau) for i, v in coords]
    p = np.array([t[1] for t in tests])
    _, adjusted = holm(p, alpha)
    worst = int(np.argmin(p))
    gaps = [abs(float(np.mean(X[:, i] == v)) - marg[i, v]) for i, v in coords]
    mcses = np.array([t[2] for t in tests], dtype=np.float64)
    finite = mcses[np.isfinite(mcses) & (mcses > 0)]
    m = len(coords)
    detectable = z_detectable(float(finite.min()), alpha / m) if finite.size else math.nan
    i, v = coords[worst]
    why = tests[worst][4]
    detail = (
        f"{m} coordinates P(x_i = v), Holm; largest |z| at x_{i} = {v}: chain "
        f"{np.mean(X[:, i] == v):.4f} vs {marg[i, v]:.4f}, z = {tests[worst][0]:.2f}"
        + (f" ({why})" if why else f", MCSE {tests[worst][2]:.3g}")
        + (f"; {skipped} rare coordinates untested" if skipped else "")
    )
    padj = float(adjusted.min())
    return GateResult.of_test(
        "moment-marginals",
        float(max(gaps)),
        padj,
        alpha,
        n,
        detectable,
        "|P_chain(x_i = v) - P(x_i = v)| at the best-mixed coordinate",
        detail=detail,
    )
