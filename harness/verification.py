"""What a verification run checks: cases (algorithm x problem x parameters) and their gates.

The gates that apply follow from the spec's guarantee, the target kind and the outputs a sampler
returns, so a plugin gets the same verdicts as a built-in algorithm:
- exact samplers on discrete targets: chi-square of the draws against the exact pmf;
- exact samplers on 1-D continuous targets: KS against the exact CDF;
- exact samplers on box densities (A*): KS against the quadrature CDF (d = 1), or of each
  marginal, Holm across them (d = 2); bound-validity of the target's M(B) on the boxes a
  reference run visits;
- exact samplers of independent draws: pair independence of consecutive draws (draws that
  share randomness pass every marginal test); approximate ones: the same, and the runs of
  their error indicators (error-independence);
- chains that declare Gibbs steps: every step against its conditional (gibbs_steps.py);
- an ``extras["gumbel_max"]`` output: KS against Gumbel(log Z) (001, Eq. 1; on a box density,
  A*'s maxima, 001 Sec. 4);
- ``extras["process_values"/"process_locations"]``: per-state KS against Gumbel(log p~(i))
  (001, Alg. 1 yields independent Gumbels), Bonferroni over states;
- Markov chains on GLM posteriors (FlyMC and its baselines, harness/gates/glm_chain.py): ESS,
  thinned KS of each marginal against quadrature (D <= 2), simulation-based calibration (D > 2),
  and the z-conditional test for samplers with auxiliary bright/dark variables; the last two
  rerun the sampler through a :class:`~harness.gates.result.GateContext`;
- two implementations: agreement under the same seed;
- across kinds (:data:`SUPPLEMENTS`): searches that declare ``audit``/``report_bounds`` (the A*
  family) get run-to-completion and own-bound on one rerun (harness/gates/search_audit.py);
  MCMC kernels on targets we can draw exactly get exact-start invariance
  (harness/gates/exact_start.py).
"""

from __future__ import annotations

import json
import math
import numbers
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np
from scipy import stats

from harness.gates import (
    chisquare_2samp,
    chisquare_gof,
    exact_start,
    ks_1samp,
    ks_2samp,
    search_audit,
)
from harness.gates.box_bounds import bound_validity, ks_marginals, visited_boxes
from harness.gates.continuous_chain import continuous_factor_graph_gates
from harness.gates.exactness import ks_detectable
from harness.gates.gibbs_steps import gibbs_step_gates
from harness.gates.glm_chain import glm_posterior_gates
from harness.gates.independence import (
    error_runs,
    pair_independence_continuous,
    pair_independence_discrete,
)
from harness.gates.mcmc import ess_failure, ess_rhat, invariance, spectral_gap_bound
from harness.gates.moments import (
    enumerated_marginals,
    marginal_moments,
    moment_mean,
    moment_variance,
)
from harness.gates.power import ks_false_pass
from harness.gates.rates import error_rate, tv_estimate
from harness.gates.result import GateContext, GateResult, Supplement
from harness.gates.thinning import quantile_indicators, state_indicators, thinning_lag
from harness.gates.transitions import chain_state_indices, transition_consistency
from harness.spec import AlgorithmSpec, Chain, Draws
from harness.targets.catalog import Problem, problems
from harness.targets.continuous import gumbel_cdf

SAMPLE_SIZES = {"quick": 20_000, "full": 100_000}


@dataclass(frozen=True)
class Case:
    algorithm: str
    problem: str
    params: Mapping[str, Any] = field(default_factory=dict)
    n: int = SAMPLE_SIZES["quick"]

    @property
    def key(self) -> str:
        return f"{self.algorithm}|{self.problem}|{json.dumps(dict(self.params), sort_keys=True)}"


def plan_cases(
    specs: list[AlgorithmSpec],
    level: str,
    problems_of: Callable[[str, str], list[Problem]] = problems,
) -> list[Case]:
    """Every (algorithm, problem, parameter set) a run at ``level`` verifies.

    ``problems_of(kind, level)`` lists the problems: the catalog's by default, a registry's
    :meth:`~harness.registry.Registry.problems` to add the problems plugins registered.
    """
    cases = []
    for spec in specs:
        for kind in spec.target_kinds:
            for prob in problems_of(kind, level):
                for check in spec.checks:
                    if not check.applies_to(prob.name, kind):
                        continue
                    n = (prob.draws or SAMPLE_SIZES)[level]
                    cases.append(Case(spec.name, prob.name, dict(check.params), n))
    return cases


def _ks_family(columns: list[np.ndarray], locs: np.ndarray, alpha: float) -> GateResult:
    """KS per state against Gumbel(loc_i), combined by Bonferroni (min p times the count)."""
    results = [
        ks_1samp(col, lambda x, m=loc: gumbel_cdf(x, m), alpha / len(columns))
        for col, loc in zip(columns, locs, strict=True)
        if col.size > 0
    ]
    p = min(1.0, len(results) * min(r.p_value for r in results))
    worst = max(r.statistic for r in results)
    n = int(sum(c.size for c in columns))
    smallest = min(c.size for c in columns)
    return GateResult(
        gate="ks-process",
        statistic=worst,
        p_value=p,
        alpha=alpha,
        passed=bool(p >= alpha),
        n=n,
        detectable=ks_detectable(max(smallest, 1), alpha / len(columns)),
        detectable_measure="sup |F - F0| at each state",
        detail=f"{len(results)} states, Bonferroni; fewest draws at a state: {smallest}",
        false_pass=ks_false_pass(max(smallest, 1), alpha / len(columns)),
        # The band of the worst state only: one per state could run to hundreds of KB.
        ecdf=max(results, key=lambda r: r.statistic).ecdf,
    )


#: Target kinds whose ground truth is a pmf over states 0..D-1.
DISCRETE_KINDS = ("discrete", "discrete-ragged", "discrete-likelihood")

#: The test of an exact sampler's draws against the target's law, by target kind.
EXACTNESS_TESTS: Mapping[str, Callable[[Any, np.ndarray, float], GateResult]] = MappingProxyType(
    {
        "discrete": lambda target, values, a: chisquare_gof(values, target.pmf, a),
        "discrete-likelihood": lambda target, values, a: chisquare_gof(values, target.pmf, a),
        "continuous-1d": lambda target, values, a: ks_1samp(values, target.cdf, a),
        # Against the quadrature CDF (its error is stated with the truth, below 1e-5 at d = 1,
        # 2e-4 at d = 2); each marginal, Holm across them, when d = 2.
        "box-density": lambda target, values, a: (
            ks_1samp(values, target.cdf, a)
            if target.d == 1
            else ks_marginals(values, target.marginal_cdf, a)
        ),
    }
)

#: The test that the draws of one call are independent (consecutive pairs), by target kind.
INDEPENDENCE_TESTS: Mapping[str, Callable[[Any, np.ndarray, float], GateResult]] = MappingProxyType(
    {
        "discrete": lambda target, values, a: pair_independence_discrete(values, target.pmf, a),
        "discrete-likelihood": lambda target, values, a: pair_independence_discrete(
            values, target.pmf, a
        ),
        "continuous-1d": lambda target, values, a: pair_independence_continuous(
            values, target.cdf, a
        ),
        "box-density": lambda target, values, a: pair_independence_continuous(
            np.asarray(values).reshape(len(values), -1)[:, 0],
            lambda x: target.marginal_cdf(0, x),
            a,
        ),
    }
)


def exactness_gates(
    spec: AlgorithmSpec, target: Any, draws: Draws, alpha: float
) -> list[GateResult]:
    """The gates for one exact sampler's output (see the module docstring).

    ``alpha`` is this task's share of the run's alpha; it is split evenly over the gates, which
    is the Bonferroni worst case of the run's Holm step and so fixes each gate's detectable
    effect honestly before Holm decides.
    """
    kind = target.kind
    law = EXACTNESS_TESTS.get(kind)
    if law is None:
        raise NotImplementedError(
            f"no exactness gate for target kind {kind!r}; known kinds: {', '.join(EXACTNESS_TESTS)}"
        )
    checks: list[Callable[[float], GateResult]] = [lambda a: law(target, draws.values, a)]
    pairs = INDEPENDENCE_TESTS.get(kind)
    if pairs is not None and np.asarray(draws.values).size >= 2:
        checks.append(lambda a: pairs(target, draws.values, a))
    extras = draws.extras
    if "gumbel_max" in extras and kind in ("discrete", "discrete-likelihood", "box-density"):
        logz = target.log_normaliser
        checks.append(
            lambda a: ks_1samp(
                extras["gumbel_max"], lambda x: gumbel_cdf(x, logz), a, "ks-gumbel-max"
            )
        )
    if "process_values" in extras and kind == "discrete":
        values, locs = extras["process_values"], extras["process_locations"]
        columns = [values[locs == i] for i in range(target.D)]
        checks.append(lambda a: _ks_family(columns, target.log_unnormalised, a))
    return [check(alpha / len(checks)) for check in checks]


def pull_bounds(draws: Draws, target: Any, alpha: float) -> GateResult:
    """000, Prop. 2 and 3: no arm is drawn more than N times and a draw costs at most N * D
    (with a population size per arm: N_i times, and sum_i N_i in all)."""
    N = target.N
    sizes = getattr(target, "sizes", None)
    total = int(np.sum(sizes)) if sizes is not None else N * target.D
    most = int(np.max(draws.extras["max_pulls"]))
    costliest = int(np.max(draws.extras["draw_evals"]))
    passed = most <= N and costliest <= total
    early = draws.extras.get("stopped_early")
    share = "" if early is None else f"; {float(np.mean(early)):.3f} of draws stopped before N"
    return GateResult(
        gate="pull-bounds",
        statistic=float(most),
        p_value=None,
        alpha=alpha,
        passed=bool(passed),
        n=int(np.asarray(draws.values).size),
        detectable=0.0,
        detectable_measure="any draw over the bound",
        multiple_testing=False,
        detail=f"max pulls of an arm {most} (bound N = {N}); max rewards in a draw {costliest} "
        f"(bound {total}); mean {float(np.mean(draws.extras['draw_evals'])):.1f}{share}",
    )


def approximate_gates(
    spec: AlgorithmSpec, target: Any, draws: Draws, alpha: float, params: Mapping[str, Any]
) -> list[GateResult]:
    """tv-vs-delta for an approximate discrete sampler (000, Prop. 1).

    - error-rate: draws that differ from the exact argmax under the same noise
      (``extras["exact"]``), Clopper-Pearson upper bound <= delta;
    - tv: TV of the histogram against the exact pmf, failing only if its interval lies above
      delta;
    - pull-bounds: Prop. 2/3 cost bounds when the sampler reports ``max_pulls``/``draw_evals``;
    - pair-independence and error-independence: the draws of one call are independent (Prop. 1
      is about one draw; draws that share randomness keep every marginal law and error rate):
      consecutive values against the product of their margins, and the runs of consecutive
      error indicators (harness/gates/independence.py).
    """
    if target.kind not in DISCRETE_KINDS or "exact" not in draws.extras:
        raise NotImplementedError(
            f"approximate sampler {spec.name!r} on {target.kind!r}: the tv-vs-delta gate needs "
            "extras['exact'] (call it with exact_answer=True) on a discrete target"
        )
    delta = float(spec.validate(params)[spec.delta_param])
    values = np.asarray(draws.values)
    errors = values != np.asarray(draws.extras["exact"])
    checks: list[Callable[[float], GateResult]] = [
        lambda a: error_rate(int(np.sum(errors)), values.size, delta, a),
        lambda a: tv_estimate(values, target.pmf, a, delta),
    ]
    if values.size >= 3:
        checks.append(lambda a: pair_independence_discrete(values, target.pmf, a))
        checks.append(lambda a: error_runs(errors, a))
    if "max_pulls" in draws.extras and "draw_evals" in draws.extras:
        checks.append(lambda a: pull_bounds(draws, target, a))
    return [check(alpha / len(checks)) for check in checks]


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
    segments = values[: n - n % 4].reshape(4, -1)
    ess = ess_rhat(segments, min_ess=100.0, max_rhat=1.01)
    ess = GateResult(
        gate=ess.gate,
        statistic=ess.statistic,
        p_value=None,
        alpha=alpha,
        passed=ess.passed,
        n=n,
        detectable=ess.detectable,
        detectable_measure=ess.detectable_measure,
        multiple_testing=False,
        detail=f"{ess.detail}; ESS per 1000 likelihood terms "
        f"{1000.0 * ess.statistic / max(chain.evals, 1):.3g}",
        escalate_when_failed=ess.escalate_when_failed,
    )
    # The KS reads the empirical CDF: thin by its slowest indicator (harness/gates/thinning.py).
    deciles = np.quantile(values, np.arange(1, 10) / 10) if np.all(np.isfinite(values)) else []
    thin = thinning_lag(quantile_indicators(values, deciles)).lag if len(deciles) else 1
    tau = n / max(ess.statistic, 1.0)
    extras = chain.extras
    # An approximate kernel earns a bias allowance only by showing its per-step decisions;
    # one that does not is held to exactness.
    approximate = (
        spec.guarantee == "approximate" and "accepted" in extras and "exact_accept" in extras
    )
    delta = float(spec.validate(params)[spec.delta_param]) if approximate else 0.0
    out = [ess]
    checks: list[Callable[[float], GateResult]] = []

    def ks(a: float) -> GateResult:
        res = ks_1samp(values[::thin], target.cdf, a, "ks-thinned")
        detail = f"every {thin}-th of {n} states (tau = {tau:.1f})"
        if not approximate:
            return GateResult(**{**res.__dict__, "detail": detail})
        crit = float(stats.kstwo.isf(a, values[::thin].size))
        low = max(0.0, res.statistic - crit)
        allowed = delta * tau
        return GateResult(
            gate="stationary-bias",
            statistic=res.statistic,
            p_value=res.p_value,
            alpha=a,
            passed=bool(low <= allowed),
            n=res.n,
            detectable=crit,
            detectable_measure="sup |F - F0| resolvable",
            interval=(low, min(1.0, res.statistic + crit)),
            multiple_testing=False,
            detail=f"{detail}; bias (KS) {res.statistic:.4f}, lower bound {low:.4f} vs "
            f"delta * tau = {allowed:.4f}",
        )

    checks.append(ks)
    if approximate:
        wrong = int(np.sum(extras["accepted"] != extras["exact_accept"]))
        checks.append(lambda a: _renamed(error_rate(wrong, n, delta, a), "decision-error"))
    else:
        # The posterior's mean and variance, z-tested with MCSE: far more power than the KS
        # against a small bias of location or scale (harness/gates/moments.py).
        checks.append(lambda a: moment_mean(values, target.mean, target.sd, a))
        checks.append(lambda a: moment_variance(values, target.mean, target.sd**2, a))
    return out + [check(alpha / len(checks)) for check in checks]


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
    return GateResult(
        gate="marginal-symmetry",
        statistic=worst.statistic,
        p_value=p,
        alpha=alpha,
        passed=bool(p >= alpha),
        n=int(kept.shape[0]),
        detectable=worst.detectable,
        detectable_measure=worst.detectable_measure,
        detail=f"{kept.shape[1]} variables against uniform, Bonferroni",
    )


def _renamed(result: GateResult, gate: str) -> GateResult:
    return GateResult(**{**result.__dict__, "gate": gate})


#: Reference draws whose bound evaluations the bound-validity gate re-checks.
BOUND_CHECK_DRAWS = 10


def box_density_gates(
    spec: AlgorithmSpec, target: Any, draws: Draws, alpha: float, params: Mapping[str, Any]
) -> list[GateResult]:
    """The exactness gates, and bound-validity: the boxes on which the spec's reference
    implementation evaluates the target's bound in a few draws (001, Sec. 4), and boxes split
    as A* splits, each probed at random points (harness/gates/box_bounds.py)."""
    checked = spec.validate(params)
    reference = spec.implementations.get("reference")
    rng = np.random.default_rng(20140)
    boxes = visited_boxes(reference, target, checked, BOUND_CHECK_DRAWS, rng)
    source = (
        f"{BOUND_CHECK_DRAWS} reference draws and A*-style splits"
        if reference
        else ("A*-style splits; no reference implementation to record")
    )
    return [
        *exactness_gates(spec, target, draws, alpha),
        bound_validity(target, boxes, alpha, rng, source=source),
    ]


#: A gate set: (spec, target, draws or chain, alpha, params) -> its verdicts.
GateSet = Callable[[AlgorithmSpec, Any, Any, float, Mapping[str, Any]], list[GateResult]]


def _exact_gate_set(
    spec: AlgorithmSpec, target: Any, draws: Draws, alpha: float, params: Mapping[str, Any]
) -> list[GateResult]:
    return exactness_gates(spec, target, draws, alpha)


#: The gate sets of each target kind, by how a sampler samples it: ``"chain"`` (entry
#: ``run_chain``, whatever its guarantee), or ``"exact"`` / ``"approximate"`` (independent draws,
#: by guarantee). :func:`gates_for` looks a sampler's gates up here and nowhere else.
GATE_SETS: Mapping[str, Mapping[str, GateSet]] = MappingProxyType(
    {
        kind: MappingProxyType(by_mode)
        for kind, by_mode in {
            "discrete": {"exact": _exact_gate_set, "approximate": approximate_gates},
            "discrete-ragged": {"approximate": approximate_gates},
            "discrete-likelihood": {"exact": _exact_gate_set, "approximate": approximate_gates},
            "continuous-1d": {"exact": _exact_gate_set},
            "box-density": {"exact": box_density_gates},
            "posterior-1d": {"chain": chain_gates},
            "factor-graph": {"chain": factor_graph_gates},
            "factor-graph-continuous": {"chain": continuous_factor_graph_gates},
            "glm-posterior": {"chain": glm_posterior_gates},
        }.items()
    }
)

#: Kinds whose gate set reruns the sampler, so it takes a :class:`GateContext` as a sixth
#: argument (simulation-based calibration, the z-conditional test).
RERUN_KINDS = frozenset({"glm-posterior"})

#: Gates across target kinds, each deciding where it applies
#: (:class:`~harness.gates.result.Supplement`).
SUPPLEMENTS: tuple[Supplement, ...] = (*exact_start.SUPPLEMENTS, *search_audit.SUPPLEMENTS)


@dataclass(frozen=True)
class Truth:
    """What the gate set of a target kind reads from a target: ``attributes`` it must have,
    ``callables`` it calls, and ``small``, read only on targets small enough to enumerate
    (factor graphs: the enumerated or binned joint), with whether each is called."""

    attributes: tuple[str, ...] = ()
    callables: tuple[str, ...] = ()
    small: tuple[tuple[str, bool], ...] = ()


#: The ground truth each kind's gate set (:data:`GATE_SETS`) reads, which a plugin's problem
#: must carry (:func:`check_target`). Optional extras (``log_normaliser`` for a sampler that
#: reports ``gumbel_max``, ``N`` for pull bounds) are read only when a sampler reports them.
GROUND_TRUTH: Mapping[str, Truth] = MappingProxyType(
    {
        "discrete": Truth(("pmf", "D")),
        "discrete-ragged": Truth(("pmf", "D")),
        "discrete-likelihood": Truth(("pmf", "D")),
        "continuous-1d": Truth(callables=("cdf",)),
        "box-density": Truth(("d",), ("cdf", "marginal_cdf", "bound", "M")),
        "posterior-1d": Truth(("mean", "sd"), ("cdf",)),
        "factor-graph": Truth(("n_vars", "D", "scopes", "tables", "meta"), small=(("pmf", False),)),
        "factor-graph-continuous": Truth(
            (
                "n_vars",
                "a",
                "b",
                "scopes",
                "coefs",
                "adj_indptr",
                "adj_factors",
                "adj_other",
                "adj_pos",
            ),
            small=(("bin_probabilities", True),),
        ),
        # marginal_cdf (quadrature) where D <= 2; simulate and log_posterior for calibration
        # (any posterior that can simulate from its prior; log_lik and log_bound are read only
        # by the z-conditional test of samplers with bright/dark variables).
        "glm-posterior": Truth(
            ("D", "name"), ("log_posterior", "simulate"), small=(("marginal_cdf", True),)
        ),
    }
)


def _is_small(kind: str, target: Any) -> bool:
    """Whether the gates of ``kind`` read the enumerated (or binned) joint of ``target``."""
    from harness.gates.continuous_chain import MAX_BINNED_VARS

    if kind == "factor-graph":
        return int(target.D) ** int(target.n_vars) <= ENUMERABLE
    if kind == "glm-posterior":
        from harness.targets.glm import MAX_QUADRATURE_D

        return int(target.D) <= MAX_QUADRATURE_D
    return kind == "factor-graph-continuous" and int(target.n_vars) <= MAX_BINNED_VARS


def missing_truth(kind: str, target: Any) -> list[str]:
    """What ``target`` lacks of the ground truth the gates of ``kind`` read (empty: nothing)."""
    truth = GROUND_TRUTH[kind]
    missing = [name for name in truth.attributes if not hasattr(target, name)]
    missing += [
        f"{name} (callable)"
        for name in truth.callables
        if not callable(getattr(target, name, None))
    ]
    if missing or not truth.small or not _is_small(kind, target):
        return missing
    return [
        f"{name} (callable)" if call else name
        for name, call in truth.small
        if not (callable(getattr(target, name, None)) if call else hasattr(target, name))
    ]


def _check_pmf(name: str, target: Any) -> None:
    """A discrete target's pmf: D finite, non-negative probabilities summing to 1."""
    pmf = np.asarray(target.pmf, dtype=np.float64)
    D = target.D
    valid = "valid: a 1-D array of D finite probabilities >= 0 summing to 1, D = len(pmf)"
    why = ""
    if pmf.ndim != 1 or pmf.size == 0:
        why = f"shape {pmf.shape}"
    elif not np.all(np.isfinite(pmf)) or np.any(pmf < 0):
        why = "a negative or non-finite entry"
    elif abs(math.fsum(pmf.tolist()) - 1.0) > 1e-9:
        why = f"sums to {math.fsum(pmf.tolist())!r}"
    elif isinstance(D, bool) or not isinstance(D, numbers.Integral) or D != pmf.size:
        why = f"D = {D!r} but pmf has {pmf.size} entries"
    if why:
        raise ValueError(f"problem {name!r}: target pmf is invalid ({why}); {valid}")


def check_target(name: str, kind: str, target: Any) -> None:
    """The target a problem called ``name`` built: of the declared ``kind``, carrying the ground
    truth the gates of that kind read (:data:`GROUND_TRUTH`). ``ValueError`` says what is off."""
    got = getattr(target, "kind", None)
    if got != kind:
        raise ValueError(
            f"problem {name!r}: build() returned a target of kind {got!r} "
            f"({type(target).__name__}); valid: a target whose .kind is the declared {kind!r}"
        )
    missing = missing_truth(kind, target)
    if missing:
        raise ValueError(
            f"problem {name!r}: the target ({type(target).__name__}) lacks the ground truth "
            f"the {kind!r} gates read: {', '.join(missing)}"
        )
    if kind in DISCRETE_KINDS:
        _check_pmf(name, target)


def sampling_mode(spec: AlgorithmSpec) -> str:
    """The key of ``spec``'s gate set within a kind: ``"chain"`` or its guarantee."""
    return "chain" if spec.entry == "run_chain" else spec.guarantee


def gate_set(spec: AlgorithmSpec, kind: str) -> GateSet:
    """The gate set for ``spec`` on targets of ``kind``; ``NotImplementedError`` (the runner
    records it as not verified) naming the kind and what is known when none applies."""
    mode = sampling_mode(spec)
    by_mode = GATE_SETS.get(kind)
    if by_mode is None:
        raise NotImplementedError(
            f"no gate set for target kind {kind!r}; known kinds: {', '.join(GATE_SETS)}"
        )
    found = by_mode.get(mode)
    if found is None:
        what = "Markov chains" if mode == "chain" else f"{mode} independent draws"
        known = [k for k, modes in GATE_SETS.items() if mode in modes]
        raise NotImplementedError(
            f"no gate set for {what} ({spec.name!r}) on target kind {kind!r}; it has gates for "
            f"{', '.join(by_mode)}; kinds with gates for {mode}: {', '.join(known) or 'none'}"
        )
    return found


def gates_for(
    spec: AlgorithmSpec,
    target: Any,
    draws: Draws | Chain,
    alpha: float,
    params: Mapping[str, Any] | None = None,
    context: GateContext | None = None,
) -> list[GateResult]:
    """Every gate verdict on one sampler's output: its kind's gate set (:data:`GATE_SETS`) and
    the applicable :data:`SUPPLEMENTS`, an equal share of ``alpha`` each; ``context`` lets the
    gate sets of :data:`RERUN_KINDS` and the supplements run the sampler again."""
    found = gate_set(spec, target.kind)
    params = params or {}
    extra = [s for s in SUPPLEMENTS if s.applies(spec, target, params)]
    if extra and context is None:
        raise ValueError(
            f"the {', '.join(s.name for s in extra)} gates of {spec.name!r} rerun the sampler; "
            "valid: pass context=GateContext(rerun, rng)"
        )
    share = alpha / (1 + len(extra))
    if target.kind in RERUN_KINDS:
        out = found(spec, target, draws, share, params, context)
    else:
        out = found(spec, target, draws, share, params)
    for s in extra:
        out.extend(s.run(spec, target, draws, share, params, context))
    return out


def _same(a: np.ndarray, b: np.ndarray, rtol: float) -> bool:
    if a.shape != b.shape:
        return False
    if rtol == 0.0 or not np.issubdtype(a.dtype, np.floating):
        return bool(np.array_equal(a, b))
    return bool(np.allclose(a, b, rtol=rtol, atol=0.0))


def _two_sample(kind: str, a: np.ndarray, b: np.ndarray, alpha: float) -> GateResult:
    if kind in DISCRETE_KINDS:
        size = int(max(np.max(a), np.max(b))) + 1
        return chisquare_2samp(a, b, size, alpha)
    return ks_2samp(a, b, alpha)


def agreement(
    spec: AlgorithmSpec,
    kind: str,
    a: Mapping[str, Any],
    b: Mapping[str, Any],
    alpha: float,
) -> GateResult:
    """Reference vs fast under the same seed: values, extras, evaluation counts, final RNG state.

    ``a``/``b`` hold ``values``, ``extras``, ``evals`` and ``rng_state`` of each implementation.
    Where the two differ only because the spec allows a tolerance, it says why; when even that
    fails, a two-sample test reports whether the laws still agree.
    """
    rtol = spec.agreement.rtol
    n = int(np.asarray(a["values"]).size)
    if spec.agreement.law_only:
        law = _two_sample(kind, a["values"], b["values"], alpha)
        return GateResult(
            gate="agreement-law",
            statistic=law.statistic,
            p_value=law.p_value,
            alpha=alpha,
            passed=law.passed,
            n=law.n,
            detectable=law.detectable,
            detectable_measure=law.detectable_measure,
            detail=f"{law.gate}; {spec.agreement.reason}",
        )
    mismatches = []
    if not _same(np.asarray(a["values"]), np.asarray(b["values"]), rtol):
        mismatches.append("values")
    for key in sorted(set(a["extras"]) | set(b["extras"])):
        if key not in a["extras"] or key not in b["extras"]:
            mismatches.append(f"extras[{key}] missing")
        elif not _same(np.asarray(a["extras"][key]), np.asarray(b["extras"][key]), rtol):
            mismatches.append(f"extras[{key}]")
    if a["evals"] != b["evals"]:
        mismatches.append(f"evals {a['evals']} vs {b['evals']}")
    if a["rng_state"] != b["rng_state"]:
        mismatches.append("final Generator state")
    how = "bit-for-bit" if rtol == 0.0 else f"within rtol {rtol:g} ({spec.agreement.reason})"
    if not mismatches:
        return GateResult(
            gate="agreement",
            statistic=0.0,
            p_value=None,
            alpha=alpha,
            passed=True,
            n=n,
            detectable=0.0,
            detectable_measure="any difference",
            multiple_testing=False,
            detail=f"values, extras, evals and Generator state agree {how}",
        )
    if "values" in mismatches:
        law = _two_sample(kind, a["values"], b["values"], alpha)
        law_text = f"; two-sample {law.gate} p = {law.p_value:.3g}"
    else:
        law_text = ""
    return GateResult(
        gate="agreement",
        statistic=float(len(mismatches)),
        p_value=None,
        alpha=alpha,
        passed=False,
        n=n,
        detectable=0.0,
        detectable_measure="any difference",
        multiple_testing=False,
        detail=f"differ ({how} expected): {', '.join(mismatches)}{law_text}",
    )
