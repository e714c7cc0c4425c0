"""How a chain is scored against the exact posterior (003_07f92522b9b1c588.txt, Sec. 4.3): its
2-D histogram on the grid of boxes against their exact masses."""

from __future__ import annotations

import math

import numpy as np

#: Pseudo-count per bin for the symmetric KL (Jeffreys' 1/2), as in the continuous-spin report.
PSEUDO_COUNT = 0.5


def hist2d(values: np.ndarray, n_bins: int, a: float, b: float) -> np.ndarray:
    """(n_bins, n_bins) counts of the rows (x1, x2) of ``values`` on equal boxes of [a, b]^2."""
    idx = np.clip(((values - a) / (b - a) * n_bins).astype(np.int64), 0, n_bins - 1)
    flat = idx[:, 0] * n_bins + idx[:, 1]
    return np.bincount(flat, minlength=n_bins * n_bins).reshape(n_bins, n_bins)


def distances(counts: np.ndarray, probs: np.ndarray) -> dict[str, float]:
    """TV, Hellinger and (smoothed) symmetric KL between a histogram and exact box masses."""
    counts = np.asarray(counts, dtype=np.float64).ravel()
    q = np.asarray(probs, dtype=np.float64).ravel()
    total = counts.sum()
    if total <= 0:
        raise ValueError("the histogram is empty; valid: at least one counted state")
    p = counts / total
    K = p.size
    ps = (counts + PSEUDO_COUNT) / (total + PSEUDO_COUNT * K)
    qs = (q * total + PSEUDO_COUNT) / (total + PSEUDO_COUNT * K)
    return {
        "tv": 0.5 * float(np.abs(p - q).sum()),
        "hellinger": math.sqrt(max(0.0, 1.0 - float(np.sqrt(p * q).sum()))),
        "sym_kl": float(((ps - qs) * np.log(ps / qs)).sum()),
    }


def iid_tv(probs: np.ndarray, n: int, rng: np.random.Generator) -> float:
    """TV of n independent draws from ``probs`` (one multinomial sample): a sampler's floor."""
    q = np.asarray(probs, dtype=np.float64).ravel()
    counts = rng.multinomial(n, q / q.sum())
    return 0.5 * float(np.abs(counts / n - q).sum())
