"""The gates on Markov chains: 1-D posteriors with a quadrature truth (:func:`chain_gates`) and
discrete factor graphs (:func:`factor_graph_gates`). Continuous factor graphs and GLM
posteriors have theirs in :mod:`harness.gates.continuous_chain` and
:mod:`harness.gates.glm_chain`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from scipy import stats

from harness.gates import chisquare_gof, ks_1samp
from harness.gates.gibbs_steps import gibbs_step_gates
from harness.gates.mcmc import ess_failure, ess_rhat, invariance, spectral_gap_bound
from harness.gates.moments import (
    enumerated_marginals,
    marginal_moments,
    moment_mean,
    moment_variance,
)
from harness.gates.rates import error_rate
from harness.gates.result import GateResult
from harness.gates.thinning import quantile_indicators, state_indicators, thinning_lag
from harness.gates.transitions import chain_state_indices, transition_consistency
from harness.spec import AlgorithmSpec, Chain


def chain_gates(
    spec: AlgorithmSpec, target: Any, chain: Chain, alpha: float, params: Mapping[str, Any]
) -> list[GateResult]:
    """Gates for a Markov chain on a 1-D posterior with a quadrature truth.

    - ess: bulk/tail ESS and split R-hat (4 segments) from arviz-stats, with ESS per
      likelihood evaluation; needs bulk ESS >= 100 for the KS below to mean anything;
    - ks-thinned: KS of the chain thinned to near independence (every lag-th state, the lag at
      which the slowest of the decile indicators is correlated by <= 0.02; thinning.py)
      against the quadrature CDF. For an exact kernel it is a rejection test under Holm. For an
      approximate kernel (guarantee "approximate") the stationary law is biased on purpose; the
      gate reports the bias (KS distance, a lower bound on TV) and fails only when its lower
      confidence bound exceeds delta * tau (tau = n / ESS): a per-step kernel error <= delta
      accumulates over about tau steps before the chain forgets it (perturbation bounds of
      Mitrophanov 2005, cited in 000 Sec. 2.2). Only a kernel that reports its decisions (see
      below) gets this allowance; any other is tested as exact;
    - decision-error (approximate kernels reporting ``accepted``/``exact_accept``): the share of
      accept decisions that differ from the exact MH test under the same u and proposal, with a
      Clopper-Pearson upper bound <= delta (000 Sec. 4 with Prop. 1's premise);
    - moment-mean / moment-variance (kernels held to exactness): the chain's mean and its mean
      of (x - mean)^2 against the posterior's, z-tests with MCSE from arviz-stats.
    """
    if target.kind != "posterior-1d":
        raise NotImplementedError(f"no chain gate for target kind {target.kind!r}")
    values = np.asarray(chain.values, dtype=np.float64)
    n = values.size
    ess = _posterior_ess(values, chain.evals, alpha)
    thin = _decile_lag(values)
    tau = n / max(ess.statistic, 1.0)
    extras = chain.extras
    approximate = _shows_its_decisions(spec, extras)
    delta = float(spec.validate(params)[spec.delta_param]) if approximate else 0.0
    allowance = delta * tau if approximate else None
    checks: list[Callable[[float], GateResult]] = [
        lambda a: _thinned_ks(values, target.cdf, thin, tau, allowance, a)
    ]
    if approximate:
        wrong = int(np.sum(extras["accepted"] != extras["exact_accept"]))
        checks.append(lambda a: _renamed(error_rate(wrong, n, delta, a), "decision-error"))
    else:
        # The posterior's mean and variance, z-tested with MCSE: far more power than the KS
        # against a small bias of location or scale (harness/gates/moments.py).
        checks.append(lambda a: moment_mean(values, target.mean, target.sd, a))
        checks.append(lambda a: moment_variance(values, target.mean, target.sd**2, a))
    return [ess] + [check(alpha / len(checks)) for check in checks]


def _posterior_ess(values: np.ndarray, evals: int, alpha: float) -> GateResult:
    """Bulk/tail ESS and split R-hat (4 segments) of a 1-D chain, with ESS per 1000
    likelihood terms in its detail; a bound gate, outside Holm."""
    n = values.size
    segments = values[: n - n % 4].reshape(4, -1)
    ess = ess_rhat(segments, min_ess=100.0, max_rhat=1.01)
    return GateResult.of_bound(
        ess.gate,
        ess.statistic,
        ess.passed,
        n,
        ess.detectable,
        ess.detectable_measure,
        alpha,
        detail=f"{ess.detail}; ESS per 1000 likelihood terms "
        f"{1000.0 * ess.statistic / max(evals, 1):.3g}",
        escalate_when_failed=ess.escalate_when_failed,
    )


def _decile_lag(values: np.ndarray) -> int:
    """The KS reads the empirical CDF: thin by the slowest of its decile indicators
    (harness/gates/thinning.py); 1 for a chain with a non-finite state."""
    deciles = np.quantile(values, np.arange(1, 10) / 10) if np.all(np.isfinite(values)) else []
    return thinning_lag(quantile_indicators(values, deciles)).lag if len(deciles) else 1


def _shows_its_decisions(spec: AlgorithmSpec, extras: Mapping[str, Any]) -> bool:
    """Whether an approximate kernel earns a bias allowance: only by reporting its per-step
    decisions beside the exact ones; one that does not is held to exactness."""
    return spec.guarantee == "approximate" and "accepted" in extras and "exact_accept" in extras


def _thinned_ks(
    values: np.ndarray,
    cdf: Callable[[np.ndarray], np.ndarray],
    thin: int,
    tau: float,
    allowance: float | None,
    alpha: float,
) -> GateResult:
    """KS of every ``thin``-th state against ``cdf``: a rejection test ("ks-thinned"), or with
    an ``allowance`` (delta * tau) the stationary bias, failing only when its lower confidence
    bound exceeds the allowance ("stationary-bias")."""
    n = values.size
    res = ks_1samp(values[::thin], cdf, alpha, "ks-thinned")
    detail = f"every {thin}-th of {n} states (tau = {tau:.1f})"
    if allowance is None:
        return GateResult(**{**res.__dict__, "detail": detail})
    crit = float(stats.kstwo.isf(alpha, values[::thin].size))
    low = max(0.0, res.statistic - crit)
    return GateResult(
        gate="stationary-bias",
        statistic=res.statistic,
        p_value=res.p_value,
        alpha=alpha,
        passed=bool(low <= allowance),
        n=res.n,
        detectable=crit,
        detectable_measure="sup |F - F0| resolvable",
        interval=(low, min(1.0, res.statistic + crit)),
        multiple_testing=False,
        detail=f"{detail}; bias (KS) {res.statistic:.4f}, lower bound {low:.4f} vs "
        f"delta * tau = {allowance:.4f}",
    )


#: Enumerate a factor graph's joint (and build exact kernels) up to this many states.
ENUMERABLE = 4096


def _energies(target: Any, states: np.ndarray, chunk: int = 256) -> np.ndarray:
    """sum_phi phi(x) for each row of ``states`` (log pi up to a constant), in chunks."""
    out = np.empty(states.shape[0])
    f = np.arange(target.scopes.shape[0])
    a, b = target.scopes[:, 0], target.scopes[:, 1]
    for lo in range(0, states.shape[0], chunk):
        X = states[lo : lo + chunk]
        out[lo : lo + chunk] = target.tables[f[None, :], X[:, a], X[:, b]].sum(axis=1)
    return out


def _energy_ess(energy: np.ndarray, alpha: float) -> GateResult:
    """Bulk/tail ESS and split R-hat (4 segments) of a chain's log-density trace; a trace that
    never changed fails (nothing mixed)."""
    n = energy.size
    if np.ptp(energy) == 0.0:
        return ess_failure(alpha, n, "the log density never changed")
    segments = energy[: n - n % 4].reshape(4, -1)
    return _renamed(ess_rhat(segments, min_ess=100.0, max_rhat=1.05), "ess")


def factor_graph_gates(
    spec: AlgorithmSpec, target: Any, chain: Chain, alpha: float, params: Mapping[str, Any]
) -> list[GateResult]:
    """Gates for a Markov chain on a discrete factor graph (003).

    - ess: bulk/tail ESS and split R-hat of the log-density trace (arviz-stats);
    - thinning: the thinned tests see every lag-th state, the lag at which the slowest
      observable they count (state indicators, or each variable's one-hot values, with their
      slowest linear combination) is correlated by at most 0.02 (harness/gates/thinning.py);
      thinning by n / ESS of one trace left them rejecting at twice their alpha;
    - chi-square-thinned: the thinned states against the enumerated joint (tiny graphs);
    - marginal-symmetry: on a Potts model (symmetric under relabelling, so every marginal is
      uniform), the thinned values of each variable against uniform, Bonferroni over variables;
    - moment-marginals: every marginal P(x_i = v) as the chain average of its indicator,
      z-tested with MCSE (arviz-stats), Holm; against the enumerated joint, or 1/D on a Potts
      model;
    - transition-consistency: with the spec's exact kernel on tiny graphs, the chain's observed
      one-step transitions against the kernel's rows (the code must step as declared);
    - invariance / spectral-gap: with the spec's exact kernel on tiny graphs, pi P = pi and
      detailed balance within the kernel's stated error, and the gap against the theorem's bound;
    - gibbs-step-pit / gibbs-step-energy (or gibbs-step-error against a stated
      ``conditional_error``): for a spec that declares Gibbs steps, every step of the unthinned
      chain against its random-scan kernel row, on any graph size (harness/gates/gibbs_steps.py).
    """
    params = spec.validate(params)  # the kernel and the bound need the defaults filled in
    X = np.asarray(chain.values)
    n = X.shape[0]
    energy = _energies(target, X)
    ess = _energy_ess(energy, alpha)
    enumerable = target.D**target.n_vars <= ENUMERABLE
    every = chain_state_indices(X, target.D) if enumerable else None
    # Thin by the slowest observable the thinned tests count (harness/gates/thinning.py): the
    # state indicators for the chi-square, each variable's one-hot values for the symmetry test.
    if enumerable:
        observables = state_indicators(every, target.D**target.n_vars)
    else:
        onehot = X.T[:, None, :] == np.arange(target.D)[None, :, None]
        observables = np.vstack([onehot.reshape(-1, n), energy[None, :]])
    thinning = thinning_lag(observables)
    thin, tau = thinning.lag, thinning.tau_max
    kept = X[::thin]
    out = [ess]
    thinned: list[Callable[[float], GateResult]] = []
    whole: list[Callable[[float], GateResult]] = []
    kernel = spec.exact_kernel(target, params) if enumerable and spec.exact_kernel else None
    if enumerable:
        idx = every[::thin]
        thinned.append(lambda a: _renamed(chisquare_gof(idx, target.pmf, a), "chi-square-thinned"))
        marginals = enumerated_marginals(target.pmf, target.n_vars, target.D)
        whole.append(lambda a: marginal_moments(X, marginals, a, tau))
    elif target.meta.get("symmetric"):
        whole.append(
            lambda a: marginal_moments(X, np.full((target.n_vars, target.D), 1 / target.D), a, tau)
        )
    if target.meta.get("symmetric"):
        thinned.append(lambda a: _uniform_marginals(kept, target.D, a))
    if kernel is not None:
        # Binds the declared kernel (checked by invariance below) to the code that ran.
        P, err = kernel
        whole.append(lambda a: transition_consistency(every, P, a, err=err))
    # Declared Gibbs steps: every step against its random-scan kernel row (gibbs_steps.py).
    steps = spec.conditional_steps and params.get("thin", 1) == 1 and n >= 3
    share = alpha / max(len(thinned) + len(whole) + int(steps), 1)
    for check in thinned:
        r = check(share)
        out.append(GateResult(**{**r.__dict__, "detail": f"{r.detail}; every {thin}-th of {n}"}))
    out.extend(check(share) for check in whole)
    if steps:
        out.extend(gibbs_step_gates(target, X, share, spec.conditional_error))
    if kernel is not None:
        P, err = kernel
        out.append(invariance(P, target.pmf, 2.0 * err + 1e-12))
        bound = spec.gap_bound(target, params) if spec.gap_bound is not None else None
        if bound is not None:
            value, theorem = bound
            gap = spectral_gap_bound(P, target.pmf, value)
            out.append(GateResult(**{**gap.__dict__, "detail": f"{gap.detail} ({theorem})"}))
    return out


def _uniform_marginals(kept: np.ndarray, D: int, alpha: float) -> GateResult:
    per = [
        chisquare_gof(kept[:, j], np.full(D, 1.0 / D), alpha / kept.shape[1])
        for j in range(kept.shape[1])
    ]
    p = min(1.0, kept.shape[1] * min(r.p_value for r in per))
    worst = max(per, key=lambda r: r.statistic)
    return GateResult.of_test(
        "marginal-symmetry",
        worst.statistic,
        p,
        alpha,
        kept.shape[0],
        worst.detectable,
        worst.detectable_measure,
        detail=f"{kept.shape[1]} variables against uniform, Bonferroni",
    )


def _renamed(result: GateResult, gate: str) -> GateResult:
    return GateResult(**{**result.__dict__, "gate": gate})
