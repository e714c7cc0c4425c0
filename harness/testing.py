"""The harness's gates inside a user's own tests: :class:`Checker`.

A check runs the user's sampler, applies one gate and raises :class:`CheckFailed` (an
``AssertionError``) carrying the verdict when the gate rejects it. The pytest plugin
(``harness.pytest_plugin``) hands every test a checker through the ``harness_check`` fixture;
outside pytest, build one directly::

    checker = Checker(alpha=1e-3, seed=0)
    checker.exact(lambda n, rng: my_sampler(weights, n, rng), pmf=softmax(weights))

Each check takes a *sampler* (a function of ``n`` and a numpy ``Generator``), not draws, so a
borderline result can be settled with more draws instead of a looser bound. A check spends the
false-failure budget ``alpha`` it was given over up to three stages of 1x, 4x and 16x the draws:
it fails at stage s when p < c, re-runs when c <= p < 10 c (a borderline result) and passes
otherwise; c solves P(fail) = alpha for uniform p-values over the stages
(:func:`stage_level`). Every stage draws afresh, so the stages are independent and a correct
sampler fails a check with probability exactly alpha (at most alpha for tests with discrete
p-values), and a session that splits its budget over its checks (Bonferroni) fails a correct
suite with probability at most the session's alpha.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from harness.checks.output_contract import Declared, reals, states, values_breach
from harness.gates.exactness import chisquare_gof, ks_1samp
from harness.gates.mcmc import ess_rhat
from harness.gates.rates import tv_estimate
from harness.gates.result import GateResult
from harness.gates.sbc import Posterior, Simulate, sbc_pit, sbc_uniformity
from harness.gates.thinning import quantile_indicators, thinning_lag
from harness.spec import Param, check_sample_size
from harness.tasks import SeedKey

#: Draws at stage s are n * FACTOR**s; a borderline p (below BAND times the stage level) re-runs.
STAGES, FACTOR, BAND = 3, 4, 10.0
ALPHA = Param("alpha", 1e-3, float, 0.0, 1.0, low_inclusive=False, high_inclusive=False)
DELTA = Param("delta", 0.01, float, 0.0, 1.0, low_inclusive=False, high_inclusive=False)
TIMEOUT = Param("timeout", 600.0, float, 0.0, math.inf, low_inclusive=False, high_inclusive=False)
#: Chains must show this many effective draws before their KS is read.
MIN_ESS = 100.0

#: A sampler under test: (n, rng) -> n draws.
Sampler = Callable[[int, np.random.Generator], Any]


def fail_probability(c: float, stages: int = STAGES, band: float = BAND) -> float:
    """P(a check fails) under the null with uniform p-values, stage level c and the band."""
    if stages == 1:
        return c
    return c + (min(1.0, band * c) - c) * fail_probability(c, stages - 1, band)


def stage_level(alpha: float, stages: int = STAGES, band: float = BAND) -> float:
    """The per-stage level c with :func:`fail_probability` (c) = alpha (bisection)."""
    lo, hi = 0.0, alpha
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if fail_probability(mid, stages, band) < alpha:
            lo = mid
        else:
            hi = mid
    return lo


@dataclass(frozen=True)
class Verdict:
    """One check's outcome: the deciding stage's gate result, and the stages it ran."""

    name: str
    result: GateResult
    passed: bool
    stage: int
    stages: int
    level: float
    alpha: float
    wall_time: float
    history: tuple[tuple[int, float | None], ...] = ()

    def message(self) -> str:
        r = self.result
        p = "-" if r.p_value is None else f"{r.p_value:.3g}"
        why = (
            f"p-value {p} < {self.level:.3g}"
            if r.p_value is not None
            else "the bound it must prove did not hold"
        )
        runs = ", ".join(f"n={n} p={'-' if q is None else f'{q:.3g}'}" for n, q in self.history)
        lines = [
            f"harness check {self.name!r} failed: gate {r.gate!r} rejected the sampler",
            f"  {why} (stage {self.stage + 1} of {self.stages}; this check's false-failure "
            f"budget {self.alpha:.3g})",
            f"  statistic {r.statistic:.4g}, n = {r.n}",
            f"  smallest discrepancy it could detect: {_fmt(r.detectable)} "
            f"({r.detectable_measure}, power {r.power:g})",
            f"  stages run: {runs}",
        ]
        if r.interval is not None:
            lines.append(f"  interval: [{r.interval[0]:.4g}, {r.interval[1]:.4g}]")
        if r.detail:
            lines.append(f"  detail: {r.detail}")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.result.to_dict(),
            "check": self.name,
            "verdict": "pass" if self.passed else "fail",
            "stage": self.stage,
            "stage_level": self.level,
            "check_alpha": self.alpha,
            "wall_time": self.wall_time,
            "history": [list(h) for h in self.history],
        }


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.4g}"


class CheckFailed(AssertionError):
    """A gate rejected the sampler; ``verdict`` holds the statistic, p-value, n and more."""

    def __init__(self, verdict: Verdict) -> None:
        super().__init__(verdict.message())
        self.verdict = verdict


@dataclass
class Checker:
    """Runs checks at a false-failure budget of ``alpha`` each (``checks`` of them at most,
    when given: the pytest plugin's per-test allowance); records every verdict.

    Holds state (the count of checks made and their verdicts), so it is a class.
    """

    alpha: float = 1e-3
    seed: int = 0
    label: str = ""
    checks: int | None = None
    verdicts: list[Verdict] = field(default_factory=list)
    on_verdict: Callable[[Verdict], None] | None = None
    #: Seconds one call of the user's function may take (None: no limit); a call past it is
    #: stopped and the check fails naming the budget (harness.workers runs it in a fork).
    timeout: float | None = None

    def __post_init__(self) -> None:
        self.alpha = ALPHA.check(self.alpha)
        if self.timeout is not None:
            self.timeout = TIMEOUT.check(self.timeout)
        self.seed = Param("seed", 0, int, low=0).check(self.seed)
        self._level = stage_level(self.alpha)

    def rng(self, index: int, stage: int) -> np.random.Generator:
        """The stream of check ``index`` at ``stage``: fixed by the seed and the label."""
        return SeedKey.from_crc32(self.seed, self.label, index, stage).generator()

    # -- the checks ----------------------------------------------------------------------

    def exact(
        self,
        sampler: Sampler,
        *,
        pmf: Sequence[float] | np.ndarray | None = None,
        cdf: Callable[[np.ndarray], np.ndarray] | None = None,
        n: int = 20_000,
        name: str = "",
    ) -> Verdict:
        """An exact sampler against its law: chi-square against ``pmf`` (draws are integers
        0..len(pmf)-1) or Kolmogorov-Smirnov against ``cdf`` (real draws)."""
        __tracebackhide__ = True
        if (pmf is None) == (cdf is None):
            raise ValueError("exact() takes exactly one of pmf= (discrete) or cdf= (continuous)")
        if pmf is not None:
            law = _check_pmf(pmf)
            return self._run(
                name or "exact",
                sampler,
                n,
                lambda v, a: chisquare_gof(v, law, a),
                states(law.size),
            )
        _check_callable("cdf", cdf)
        return self._run(name or "exact", sampler, n, lambda v, a: ks_1samp(v, cdf, a), reals())

    def approximate(
        self,
        sampler: Sampler,
        *,
        pmf: Sequence[float] | np.ndarray,
        delta: float,
        n: int = 20_000,
        name: str = "",
    ) -> Verdict:
        """An approximate discrete sampler against the TV distance ``delta`` it promises: fails
        only when the (1 - alpha) interval of its TV lies wholly above delta (000 Prop. 1)."""
        __tracebackhide__ = True
        law, delta = _check_pmf(pmf), DELTA.check(delta)
        return self._run(
            name or "approximate",
            sampler,
            n,
            lambda v, a: tv_estimate(v, law, a, delta),
            states(law.size),
        )

    def chain(
        self,
        run_chain: Sampler,
        *,
        cdf: Callable[[np.ndarray], np.ndarray],
        n: int = 20_000,
        name: str = "",
    ) -> Verdict:
        """A Markov chain of n real states against its stationary law's ``cdf``: needs bulk ESS
        >= 100 (arviz-stats), then a KS of the chain thinned by its slowest decile indicator."""
        __tracebackhide__ = True
        _check_callable("cdf", cdf)
        return self._run(name or "chain", run_chain, n, lambda v, a: _chain_ks(v, cdf, a), reals())

    def sbc(
        self,
        simulate: Simulate,
        posterior: Posterior,
        *,
        replications: int = 200,
        n: int = 1000,
        mcmc: bool = True,
        name: str = "",
    ) -> Verdict:
        """Simulation-based calibration (harness/gates/sbc.py): ``simulate(rng)`` returns
        (theta, data) from the prior, ``posterior(data, n, rng)`` n draws of theta given data.
        More stages add replications; ``mcmc`` thins each chain before ranking."""
        __tracebackhide__ = True
        replications = Param("replications", 200, int, low=10).check(replications)
        n = check_sample_size(n)
        _check_callable("simulate", simulate)
        _check_callable("posterior", posterior)

        def run(size: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
            return sbc_pit(simulate, posterior, size, n, rng, mcmc)

        return self._run(
            name or "sbc",
            run,
            replications,
            lambda v, a: sbc_uniformity(v[0], a, v[1]),
        )

    # -- the stages ----------------------------------------------------------------------

    def _run(
        self,
        name: str,
        sampler: Sampler,
        n: int,
        gate: Callable[[Any, float], GateResult],
        declared: Declared | None = None,
    ) -> Verdict:
        __tracebackhide__ = True  # pytest shows the user's check line, not these frames
        n = check_sample_size(n)
        _check_callable("sampler", sampler)
        index = len(self.verdicts)
        if self.checks is not None and index >= self.checks:
            raise ValueError(
                f"this test makes check {index + 1} but declared checks={self.checks}; valid: "
                f"declare @pytest.mark.harness(checks={index + 1}) so the session budget "
                "counts it"
            )
        start = time.perf_counter()
        history: list[tuple[int, float | None]] = []
        for stage in range(STAGES):
            size = n * FACTOR**stage
            values = self._call(sampler, size, self.rng(index, stage))
            # The output contract (harness.checks.output_contract, as verify checks it): a gate fed
            # fewer draws would pass on too little, one fed NaN or floats would mislead.
            breach = None if declared is None else values_breach(values, size, declared)
            if breach is not None:
                raise ValueError(f"the sampler's draws break the output contract: {breach}")
            result = gate(values, self._level)
            history.append((result.n, result.p_value))
            decision = _decide(result, self._level, stage)
            if decision != "escalate":
                break
        verdict = Verdict(
            name,
            result,
            decision == "pass",
            stage,
            STAGES,
            self._level,
            self.alpha,
            time.perf_counter() - start,
            tuple(history),
        )
        self.verdicts.append(verdict)
        if self.on_verdict is not None:
            self.on_verdict(verdict)
        if not verdict.passed:
            raise CheckFailed(verdict)
        return verdict

    def _call(self, sampler: Sampler, size: int, rng: np.random.Generator) -> Any:
        if self.timeout is None:
            return sampler(size, rng)
        from harness.workers import call_with_budget

        return call_with_budget(sampler, (size, rng), self.timeout)


def _decide(result: GateResult, level: float, stage: int) -> str:
    last = stage + 1 >= STAGES
    if result.p_value is None or not result.multiple_testing:
        if result.passed:
            return "pass"
        return "escalate" if result.escalate_when_failed and not last else "fail"
    if not math.isfinite(result.p_value) or result.p_value < level:
        return "fail"
    if not last and result.p_value < BAND * level:
        return "escalate"
    return "pass"


def _chain_ks(values: np.ndarray, cdf: Callable, alpha: float) -> GateResult:
    n = values.size
    segments = values[: n - n % 4].reshape(4, -1)
    ess = ess_rhat(segments, min_ess=MIN_ESS, max_rhat=1.01)
    if not ess.passed or not np.all(np.isfinite(values)):
        return replace(ess, alpha=alpha, detail=f"{ess.detail}; KS not read (needs ESS >= 100)")
    deciles = np.quantile(values, np.arange(1, 10) / 10)
    lag = thinning_lag(quantile_indicators(values, deciles)).lag
    ks = ks_1samp(values[::lag], cdf, alpha, "ks-thinned")
    return replace(ks, detail=f"every {lag}-th of {n} states; {ess.detail}")


def _check_pmf(pmf: Any) -> np.ndarray:
    p = np.asarray(pmf, dtype=np.float64)
    if p.ndim != 1 or p.size < 2 or not np.all(np.isfinite(p)) or np.any(p < 0):
        raise ValueError(
            f"pmf = {np.array2string(p, threshold=8)} is invalid; valid: a 1-D array of at "
            "least 2 finite, non-negative probabilities"
        )
    if abs(p.sum() - 1.0) > 1e-9:
        raise ValueError(f"pmf sums to {p.sum()!r}; valid: probabilities summing to 1 (±1e-9)")
    return p


def _check_callable(name: str, f: Any) -> None:
    if not callable(f):
        raise ValueError(f"{name} = {f!r} is not callable; valid: a function")
