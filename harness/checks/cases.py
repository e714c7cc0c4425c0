"""What a verification run checks: cases (algorithm x problem x parameters) and their gates.

The gates that apply follow from the spec's guarantee, the target kind and the outputs a sampler
returns, so a plugin gets the same verdicts as a built-in algorithm. :func:`gates_for` looks
them up in one table (:mod:`harness.checks.gate_sets`):

- independent draws, exact or approximate (:mod:`harness.checks.draws`): the law of the
  draws against the target's, their independence, an approximate sampler's error rate and TV
  against delta;
- Markov chains (:mod:`harness.checks.chains`): ESS, thinned tests against the truth,
  moments, and on tiny factor graphs the declared exact kernel; chains that declare Gibbs steps:
  every step against its conditional (gibbs_steps.py); GLM posteriors (FlyMC and its
  baselines, harness/gates/glm_chain.py): ESS, thinned KS of each marginal (D <= 2),
  simulation-based calibration (D > 2) and the z-conditional test, the last two rerunning the
  sampler through a :class:`~harness.gates.result.GateContext`;
- gates across kinds (:data:`~harness.checks.gate_sets.SUPPLEMENTS`): search audits and
  exact-start invariance;
- two implementations: agreement under the same seed (:mod:`harness.checks.agreement`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.checks.gate_sets import RERUN_KINDS, SUPPLEMENTS, gate_set
from harness.gates.result import GateContext, GateResult
from harness.spec import AlgorithmSpec, Chain, Draws
from harness.targets.catalog import Problem, problems

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


def gates_for(
    spec: AlgorithmSpec,
    target: Any,
    draws: Draws | Chain,
    alpha: float,
    params: Mapping[str, Any] | None = None,
    context: GateContext | None = None,
) -> list[GateResult]:
    """Every gate verdict on one sampler's output: its kind's gate set
    (:data:`~harness.checks.gate_sets.GATE_SETS`) and the applicable :data:`SUPPLEMENTS`,
    an equal share of ``alpha`` each; ``context`` lets the gate sets of :data:`RERUN_KINDS` and
    the supplements run the sampler again."""
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
