"""The gates on independent draws: exact samplers (their law, independence, the Gumbel maxima
and process values they report) and approximate ones (error rate and TV against delta).

- exact samplers on discrete targets: chi-square of the draws against the exact pmf;
- exact samplers on 1-D continuous targets: KS against the exact CDF;
- exact samplers on box densities (A*): KS against the quadrature CDF (d = 1), or of each
  marginal, Holm across them (d = 2); bound-validity of the target's M(B) on the boxes a
  reference run visits;
- exact samplers: pair independence of consecutive draws (draws that share randomness pass
  every marginal test); approximate ones: the same, and the runs of their error indicators
  (error-independence);
- an ``extras["gumbel_max"]`` output: KS against Gumbel(log Z) (001, Eq. 1; on a box density,
  A*'s maxima, 001 Sec. 4);
- ``extras["process_values"/"process_locations"]``: per-state KS against Gumbel(log p~(i))
  (001, Alg. 1 yields independent Gumbels), Bonferroni over states.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

import numpy as np

from harness.gates import chisquare_gof, ks_1samp
from harness.gates.box_bounds import bound_validity, ks_marginals, visited_boxes
from harness.gates.exactness import ks_detectable
from harness.gates.independence import (
    error_runs,
    pair_independence_continuous,
    pair_independence_discrete,
)
from harness.gates.power import ks_false_pass
from harness.gates.rates import error_rate, tv_estimate
from harness.gates.result import GateResult
from harness.spec import AlgorithmSpec, Draws
from harness.targets.continuous import gumbel_cdf


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
    return GateResult.of_test(
        "ks-process",
        worst,
        p,
        alpha,
        n,
        ks_detectable(max(smallest, 1), alpha / len(columns)),
        "sup |F - F0| at each state",
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
    return GateResult.of_bound(
        "pull-bounds",
        float(most),
        bool(passed),
        int(np.asarray(draws.values).size),
        0.0,
        "any draw over the bound",
        alpha,
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
