"""A static, self-contained HTML page of verification runs and paper experiments.

Jinja2 with autoescaping (algorithm names come from plugins), figures from matplotlib inlined as
SVG, no network, no scripts: it opens from ``file://``. A run that was interrupted still renders;
the page says which tasks are missing. A directory holding ``experiment.json`` is an experiment
(``harness reproduce``) and is rendered by that experiment's own section builder.
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

_SVG_NAMESPACES = (
    ' xmlns="http://www.w3.org/2000/svg"',
    ' xmlns:xlink="http://www.w3.org/1999/xlink"',
)


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
    text = text[text.index("<svg") :]
    # Inline SVG in HTML needs no namespace declarations (the HTML parser supplies them, also
    # for xlink:href); dropping them leaves no URL at all in the page, not even unfetched ones.
    for decl in _SVG_NAMESPACES:
        text = text.replace(decl, "", 1)
    return text


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


def experiment_section(path: Path) -> dict[str, Any]:
    """The section of an experiment directory, built by the experiment that wrote it."""
    from harness.experiments import get_experiment
    from harness.experiments.store import read_manifest

    name = read_manifest(path).get("settings", {}).get("experiment")
    return get_experiment(str(name)).renderer_module().section(path)


def verification_section(summary: dict[str, Any]) -> dict[str, Any]:
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
    return {
        "kind": "verification",
        "run": str(run),
        "config": summary["config"],
        "provenance": summary.get("provenance", {}),
        "complete": summary.get("complete", True),
        "verdicts": verdicts,
        "failed": failed,
        "passed": not failed and bool(verdicts),
        "figures": figures,
    }


def build_context(runs: list[Path]) -> dict[str, Any]:
    """One section per directory, in the order given: verification runs and experiments."""
    from harness.experiments.store import is_experiment_dir

    # Load every verification run first, so a bad directory fails before any figure is drawn.
    loaded = [None if is_experiment_dir(r) else load_run(r) for r in runs]
    sections = [
        experiment_section(Path(path)) if summary is None else verification_section(summary)
        for path, summary in zip(runs, loaded, strict=True)
    ]
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
