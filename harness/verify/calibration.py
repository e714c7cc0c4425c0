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

:func:`calibrate` decides each gate with its own error bound instead of handing back an estimate
alone (the sequential Monte Carlo tests of Gandy 2009, JASA 104:1504, and the p-value buckets of
Gandy, Hahn & Ding 2020, Scand. J. Stat. 47:1178): at a few looks (50 seeds, then every
doubling, and the last seed) the rate's Clopper-Pearson interval at level 1 - error / looks is
compared with the tolerated zone (:func:`zone`). An interval inside it accepts ("the rate lies
in [0.04, 0.06]: accept"), one outside it rejects, anything else goes on, and after the last
seed is "undecided". By a union bound over the looks all the intervals hold at once with
probability >= 1 - error, so each gate's decision is wrong with probability at most ``error``
whenever it is taken. A run stops early once every gate is decided.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np
from scipy import stats
from tqdm import tqdm

from harness.checks.cases import gates_for
from harness.display import text_table
from harness.gates.ecdf_bands import BAND_LEVEL, EcdfBand, ecdf_band
from harness.gates.power import FalsePass, error_rate_false_pass
from harness.gates.rates import clopper_pearson
from harness.gates.result import GateContext
from harness.registry import Registry, build_registry
from harness.spec import AlgorithmSpec, Param, check_sample_size, rerun_for, sample
from harness.targets.catalog import Problem, build_target

#: At least 10 seeds, so that a rejection rate means something.
SEEDS = Param("seeds", 500, int, low=10)
ALPHA = Param("alpha", 0.05, float, 0.0, 1.0, low_inclusive=False, high_inclusive=False)
#: A gate is judged miscalibrated when its p-values' uniformity test gives p below this.
UNIFORMITY_LEVEL = 0.001
#: The tolerated zone of a gate's rate: within this factor of alpha (:func:`zone`); 1.5 is the
#: gate-quality experiment's bar for "at rate alpha".
FACTOR = Param("factor", 1.5, float, low=1.0, low_inclusive=False)
#: The largest probability that a gate's decision is wrong.
ERROR = Param("error", 0.001, float, 0.0, 0.5, low_inclusive=False, high_inclusive=False)
#: The first look at the counts; then every doubling, and the last seed.
FIRST_LOOK = 50
#: Gates that state no false-pass rate themselves; calibrate computes it from the spec's delta.
ERROR_RATE_GATES = ("error-rate", "decision-error")

#: Gates whose p-value merges several tests by Bonferroni or Holm (see the module docstring).
COMBINED = frozenset(
    {
        "ks-marginals",
        "exact-start-moments",
        "exact-start-ks",
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
    low, high = clopper_pearson(failed, len(rows), 1 - confidence)
    if kind == "test":
        ok = low <= alpha <= high and unif >= UNIFORMITY_LEVEL
    else:
        ok = low <= alpha and (unif is None or unif >= UNIFORMITY_LEVEL)
    return GateRate(gate, kind, len(rows), int(failed), (float(low), float(high)), unif, bool(ok))


def zone(kind: str, alpha: float, factor: float) -> tuple[float, float]:
    """The tolerated rates: [alpha / factor, alpha * factor] for a test with an exact null; for
    a combined or bound gate, conservative by design, anything up to alpha * factor."""
    return (alpha / factor if kind == "test" else 0.0), min(alpha * factor, 1.0)


def looks(seeds: int, first: int = FIRST_LOOK) -> tuple[int, ...]:
    """The seed counts at which the decisions are taken: first, 2 first, 4 first, ... below
    ``seeds``, and ``seeds``."""
    out = []
    at = first
    while at < seeds:
        out.append(at)
        at *= 2
    return (*out, seeds)


@dataclass(frozen=True)
class Decision:
    """A gate's decision about its rate: ``accept`` (the interval lies in the zone), ``reject``
    (it lies outside) or ``undecided``; ``interval`` holds with probability >= 1 - ``error``
    together with every other look's, ``seeds`` is the seed count it was taken at."""

    outcome: str
    interval: tuple[float, float]
    zone: tuple[float, float]
    seeds: int
    trials: int
    error: float

    def text(self) -> str:
        lo, hi = self.interval
        if self.outcome == "accept":
            return f"accept: rate in [{lo:.3g}, {hi:.3g}] ({self.seeds} seeds)"
        if self.outcome == "reject":
            side = "above" if lo > self.zone[1] else "below"
            edge = self.zone[1] if side == "above" else self.zone[0]
            return f"reject: rate {side} {edge:.3g}: [{lo:.3g}, {hi:.3g}] ({self.seeds} seeds)"
        return f"undecided after {self.seeds} seeds: [{lo:.3g}, {hi:.3g}]"

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "interval": list(self.interval), "zone": list(self.zone)}


def decide_rate(
    failed: int, trials: int, kind: str, alpha: float, factor: float, level_error: float
) -> tuple[str, tuple[float, float]]:
    """(outcome, interval) at one look: the Clopper-Pearson interval at level 1 - level_error
    against :func:`zone`."""
    low, high = clopper_pearson(failed, trials, level_error)
    z_low, z_high = zone(kind, alpha, factor)
    if z_low <= low and high <= z_high:
        return "accept", (float(low), float(high))
    if low > z_high or high < z_low:
        return "reject", (float(low), float(high))
    return "undecided", (float(low), float(high))


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
    power: bool = False,
) -> list[dict[str, Any]]:
    """One seed: the sampler's output on the problem and one row per gate verdict.
    ``build`` resolves the problem's target: the catalog's, or a registry's (plugin problems).
    With ``power``, each row also keeps the gate's n, its share of alpha, its detectable effect
    and its false-pass rate (calibrate shows them; gate-quality's records stay small)."""
    target = build(problem_name)
    draws = sample(spec, impl, target, n, rng, **params)
    context = GateContext(rerun_for(spec, impl, params), rng)
    rows = []
    for g in gates_for(spec, target, draws, alpha, params, context):
        row = {
            "gate": g.gate,
            "p_value": g.p_value,
            "passed": bool(g.passed),
            "multiple_testing": bool(g.multiple_testing),
        }
        if power:
            fp = g.false_pass or _error_rate_power(spec, params, g)
            row.update(
                n=g.n,
                gate_alpha=g.alpha,
                detectable=g.detectable,
                detectable_measure=g.detectable_measure,
                false_pass=None if fp is None else fp.to_dict(),
            )
        rows.append(row)
    return rows


def _error_rate_power(spec: AlgorithmSpec, params: Mapping[str, Any], g: Any) -> FalsePass | None:
    """The error-rate gate's false-pass rate at a rate of twice the spec's delta (the gate
    itself does not state it; harness/gates/rates.py could)."""
    if g.gate not in ERROR_RATE_GATES or spec.delta_param is None:
        return None
    delta = float(spec.validate(params)[spec.delta_param])
    return error_rate_false_pass(g.n, delta, g.alpha)


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
    factor: float = 1.5,
    error: float = 0.001,
    early_stop: bool = True,
) -> dict[str, Any]:
    """Every gate's verdicts over up to ``seeds`` seeds: each gate's rate decided against the
    zone within ``factor`` of ``alpha`` with error at most ``error`` (module docstring; the run
    stops once every gate is decided unless ``early_stop`` is off), its rejection rate with a
    ``confidence`` interval, the uniformity of its p-values with their ECDF band, and its power
    both ways. ``params`` (checked against the spec before any seed runs) replaces the
    parameters of the first check ``harness verify`` runs on the problem, to calibrate the
    gates of a variant."""
    seeds, n, alpha = SEEDS.check(seeds), check_sample_size(n), ALPHA.check(alpha)
    factor, error = FACTOR.check(factor), ERROR.check(error)
    registry = build_registry(plugins)
    spec = registry.get(algorithm)
    prob = _problem_for(spec, problem, registry)
    registry.build_target(prob.name)  # a plugin problem's target is checked before any seed
    if params is None:
        params = verify_params(spec, prob.name, prob.kind)
    else:
        spec.validate(params)
        params = dict(params)
    schedule = looks(seeds)
    by_gate: dict[str, list[dict[str, Any]]] = {}
    decisions: dict[str, Decision] = {}
    ran = 0
    bar = tqdm(total=seeds, disable=not progress, file=sys.stderr, desc="seeds")
    for seed in range(seeds):
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(7,)))
        rows = gate_rows(spec, impl, prob.name, params, n, alpha, rng, registry.build_target, True)
        for row in rows:
            by_gate.setdefault(row["gate"], []).append(row)
        ran = seed + 1
        bar.update()
        if ran in schedule:
            last = ran == seeds
            look = _look(by_gate, decisions, alpha, factor, error, len(schedule), ran, last)
            decisions.update(look)
            if early_stop and by_gate and all(g in decisions for g in by_gate):
                break
    bar.close()
    gates = {
        g: _gate_summary(g, rows, decisions[g], alpha, confidence) for g, rows in by_gate.items()
    }
    return {
        "algorithm": algorithm,
        "problem": prob.name,
        "params": params,
        "impl": impl,
        "n": n,
        "alpha": alpha,
        "confidence": confidence,
        "seeds": ran,
        "max_seeds": seeds,
        "factor": factor,
        "error": error,
        "gates": gates,
        "calibrated": all(g["calibrated"] for g in gates.values()),
    }


def _look(
    by_gate: Mapping[str, list[dict[str, Any]]],
    decided: Mapping[str, Decision],
    alpha: float,
    factor: float,
    error: float,
    looks_count: int,
    ran: int,
    last: bool,
) -> dict[str, Decision]:
    """The decisions taken at one look: each gate not yet decided that now is (every one at
    the last look, undecided ones included). Each look spends error / looks_count."""
    out = {}
    for gate, rows in by_gate.items():
        if gate in decided:
            continue
        rate = gate_rate(gate, rows, alpha)
        outcome, interval = decide_rate(
            rate.failed, rate.trials, rate.kind, alpha, factor, error / looks_count
        )
        if outcome != "undecided" or last:
            zone_ = zone(rate.kind, alpha, factor)
            out[gate] = Decision(outcome, interval, zone_, ran, rate.trials, error)
    return out


def _gate_summary(
    gate: str,
    rows: Sequence[Mapping[str, Any]],
    decision: Decision,
    alpha: float,
    confidence: float,
) -> dict[str, Any]:
    """A gate's rate (:func:`gate_rate`), decision, p-value band and power, as JSON data. It is
    calibrated unless its rate is rejected or its p-values fail the uniformity test."""
    rate = gate_rate(gate, rows, alpha, confidence)
    uniform = rate.uniformity_p is None or rate.uniformity_p >= UNIFORMITY_LEVEL
    p = [r["p_value"] for r in rows if r.get("p_value") is not None]
    band = ecdf_band(p, gate) if rate.kind != "bound" and len(p) >= 2 else None
    side = "two-sided" if rate.kind == "test" else "above"
    return {
        **rate.to_dict(),
        "calibrated": decision.outcome != "reject" and uniform,
        "decision": decision.to_dict(),
        "decision_text": decision.text(),
        "ecdf": None if band is None else band.to_dict(),
        "ecdf_side": side,
        "ecdf_exits": 0 if band is None else int(band.exits(side).size),
        **_power_summary(rows),
    }


def _power_summary(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The median over seeds of each gate's detectable effect and false-pass rate (the seeds
    share n and alpha; pooling may change a chi-square's cells)."""
    det = [r["detectable"] for r in rows if r.get("detectable") is not None]
    det = [d for d in det if np.isfinite(d)]
    fps = [FalsePass.from_dict(r["false_pass"]) for r in rows if r.get("false_pass")]
    fp = replace(fps[0], rate=float(np.median([f.rate for f in fps]))) if fps else None
    return {
        "detectable": float(np.median(det)) if det else None,
        "detectable_measure": next((r["detectable_measure"] for r in rows if "n" in r), ""),
        "gate_n": int(np.median([r["n"] for r in rows])) if rows and "n" in rows[0] else None,
        "false_pass": None if fp is None else fp.to_dict(),
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


def band_text(band: EcdfBand | Mapping[str, Any] | None, side: str) -> str:
    """Where an ECDF difference leaves its band, in words (calibrate's p-value column)."""
    if band is None:
        return "-"
    b = EcdfBand.from_dict(band)
    exits = b.exits("above" if side == "above" else "two-sided")
    if not exits.size:
        return f"inside its {b.level:.1%} band"
    d, hi = np.asarray(b.diff), np.asarray(b.upper)
    u = b.grid[exits]
    where = "above" if np.all(d[exits] > hi[exits]) else "outside"
    return f"{where} its band at p in [{u.min():.2f}, {u.max():.2f}]"


def power_row(g: Mapping[str, Any]) -> list[str]:
    """A gate's power both ways as table cells: what it detects at power 0.8, and the chance
    that it passes the named bug."""
    fp = g.get("false_pass")
    det = g.get("detectable")
    return [
        g["gate"],
        "-" if g.get("gate_n") is None else str(g["gate_n"]),
        "-" if det is None else f"{det:.3g} ({g.get('detectable_measure') or '-'})",
        "-" if not fp else FalsePass.from_dict(fp).text(),
    ]


POWER_HEADERS = ["gate", "n", "detectable at power 0.8", "false pass"]


def format_calibration(result: dict[str, Any]) -> str:
    seeds = result.get("seeds", "?")
    title = (
        f"{result['algorithm']} [{result['impl']}] on {result['problem']} "
        f"{result['params'] or ''}, n={result['n']} per seed, gates at alpha={result['alpha']}; "
        f"{seeds} of at most {result.get('max_seeds', seeds)} seeds"
    )
    headers = ["gate", "kind", "failed", "rate", "decision", "KS p of p-values", "p-value ECDF"]
    rows = []
    for g in result["gates"].values():
        unif = g["uniformity_p"]
        one_sided = "" if g["kind"] == "test" else " (1-sided)"
        rows.append(
            [
                g["gate"],
                g["kind"],
                f"{g['failed']}/{g['trials']}",
                f"{g['rate']:.4f}",
                g.get("decision_text", "-"),
                "-" if unif is None else f"{unif:.3g}{one_sided}",
                band_text(g.get("ecdf"), g.get("ecdf_side", "two-sided")),
            ]
        )
    outcomes = [g["decision"]["outcome"] for g in result["gates"].values() if g.get("decision")]
    counts = ", ".join(f"{outcomes.count(k)} {k}ed" for k in ("accept", "reject"))
    error, factor = result.get("error", ERROR.default), result.get("factor", FACTOR.default)
    lines = [
        title,
        text_table(headers, rows, align="llrrlll"),
        f"decisions: the rate within a factor {factor:g} of alpha (test: "
        f"[{result['alpha'] / factor:.3g}, {result['alpha'] * factor:.3g}]; combined and bound: "
        f"at most {result['alpha'] * factor:.3g}); each decision is wrong with probability <= "
        f"{error:g}. p-value ECDF: its {BAND_LEVEL:.1%} simultaneous band "
        "(above = too many small p).",
        "kinds: " + "; ".join(f"{k}: {v}" for k, v in KIND_TEXT.items()),
        "",
        "power both ways, at each gate's n and share of alpha:",
        text_table(POWER_HEADERS, [power_row(g) for g in result["gates"].values()], "lrll"),
        "",
        f"{'calibrated' if result['calibrated'] else 'NOT calibrated'}: {counts}, "
        f"{outcomes.count('undecided')} undecided",
    ]
    return "\n".join(lines)
