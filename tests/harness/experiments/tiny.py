"""What every experiment's tests share: a tiny run through the framework, stable records."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.declare import Config
from harness.experiments.claims import Claim, judge
from harness.experiments.framework import Experiment, RunSummary, run

#: Record fields that depend on the clock or the source tree, or that the store adds.
CLOCK_FIELDS = frozenset({"wall_s", "sampler_s", "setup_s", "code", "task_lines"})


def run_tiny(experiment: Experiment[Any], config: Config, out: Path, **kw: Any) -> RunSummary:
    """``harness reproduce`` of ``experiment`` with ``config`` in place of a level, in this
    process and quietly."""
    kw.setdefault("scheduler", "inprocess")
    return run(
        experiment,
        config.level,
        config.seed,
        out,
        progress=False,
        log=lambda m: None,
        config=config,
        **kw,
    )


def stable(record: dict[str, Any], clock: frozenset[str] = CLOCK_FIELDS) -> dict[str, Any]:
    """``record`` without the fields that change from run to run."""
    return {k: v for k, v in record.items() if k not in clock}


def assert_decided(claims: Sequence[Claim], records: list[dict[str, Any]], want: str) -> None:
    """Every claim comes out ``want`` on ``records``; one whose setting differs says so, and
    its reason carries what the rule alone gives."""
    for claim in claims:
        v = judge(claim, records)
        if claim.differs:
            assert v.verdict == "setting differs", (claim.id, v.reason)
            assert f"the rule alone: {want};" in v.reason, (claim.id, v.reason)
        else:
            assert v.verdict == want, (claim.id, v.ours, v.reason)


def tiny_potts(out: Path) -> RunSummary:
    """The Potts experiment on a 3 x 3 grid with 3 colours, two replicates of the paper's
    samplers: a real experiment section in seconds, for the report's tests."""
    from harness.experiments.potts import Potts
    from harness.experiments.potts.settings import PottsConfig, paper_samplers

    config = PottsConfig(
        level="quick",
        seed=0,
        side=3,
        D=3,
        replicates=2,
        checkpoints=4,
        samplers=paper_samplers(200, 10),
    )
    return run_tiny(Potts(), config, out)
