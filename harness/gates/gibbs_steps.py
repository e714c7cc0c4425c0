"""Per-step gates for chains that declare Gibbs updates (``AlgorithmSpec.conditional_steps``).

A Gibbs step redraws one coordinate from its full conditional, so each step is a fresh draw
from a law known given the previous state. Its PIT under that law is Uniform(0, 1) given the
past, and the PITs of a whole chain are i.i.d. uniform however slowly the chain mixes (the
thinned gates see only n / tau states; these see every step).

On a discrete pairwise factor graph (003, Sec. 1.1, Alg. 1) the site i is uniform and not
recorded, so each step is tested against its whole random-scan kernel row: from x the chain
stays (probability (1/n) sum_i pi(x_i | x_-i)) or sets x_i = w != x_i (probability
pi(w | x_-i) / n). Two gates read the same rows:

- gibbs-step-pit: the randomised PIT F(y-) + V p(y) of each step (V ~ U(0, 1), see
  :data:`PIT_SEED`), outcomes ordered by the energy change dU = U(y) - U(x)
  (stay: 0), so a conditional at the wrong temperature moves every PIT the same way; KS
  against uniform. An omnibus test, but a discrete row's atoms (the stay outcome often holds
  most of the mass) blur the PITs, so it is weak against small errors;
- gibbs-step-energy: the score test of a temperature error. With S_t = dU(y_t) - E_row dU and
  V_t = Var_row dU, S_t is a martingale difference with known conditional variance under the
  declared kernel, so Z = sum S_t / sqrt(sum V_t) is N(0, 1) (martingale CLT). If every
  conditional is pi(. | x_-i)^(1 + eps) renormalised, E S_t moves by eps c_t with
  c_t = (1/n) sum_i Var(U_i | x_-i), so Z moves by eps sum c_t / sqrt(sum V_t): the locally
  most powerful test against that slip (detectable: the smallest |eps| found with power 0.8).

A spec whose conditionals are only approximate states a bound ``conditional_error`` on the TV
between each update's law and the exact conditional (for a 1-D continuous conditional the
Kolmogorov distance sup |G - F| suffices). The PITs' law is then within that bound of uniform in
sup distance, and :func:`pit_against_bound` (gate gibbs-step-error) fails only when the KS
distance exceeds the bound by more than its resolution.
"""

from __future__ import annotations

import math
import zlib
from typing import Any

import numpy as np
from scipy import sparse, stats

from harness.gates.exactness import ks_1samp
from harness.gates.result import GateResult
from harness.spec import CONDITIONAL_ERROR as ERROR

#: Floats per chunk of steps when evaluating every conditional of every step (bounds memory).
_CHUNK_FLOATS = 1 << 22
#: Seed of the uniforms that randomise the discrete PIT. The stream is keyed by a hash of the
#: chain: the uniforms then vary from chain to chain, as the PIT's law needs, are independent of
#: each step's outcome in every practical sense, and keep the gate a function of the chain.
PIT_SEED = 20_031
_Z_POWER = float(stats.norm.ppf(0.8))


def energy_matrix(target: Any) -> sparse.csr_array:
    """W with U_i(v) = sum_{phi in A[i]} phi(x with x_i = v) = sum_j W[i D + v, j D + x_j]: the
    conditional energies of every site as one sparse product with the one-hot state, read off
    the target's CSR adjacency (003, Sec. 1.1)."""
    D, n = target.D, target.n_vars
    f, pos, other = target.adj_factors, target.adj_pos, target.adj_other
    owner = np.repeat(np.arange(n), np.diff(target.adj_indptr))
    tab = target.tables[f]  # tab[s, value of the factor's first variable, of its second]
    # T[s, u, v]: the factor of slot s with x(owner) = v and x(other) = u.
    T = np.where((pos == 0)[:, None, None], tab.transpose(0, 2, 1), tab)
    u, v = np.meshgrid(np.arange(D), np.arange(D), indexing="ij")
    rows = (owner[:, None, None] * D + v[None]).ravel()
    cols = (other[:, None, None] * D + u[None]).ravel()
    return sparse.csr_array((T.ravel(), (rows, cols)), shape=(n * D, n * D))


def conditional_energies(target: Any, states: np.ndarray, W: Any = None) -> np.ndarray:
    """U_i(v) for each row x of ``states`` (shape (rows, n_vars, D)); ``W`` from
    :func:`energy_matrix` (built when not given)."""
    X = np.asarray(states, dtype=np.int64)
    m, n = X.shape
    D = target.D
    W = energy_matrix(target) if W is None else W
    cols = (X + D * np.arange(n)[None, :]).ravel()
    onehot = sparse.csr_array(
        (np.ones(cols.size), cols, np.arange(0, cols.size + 1, n)), shape=(m, n * D)
    )
    return (onehot @ W.T).toarray().reshape(m, n, D)


def _rows(target: Any, W: Any, x: np.ndarray, y: np.ndarray, v: np.ndarray) -> np.ndarray:
    """For steps x -> y (rows of equal length): (PIT, S, V, c) per step, shape (4, m); see the
    module docstring."""
    m, n = x.shape
    D = target.D
    U = conditional_energies(target, x, W)
    r, i_all = np.arange(m)[:, None], np.arange(n)[None, :]
    P = np.exp(U - U.max(axis=2, keepdims=True))
    P /= P.sum(axis=2, keepdims=True)
    mean_u = np.sum(P * U, axis=2)
    c = np.mean(np.sum(P * U * U, axis=2) - mean_u * mean_u, axis=1)
    dU = U - U[r, i_all, x][:, :, None]  # zero at w = x_i: those outcomes are "stay"
    stay = P[r, i_all, x].sum(axis=1) / n
    probs = P / n
    probs[r, i_all, x] = 0.0
    probs = np.concatenate([probs.reshape(m, n * D), stay[:, None]], axis=1)
    dU = np.concatenate([dU.reshape(m, n * D), np.zeros((m, 1))], axis=1)
    mu = np.sum(probs * dU, axis=1)
    var = np.maximum(np.sum(probs * dU * dU, axis=1) - mu * mu, 0.0)
    changed = x != y
    i = np.argmax(changed, axis=1)
    obs = np.where(changed.any(axis=1), i * D + y[np.arange(m), i], n * D)
    d_obs = dU[np.arange(m), obs]
    idx = np.arange(n * D + 1)[None, :]
    # Outcomes ordered by dU, ties by index: a fixed order given x, as the PIT needs.
    before = (dU < d_obs[:, None]) | ((dU == d_obs[:, None]) & (idx < obs[:, None]))
    low = np.sum(probs * before, axis=1)
    pit = np.clip(low + v * probs[np.arange(m), obs], 0.0, 1.0)
    return np.vstack([pit, d_obs - mu, var, c])


def _broken(name: str, alpha: float, n: int, why: str, bound: bool) -> GateResult:
    return GateResult.of_test(
        name,
        math.inf,
        0.0,
        alpha,
        n,
        math.nan,
        "any step outside the declared kernel",
        multiple_testing=not bound,
        detail=why,
    )


def gibbs_step_gates(
    target: Any, X: np.ndarray, alpha: float, error: float = 0.0
) -> list[GateResult]:
    """The per-step gates of a random-scan Gibbs chain on a discrete factor graph (module
    docstring), ``alpha`` split evenly: gibbs-step-pit and gibbs-step-energy, or with a stated
    ``error`` > 0 gibbs-step-error alone. ``X`` holds every state (no thinning); the first step
    (from the unrecorded start) is not tested. A step that changes two or more coordinates, or a
    value outside 0..D-1, breaks the declaration and fails every gate."""
    error = ERROR.check(error)
    X = np.asarray(X, dtype=np.int64)
    if X.ndim != 2 or X.shape[0] < 3 or X.shape[1] != target.n_vars:
        raise ValueError(
            f"X has shape {X.shape}; valid: (n_steps >= 3, {target.n_vars}) states of the chain"
        )
    names = ("gibbs-step-error",) if error > 0.0 else ("gibbs-step-pit", "gibbs-step-energy")
    share = alpha / len(names)
    steps = X.shape[0] - 1
    count = (X[1:] != X[:-1]).sum(axis=1)
    if np.any((X < 0) | (X >= target.D)):
        why = f"values outside 0..{target.D - 1}"
        return [_broken(g, share, steps, why, error > 0.0) for g in names]
    if np.any(count > 1):
        why = (
            f"{int(np.sum(count > 1))} steps change two or more coordinates (first: step "
            f"{int(np.flatnonzero(count > 1)[0]) + 1}); a Gibbs step changes at most one"
        )
        return [_broken(g, share, steps, why, error > 0.0) for g in names]
    W = energy_matrix(target)
    v = np.random.default_rng([PIT_SEED, zlib.crc32(X.tobytes())]).random(steps)
    chunk = max(1, _CHUNK_FLOATS // (4 * target.n_vars * target.D + W.nnz // target.D))
    parts = [
        _rows(target, W, X[lo:hi], X[lo + 1 : hi + 1], v[lo:hi])
        for lo in range(0, steps, chunk)
        for hi in (min(lo + chunk, steps),)
    ]
    pit, S, V, c = np.hstack(parts)
    what = "randomised PIT of every step against its random-scan Gibbs row (declared Gibbs steps)"
    if error > 0.0:
        return [pit_against_bound(pit, share, error, what)]
    return [pit_against_bound(pit, share, 0.0, what), _energy_score(S, V, c, share)]


def _energy_score(S: np.ndarray, V: np.ndarray, c: np.ndarray, alpha: float) -> GateResult:
    total = float(V.sum())
    n = int(S.size)
    measure = "relative temperature error |eps| of every conditional"
    if not total > 0.0:
        return GateResult.nothing_to_test(
            "gibbs-step-energy",
            0.0,
            alpha,
            n,
            measure,
            "every step's row puts all its mass on one energy change: nothing to test",
        )
    z = float(S.sum()) / math.sqrt(total)
    p = float(2.0 * stats.norm.sf(abs(z)))
    drift = float(c.sum()) / math.sqrt(total)  # z per unit eps
    detectable = (float(stats.norm.isf(alpha / 2.0)) + _Z_POWER) / drift if drift > 0 else math.nan
    return GateResult.of_test(
        "gibbs-step-energy",
        z,
        p,
        alpha,
        n,
        detectable,
        measure,
        detail=f"score z of dU(step) - E_row dU over {n} steps = {z:.2f} (a conditional "
        f"pi^(1 + eps) moves it by {drift:.3g} eps)",
    )


def pit_against_bound(u: np.ndarray, alpha: float, error: float, what: str) -> GateResult:
    """KS of the step PITs ``u`` against Uniform(0, 1). ``error`` = 0: gate gibbs-step-pit, a
    rejection test. ``error`` > 0: each update's conditional is within ``error`` of the exact one
    (TV, or sup |G - F| of a 1-D conditional), so the PITs' law is within ``error`` of uniform in
    sup distance; gate gibbs-step-error then fails only when the KS distance minus its critical
    value at ``alpha`` exceeds ``error``. Its p-value, P(D_n >= d - error) under uniform, is
    conservative for that null (a distance d from uniform implies one >= d - error from the
    PITs' own law). A bound gate: it stays out of Holm."""
    error = ERROR.check(error)
    name = "gibbs-step-pit" if error == 0.0 else "gibbs-step-error"
    r = ks_1samp(u, lambda t: np.clip(t, 0.0, 1.0), alpha, name=name)
    if error == 0.0:
        return GateResult(**{**r.__dict__, "detail": "; ".join(filter(None, (r.detail, what)))})
    n = r.n
    crit = float(stats.kstwo.isf(alpha, n))
    low = max(0.0, r.statistic - crit)
    finite = math.isfinite(r.statistic)
    p = float(stats.kstwo.sf(max(r.statistic - error, 0.0), n)) if finite else 0.0
    return GateResult(
        gate=name,
        statistic=r.statistic,
        p_value=p,
        alpha=alpha,
        passed=bool(p >= alpha),
        n=n,
        detectable=error + crit,
        detectable_measure="sup |G - U| of the step PITs (stated bound plus KS resolution)",
        interval=(low, min(1.0, r.statistic + crit)),
        multiple_testing=False,
        detail=f"{what}; KS distance {r.statistic:.4f}, lower bound {low:.4f} vs the stated "
        f"conditional error {error:g}",
    )
