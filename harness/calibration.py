"""Measure the gates themselves: their false-failure rate on a correct sampler.

A gate at level alpha run on a correct sampler over many independent seeds should reject a
fraction alpha of the time, and its p-values should be uniform. Three kinds of gate differ in
what "calibrated" means (:func:`gate_kind`):

- ``test``: one rejection test with an exact null (chi-square, KS, a z-test). Its rejection
  rate's Clopper-Pearson interval must contain alpha and its p-values must be uniform
  (two-sided KS);
- ``combined``: several tests merged by Bonferroni or Holm (the smallest p times a count). Valid
  but conservative, so its p-values are super-uniform: the rate must not exceed alpha (the
  interval's lower end <= alpha) and the p-values must not be stochastically smaller than
  uniform (one-sided KS);
- ``bound``: a gate that must prove a bound (error <= delta, ESS >= 100, an exact identity) and
  stays out of Holm. It fails a correct sampler only when the proof does not come through; the
  rate of such failures must not exceed alpha.

Each seed runs the sampler with the parameters of a case ``harness verify`` runs (for an
approximate sampler that includes ``exact_answer=True``, which its error-rate gate needs).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy import stats
from statsmodels.stats.proportion import proportion_confint
from tqdm import tqdm

from harness.gates.result import GateContext
from harness.registry import Registry, build_registry
from harness.spec import AlgorithmSpec, Param, check_sample_size, rerun_for, sample
from harness.targets.catalog import Problem, build_target
from harness.text_table import text_table
from harness.verification import gates_for

#: At least 10 seeds, so that a rejection rate means something.
SEEDS = Param("seeds", 500, int, low=10)
ALPHA = Param("alpha", 0.05, float, 0.0, 1.0, low_inclusive=False, high_inclusive=False)
#: A gate is judged miscalibrated when its p-values' uniformity test gives p below this.
UNIFORMITY_LEVEL = 0.001

#: Gates whose p-value merges several tests by Bonferroni or Holm (see the module docstring).
COMBINED = frozenset(
    {
        "ks-marginals",
        "ks-process",
        "marginal-symmetry",
        "moment-marginals",
        "transition-consistency",
        "sign-symmetry",
        "sbc",
        "z-conditional",
    }
)


def gate_kind(gate: str, multiple_testing: bool, has_p: bool) -> str:
    """``test``, ``combined`` or ``bound`` (module docstring)."""
    if not (multiple_testing and has_p):
        return "bound"
    return "combined" if gate in COMBINED else "test"


@dataclass(frozen=True)
class GateRate:
    """The measured false-failure rate of one gate."""

    gate: str
    kind: str
    trials: int
    failed: int
    interval: tuple[float, float]
    uniformity_p: float | None
    calibrated: bool

    @property
    def rate(self) -> float:
        return self.failed / self.trials

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "interval": list(self.interval), "rate": self.rate}


def gate_rate(
    gate: str,
    rows: Sequence[Mapping[str, Any]],
    alpha: float,
    confidence: float = 0.999,
) -> GateRate:
    """Judge one gate from its ``rows`` over seeds, each with ``p_value``, ``passed`` and
    ``multiple_testing``. A rejection test fails at raw p < ``alpha``; a bound gate when it did
    not pass (at the share of alpha it was given)."""
    if not rows:
        raise ValueError(f"gate {gate!r} has no results to judge")
    if any(r.get("p_value") is not None for r in rows):
        # Seeds on which a test gate made no test (pair-independence seeing a single bin: no
        # p-value, passed) are no trials of it; counted, they would turn it into a bound gate.
        rows = [r for r in rows if r.get("p_value") is not None or not r["passed"]]
    has_p = all(r.get("p_value") is not None for r in rows)
    kind = gate_kind(gate, all(bool(r.get("multiple_testing")) for r in rows), has_p)
    if kind == "bound":
        failed = sum(not r["passed"] for r in rows)
        unif = None
    else:
        p = np.array([r["p_value"] for r in rows], dtype=np.float64)
        failed = int(np.sum(p < alpha))
        # "greater": the p-values' CDF lies above the uniform one somewhere (too small).
        alternative = "two-sided" if kind == "test" else "greater"
        unif = float(stats.kstest(p, "uniform", alternative=alternative).pvalue)
    low, high = proportion_confint(failed, len(rows), alpha=1 - confidence, method="beta")
    if kind == "test":
        ok = low <= alpha <= high and unif >= UNIFORMITY_LEVEL
    else:
        ok = low <= alpha and (unif is None or unif >= UNIFORMITY_LEVEL)
    return GateRate(gate, kind, len(rows), int(failed), (float(low), float(high)), unif, bool(ok))


def verify_params(spec: AlgorithmSpec, problem_name: str, kind: str) -> dict[str, Any]:
    """The parameters of the first check ``harness verify`` runs ``spec`` with on a problem."""
    for check in spec.checks:
        if check.applies_to(problem_name, kind):
            return dict(check.params)
    raise ValueError(
        f"{spec.name!r} has no check that runs on problem {problem_name!r}; see `harness list "
        "--problems` and the spec's checks"
    )


def gate_rows(
    spec: AlgorithmSpec,
    impl: str,
    problem_name: str,
    params: Mapping[str, Any],
    n: int,
    alpha: float,
    rng: np.random.Generator,
    build: Callable[[str], Any] = build_target,
) -> list[dict[str, Any]]:
    """One seed: the sampler's output on the problem and one row per gate verdict.
    ``build`` resolves the problem's target: the catalog's, or a registry's (plugin problems)."""
    target = build(problem_name)
    draws = sample(spec, impl, target, n, rng, **params)
    context = GateContext(rerun_for(spec, impl, params), rng)
    return [
        {
            "gate": g.gate,
            "p_value": g.p_value,
            "passed": bool(g.passed),
            "multiple_testing": bool(g.multiple_testing),
        }
        for g in gates_for(spec, target, draws, alpha, params, context)
    ]


def calibrate(
    algorithm: str,
    problem: str | None = None,
    impl: str = "numba",
    seeds: int = 500,
    n: int = 5000,
    alpha: float = 0.05,
    plugins: tuple[str, ...] = (),
    progress: bool = False,
    confidence: float = 0.999,
    params: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Every gate's verdicts over ``seeds`` seeds; rejection rate vs ``alpha`` and p-uniformity.
    ``params`` (checked against the spec before any seed runs) replaces the parameters of the
    first check ``harness verify`` runs on the problem, to calibrate the gates of a variant."""
    seeds, n, alpha = SEEDS.check(seeds), check_sample_size(n), ALPHA.check(alpha)
    registry = build_registry(plugins)
    spec = registry.get(algorithm)
    prob = _problem_for(spec, problem, registry)
    registry.build_target(prob.name)  # a plugin problem's target is checked before any seed
    if params is None:
        params = verify_params(spec, prob.name, prob.kind)
    else:
        spec.validate(params)
        params = dict(params)
    by_gate: dict[str, list[dict[str, Any]]] = {}
    for seed in tqdm(range(seeds), disable=not progress, file=sys.stderr, desc="seeds"):
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(7,)))
        rows = gate_rows(spec, impl, prob.name, params, n, alpha, rng, registry.build_target)
        for row in rows:
            by_gate.setdefault(row["gate"], []).append(row)
    gates = {g: gate_rate(g, rows, alpha, confidence).to_dict() for g, rows in by_gate.items()}
    return {
        "algorithm": algorithm,
        "problem": prob.name,
        "params": params,
        "impl": impl,
        "n": n,
        "alpha": alpha,
        "confidence": confidence,
        "gates": gates,
        "calibrated": all(g["calibrated"] for g in gates.values()),
    }


def _problem_for(spec: AlgorithmSpec, name: str | None, registry: Registry) -> Problem:
    if name is not None:
        prob = registry.problem(name)
        if prob.kind not in spec.target_kinds:
            raise ValueError(
                f"problem {name!r} is {prob.kind}; {spec.name!r} takes {spec.target_kinds}"
            )
        return prob
    for kind in spec.target_kinds:
        for prob in registry.problems(kind, "quick"):
            if any(c.applies_to(prob.name, kind) for c in spec.checks):
                return prob
    raise ValueError(f"no standard problem fits {spec.name!r}")


KIND_TEXT = {
    "test": "rate ~ alpha, p uniform",
    "combined": "rate <= alpha",
    "bound": "rate <= alpha",
}


def rate_row(g: Mapping[str, Any]) -> list[str]:
    """A gate's measured rate as table cells (shared by calibrate and gate-quality)."""
    unif = g["uniformity_p"]
    side = "" if g["kind"] == "test" else " (1-sided)"
    return [
        g["gate"],
        g["kind"],
        f"{g['failed']}/{g['trials']}",
        f"{g['rate']:.4f}",
        "[{:.4f}, {:.4f}]".format(*g["interval"]),
        "-" if unif is None else f"{unif:.3g}{side}",
        "ok" if g["calibrated"] else "OFF",
    ]


RATE_HEADERS = ["gate", "kind", "failed", "rate", "99.9% interval", "KS p of p-values", ""]


def format_calibration(result: dict[str, Any]) -> str:
    title = (
        f"{result['algorithm']} [{result['impl']}] on {result['problem']} "
        f"{result['params'] or ''}, n={result['n']} per seed, gates at alpha={result['alpha']}"
    )
    rows = [rate_row(g) for g in result["gates"].values()]
    verdict = "calibrated" if result["calibrated"] else "NOT calibrated"
    legend = "kinds: " + "; ".join(f"{k}: {v}" for k, v in KIND_TEXT.items())
    return "\n".join([title, text_table(RATE_HEADERS, rows, align="llrrlll"), legend, verdict])
