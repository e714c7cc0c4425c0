"""The report's first screen: what passed, what failed and why, in one look.

- each verification run's verdict counts, and its first failures with their Holm-adjusted
  p-value against the level it was judged at and the effect the gate could detect;
- what the report does not cover, as one collapsed line (the list inside);
- which columns of a table hold numbers, so that they and their headers align right.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from harness.gates.multiple import Escalation

#: Failures listed on the first screen per run (the run's own section lists them all).
FIRST_FAILURES = 5
#: A failure's detail on the first screen is cut to about this many characters.
DETAIL_CHARS = 120
_NUMBER = re.compile(r"^[-+<>=~x ]*(\d[\d,]*(\.\d*)?|\.\d+)(e[-+]?\d+)?\s*(%|s|ms|x)?$", re.I)
_RATIO = re.compile(r"^\d+ ?/ ?\d+$")


class Inputs(Protocol):
    """What :func:`missing_inputs` reads of ``harness.report.page.ReportInputs``."""

    runs: tuple[Path, ...]
    experiments: tuple[Path, ...]
    asv: tuple[Path, ...]
    benchmarks: tuple[Path, ...]
    limits: tuple[Path, ...]


class Missing(NamedTuple):
    """An input the report lacks: a few words for the one-line summary, and the full line."""

    short: str
    text: str


def stage_level(config: dict[str, Any]) -> float | None:
    """The level a Holm-adjusted p-value is compared with: alpha over the escalation stages."""
    try:
        return Escalation(**(config.get("escalation") or {})).stage_alpha(float(config["alpha"]))
    except (KeyError, TypeError, ValueError):
        return None


def _num(x: Any, spec: str = ".2g") -> str:
    return format(x, spec) if isinstance(x, int | float) and not isinstance(x, bool) else "-"


def short_detail(text: str | None, limit: int = DETAIL_CHARS) -> str:
    """The detail's first line, cut at a word boundary near ``limit`` characters."""
    line = (text or "").strip().split("\n", 1)[0]
    if len(line) <= limit:
        return line
    return line[:limit].rsplit(" ", 1)[0].rstrip(",;:") + " ..."


def failure_line(v: dict[str, Any], level: float | None) -> dict[str, str]:
    """One failed verdict: where, its p-value against its level, what the gate could detect."""
    params = "".join(f" {k}={val}" for k, val in (v.get("params") or {}).items())
    if isinstance(v.get("adjusted_p"), int | float):
        p, vs = f"{_num(v['adjusted_p'])} (Holm)", f"< {_num(level)}"
    elif isinstance(v.get("p_value"), int | float):
        p, vs = f"{_num(v['p_value'])} (raw)", "gate's own rule"
    else:
        p, vs = "-", "gate's own rule"
    effect = "-"
    if isinstance(v.get("detectable"), int | float):
        effect = f"{v.get('detectable_measure') or 'effect'} >= {_num(v['detectable'], '.2g')}"
    share = v.get("alpha_share")
    return {
        "gate": str(v["gate"]),
        "case": f"{v['algorithm']} [{v['impl']}] on {v['problem']}{params}",
        "p": p,
        "level": vs,
        "effect": effect,
        "effect_note": (
            f"power {_num(v.get('power'))} at the gate's share of alpha, {_num(share)}"
            if isinstance(share, int | float)
            else ""
        ),
        "detail": short_detail(v.get("detail")),
        "full_detail": str(v.get("detail") or ""),
    }


def run_glance(section: dict[str, Any]) -> dict[str, Any]:
    """A verification run's first-screen summary: counts, and its first failures."""
    level = stage_level(section["config"])
    failed = section["failure_lines"]
    esc = section["config"].get("escalation") or {}
    return {
        "run": section["run"],
        "anchor": section["anchor"],
        "total": len(section["verdicts"]),
        "passed": len(section["verdicts"]) - len(failed),
        "failed": len(failed),
        "complete": section["complete"],
        "alpha": _num(section["config"].get("alpha")),
        "stages": esc.get("stages", "-"),
        "level": _num(level),
        "failures": failed[:FIRST_FAILURES],
        "more": max(0, len(failed) - FIRST_FAILURES),
    }


def not_run(missing: list[Missing]) -> dict[str, Any] | None:
    """The collapsed line of what the report lacks: a short summary, the full list inside."""
    if not missing:
        return None
    return {
        "summary": f"Not in this report: {', '.join(m.short for m in missing)}",
        "lines": [m.text for m in missing],
    }


def missing_inputs(
    inputs: Inputs, verification: list[dict[str, Any]], timed: set[str]
) -> list[Missing]:
    """What this report does not cover, so a partial report says so instead of looking whole."""
    from harness.experiments import EXPERIMENTS
    from harness.experiments.framework import experiment_of
    from harness.registry import build_registry

    names = [s.name for s in build_registry()]
    out = _unless(
        inputs.runs,
        "verification verdicts",
        "No verification run was given: section 1 is empty (`harness verify`).",
    )
    if inputs.runs:
        seen = {v["algorithm"] for s in verification for v in s["verdicts"]}
        out += _lacking(names, seen, "verdicts", "Registered algorithms without verdicts")
        for s in verification:
            if not s["complete"]:
                text = f"Verification run {s['run']} is incomplete (interrupted?)."
                out.append(Missing("the rest of an interrupted run", text))
    done = {experiment_of(p) for p in inputs.experiments}
    absent = [e.name for e in EXPERIMENTS if e.name not in done]
    if absent:
        text = f"Paper experiments not included: {', '.join(absent)} (`harness reproduce NAME`)."
        out.append(Missing(f"{len(absent)} of {len(EXPERIMENTS)} paper experiments", text))
    out += _unless(
        inputs.benchmarks,
        "pytest-benchmark timings",
        "No pytest-benchmark JSON: section 4 is empty (`make bench`).",
    )
    if inputs.benchmarks:
        out += _lacking(names, timed, "timings", "Algorithms without a reference-vs-Numba timing")
    out += _unless(
        inputs.limits,
        "speed limits",
        "No speed-limits JSON: the ratios against their limits are not shown (`make bench`).",
    )
    out += _unless(
        inputs.asv,
        "asv results",
        "No asv results folder: section 5 is empty (`make bench` or `asv run`).",
    )
    return out


def _unless(given: Any, short: str, text: str) -> list[Missing]:
    """The input's entry in the list when it was not given."""
    return [] if given else [Missing(short, text)]


def _lacking(names: list[str], covered: set[str], what: str, lead: str) -> list[Missing]:
    """One entry naming the registered algorithms that ``covered`` lacks, if any."""
    lacking = [n for n in names if n not in covered]
    if not lacking:
        return []
    return [Missing(f"{len(lacking)} algorithms' {what}", f"{lead}: {', '.join(lacking)}.")]


def _is_number(c: dict[str, str]) -> bool:
    text = c["text"].strip()
    return "num" in c.get("cls", "").split() or bool(_NUMBER.match(text) or _RATIO.match(text))


def numeric_columns(t: dict[str, Any]) -> list[bool]:
    """Per column: every filled cell holds a number (its class says so or its text is one).
    Such a column and its header align right; '-' and empty cells count as filled by nothing."""
    width = len(t["columns"])
    out = []
    for k in range(width):
        filled = [r[k] for r in t["rows"] if k < len(r) and r[k]["text"].strip() not in ("", "-")]
        out.append(bool(filled) and all(_is_number(c) for c in filled))
    return out
