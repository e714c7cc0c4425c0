"""Report sections 4 and 5: Numba-versus-reference speedups, and asv timings by machine and commit.

Both build plain dicts for ``report.html.j2`` (tables through :mod:`harness.display`) and
inline SVG figures through :func:`harness.figures.inline_svg`.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from harness.display import cell, fmt, table
from harness.figures import inline_svg as _svg
from harness.figures import legend_below
from harness.speed.timings import AsvPoint, AsvResults, BenchFile, Speedup, speedups

#: History plots drawn at most (the benchmarks that moved most across commits); the table has all.
MAX_HISTORY_PLOTS = 12


def short_label(label: str) -> str:
    """A benchmark label without its suite module: "bench_x.TimeKind..." -> "TimeKind..."."""
    head, _, rest = label.partition(".")
    return rest if rest and head.islower() else label


def format_value(value: float, unit: str) -> str:
    """A measurement in a readable unit: seconds as ns/us/ms/s, bytes as KiB/MiB/GiB."""
    if unit == "seconds":
        for scale, name in ((1e-6, "ns"), (1e-3, "us"), (1.0, "ms")):
            if value < scale:
                return f"{value / scale * 1e3:.3g} {name}"
        return f"{value:.3g} s"
    if unit == "bytes":
        for scale, name in ((2**20, "KiB"), (2**30, "MiB")):
            if value < scale:
                return f"{value / scale * 1024:.3g} {name}"
        return f"{value / 2**30:.3g} GiB"
    return f"{value:.4g}"


def speed_section(files: list[BenchFile]) -> dict[str, Any]:
    """Section 4: one row per algorithm, reference and Numba timed in the same process."""
    rows = speedups(files)
    if not rows:
        return {"present": bool(files), "table": None, "figure": None, "sources": [], "timed": []}
    body = [
        [
            cell(s.algorithm),
            cell(s.problem or "-"),
            cell(format_value(s.reference_median, "seconds"), "num"),
            cell(format_value(s.numba_median, "seconds"), "num"),
            cell(fmt(s.speedup, ".3g"), "num"),
            cell(f"{s.low:.3g} - {s.high:.3g}", "num"),
        ]
        for s in rows
    ]
    t = table(
        "Reference against Numba, measured side by side (pytest-benchmark)",
        ["algorithm", "problem", "reference (median)", "Numba (median)", "speedup", "IQR range"],
        body,
        caption="speedup = median reference time / median Numba time of the same call in one "
        "process; the range pairs the quartiles the pessimistic and the optimistic way "
        "(q1_ref / q3_numba to q3_ref / q1_numba).",
    )
    return {
        "present": True,
        "table": t,
        "figure": _speedup_figure(rows),
        "sources": sorted({s.source for s in rows}),
        "timed": sorted({s.algorithm for s in rows}),
    }


def _speedup_figure(rows: list[Speedup]) -> str:
    labels = [f"{s.algorithm} {s.problem}".strip() for s in rows]
    y = np.arange(len(rows))
    mid = np.array([s.speedup for s in rows])
    err = np.array([[s.speedup - s.low for s in rows], [s.high - s.speedup for s in rows]])
    fig, ax = plt.subplots(figsize=(6.5, 0.9 + 0.22 * len(rows)))
    ax.errorbar(mid, y, xerr=np.clip(err, 0.0, None), fmt="o", ms=3, capsize=2, color="#1f4e96")
    ax.axvline(1.0, color="#999", lw=0.8, ls="--")
    ax.set_xscale("log")
    ax.set_yticks(y, labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("speedup of Numba over the reference (median, IQR range)")
    return _svg(fig)


def _latest(points: list[AsvPoint]) -> dict[tuple[str, str], AsvPoint]:
    """(machine, label) -> the point from the newest commit date on that machine."""
    out: dict[tuple[str, str], AsvPoint] = {}
    for p in points:
        key = (p.machine, p.label)
        if key not in out or p.date > out[key].date:
            out[key] = p
    return out


def machine_table(results: AsvResults) -> dict[str, Any]:
    """Machine x benchmark: the newest median on each machine and its ratio to the first machine."""
    machines = sorted({p.machine for p in results.points})
    latest = _latest(list(results.points))
    labels = sorted({p.label for p in results.points})
    units = {p.label: p.unit for p in results.points}
    columns = ["benchmark", "unit"]
    for m in machines:
        columns.append(m)
        if m != machines[0]:
            columns.append(f"{m} / {machines[0]}")
    body = []
    for label in labels:
        row = [cell(short_label(label)), cell(units[label] or "-")]
        base = latest.get((machines[0], label))
        for m in machines:
            p = latest.get((m, label))
            row.append(cell(format_value(p.value, units[label]) if p else "-", "num"))
            if m != machines[0]:
                ratio = p.value / base.value if p and base and base.value else None
                row.append(cell(fmt(ratio, ".3g"), "num"))
        body.append(row)
    return table(
        "Median by machine (newest commit on each machine)",
        columns,
        body,
        caption="Each machine's newest result per benchmark; ratios > 1 mean slower than "
        f"{machines[0]} (for time benchmarks). Machines: {', '.join(machines)}.",
    )


def _history(points: list[AsvPoint]) -> dict[str, dict[str, list[AsvPoint]]]:
    """label -> machine -> points in commit-date order."""
    out: dict[str, dict[str, list[AsvPoint]]] = defaultdict(lambda: defaultdict(list))
    for p in sorted(points, key=lambda p: (p.date, p.commit)):
        out[p.label][p.machine].append(p)
    return out


def _movement(series: dict[str, list[AsvPoint]]) -> float:
    values = [p.value for ps in series.values() for p in ps]
    return max(values) / min(values) if min(values) > 0 else 0.0


def history_figures(results: AsvResults) -> list[dict[str, str]]:
    """asv history per benchmark (time benchmarks with >= 2 commits), most-moved first."""
    hist = _history([p for p in results.points if p.kind == "time"])
    multi = {k: v for k, v in hist.items() if max(len(ps) for ps in v.values()) >= 2}
    chosen = sorted(multi, key=lambda k: -_movement(multi[k]))[:MAX_HISTORY_PLOTS]
    commits = sorted({(p.date, p.commit) for p in results.points})
    order = {c: i for i, (_, c) in enumerate(commits)}
    figures = []
    for label in chosen:
        fig, ax = plt.subplots(figsize=(3.6, 2.4))
        for machine, ps in sorted(multi[label].items()):
            x = [order[p.commit] for p in ps]
            y = [p.value for p in ps]
            # asv rounds its quartiles, so a one-sample median can sit just outside them.
            lo = [max(0.0, p.value - (p.q25 if p.q25 is not None else p.value)) for p in ps]
            hi = [max(0.0, (p.q75 if p.q75 is not None else p.value) - p.value) for p in ps]
            ax.errorbar(x, y, yerr=[lo, hi], marker="o", ms=3, capsize=2, label=machine)
        ax.set_xticks(range(len(commits)), [c[:8] for _, c in commits], rotation=45, fontsize=6)
        ax.set_ylabel("seconds (median, IQR)", fontsize=7)
        ax.set_ylim(bottom=0)
        legend_below(ax, fontsize=6)
        figures.append({"title": short_label(label), "svg": _svg(fig)})
    return figures


def history_table(results: AsvResults) -> dict[str, Any]:
    """Every benchmark x (machine, commit): the median, commits in date order."""
    cols = sorted({(p.date, p.commit, p.machine) for p in results.points})
    keys = [(c, m) for _, c, m in cols]
    by = {(p.label, p.commit, p.machine): p for p in results.points}
    body = []
    units = {p.label: p.unit for p in results.points}
    for label in sorted({p.label for p in results.points}):
        row = [cell(short_label(label)), cell(units[label] or "-")]
        for c, m in keys:
            p = by.get((label, c, m))
            row.append(cell(format_value(p.value, p.unit) if p else "-", "num"))
        body.append(row)
    return table(
        "asv history: every benchmark by machine and commit",
        ["benchmark", "unit"] + [f"{m} @ {c[:8]}" for c, m in keys],
        body,
    )


def asv_section(results: AsvResults | None) -> dict[str, Any]:
    """Section 5; ``present`` False when no asv results were given."""
    if results is None or not results.points:
        return {"present": False, "failed": results.failed if results else 0}
    commits = sorted({(p.date, p.commit) for p in results.points})
    return {
        "present": True,
        "machines": sorted({p.machine for p in results.points}),
        "commits": [c[:8] for _, c in commits],
        "benchmarks": len({p.label for p in results.points}),
        "sources": list(results.sources),
        "failed": results.failed,
        "machine_table": machine_table(results),
        "history": history_figures(results),
        "history_table": history_table(results),
    }
