"""Deciding the undecided (``harness reproduce NAME --decide``): a two-stage design.

Stage 1, the pilot, is the experiment's ordinary run at its level. Its verdicts only size
stage 2: for each inconclusive primary claim whose interval straddles an edge, the number of
its replicates that would decide it if our value holds (:meth:`Rule.to_decide`), as a factor
over what the pilot had; a claim with no interval at all (one chain, say) asks for
:data:`FLOOR` times. Stage 2 reruns the whole experiment with every declared replicate
parameter (``Experiment.replicates``) multiplied by the largest factor asked for, capped by the
budget and never below the pilot's size, under another seed, into a directory of its own. Its
verdicts are the final ones, whatever the pilot found.

Why the 95% holds: stage 2's records are independent of the pilot's (another seed spawns every
stream), so the pilot's numbers choose stage 2's size but not its data, and stage 2 is judged
once. One look at independent data needs no correction for the look that chose its size (the
idea of Stein's two-stage test). Letting a pilot that decided stand, and running stage 2 only
when it did not, would be two looks: the one-sided error of a claim on the right side of its
edge goes from 2.5% to about 4% (tests/harness/experiments/test_decide.py measures it). So
stage 2 runs whatever the pilot found, and every final verdict comes from it; only a budget
below the pilot's own time leaves the pilot as the one look. A confidence sequence
(``confseq``) would allow any number of looks, but its C++ extension does not build here (it
needs Boost through CMake).

A claim on the edge of its band ("undecidable at any size near this value") and claims over
units the design fixes ask for nothing, so they never make stage 2 larger than the pilot.
"""

from __future__ import annotations

import ast
import dataclasses
import gzip
import hashlib
import inspect
import json
import math
import re
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from harness.declare import Config
from harness.experiments.claims import REPLICABLE, Verdict, primary
from harness.store import load_records, provenance, recorded_wall

#: The factor a claim with no interval (too few replicates to form one) asks for.
FLOOR = 4.0
#: The largest factor any claim may ask for; beyond it the claim's value sits too near its edge
#: for a deciding run of sensible size (Rule.to_decide calls 100x undecidable already).
MAX_FACTOR = 64.0
PILOT, STAGE_TWO = "pilot", "decide"
DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|h)?\s*$")


def parse_budget(text: str) -> float:
    """Seconds from "90s", "45m", "2.5h" or a bare number of seconds; ValueError otherwise."""
    match = DURATION.match(str(text))
    if not match or float(match.group(1)) <= 0:
        raise ValueError(
            f"--budget {text!r} is invalid; valid: a positive duration such as 600s, 45m or 2h"
        )
    return float(match.group(1)) * {"s": 1, "m": 60, "h": 3600}[match.group(2) or "s"]


@dataclasses.dataclass(frozen=True)
class Ask:
    """What one inconclusive primary claim asks of stage 2: ``factor`` times the pilot's
    replicates (None: nothing more can decide it), and why."""

    claim: str
    factor: float | None
    why: str


@dataclasses.dataclass(frozen=True)
class StagePlan:
    """Stage 2's size: the factor the claims ask for, the one the budget allows, and the
    replicate parameters' values it gives."""

    asks: tuple[Ask, ...]
    wanted: float
    factor: float
    replicates: dict[str, int]
    capped: str

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def ask(verdict: Verdict) -> Ask:
    """What an inconclusive primary verdict asks for (its ``runs_to_decide`` over its ``n``)."""
    if verdict.runs_to_decide is not None and verdict.n:
        factor = verdict.runs_to_decide / verdict.n
        if factor > MAX_FACTOR:
            return Ask(verdict.id, None, f"asks {factor:.0f}x its {verdict.n} {verdict.unit}")
        return Ask(verdict.id, factor, f"{verdict.runs_to_decide} {verdict.unit} in all")
    if verdict.low is None and verdict.unit and verdict.unit not in REPLICABLE:
        return Ask(verdict.id, None, f"no interval, and the design fixes its {verdict.unit}")
    if verdict.low is None:  # no interval yet: too few replicates to form one
        return Ask(verdict.id, FLOOR, f"no interval yet ({verdict.reason[:80]})")
    return Ask(verdict.id, None, verdict.reason.split(";")[-1].strip()[:120])


def stage_plan(
    verdicts: Sequence[Verdict],
    replicates: dict[str, int],
    pilot_wall_s: float,
    budget_s: float,
) -> StagePlan:
    """Stage 2's size from the pilot's verdicts, its replicate parameters' values and its wall
    time: the largest factor asked, at most what ``budget_s`` allows at the pilot's cost
    (a conservative guess: the pilot's fixed costs scale too)."""
    asks = tuple(ask(v) for v in primary(verdicts) if v.verdict == "inconclusive")
    wanted = max((a.factor for a in asks if a.factor is not None), default=0.0)
    affordable = budget_s / max(pilot_wall_s, 1e-9)
    if affordable < 1.0:  # a rule on time, not on the pilot's outcome: the pilot stays one look
        why = (
            f"the budget of {budget_s:.0f} s is below the pilot's {pilot_wall_s:.0f} s: no "
            "second stage fits, and the pilot's verdicts stand as its one look"
        )
        return StagePlan(asks, wanted, 0.0, dict(replicates), why)
    # Stage 2 runs whatever the pilot found (at least at the pilot's size): letting a decided
    # pilot stand would make the final verdict depend on the pilot's outcome (two looks).
    factor, capped = max(1.0, min(wanted, affordable)), ""
    if wanted > affordable:
        capped = (
            f"the claims ask {wanted:.3g}x the pilot; the budget of {budget_s:.0f} s allows "
            f"{affordable:.3g}x at the pilot's {pilot_wall_s:.0f} s"
        )
    values = {k: max(v, math.ceil(v * factor)) for k, v in replicates.items()}
    return StagePlan(asks, wanted, factor, values, capped)


def code_digest(source: str) -> str:
    """The syntax tree of ``source`` without its import statements (at any depth), as text:
    what the code computes, not where its helpers live nor its comments and layout. A helper's
    own code is not the experiment's (it never entered the digest), so moving a helper to
    another module does not make a recorded run stale; changing a statement does."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        for name, value in ast.iter_fields(node):
            if isinstance(value, list):
                kept = [v for v in value if not isinstance(v, ast.Import | ast.ImportFrom)]
                setattr(node, name, kept or ([ast.Pass()] if name == "body" else kept))
    return ast.dump(tree)


def experiment_digest(experiment: Any) -> str:
    """SHA-256 (16 hex digits) of the experiment's own code (:func:`code_digest` of its
    package's files, or of its module); a recorded verdict whose digest differs was made by
    other code."""
    path = Path(inspect.getsourcefile(type(experiment)) or "")
    files = sorted(path.parent.glob("*.py")) if path.name == "__init__.py" else [path]
    digest = hashlib.sha256()
    for f in files:
        digest.update(f.name.encode())
        digest.update(code_digest(f.read_text(encoding="utf-8")).encode())
    return digest.hexdigest()[:16]


def replicate_values(experiment: Any, config: Config) -> dict[str, int]:
    """The current values of the experiment's declared replicate parameters."""
    names = getattr(experiment, "replicates", ())
    if not names:
        raise ValueError(
            f"{experiment.name} declares no replicate parameter (Experiment.replicates), so "
            "--decide cannot add replicates to it"
        )
    return {n: int(getattr(config, n)) for n in names}


def decide(
    experiment: Any,
    level: str,
    seed: int,
    out: Path,
    budget_s: float,
    run: Callable[..., Any],
    log: Callable[[str], None],
    overrides: dict[str, Any] | None = None,
    **run_kwargs: Any,
) -> dict[str, Any]:
    """The pilot into OUT/pilot, then stage 2 into OUT/decide; returns what OUT/decided.json
    holds. ``run`` is :func:`harness.experiments.framework.run`. Both stages resume from
    their records, so a killed decide run goes on where it stopped."""
    changes = dict(overrides or {})
    config = dataclasses.replace(experiment.config(level, seed), **changes)
    replicates = replicate_values(experiment, config)
    start = time.perf_counter()
    pilot = run(experiment, level, seed, Path(out) / PILOT, config=config, log=log, **run_kwargs)
    pilot_wall = _wall(Path(out) / PILOT, pilot.wall_s)
    plan = stage_plan(pilot.verdicts, replicates, pilot_wall, budget_s)
    log(_plan_text(plan))
    final, stage_seed = pilot.verdicts, None
    if plan.factor > 0:
        stage_seed = seed + 1
        bigger = dataclasses.replace(
            experiment.config(level, stage_seed), **{**changes, **plan.replicates}
        )
        second = run(
            experiment,
            level,
            stage_seed,
            Path(out) / STAGE_TWO,
            config=bigger,
            log=log,
            **run_kwargs,
        )
        final = second.verdicts
    return {
        "experiment": experiment.name,
        "level": level,
        "seed": seed,
        "stage_seed": stage_seed,
        "plan": plan.to_dict(),
        "pilot": [v.to_dict() for v in pilot.verdicts],
        "final": [v.to_dict() for v in final],
        "final_from": STAGE_TWO if stage_seed is not None else PILOT,
        "wall_s": time.perf_counter() - start,
        "experiment_digest": experiment_digest(experiment),
    }


def _wall(out: Path, fallback: float) -> float:
    """The pilot's recorded wall time over every call (a resumed pilot took more than this
    call's); this call's when none is recorded."""
    wall = recorded_wall(out)
    return float(wall["wall_s"]) if wall and wall["wall_s"] > 0 else fallback


def _plan_text(plan: StagePlan) -> str:
    deciding = [a for a in plan.asks if a.factor is not None]
    lines = [
        f"decide: {len(plan.asks)} inconclusive claims in the pilot, {len(deciding)} can be "
        f"decided by more replicates (largest factor asked {plan.wanted:.3g}x)"
    ]
    lines += [f"  {a.claim}: {a.why}" for a in plan.asks]
    if plan.capped:
        lines.append(f"  {plan.capped}")
    if plan.factor > 0:
        sizes = ", ".join(f"{k} = {v}" for k, v in plan.replicates.items())
        lines.append(f"decide: stage 2 with {sizes} ({plan.factor:.3g}x), under another seed")
    else:
        lines.append("decide: no stage 2; the pilot's verdicts stand")
    return "\n".join(lines)


#: Where deciding runs are recorded under version control, one file per experiment and level.
RECORDED = Path(__file__).resolve().parents[2] / "bench" / "results" / "decided"


def record_file(name: str, level: str, where: Path | None = None) -> Path:
    return Path(where or RECORDED) / f"{name}-{level}.json.gz"


def write_record(
    decided: dict[str, Any], out: Path, command: str, where: Path | None = None
) -> Path:
    """The deciding run as one compressed file under ``where``: its verdicts, its plan, the
    final stage's records, and the commit, machine, command, level and wall time."""
    prov = provenance()
    final_dir = Path(out) / decided["final_from"]
    bundle = {
        **decided,
        "command": command,
        "commit": prov.get("commit"),
        "dirty": prov.get("dirty"),
        "machine": prov.get("machine"),
        "recorded": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "records": load_records(final_dir / "records.jsonl"),
    }
    path = record_file(decided["experiment"], decided["level"], where)
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt", encoding="utf-8") as f:
        json.dump(bundle, f, default=str)
    return path


def read_record(path: Path) -> dict[str, Any]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def recorded_verdicts(experiment: Any, where: Path | None = None) -> dict[str, Any] | None:
    """The latest recorded deciding run of ``experiment`` at either level (full first), with
    ``stale`` set where the experiment's code has changed since: {"level", "final",
    "stale", "commit", "recorded", "wall_s", "command"}; None when none is recorded."""
    for level in ("full", "quick"):
        path = record_file(experiment.name, level, where)
        if path.is_file():
            bundle = read_record(path)
            keep = ("level", "final", "commit", "recorded", "wall_s", "command", "machine")
            return {
                **{k: bundle.get(k) for k in keep},
                "stale": bundle.get("experiment_digest") != experiment_digest(experiment),
            }
    return None
