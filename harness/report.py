"""A static, self-contained HTML page of one or more verification runs.

Jinja2 with autoescaping (algorithm names come from plugins), figures from matplotlib inlined as
SVG, no network, no scripts: it opens from ``file://``. A run that was interrupted still renders;
the page says which tasks are missing.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from jinja2 import Environment, PackageLoader, select_autoescape

from harness.results import MANIFEST, RECORDS, load_records
from harness.runner import SAMPLES, SUMMARY, RunConfig, decide, load_sample
from harness.targets.catalog import build_target


def _svg(fig: plt.Figure) -> str:
    buf = io.StringIO()
    # No metadata: it carries a date (irreproducible) and RDF namespace URLs.
    fig.savefig(
        buf,
        format="svg",
        bbox_inches="tight",
        metadata={"Creator": None, "Date": None, "Format": None, "Type": None},
    )
    plt.close(fig)
    text = buf.getvalue()
    return text[text.index("<svg") :]


def _config(run: Path) -> RunConfig | None:
    path = run / MANIFEST
    if not path.exists():
        return None
    return RunConfig.from_manifest(json.loads(path.read_text())["config"])


def load_run(run: Path) -> dict[str, Any]:
    """Verdicts of a run: its summary when it finished, else recomputed from its records."""
    if not run.is_dir():
        raise ValueError(f"run directory {str(run)!r} does not exist")
    summary_path = run / SUMMARY
    records = load_records(run / RECORDS)
    config = _config(run)
    if summary_path.exists():
        summary = json.loads(summary_path.read_text())
        summary["complete"] = True
    elif config is not None and records:
        decided = decide(records, config)
        summary = {
            "config": config.manifest(),
            "provenance": {k: records[0].get(k) for k in ("commit", "machine", "python")},
            "verdicts": decided["verdicts"],
            "passed": all(v["verdict"] == "pass" for v in decided["verdicts"]),
            "complete": False,
        }
    else:
        raise ValueError(f"{str(run)!r} holds no verification records (run `harness verify`)")
    summary["run"] = str(run)
    summary["records"] = records
    return summary


def _pmf_figure(run: Path, records: list[dict[str, Any]], case: str, problem: str) -> str | None:
    """Observed frequencies of each implementation against the exact pmf (stage 0)."""
    try:
        target = build_target(problem)
    except ValueError:
        return None
    if target.kind != "discrete" or target.D > 100:
        return None
    fig, ax = plt.subplots(figsize=(6.0, 2.6))
    x = np.arange(target.D)
    ax.bar(x, target.pmf, color="#d0d7e2", label="exact pmf", width=0.8)
    seen = set()
    for r in records:
        if r.get("case") != case or r.get("stage") != 0 or "-vs-" in str(r.get("impl")):
            continue
        if r["impl"] in seen:
            continue
        seen.add(r["impl"])
        got = load_sample(str(run / SAMPLES), r["task_id"])
        if got is None:
            continue
        freq = np.bincount(got["values"], minlength=target.D)[: target.D] / got["values"].size
        marker = "o" if r["impl"] == "reference" else "x"
        ax.plot(x, freq, marker, label=f"{r['impl']} (n={got['values'].size})", ms=4)
    if not seen:
        plt.close(fig)
        return None
    ax.set_yscale("log")
    ax.set_xlabel("state i")
    ax.set_ylabel("probability")
    ax.legend(fontsize=7, frameon=False)
    return _svg(fig)


def build_context(runs: list[Path]) -> dict[str, Any]:
    loaded = [load_run(r) for r in runs]
    sections = []
    for summary in loaded:
        run = Path(summary["run"])
        verdicts = sorted(
            summary["verdicts"],
            key=lambda v: (v["algorithm"], v["problem"], str(v.get("params")), str(v["impl"])),
        )
        figures = []
        cases = {}
        for r in summary["records"]:
            if r.get("guarantee") == "exact" and r.get("stage") == 0:
                cases.setdefault((r["algorithm"], r["case"], r["problem"]), None)
        for algorithm, case, problem in sorted(cases):
            svg = _pmf_figure(run, summary["records"], case, problem)
            if svg:
                params = case.split("|", 2)[2]
                figures.append({"title": f"{algorithm} on {problem} {params}", "svg": svg})
        failed = [v for v in verdicts if v["verdict"] == "fail"]
        sections.append(
            {
                "run": str(run),
                "config": summary["config"],
                "provenance": summary.get("provenance", {}),
                "complete": summary.get("complete", True),
                "verdicts": verdicts,
                "failed": failed,
                "passed": not failed and bool(verdicts),
                "figures": figures,
            }
        )
    return {"sections": sections}


def write_report(runs: list[Path], output: Path) -> Path:
    env = Environment(
        loader=PackageLoader("harness", "templates"),
        autoescape=select_autoescape(["html", "j2"], default=True),
    )
    html = env.get_template("report.html.j2").render(**build_context(runs))
    output.parent.mkdir(parents=True, exist_ok=True)
    tmp = output.with_suffix(".tmp")
    tmp.write_text(html, encoding="utf-8")
    tmp.replace(output)
    return output
