"""The report's calibration plots: ECDF differences with simultaneous bands, where a reader looks.

- next to a verification run's failures: every failed gate that kept an ECDF summary (KS PITs,
  SBC ranks; :mod:`harness.gates.ecdf_bands`), with where it leaves its band marked;
- a small set of passing gates beside them (per gate, its case with the smallest p-value), so a
  reader sees what a pass looks like;
- the p-values of ``harness calibrate --json`` files, one plot per gate.

Each verdict also gets its power stated the other way: the probability of passing the named bug
(:mod:`harness.gates.power`), read from the gate's record.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.display import cell, table
from harness.figures import ecdf_band_svg
from harness.gates.ecdf_bands import EcdfBand
from harness.gates.power import FalsePass
from harness.speed.timings import json_file

#: Passing gates plotted per run (the failures are all plotted).
PASSING_PLOTS = 4
#: Bands plotted per gate (an SBC gate has one per parameter; the worst come first).
PANELS_PER_GATE = 4
#: The keys of a calibrate --json result (one object, or a list of them).
CALIBRATION_KEYS = frozenset({"algorithm", "problem", "gates", "calibrated", "alpha"})
PIT_LABEL = "PIT F0(x) (SBC: normalised rank)"


def _key(r: dict[str, Any]) -> tuple:
    params = json.dumps(r.get("params") or {}, sort_keys=True, default=str)
    return (r.get("algorithm"), str(r.get("impl")), r.get("problem"), params, r.get("gate"))


def records_by_verdict(records: list[dict[str, Any]]) -> dict[tuple, dict[str, Any]]:
    """Each gate record by (algorithm, impl, problem, params, gate, stage): a verdict's own."""
    return {(*_key(r), r.get("stage")): r for r in records if r.get("type") == "gate"}


def false_pass_text(fp: dict[str, Any] | None) -> str:
    """A verdict table's cell: 'P <= 0.003 at 0.05' (the named bug's size in the gate's measure)."""
    if not fp:
        return "-"
    f = FalsePass.from_dict(fp)
    return f"{'<=' if f.bound else '~'} {f.rate:.2g} at {f.effect:.3g}"


def _worst_first(bands: list[EcdfBand]) -> list[EcdfBand]:
    return sorted(bands, key=lambda b: (-b.exits().size, -abs(b.peak)))


def _figures(v: dict[str, Any], record: dict[str, Any]) -> list[dict[str, Any]]:
    bands = _worst_first([EcdfBand.from_dict(b) for b in record.get("ecdf") or ()])
    params = " ".join(f"{k}={val}" for k, val in (v.get("params") or {}).items())
    out = []
    for b in bands[:PANELS_PER_GATE]:
        label = f" {b.label}" if b.label and b.label != v["gate"] else ""
        title = f"{v['gate']}{label}: {v['verdict']}"
        caption = f"{v['algorithm']} [{v['impl']}] on {v['problem']} {params}".rstrip()
        exits = int(b.exits().size)
        out.append(
            {
                "title": f"{caption}; {title}",
                "svg": ecdf_band_svg(b, title, PIT_LABEL),
                "verdict": v["verdict"],
                "exits": exits,
            }
        )
    if len(bands) > PANELS_PER_GATE:
        out[-1]["title"] += f" (and {len(bands) - PANELS_PER_GATE} more quantities)"
    return out


def verdict_bands(
    verdicts: list[dict[str, Any]], records: list[dict[str, Any]]
) -> dict[str, list[dict[str, Any]]]:
    """Band figures of a run: every failed verdict's, and up to PASSING_PLOTS passing ones."""
    index = records_by_verdict(records)
    failed, passing = [], {}
    for v in verdicts:
        record = index.get((*_key(v), v.get("stage")))
        if not record or not record.get("ecdf"):
            continue
        if v["verdict"] == "fail":
            failed += _figures(v, record)
            continue
        p = v.get("adjusted_p") if v.get("adjusted_p") is not None else v.get("p_value")
        p = 1.0 if p is None else p
        best = passing.get(v["gate"])
        if best is None or p < best[0]:
            passing[v["gate"]] = (p, v, record)
    chosen = sorted(passing.values(), key=lambda t: t[0])[:PASSING_PLOTS]
    return {"failed": failed, "passing": [f for _, v, r in chosen for f in _figures(v, r)[:1]]}


def with_false_pass(
    verdicts: list[dict[str, Any]], records: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The verdicts, each with its record's false-pass rate as ``false_pass`` (dict or None) and
    as the verdict table's text (``false_pass_text``), and the gate's share of alpha (the level
    its detectable effect is computed at) as ``alpha_share``."""
    index = records_by_verdict(records)
    out = []
    for v in verdicts:
        record = index.get((*_key(v), v.get("stage"))) or {}
        fp = record.get("false_pass")
        extra = {"false_pass": fp, "false_pass_text": false_pass_text(fp)}
        out.append({**v, **extra, "alpha_share": record.get("alpha")})
    return out


def is_calibration(path: Path) -> bool:
    """A JSON file that ``harness calibrate --json`` wrote."""
    data = json_file(path)
    if data is None:
        return False
    items = data if isinstance(data, list) else [data]
    return bool(items) and all(isinstance(d, dict) and CALIBRATION_KEYS <= d.keys() for d in items)


def _calibration_table(result: dict[str, Any]) -> dict[str, Any]:
    from harness.verify.calibration import band_text

    rows = []
    for g in result["gates"].values():
        ok = g["calibrated"]
        unif = g.get("uniformity_p")
        rows.append(
            [
                cell(g["gate"]),
                cell(g["kind"]),
                cell(f"{g['failed']}/{g['trials']}", "num"),
                cell(f"{g['rate']:.4f}", "num"),
                cell(g.get("decision_text", "-")),
                cell("-" if unif is None else f"{unif:.3g}", "num"),
                cell(band_text(g.get("ecdf"), g.get("ecdf_side", "two-sided"))),
                cell("-" if g.get("detectable") is None else f"{g['detectable']:.3g}", "num"),
                cell(FalsePass.from_dict(g["false_pass"]).text() if g.get("false_pass") else "-"),
                cell("ok" if ok else "OFF", "pass" if ok else "fail"),
            ]
        )
    title = (
        f"{result['algorithm']} [{result['impl']}] on {result['problem']}: {result.get('seeds')} "
        f"seeds, n = {result['n']}, alpha = {result['alpha']}"
    )
    headers = ["gate", "kind", "failed", "rate", "decision", "KS p of p-values"]
    headers += ["p-value ECDF", "detectable", "false pass", ""]
    caption = (
        f"Each decision is wrong with probability <= {result.get('error', '-')}; the zone is a "
        f"rate within a factor {result.get('factor', '-')} of alpha (at most that for combined "
        "and bound gates). 'detectable': the smallest effect found with power 0.8; 'false "
        "pass': the chance of passing the named bug."
    )
    return table(title, headers, rows, caption)


def calibration_section(path: Path) -> list[dict[str, Any]]:
    """One section per calibrated problem in a calibrate --json file: its table and a p-value
    band plot per gate that has p-values (the failing ones first)."""
    data = json.loads(path.read_text())
    sections = []
    for result in data if isinstance(data, list) else [data]:
        figures = []
        gates = sorted(result["gates"].values(), key=lambda g: (g["calibrated"], g["gate"]))
        for g in gates:
            if not g.get("ecdf"):
                continue
            verdict = "pass" if g["calibrated"] else "fail"
            side = g.get("ecdf_side", "two-sided")
            figures.append(
                {
                    "title": f"{g['gate']} ({g['kind']}): p-values over {g['trials']} seeds",
                    "svg": ecdf_band_svg(g["ecdf"], f"{g['gate']}: {verdict}", "p-value", side),
                    "verdict": verdict,
                    "exits": int(EcdfBand.from_dict(g["ecdf"]).exits(side).size),
                }
            )
        sections.append(
            {
                "source": str(path),
                "table": _calibration_table(result),
                "figures": figures,
                "calibrated": bool(result["calibrated"]),
            }
        )
    return sections
