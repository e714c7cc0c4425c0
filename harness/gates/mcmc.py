"""Gates for Markov chain kernels: ESS / R-hat, invariance and spectral gaps.

Also the harness's one wrapper over arviz-stats for chain summaries without a verdict
(:func:`bulk_ess`, :func:`autocorrelation`), for experiments, benchmarks and reports.
"""

from __future__ import annotations

import math

import numpy as np

from harness.gates.result import GateResult
from harness.spec import Param


def array_stats():
    """arviz-stats' array functions, imported on first use: the import costs about a second,
    which every CLI call and worker process would otherwise pay before doing anything."""
    from arviz_stats.base import array_stats as stats

    return stats


def _bulk_ess(x: np.ndarray) -> float:
    """Bulk ESS of x with shape (chains, draws), rank-normalised (Vehtari et al. 2021)."""
    return float(array_stats().ess(x, chain_axis=-2, draw_axis=-1, method="bulk"))


def bulk_ess(chains: np.ndarray) -> float | None:
    """Bulk ESS (rank-normalised, arviz-stats) of ``chains``, shape (chains, draws) or (draws,)
    for one chain; None when the values are constant or the estimate is not finite.

    The same estimate :func:`ess_rhat` reports, without its verdict: for tables and figures.
    """
    x = np.atleast_2d(np.asarray(chains, dtype=np.float64))
    if x.ndim != 2:
        raise ValueError(f"chains must have shape (n_chains, n_draws), got {x.shape}")
    if x.size == 0 or np.all(x == x.flat[0]):
        return None
    value = _bulk_ess(x)
    return value if math.isfinite(value) else None


def autocorrelation(chain: np.ndarray, lags: int | None = None) -> list[float] | None:
    """Autocorrelation of one chain at lags 0..``lags`` (all lags when None), by FFT
    (arviz-stats); None when the chain has fewer than 2 values or is constant."""
    x = np.asarray(chain, dtype=np.float64)
    if x.ndim != 1:
        raise ValueError(f"chain must be one-dimensional, got shape {x.shape}")
    if lags is not None:
        lags = Param("lags", 0, int, low=0).check(lags)
    if x.size < 2 or np.all(x == x[0]):
        return None
    rho = array_stats().autocorr(x)
    return [float(v) for v in (rho if lags is None else rho[: lags + 1])]


def ess_rhat(chains: np.ndarray, min_ess: float = 400.0, max_rhat: float = 1.01) -> GateResult:
    """Bulk and tail ESS and rank-normalised R-hat (Vehtari et al. 2021) from arviz-stats.

    ``chains`` has shape (n_chains, n_draws). Passes when bulk ESS >= ``min_ess`` and
    R-hat <= ``max_rhat``; a failure is re-run with more steps by the escalation policy.
    """
    x = np.asarray(chains, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] < 4:
        raise ValueError(f"chains must have shape (n_chains, n_draws >= 4), got {x.shape}")
    bulk = _bulk_ess(x)
    tail = float(
        array_stats().ess(x, chain_axis=-2, draw_axis=-1, method="tail", prob=(0.05, 0.95))
    )
    rhat = float(array_stats().rhat(x, chain_axis=-2, draw_axis=-1, method="rank"))
    ok = bool(bulk >= min_ess and (x.shape[0] < 2 or rhat <= max_rhat))
    return GateResult.of_bound(
        "ess",
        bulk,
        ok,
        int(x.size),
        min_ess,
        "bulk ESS required",
        detail=f"bulk ESS {bulk:.0f}, tail ESS {tail:.0f}, R-hat {rhat:.4f}",
        # Too few effective draws is no verdict on the sampler: a longer chain settles it.
        # (min-gibbs on the Potts grid falls short of 100 in 10% of 20000-step runs.)
        escalate_when_failed=True,
    )


def _check_kernel(P: np.ndarray, pi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    P = np.asarray(P, dtype=np.float64)
    pi = np.asarray(pi, dtype=np.float64)
    if P.ndim != 2 or P.shape[0] != P.shape[1] or pi.shape != (P.shape[0],):
        raise ValueError(f"P must be square and pi match it; got {P.shape} and {pi.shape}")
    if np.any(P < -1e-15) or not np.allclose(P.sum(axis=1), 1.0, atol=1e-12):
        raise ValueError("P must be a stochastic matrix (rows >= 0 summing to 1)")
    if np.any(pi <= 0) or not math.isclose(pi.sum(), 1.0, abs_tol=1e-12):
        raise ValueError("pi must be a positive probability vector")
    return P, pi


def invariance(P: np.ndarray, pi: np.ndarray, tol: float) -> GateResult:
    """pi P = pi and detailed balance pi_i P_ij = pi_j P_ji, each within ``tol`` (max abs)."""
    P, pi = _check_kernel(P, pi)
    stationarity = float(np.max(np.abs(pi @ P - pi)))
    flux = pi[:, None] * P
    balance = float(np.max(np.abs(flux - flux.T)))
    worst = max(stationarity, balance)
    return GateResult.of_bound(
        "invariance",
        worst,
        bool(worst <= tol),
        P.shape[0],
        tol,
        "max |pi P - pi|, max |pi_i P_ij - pi_j P_ji|",
        detail=f"stationarity {stationarity:.3g}, detailed balance {balance:.3g}, tol {tol:.3g}",
    )


def spectral_gap(P: np.ndarray, pi: np.ndarray) -> float:
    """1 - lambda_2 of a reversible kernel (003, Sec. 3: largest minus second-largest eigenvalue).

    Reversibility makes D^(1/2) P D^(-1/2) symmetric (D = diag(pi)), so the eigenvalues come
    from ``eigvalsh`` accurately.
    """
    P, pi = _check_kernel(P, pi)
    s = np.sqrt(pi)
    S = s[:, None] * P / s[None, :]
    S = 0.5 * (S + S.T)
    eig = np.linalg.eigvalsh(S)
    return float(1.0 - eig[-2]) if eig.size > 1 else 1.0


def spectral_gap_bound(
    P: np.ndarray, pi: np.ndarray, bound: float, tol: float = 1e-10
) -> GateResult:
    """Pass when the exact gap of P is at least ``bound`` (e.g. 003 Thm. 1's lower bound)."""
    gap = spectral_gap(P, pi)
    return GateResult.of_bound(
        "spectral-gap",
        gap,
        bool(gap >= bound - tol),
        P.shape[0],
        bound,
        "theorem's lower bound",
        detail=f"gap {gap:.6g} vs bound {bound:.6g}",
    )


#: Rounding negatives of this size can sit on an exact kernel's diagonal: clipped and counted.
CLIP = 1e-12


def clean_kernel(P: np.ndarray) -> tuple[np.ndarray, float]:
    """``P`` with each row whose diagonal went negative by rounding (<= CLIP) rescaled in place
    (off-diagonal mass to 1, diagonal 0), and the largest l1 change of a row."""
    diag = np.diag(P).copy()
    if diag.min() >= 0.0:
        return P, 0.0
    if diag.min() < -CLIP:
        raise ValueError(f"exact kernel has a diagonal entry {diag.min():.3g} < 0 beyond rounding")
    bad = np.nonzero(diag < 0.0)[0]
    off = 1.0 - diag[bad]
    P[bad] /= off[:, None]
    P[bad, bad] = 0.0
    return P, float(2.0 * np.max(off - 1.0))


def gap_with_error(P: np.ndarray, pi: np.ndarray, truncation: float) -> tuple[float, float]:
    """The gap of a kernel whose rows each lack up to ``truncation`` of mass (a tail cut), and
    the most that cut and rounding can move it (Weyl): rows move by <= e = 2 truncation +
    clipped in l1, so D^1/2 dP D^-1/2 has Frobenius norm <= sqrt(n max pi / min pi) e, doubled
    by the symmetrisation."""
    P, clipped = clean_kernel(np.array(P, dtype=np.float64))
    err = 2.0 * (2.0 * truncation + clipped) * math.sqrt(pi.size * float(pi.max() / pi.min()))
    return spectral_gap(P, pi), err


def ess_failure(alpha: float, n: int, why: str) -> GateResult:
    """A failed ESS verdict without an estimate (a trace that never moved, or no trace)."""
    return GateResult.of_bound("ess", 0.0, False, n, 100.0, "bulk ESS required", alpha, detail=why)
