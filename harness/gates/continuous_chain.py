"""Gates for Markov chains on continuous pairwise factor graphs (003, Sec. 3 and 4.2).

The continuous counterpart of ``factor_graph_gates`` in :mod:`harness.checks.chains`:

- ess: bulk/tail ESS and split R-hat of the log-density trace U(x_t) on 4 segments;
- thinning (harness/gates/thinning.py): the tests below see every lag-th state, the lag at which
  the slowest observable they count (the box indicators on tiny graphs, else each coordinate and
  U, with their slowest linear combination) is correlated by at most 0.02;
- chi-square-thinned (n_vars <= 3): the thinned states binned into the boxes of
  ``target.bin_probabilities`` against those quadrature probabilities;
- sign-symmetry (targets invariant under the reflection x -> a + b - x, checked from the
  factors): per variable, a two-sided binomial test of P(x_i > (a + b) / 2) = 1/2, Bonferroni;
- conditional-pit (every target): each factor is bilinear, so U is linear in one variable given
  the rest and x_i | x_-i is a truncated exponential on [a, b] with a closed-form CDF. Under pi
  the PIT F(x_i | x_-i) is exactly Uniform(0, 1); the j-th thinned state contributes the PIT of
  variable j mod n_vars, and KS tests the PITs against uniform. The conditionals of a positive
  density determine it (Brook's lemma), so a chain whose law is not pi fails for large n.

The rejection tests share alpha by Bonferroni, as in ``factor_graph_gates``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from scipy import sparse, stats

from harness.gates.exactness import POWER, chisquare_gof, ks_1samp
from harness.gates.gibbs_steps import pit_against_bound
from harness.gates.mcmc import ess_failure, ess_rhat
from harness.gates.result import GateResult
from harness.gates.thinning import state_indicators, thinning_lag
from harness.spec import AlgorithmSpec, Chain

#: Boxes per axis for the chi-square gate (4^3 = 64 cells on a 3-variable graph).
N_BINS = 4
#: Ground truth by quadrature only up to this many variables (as the target's own limit).
MAX_BINNED_VARS = 3
#: Floats per chunk of rows when evaluating U over many states (bounds temporary memory).
_CHUNK_FLOATS = 1 << 21
#: Up to this many variables Q is a dense matrix (32 MB at the limit), sparse beyond.
_DENSE_VARS = 2000
_Z_POWER = float(stats.norm.ppf(POWER))


def log_density(target: Any, states: np.ndarray) -> np.ndarray:
    """U(x) for each row of ``states``. Bilinear factors sum to a quadratic form,
    U(x) = sum c0 + l . x + x' Q x, so U costs one matrix product per chunk of rows (dense Q
    on up to 2000 variables, sparse beyond) instead of a pass over every factor."""
    X = np.asarray(states, dtype=np.float64)
    n = target.n_vars
    c, i, j = target.coefs, target.scopes[:, 0], target.scopes[:, 1]
    lin = np.bincount(i, weights=c[:, 1], minlength=n)
    lin += np.bincount(j, weights=c[:, 2], minlength=n)
    if n <= _DENSE_VARS:
        Q: Any = np.zeros((n, n))
        np.add.at(Q, (i, j), c[:, 3])
    else:
        Q = sparse.csr_array((c[:, 3], (i, j)), shape=(n, n))
    const = math.fsum(c[:, 0].tolist())
    out = np.empty(X.shape[0])
    rows = max(1, _CHUNK_FLOATS // n)
    for lo in range(0, X.shape[0], rows):
        x = X[lo : lo + rows]
        out[lo : lo + rows] = const + x @ lin + np.sum((x @ Q) * x, axis=1)
    return out


def linear_coefficients(target: Any, states: np.ndarray, var: np.ndarray) -> np.ndarray:
    """g with U(x) = const + g x_v as a function of x_v alone, v = var[r] for row r; read off
    the target's adjacency (CSR): d phi / d x_v = c1 + c3 w at position 0, c2 + c3 u at 1."""
    X = np.asarray(states, dtype=np.float64)
    var = np.asarray(var, dtype=np.int64)
    c = target.coefs
    start = target.adj_indptr[var]
    count = target.adj_indptr[var + 1] - start
    row = np.repeat(np.arange(X.shape[0]), count)
    offset = np.arange(row.size) - np.repeat(np.cumsum(count) - count, count)
    flat = np.repeat(start, count) + offset
    f, pos, other = target.adj_factors[flat], target.adj_pos[flat], target.adj_other[flat]
    lin = np.where(pos == 0, c[f, 1], c[f, 2])
    return np.bincount(row, weights=lin + c[f, 3] * X[row, other], minlength=X.shape[0])


def truncated_exp_cdf(x: np.ndarray, g: np.ndarray, a: float, b: float) -> np.ndarray:
    """CDF at x of the density ∝ exp(g x) on [a, b], with every exponent <= 0 (no overflow)."""
    x = np.clip(np.asarray(x, dtype=np.float64), a, b)
    g = np.asarray(g, dtype=np.float64)
    width = b - a
    out = (x - a) / width  # g == 0: uniform
    neg, pos = g < 0.0, g > 0.0
    gn, gp = g[neg], g[pos]
    out[neg] = np.expm1(gn * (x[neg] - a)) / np.expm1(gn * width)
    den = -np.expm1(-gp * width)
    out[pos] = (np.expm1(gp * (x[pos] - b)) - np.expm1(-gp * width)) / den
    return np.clip(out, 0.0, 1.0)


def reflection_symmetric(target: Any, rtol: float = 1e-12) -> bool:
    """Whether U(a + b - x) = U(x): with x = mid + s, U = const + sum_v lin_v s_v + sum c3 s s',
    so the model is reflection-invariant exactly when every lin_v vanishes."""
    mid = 0.5 * (target.a + target.b)
    c, sc = target.coefs, target.scopes
    lin = np.zeros(target.n_vars)
    np.add.at(lin, sc[:, 0], c[:, 1] + c[:, 3] * mid)
    np.add.at(lin, sc[:, 1], c[:, 2] + c[:, 3] * mid)
    scale = float(np.abs(c[:, 1:]).sum()) * max(1.0, abs(mid)) + 1e-300
    return bool(np.all(np.abs(lin) <= rtol * scale))


def continuous_factor_graph_gates(
    spec: AlgorithmSpec, target: Any, chain: Chain, alpha: float, params: Mapping[str, Any]
) -> list[GateResult]:
    """Gates for a Markov chain on a continuous factor graph (see the module docstring).

    ``params`` is unused (no exact kernel is known for continuous states); it keeps the
    signature of ``factor_graph_gates`` so the dispatcher can call either. A spec declaring
    ``conditional_steps`` also gets :func:`gibbs_step_pit`, against its stated
    ``conditional_error`` when that is not 0.
    """
    del params
    X = np.asarray(chain.values, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] != target.n_vars or X.shape[0] < 16:
        raise ValueError(
            f"chain.values has shape {X.shape}; valid: (n_steps >= 16, {target.n_vars})"
        )
    types = getattr(target, "types", None)
    if types is not None and np.any(types != 0):
        # The closed-form conditionals and the quadratic-form U below hold for bilinear only.
        raise ValueError(
            f"target {target.name!r} has non-bilinear factors; valid for these gates: bilinear "
            "factors only (types all 0)"
        )
    n = X.shape[0]
    energy = log_density(target, X)
    if not np.all(np.isfinite(energy)):
        ess = ess_failure(alpha, n, "non-finite states")
    elif np.ptp(energy) == 0.0:
        ess = ess_failure(alpha, n, "the log density never changed")
    else:
        segments = energy[: n - n % 4].reshape(4, -1)
        ess = ess_rhat(segments, min_ess=100.0, max_rhat=1.05)
    thin = _thinning(target, X, energy) if np.all(np.isfinite(energy)) else 1
    kept = X[::thin]
    checks: list[Callable[[float], GateResult]] = []
    if target.n_vars <= MAX_BINNED_VARS:
        checks.append(lambda a: _binned_chisquare(target, kept, a))
    if target.n_vars > MAX_BINNED_VARS and reflection_symmetric(target):
        checks.append(lambda a: _sign_symmetry(target, kept, a))
    checks.append(lambda a: _conditional_pit(target, kept, a))
    share = alpha / (len(checks) + int(spec.conditional_steps))
    out = [ess]
    for check in checks:
        r = check(share)
        out.append(GateResult(**{**r.__dict__, "detail": f"{r.detail}; every {thin}-th of {n}"}))
    if spec.conditional_steps:
        out.append(gibbs_step_pit(target, X, share, spec.conditional_error))
    return out


def gibbs_step_pit(target: Any, X: np.ndarray, alpha: float, error: float = 0.0) -> GateResult:
    """For a sampler that declares exact Gibbs steps: the PIT F(x_i(t) | x_-i(t-1)) of the one
    coordinate each step changed. Each update is a fresh draw from that conditional, so the PITs
    are i.i.d. Uniform(0, 1) however slowly the chain mixes: a KS on all n - 1 of them, far
    more power than the thinned chain gives. With ``error`` > 0 (a spec's stated bound on
    sup |G - F| of each update's conditional) the gate is gibbs-step-error, which fails only
    when the PITs are provably further than that from uniform
    (:func:`harness.gates.gibbs_steps.pit_against_bound`). A step that changes no coordinate
    or several breaks the declaration and fails the gate."""
    name = "gibbs-step-pit" if error == 0.0 else "gibbs-step-error"
    changed = X[1:] != X[:-1]
    count = changed.sum(axis=1)
    if np.any(count != 1):
        bad = int(np.flatnonzero(count != 1)[0]) + 1
        return GateResult(
            gate=name,
            statistic=math.inf,
            p_value=0.0,
            alpha=alpha,
            passed=False,
            n=int(X.shape[0] - 1),
            detectable=math.nan,
            detectable_measure="sup |F - F0| of the update PITs",
            multiple_testing=error == 0.0,
            detail=f"{int(np.sum(count != 1))} steps change {int(count[bad - 1])} coordinates "
            f"(first: step {bad}); a Gibbs step changes exactly one",
        )
    var = np.argmax(changed, axis=1)
    g = linear_coefficients(target, X[:-1], var)
    xv = X[1:][np.arange(var.size), var]
    u = truncated_exp_cdf(xv, g, target.a, target.b)
    u[~((xv >= target.a) & (xv <= target.b))] = np.nan  # ks_1samp fails non-finite values
    what = "KS of F(x_i(t) | x_-i(t-1)) of every update against U(0, 1) (declared Gibbs steps)"
    return pit_against_bound(u, alpha, error, what)


def _box_indices(target: Any, X: np.ndarray) -> np.ndarray:
    """The quadrature box of each state (N_BINS per variable); -1 off the domain."""
    a, b = target.a, target.b
    inside = np.all((X >= a) & (X <= b), axis=1)
    # x == b belongs to the last box; the boxes' edges have probability zero under pi.
    cells = np.clip(((X - a) / (b - a) * N_BINS).astype(np.int64), 0, N_BINS - 1)
    idx = np.ravel_multi_index(tuple(cells.T), (N_BINS,) * X.shape[1])
    return np.where(inside, idx, -1)


def _thinning(target: Any, X: np.ndarray, energy: np.ndarray) -> int:
    """The lag from the slowest observable (harness/gates/thinning.py): the box indicators the
    binned chi-square counts on tiny graphs, else every coordinate and the log density."""
    if target.n_vars <= MAX_BINNED_VARS:
        observables = state_indicators(_box_indices(target, X), N_BINS**target.n_vars)
    else:
        observables = np.vstack([X.T, energy[None, :]])
    return thinning_lag(observables).lag


def _binned_chisquare(target: Any, kept: np.ndarray, alpha: float) -> GateResult:
    probs = target.bin_probabilities(N_BINS)
    # A state off the domain has index -1, which chisquare_gof fails.
    r = chisquare_gof(_box_indices(target, kept), probs.ravel(), alpha)
    detail = f"{r.detail}; {N_BINS}^{target.n_vars} boxes by quadrature"
    return GateResult(**{**r.__dict__, "gate": "chi-square-thinned", "detail": detail})


def _sign_symmetry(target: Any, kept: np.ndarray, alpha: float) -> GateResult:
    mid = 0.5 * (target.a + target.b)
    m, d = kept.shape
    above = (kept > mid).sum(axis=0)
    per = np.array([stats.binomtest(int(k), m, 0.5).pvalue for k in above])
    p = float(min(1.0, d * per.min()))
    worst = int(np.argmin(per))
    z = float(stats.norm.isf(alpha / d / 2.0))
    return GateResult.of_test(
        "sign-symmetry",
        float(abs(above[worst] / m - 0.5)),
        p,
        alpha,
        m,
        (z + _Z_POWER) * 0.5 / math.sqrt(m),
        "|P(x_i > mid) - 1/2|",
        detail=f"binomial test of P(x_i > {mid:g}) = 1/2 for each of {d} variables, Bonferroni",
    )


def _conditional_pit(target: Any, kept: np.ndarray, alpha: float) -> GateResult:
    rows = np.arange(kept.shape[0])
    var = rows % target.n_vars
    xv = kept[rows, var]
    u = truncated_exp_cdf(xv, linear_coefficients(target, kept, var), target.a, target.b)
    u[~((xv >= target.a) & (xv <= target.b))] = np.nan  # ks_1samp fails non-finite values
    r = ks_1samp(u, lambda t: np.clip(t, 0.0, 1.0), alpha, name="conditional-pit")
    detail = "KS of F(x_i | x_-i) (truncated exponential) against U(0, 1), one variable per state"
    return GateResult(**{**r.__dict__, "detail": "; ".join(filter(None, (r.detail, detail)))})
