"""Verdicts as text for the terminal: the per-verdict table, the per-algorithm summary and the
text of each failure."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TextIO

from harness.display import text_table


def _fmt(x: object, spec: str = ".3g") -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return format(x, spec)
    return str(x)


def _params_text(v: dict) -> str:
    return "".join(f" {k}={val}" for k, val in (v.get("params") or {}).items())


def _by_case(verdicts: list[dict]) -> list[dict]:
    return sorted(
        verdicts, key=lambda v: (v["algorithm"], v["problem"], str(v["params"]), str(v["impl"]))
    )


def verdict_table(verdicts: list[dict]) -> str:
    """Every verdict, one line each (``harness verify --verbose``)."""
    cols = ("algorithm", "impl", "problem", "gate", "n", "statistic", "adj. p", "detectable", "")
    rows = []
    for v in _by_case(verdicts):
        verdict = v["verdict"].upper() + (" (inconclusive)" if v.get("inconclusive") else "")
        rows.append(
            (
                v["algorithm"],
                str(v["impl"]),
                v["problem"] + _params_text(v),
                v["gate"],
                _fmt(v.get("n")),
                _fmt(v.get("statistic")),
                _fmt(v.get("adjusted_p")),
                _fmt(v.get("detectable")),
                verdict,
            )
        )
    return text_table(cols, rows)


def _wall_times(records: list[dict]) -> dict[tuple[str, str], float]:
    """Wall time per (algorithm, impl), summed over its tasks at every stage (each record of a
    task repeats the task's time, so a task counts once)."""
    per_task: dict[str, tuple[tuple[str, str], float]] = {}
    for r in records:
        if r.get("type") == "gate" and r.get("task_id") not in per_task:
            key = (r["algorithm"], str(r["impl"]))
            per_task[r.get("task_id")] = (key, float(r.get("wall_time") or 0.0))
    totals: dict[tuple[str, str], float] = {}
    for key, wall in per_task.values():
        totals[key] = totals.get(key, 0.0) + wall
    return totals


def summary_table(verdicts: list[dict], records: list[dict]) -> str:
    """One line per (algorithm, implementation): gates passed of all, the smallest
    Holm-adjusted p-value, wall time summed over its records."""
    groups: dict[tuple[str, str], list[dict]] = {}
    for v in verdicts:
        groups.setdefault((v["algorithm"], str(v["impl"])), []).append(v)
    walls = _wall_times(records)
    rows = []
    for (algorithm, impl), group in sorted(groups.items()):
        passed = sum(v["verdict"] == "pass" for v in group)
        adjusted = [v["adjusted_p"] for v in group if v.get("adjusted_p") is not None]
        rows.append(
            (
                algorithm,
                impl,
                f"{passed}/{len(group)}",
                _fmt(min(adjusted)) if adjusted else "-",
                f"{walls.get((algorithm, impl), 0.0):.1f}",
                "PASS" if passed == len(group) else "FAIL",
            )
        )
    cols = ("algorithm", "impl", "gates passed", "worst adj. p", "wall s", "")
    return text_table(cols, rows, align="llrrrl")


def failure_text(v: dict) -> str:
    """One failed verdict in full: what failed where, its numbers, and the gate's detail."""
    head = f"FAILED {v['gate']}: {v['algorithm']} [{v['impl']}] on {v['problem']}{_params_text(v)}"
    numbers = f"statistic {_fmt(v.get('statistic'))}, p {_fmt(v.get('p_value'))}"
    if v.get("adjusted_p") is not None:
        numbers += f" (Holm-adjusted {_fmt(v['adjusted_p'])})"
    numbers += f", n {_fmt(v.get('n'))}, detectable {_fmt(v.get('detectable'))}"
    if v.get("detectable_measure") and v.get("detectable") is not None:
        numbers += f" ({v['detectable_measure']})"
    numbers += f", stage {int(v.get('stage') or 0) + 1}"
    lines = [head, f"  {numbers}"]
    if v.get("detail"):
        lines.append(f"  {v['detail']}")
    return "\n".join(lines)


def print_verdicts(
    verdicts: list[dict],
    records: Sequence[dict] = (),
    verbose: bool = False,
    stream: TextIO | None = None,
) -> None:
    """The run's verdicts: with ``verbose`` every one, then one line per algorithm and
    implementation, then every failed verdict in full."""
    stream = stream or sys.stdout  # looked up now, so a redirected stdout is honoured
    if verbose:
        print(verdict_table(verdicts), file=stream)
        print(file=stream)
    print(summary_table(verdicts, list(records)), file=stream)
    for v in _by_case(verdicts):
        if v["verdict"] == "fail":
            print(failure_text(v), file=stream)
