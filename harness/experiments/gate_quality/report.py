"""The gate-quality tables: false-failure rates by family and gate, catch rates by family, and
every escaped planted bug with the reason it escaped."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from harness.calibration import RATE_HEADERS, GateRate, gate_rate, rate_row
from harness.experiments.gate_quality.settings import GateQualityConfig
from harness.experiments.report_parts import cell, table
from harness.figures import inline_svg
from harness.text_table import text_table

#: What ``harness verify`` must catch of the planted suite, by level (the issue's bar).
CATCH_BARS = {"quick": 0.90, "full": 0.95}


def _rows(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {**row, "family": r["family"], "algorithm": r["algorithm"]}
        for r in records
        if r.get("type") == "ffr"
        for row in r["rows"]
    ]


def _alpha(records: list[dict[str, Any]]) -> float:
    """The alpha the seeds were judged at (stored with every seed block)."""
    return next((float(r["alpha"]) for r in records if r.get("type") == "ffr"), 0.05)


def rates(records: list[dict[str, Any]], alpha: float, by: tuple[str, ...]) -> list[GateRate]:
    """One :class:`GateRate` per group of ``by`` (e.g. ("family", "gate")), in sorted order."""
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for row in _rows(records):
        groups.setdefault(tuple(row[k] for k in by), []).append(row)
    return [(key, gate_rate(key[-1], rows, alpha)) for key, rows in sorted(groups.items())]


def catches(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(
        (r for r in records if r.get("type") == "catch"), key=lambda r: (r["level"], r["name"])
    )


def catch_rates(records: list[dict[str, Any]]) -> dict[str, dict[str, tuple[int, int]]]:
    """{level: {family or "all": (caught, bugs)}}."""
    out: dict[str, dict[str, tuple[int, int]]] = {}
    for r in catches(records):
        level = out.setdefault(r["level"], {})
        for key in (r["family"], "all"):
            caught, total = level.get(key, (0, 0))
            level[key] = (caught + int(r["caught"]), total + 1)
    return out


def escape_reason(r: dict[str, Any]) -> str:
    """Why a planted bug escaped: the expected gates' verdicts with what they could detect."""
    if r["crashed"]:
        return "the sampler raised (a crash is not a catch)"
    expected = [g.strip() for g in r["expected"].split(",") if g.strip()]
    shown = [g for g in r["gates"] if g["gate"] in expected] or r["gates"]
    parts = []
    for g in shown:
        p = g.get("adjusted_p") if g.get("adjusted_p") is not None else g.get("p_value")
        p_text = "" if p is None else f" p = {p:.3g},"
        det = g.get("detectable")
        det_text = "" if det is None else f" detectable {det:.3g} ({g['detectable_measure']})"
        parts.append(f"{g['gate']} on {g['problem']} (stage {g['stage']}):{p_text}{det_text}")
    return "; ".join(parts) + ": the bug's effect is below what these gates resolve at this level"


def summary(records: list[dict[str, Any]]) -> str:
    alpha = _alpha(records)
    fam = rates(records, alpha, ("family", "gate"))
    lines = []
    if fam:
        lines.append(f"False failures on correct samplers (alpha = {alpha:g}), by family and gate:")
        rows = [[key[0], *rate_row(g.to_dict())] for key, g in fam]
        lines.append(text_table(["family", *RATE_HEADERS], rows, align="lllrrlll"))
    by_level = catch_rates(records)
    for level, fams in by_level.items():
        caught, total = fams["all"]
        bar = CATCH_BARS[level]
        lines.append(
            f"Planted bugs caught by `harness verify --level {level}`: {caught}/{total} "
            f"({caught / total:.0%}; bar {bar:.0%}: {'met' if caught / total >= bar else 'MISSED'})"
            + "".join(f"; {f} {c}/{t}" for f, (c, t) in sorted(fams.items()) if f != "all")
        )
        for r in catches(records):
            if r["level"] == level and not r["caught"]:
                lines.append(f"  escaped: {r['name']} ({r['bug']}) - {escape_reason(r)}")
    return "\n".join(lines) if lines else "no results yet"


def _rate_figure(fam: list[tuple[tuple, GateRate]], alpha: float) -> str:
    labels = [f"{k[0]}: {g.gate}" for k, g in fam]
    fig, ax = plt.subplots(figsize=(6.4, 0.28 * len(fam) + 1.2))
    for i, (_, g) in enumerate(fam):
        low, high = g.interval
        color = "#1b7837" if g.calibrated else "#b2182b"
        ax.plot([low, high], [i, i], color=color, lw=2)
        ax.plot([g.rate], [i], "o", color=color, ms=4)
    ax.axvline(alpha, color="k", lw=0.8, ls="--")
    ax.set_yticks(range(len(fam)), labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel(f"false-failure rate at alpha = {alpha:g} (99.9% interval)")
    ax.grid(True, axis="x", alpha=0.3)
    fig.tight_layout()
    return inline_svg(fig)


def _rate_table(title: str, keyed: list[tuple[tuple, GateRate]], lead: list[str]) -> dict:
    rows = [
        [cell(k) for k in key[:-1]]
        + [
            cell(c, "" if i < 6 else ("pass" if g.calibrated else "fail"))
            for i, c in enumerate(rate_row(g.to_dict()))
        ]
        for key, g in keyed
    ]
    return table(title, [*lead, *RATE_HEADERS[:-1], "verdict"], rows)


def report(
    config: GateQualityConfig, records: list[dict[str, Any]], manifest: dict[str, Any]
) -> dict[str, Any]:
    del manifest
    alpha = config.alpha
    fam = rates(records, alpha, ("family", "gate"))
    per_alg = rates(records, alpha, ("family", "algorithm", "gate"))
    tables = []
    figures = []
    if fam:
        tables.append(_rate_table("False failures by family and gate", fam, ["family"]))
        tables.append(
            _rate_table("False failures by algorithm and gate", per_alg, ["family", "algorithm"])
        )
        figures.append({"title": "false-failure rate by gate", "svg": _rate_figure(fam, alpha)})
    by_level = catch_rates(records)
    if by_level:
        fams = [*sorted({f for lv in by_level.values() for f in lv if f != "all"}), "all"]
        rows = []
        for f in fams:
            row = [cell(f)]
            for level in config.catch_levels:
                caught, total = by_level.get(level, {}).get(f, (0, 0))
                ok = total and caught / total >= CATCH_BARS[level]
                cls = "" if f != "all" else ("pass" if ok else "fail")
                row.append(cell(f"{caught}/{total}" if total else "-", cls))
            rows.append(row)
        tables.append(
            table(
                "Planted bugs caught by harness verify",
                [
                    "family",
                    *(f"--level {lv} (bar {CATCH_BARS[lv]:.0%})" for lv in config.catch_levels),
                ],
                rows,
                caption="A bug counts as caught when a statistical gate fails it; a crash does "
                "not.",
            )
        )
        bug_rows = [
            [
                cell(r["name"]),
                cell(r["family"]),
                cell(r["level"]),
                cell(r["bug"]),
                cell(r["expected"]),
                cell(
                    ", ".join(r["failed_gates"]) if r["caught"] else "escaped",
                    "pass" if r["caught"] else "fail",
                ),
                cell("" if r["caught"] else escape_reason(r)),
            ]
            for r in catches(records)
        ]
        tables.append(
            table(
                "Every planted bug",
                [
                    "bug",
                    "family",
                    "level",
                    "what is wrong",
                    "expected gate",
                    "caught by",
                    "why not",
                ],
                bug_rows,
            )
        )
    return {
        "title": "Gate quality: false failures on correct samplers, catches of planted bugs",
        "notes": config.notes,
        "settings": [
            ("level", config.level),
            ("seed", str(config.seed)),
            ("seeds per algorithm", str(config.seeds)),
            ("draws or steps per seed", f"{config.n} (fewer where verify's case is smaller)"),
            ("alpha", f"{alpha:g}"),
            ("planted-bug files", ", ".join(config.planted) or "none found"),
        ],
        "figure_groups": [
            {
                "title": "False failures",
                "caption": "Dashed: alpha. Red: a gate "
                "whose rate or p-values are off (see the table).",
                "figures": figures,
            }
        ]
        if figures
        else [],
        "tables": tables,
        "records_table": None,
    }
