"""Run-wide false-failure control: Holm across gates, and sequential escalation of n.

A run spends one family-wise alpha. It is split evenly over at most ``stages`` rounds; within a
round, Holm's step-down method controls the chance of failing any correct gate at
alpha / stages. Each round uses fresh draws, so by a union bound the whole run's false-failure
probability is <= alpha however the rounds were chosen. A gate whose adjusted p-value is below
the round's alpha fails; one that is inconclusive (below ``inconclusive`` times that alpha) is
re-run with ``factor`` times more draws in the next round; the rest pass. Escalation adds power
where the evidence is borderline instead of loosening any bound.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

import numpy as np

from harness.spec import Param

Decision = Literal["pass", "fail", "escalate"]


def holm(p_values: list[float] | np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """(rejected, adjusted p-values) by Holm's step-down method."""
    p = np.asarray(p_values, dtype=np.float64)
    if p.size == 0:
        return np.zeros(0, dtype=bool), p
    # statsmodels' multipletests(method="holm") gives the same numbers (a test checks) but
    # runs gc.collect() on every call: 0.3 s in a full process, paid per gate per seed.
    m = p.size
    order = np.argsort(p, kind="stable")
    steps = np.maximum.accumulate(np.minimum(1.0, p[order] * np.arange(m, 0, -1)))
    adjusted = np.empty(m)
    adjusted[order] = steps
    return adjusted <= alpha, adjusted


@dataclass(frozen=True)
class Escalation:
    stages: int = 3
    factor: int = 4
    # 1000, not 100: planted bugs of a few percent land at adjusted p ~ 0.003-0.005 in a
    # one-plugin run (alpha 1e-4), just outside a band of 100; in a whole-registry run Holm
    # makes a correct gate escalate only at raw p < ~5e-5, so the wider band costs few draws.
    inconclusive: float = 1000.0

    #: The valid range of each field.
    PARAMS: ClassVar[tuple[Param, ...]] = (
        Param("stages", 3, int, low=1),
        Param("factor", 4, int, low=2),
        Param("inconclusive", 1000.0, float, low=1.0),
    )

    def __post_init__(self) -> None:
        for p in self.PARAMS:
            p.check(getattr(self, p.name))

    def stage_alpha(self, alpha: float) -> float:
        return alpha / self.stages

    def sample_size(self, n0: int, stage: int) -> int:
        return int(n0 * self.factor**stage)

    def decide(self, adjusted_p: float, alpha: float, stage: int) -> Decision:
        a = self.stage_alpha(alpha)
        if adjusted_p < a:
            return "fail"
        if stage + 1 < self.stages and adjusted_p < min(1.0, a * self.inconclusive):
            return "escalate"
        return "pass"
