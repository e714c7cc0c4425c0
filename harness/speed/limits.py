"""Every speed figure that has a limit, measured in one process and held against its limit.

``harness speed --limits --json FILE`` runs the four side-by-side measurements of
:mod:`harness.speed.ratios` that carry a limit and writes one JSON file; ``harness report
FILE`` shows each ratio against its limit (a table and a chart of ratio / limit). The figures:

- exact draws at memory speed: Numba time per draw / a streaming ``numpy.sum`` over the same
  D x N array, at most 1.5 (000 Sec. 2.1: a draw reads every factor);
- racing on computed likelihood terms: wall-clock speedup / evaluation saving of Racing-Normal
  over exact Gumbel-max, at least 0.7 (000 Alg. 1);
- Poisson-Gibbs at a flat cost: time per step at the largest degree / at the smallest, at most
  1.5 (003 Statement 1);
- PM-A*'s selection: time per pick at the largest m / at the smallest, at most 3 (004 Sec. 4.3).
"""

from __future__ import annotations

import json
import platform
import subprocess
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from harness.display import cell, record_table, table, yes_no
from harness.figures import inline_svg
from harness.speed import ratios as speed
from harness.speed.timings import json_file

KEY = "speed_limits"
DEGREES = (20, 1000)


def _row(measure: str, setting: str, value: float, limit: float, at_most: bool, how: str):
    within = value <= limit if at_most else value >= limit
    return {
        "measure": measure,
        "setting": setting,
        "value": float(value),
        "limit": float(limit),
        "direction": "at most" if at_most else "at least",
        "within": bool(within),
        "command": how,
    }


def _commit() -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        )
    except (OSError, subprocess.CalledProcessError):
        return None
    return out.stdout.strip() or None


def measure_limits(repeat: int = 5, progress=print) -> dict[str, Any]:
    """Run the four measurements (a few minutes on two cores) and hold each to its limit."""
    rows = []
    progress("exact draws against numpy.sum ...")
    memory = speed.memory_speed(["gumbel-max", "cdf-inversion"], list(speed.MEMORY_SIZES))
    for r in memory["rows"]:
        rows.append(
            _row(
                "exact draw / numpy.sum",
                f"{r['algorithm']}, D = {r['D']}, N = {r['N']:,}",
                r["ratio"],
                r["limit"],
                True,
                "harness speed --memory",
            )
        )
    progress("Racing-Normal against exact Gumbel-max on computed likelihood terms ...")
    computed = tuple(c for c in speed.RACING_CASES if c[0] == "computed")
    racing = speed.racing_speed(repeat=repeat, cases=computed)
    for r in racing["rows"]:
        rows.append(
            _row(
                "racing speedup / evaluation saving",
                f"{r['model']} terms (spread {r['knob']:g}), D = {r['D']}, N = {r['N']:,}, "
                f"saving {r['saving']:.3g}",
                r["ratio"],
                r["limit"],
                False,
                "harness speed --racing",
            )
        )
    progress("Poisson-Gibbs time per step as the degree grows ...")
    degree = speed.degree_scaling(list(DEGREES), repeat=repeat)
    pg = [r for r in degree["rows"] if r["algorithm"] == "poisson-gibbs"]
    rows.append(
        _row(
            "Poisson-Gibbs step, largest / smallest degree",
            f"degree {pg[-1]['degree']} ({pg[-1]['graph_mb']:.0f} MB) / degree {pg[0]['degree']}"
            f", L = {pg[0]['L']:g}",
            pg[-1]["s_per_step"] / pg[0]["s_per_step"],
            speed.DEGREE_LIMIT,
            True,
            "harness speed --degree-scaling --degrees 20 1000",
        )
    )
    progress("PM-A* selection as m grows ...")
    pick = speed.selection_scaling([100, 1000, 10_000, 100_000], repeat=repeat)
    rows.append(
        _row(
            "PM-A* pick, largest / smallest m",
            f"m = {pick['rows'][-1]['m']:,} / m = {pick['rows'][0]['m']:,}",
            max(r["tree_vs_smallest_m"] for r in pick["rows"]),
            pick["limit"],
            True,
            "harness speed --pm-selection",
        )
    )
    return {
        KEY: rows,
        "machine": platform.node(),
        "processor": platform.processor() or platform.machine(),
        "commit": _commit(),
        "repeat": repeat,
        "details": {"memory": memory, "racing": racing, "degree": degree, "pm_selection": pick},
    }


def format_limits(result: dict[str, Any]) -> str:
    columns = [
        ("measure", "l", lambda r: r["measure"]),
        ("setting", "l", lambda r: r["setting"]),
        ("value", "r", lambda r: f"{r['value']:.3g}"),
        ("limit", "l", lambda r: f"{r['direction']} {r['limit']:g}"),
        ("within", "l", lambda r: yes_no(r["within"])),
    ]
    inside = sum(r["within"] for r in result[KEY])
    return (
        record_table(result[KEY], columns) + f"\n{inside} of {len(result[KEY])} within their limits"
    )


def is_speed_limits(path: Path) -> bool:
    data = json_file(path)
    return isinstance(data, dict) and KEY in data


def load_speed_limits(path: Path) -> dict[str, Any]:
    data = json.loads(Path(path).read_text())
    rows = data.get(KEY)
    need = {"measure", "setting", "value", "limit", "direction", "within"}
    if not isinstance(rows, list) or not all(isinstance(r, dict) and need <= set(r) for r in rows):
        raise ValueError(
            f"speed-limits file {str(path)!r} is invalid; valid: {{{KEY!r}: [rows with "
            f"{', '.join(sorted(need))}]}} as `harness speed --limits --json` writes"
        )
    return {**data, "source": str(path)}


def limits_figure(rows: list[dict[str, Any]]) -> str:
    """Each value over its limit: 'at most' limits pass left of 1, 'at least' ones right of it."""
    labels = [f"{r['measure']}\n{r['setting']}" for r in rows]
    ratio = np.array([r["value"] / r["limit"] for r in rows])
    colors = ["#2e7d32" if r["within"] else "#c62828" for r in rows]
    fig, ax = plt.subplots(figsize=(7.0, 0.8 + 0.42 * len(rows)))
    y = np.arange(len(rows))
    ax.barh(y, ratio, color=colors, height=0.6)
    ax.axvline(1.0, color="#333", lw=1.0, ls="--")
    for k, r in enumerate(rows):
        side = "passes below 1" if r["direction"] == "at most" else "passes above 1"
        ax.text(ratio[k], k, f"  {r['value']:.3g} ({side})", va="center", fontsize=6.5)
    ax.set_yticks(y, labels, fontsize=6.5)
    ax.invert_yaxis()
    ax.set_xlabel("value / limit")
    ax.set_xlim(0, max(1.3, float(ratio.max()) * 1.4))
    return inline_svg(fig)


def limits_section(files: list[dict[str, Any]]) -> dict[str, Any]:
    """Report section 4b: every measured figure against its limit, one table per file."""
    if not files:
        return {"present": False, "tables": [], "figures": []}
    tables, figures = [], []
    for f in files:
        rows = f[KEY]
        body = [
            [
                cell(r["measure"]),
                cell(r["setting"]),
                cell(f"{r['value']:.3g}", "num"),
                cell(f"{r['direction']} {r['limit']:g}"),
                cell("yes" if r["within"] else "NO", "pass" if r["within"] else "fail"),
                cell(r.get("command", "")),
            ]
            for r in rows
        ]
        where = f"machine {f.get('machine', '?')}, commit {f.get('commit') or '?'}"
        tables.append(
            table(
                f"Measured on {where}",
                ["measure", "setting", "value", "limit", "within", "measured by"],
                body,
                caption="Each value is a ratio of two times measured side by side in one "
                "process, so it carries over between machines better than either time. From "
                f"{f['source']}.",
            )
        )
        figures.append({"svg": limits_figure(rows), "title": f"Value over limit ({where})"})
    return {"present": True, "tables": tables, "figures": figures}
