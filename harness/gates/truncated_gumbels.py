"""Ground truth for the maximum of independent truncated Gumbels, and the gate that holds a
sampler of (max, argmax) to it: 004_b270422b62f00607.txt Sec. 4.3, Eq. 5-8, the selection step
of PM-A*.

A wrong selection step never makes PM-A* inexact (the order of expansion does not change the
law of the draw), so the sampler's exactness gates cannot see it; this gate tests the step
itself. For v_j ~ TG(a_j, b_j), truncated below b_j:

- v = max_j v_j has log CDF  sum_j [exp(a_j - b_j) - exp(a_j - min(g, b_j))]  (Sec. 4.3);
- given v = g the argmax is j with b_j > g with probability proportional to exp(a_j) (Eq. 8),
  constant while g stays between two consecutive b's, so P(argmax = j) is a finite sum over
  the gaps between sorted b's.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from harness.gates.exactness import chisquare_gof, ks_1samp
from harness.gates.multiple import holm
from harness.gates.result import GateResult


def _checked(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.ndim != 1 or a.shape != b.shape or a.size == 0:
        raise ValueError(
            f"a and b have shapes {a.shape} and {b.shape}; valid: two 1-D arrays of one length >= 1"
        )
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise ValueError("a and b hold NaN or infinite values; valid: finite numbers")
    return a, b


def max_log_cdf(a: np.ndarray, b: np.ndarray, g: np.ndarray) -> np.ndarray:
    """log P(max_j v_j <= g) for v_j ~ TG(a_j, b_j)."""
    a, b = _checked(a, b)
    g = np.asarray(g, dtype=np.float64)[..., None]
    return np.sum(np.exp(a - b) - np.exp(a - np.minimum(g, b)), axis=-1)


def max_cdf(a: np.ndarray, b: np.ndarray, g: np.ndarray) -> np.ndarray:
    return np.exp(max_log_cdf(a, b, g))


def argmax_pmf(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """P(argmax_j v_j = j), exactly: sum over the gaps (b_(i), b_(i+1)] of the sorted b's of
    P(v in the gap) * exp(a_j) / sum_{k: b_k > b_(i)} exp(a_k) for the j above the gap."""
    a, b = _checked(a, b)
    order = np.argsort(b, kind="stable")
    a_s, b_s = a[order], b[order]
    m = a.size
    cdf_at = np.exp(max_log_cdf(a, b, b_s))  # U(b_(i)), i = 0..m-1; U(b_(m-1)) = 1
    gap = np.diff(np.concatenate([[0.0], cdf_at]))  # P(v in (b_(i-1), b_(i)]), b_(-1) = -inf
    pmf_sorted = np.zeros(m)
    for i in range(m):
        # v in gap i (below b_(i)): every j >= i can be the argmax.
        w = special.softmax(a_s[i:])
        pmf_sorted[i:] += gap[i] * w
    pmf = np.empty(m)
    pmf[order] = pmf_sorted
    return pmf / pmf.sum()


def selection_gates(
    a: np.ndarray, b: np.ndarray, values: np.ndarray, argmaxes: np.ndarray, alpha: float
) -> list[GateResult]:
    """KS of the drawn maxima against the exact CDF and chi-square of the drawn argmaxes against
    :func:`argmax_pmf`, Holm-adjusted as one family at ``alpha``."""
    a, b = _checked(a, b)
    ks = ks_1samp(values, lambda g: max_cdf(a, b, g), alpha, name="tg-max-ks")
    chi = chisquare_gof(np.asarray(argmaxes), argmax_pmf(a, b), alpha)
    chi = GateResult(**{**chi.to_dict(), "gate": "tg-argmax-chi-square", "interval": None})
    rejected, adjusted = holm([ks.p_value, chi.p_value], alpha)
    return [
        GateResult(**{**r.to_dict(), "p_value": float(p), "passed": not bool(rej)})
        for r, p, rej in zip((ks, chi), adjusted, rejected, strict=True)
    ]
