"""The record every gate returns."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from harness.gates.ecdf_bands import EcdfBand
from harness.gates.power import FalsePass


@dataclass(frozen=True, kw_only=True)
class GateResult:
    """One statistical verdict, with what it could have caught. Built with keywords only.

    ``p_value`` is the probability of a discrepancy at least this large under a correct sampler
    (small means "reject"). Gates whose verdict is not a rejection test (error-rate bounds,
    ESS, spectral gaps) set ``multiple_testing = False`` and carry their own verdict.
    ``detectable`` is the smallest discrepancy (measured as ``detectable_measure``) that the gate
    detects with power ``power`` at this n and alpha: a pass says nothing below it.
    ``escalate_when_failed`` marks a failure that more draws could overturn (a bound not yet
    proven, e.g. an error rate whose interval straddles delta): the runner re-runs it with more
    draws while stages remain, and only then lets it fail.
    ``false_pass`` states the power the other way: the probability of passing a bug of a named
    size at this n and alpha (:mod:`harness.gates.power`). ``ecdf`` holds, for gates that test
    uniform values (PITs, SBC ranks), the ECDF difference on a fixed grid with its simultaneous
    band (:mod:`harness.gates.ecdf_bands`), one per quantity tested: what the report plots.
    """

    gate: str
    statistic: float
    p_value: float | None
    alpha: float
    passed: bool
    n: int
    detectable: float | None
    detectable_measure: str
    power: float = 0.8
    interval: tuple[float, float] | None = None
    multiple_testing: bool = True
    detail: str = ""
    escalate_when_failed: bool = False
    false_pass: FalsePass | None = None
    ecdf: tuple[EcdfBand, ...] = ()

    def __post_init__(self) -> None:
        # A result rebuilt from another's to_dict() (GateResult(**{**r.to_dict(), ...})) hands
        # these back as plain data: turn them into their types again.
        if isinstance(self.false_pass, dict):
            object.__setattr__(self, "false_pass", FalsePass.from_dict(self.false_pass))
        object.__setattr__(self, "ecdf", tuple(EcdfBand.from_dict(b) for b in self.ecdf))

    @classmethod
    def of_test(
        cls,
        gate: str,
        statistic: float,
        p_value: float,
        alpha: float,
        n: int,
        detectable: float | None,
        measure: str,
        **rest: Any,
    ) -> GateResult:
        """A rejection test's verdict: it passes when ``p_value >= alpha``; ``rest`` sets the
        other fields (detail, false_pass, ecdf, ...)."""
        return cls(
            gate=gate,
            statistic=float(statistic),
            p_value=float(p_value),
            alpha=alpha,
            passed=bool(p_value >= alpha),
            n=int(n),
            detectable=detectable,
            detectable_measure=measure,
            **rest,
        )

    @classmethod
    def of_bound(
        cls,
        gate: str,
        statistic: float,
        passed: bool,
        n: int,
        detectable: float | None,
        measure: str,
        alpha: float = math.nan,
        **rest: Any,
    ) -> GateResult:
        """A verdict that is not a rejection test (a bound, a tolerance, a required ESS): no
        p-value, so Holm and the calibration leave it out; ``rest`` sets the other fields."""
        return cls(
            gate=gate,
            statistic=statistic,
            p_value=None,
            alpha=alpha,
            passed=passed,
            n=n,
            detectable=detectable,
            detectable_measure=measure,
            multiple_testing=False,
            **rest,
        )

    @classmethod
    def nothing_to_test(
        cls, gate: str, statistic: float, alpha: float, n: int, measure: str, detail: str
    ) -> GateResult:
        """A pass without a test: the data leave no arrangement or spread to test."""
        return cls.of_bound(gate, statistic, True, n, math.nan, measure, alpha, detail=detail)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        if self.interval is not None:
            d["interval"] = [float(v) for v in self.interval]
        return d


@dataclass(frozen=True)
class GateContext:
    """What a gate needs to run the sampler under test again (simulation-based calibration, the
    z-conditional test): ``rerun(target, n, rng, x0=None, **overrides)`` calls the same spec,
    implementation and parameters (``overrides`` replacing some); ``rng`` is the task's
    Generator after its own run, so the gate's draws are a function of the task's seed."""

    rerun: Callable[..., Any]
    rng: np.random.Generator


@dataclass(frozen=True)
class Supplement:
    """A gate that applies across target kinds (exact-start invariance, the search audits):
    ``applies(spec, target, params)`` says whether it has something to check, and
    ``run(spec, target, output, alpha, params, context)`` returns its verdicts at ``alpha``.
    :func:`harness.checks.cases.gates_for` gives each applicable supplement an equal share of
    the task's alpha beside the kind's own gate set."""

    name: str
    applies: Callable[[Any, Any, Any], bool]
    run: Callable[..., list[GateResult]]
