"""A static, self-contained HTML page of verification runs and paper experiments.

Jinja2 with autoescaping (algorithm names come from plugins), figures from matplotlib inlined as
SVG, no network, no scripts: it opens from ``file://``. A run that was interrupted still renders;
the page says which tasks are missing. A directory holding ``experiment.json`` is an experiment
(``harness reproduce``) and is rendered by that experiment's own section builder.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from jinja2 import Environment, PackageLoader, select_autoescape

from harness.display import cell, table
from harness.figures import inline_svg as _svg
from harness.figures import legend_below
from harness.report.bands import (
    calibration_section,
    is_calibration,
    verdict_bands,
    with_false_pass,
)
from harness.report.glance import (
    failure_line,
    missing_inputs,
    not_run,
    numeric_columns,
    run_glance,
    stage_level,
)
from harness.report.hardware import hardware_section, is_hardware, load_hardware
from harness.report.timings import asv_section, speed_section
from harness.speed.limits import is_speed_limits, limits_section, load_speed_limits
from harness.speed.timings import (
    AsvResults,
    BenchFile,
    is_asv_results,
    is_pytest_benchmark,
    load_asv,
    load_pytest_benchmark,
)
from harness.store import RECORDS, RUN_MANIFEST, load_records
from harness.targets.catalog import build_target
from harness.verify.config import RunConfig
from harness.verify.runner import SAMPLES, SUMMARY, decide, load_sample


def _config(run: Path) -> RunConfig | None:
    path = run / RUN_MANIFEST
    if not path.exists():
        return None
    return RunConfig.from_manifest(json.loads(path.read_text())["settings"])


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


def _target_or_none(problem: str, plugins: tuple[str, ...]) -> Any:
    """The target of ``problem``: the catalog's, else from the run's plugins; None when neither
    has it here (a report rendered without the plugin that registered the problem)."""
    try:
        return build_target(problem)
    except ValueError:
        pass
    if not plugins:
        return None
    from harness.registry import registry_for

    try:
        return registry_for(plugins).build_target(problem)
    except ValueError:  # the plugin is gone, fails to load, or no longer has the problem
        return None


def _pmf_figure(
    run: Path,
    records: list[dict[str, Any]],
    case: str,
    problem: str,
    plugins: tuple[str, ...] = (),
) -> str | None:
    """Observed frequencies of each implementation against the exact pmf (stage 0)."""
    target = _target_or_none(problem, plugins)
    if target is None:
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
    legend_below(ax)
    return _svg(fig)


def params_text(params: str) -> str:
    """A case's parameters (the JSON of its key) as ", k=v, ..."; nothing for none, not "{}"."""
    try:
        given = json.loads(params)
    except ValueError:
        given = None
    if not isinstance(given, dict):
        return f", {params}" if params.strip("{} ") else ""
    return "".join(f", {k}={v if isinstance(v, str) else json.dumps(v)}" for k, v in given.items())


def experiment_section(path: Path) -> dict[str, Any]:
    """The section of an experiment directory, built by the experiment that wrote it."""
    from harness.experiments import get_experiment
    from harness.experiments.framework import experiment_of, section

    return section(get_experiment(str(experiment_of(path))), path)


def verification_section(summary: dict[str, Any], number: int = 1) -> dict[str, Any]:
    """Section 1's part for one run; ``number`` makes its anchor (``run-1``, ...)."""
    run = Path(summary["run"])
    verdicts = sorted(
        with_false_pass(summary["verdicts"], summary["records"]),
        key=lambda v: (v["algorithm"], v["problem"], str(v.get("params")), str(v["impl"])),
    )
    figures = []
    cases = {}
    for r in summary["records"]:
        if r.get("guarantee") == "exact" and r.get("stage") == 0:
            cases.setdefault((r["algorithm"], r["case"], r["problem"]), None)
    plugins = tuple(summary.get("config", {}).get("plugins", ()))
    for algorithm, case, problem in sorted(cases):
        svg = _pmf_figure(run, summary["records"], case, problem, plugins)
        if svg:
            title = f"{algorithm} on {problem}{params_text(case.split('|', 2)[2])}"
            figures.append({"title": title, "svg": svg})
    failed = [v for v in verdicts if v["verdict"] == "fail"]
    return {
        "kind": "verification",
        "anchor": f"run-{number}",
        "run": str(run),
        "config": summary["config"],
        "provenance": summary.get("provenance", {}),
        "complete": summary.get("complete", True),
        "verdicts": verdicts,
        "failed": failed,
        "failure_lines": [failure_line(v, stage_level(summary["config"])) for v in failed],
        "passed": not failed and bool(verdicts),
        "figures": figures,
        "bands": verdict_bands(verdicts, summary["records"]),
    }


@dataclass(frozen=True)
class ReportInputs:
    """The report's inputs, sorted by what they are."""

    runs: tuple[Path, ...] = ()
    experiments: tuple[Path, ...] = ()
    asv: tuple[Path, ...] = ()
    benchmarks: tuple[Path, ...] = ()
    limits: tuple[Path, ...] = ()
    calibrations: tuple[Path, ...] = ()
    hardware: tuple[Path, ...] = ()


def classify_inputs(paths: list[Path]) -> ReportInputs:
    """Sort paths into verification runs, experiments, asv results, pytest-benchmark JSON,
    speed-limit JSON (``harness speed --limits --json``) and calibration JSON (``harness
    calibrate --json``)."""
    from harness.experiments.framework import is_experiment_dir

    sorted_: dict[str, list[Path]] = {
        "runs": [],
        "experiments": [],
        "asv": [],
        "benchmarks": [],
        "limits": [],
        "calibrations": [],
        "hardware": [],
    }
    for path in map(Path, paths):
        if not path.exists():
            raise ValueError(f"report input {str(path)!r} does not exist")
        if is_experiment_dir(path):
            sorted_["experiments"].append(path)
        elif path.is_dir() and ((path / RUN_MANIFEST).exists() or (path / SUMMARY).exists()):
            sorted_["runs"].append(path)
        elif is_asv_results(path):
            sorted_["asv"].append(path)
        elif is_pytest_benchmark(path):
            sorted_["benchmarks"].append(path)
        elif is_speed_limits(path):
            sorted_["limits"].append(path)
        elif is_calibration(path):
            sorted_["calibrations"].append(path)
        elif is_hardware(path):
            sorted_["hardware"].append(path)
        else:
            raise ValueError(
                f"report input {str(path)!r} is none of: a verification run (harness verify "
                "--out), an experiment directory (experiment.json), an asv results folder "
                "(<machine>/machine.json inside), a pytest-benchmark JSON file, a speed-limits "
                "JSON file (harness speed --limits --json), a calibration JSON file (harness "
                "calibrate --json), a hardware JSON file (harness speed --hardware/--bandwidth "
                "--json)"
            )
    return ReportInputs(**{k: tuple(v) for k, v in sorted_.items()})


#: Implementation columns of the verdict grid in this order; any other sorts after them.
IMPL_ORDER = ("reference", "numba", "cuda")


def _impl_key(impl: str) -> tuple[int, int, str]:
    pair = "-vs-" in impl  # agreement pseudo-implementations read best after the real ones
    rank = IMPL_ORDER.index(impl) if impl in IMPL_ORDER else len(IMPL_ORDER)
    return (pair, rank, impl)


def verdict_matrix(sections: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Section 1 at a glance: one row per algorithm, one column per implementation, each cell
    the gates that ran there. Gates are listed in the cell rather than given a column each:
    a full run has dozens of gates, and a column per gate cannot fit the page."""
    cells: dict[str, dict[str, dict[str, list[str]]]] = {}
    for s in sections:
        for v in s["verdicts"]:
            by_impl = cells.setdefault(v["algorithm"], {})
            by_impl.setdefault(str(v["impl"]), {}).setdefault(v["gate"], []).append(v["verdict"])
    if not cells:
        return None
    impls = sorted({i for by_impl in cells.values() for i in by_impl}, key=_impl_key)
    rows = []
    for algorithm, by_impl in sorted(cells.items()):
        row_cells, passed, total = [], 0, 0
        for impl in impls:
            gates = []
            for gate, got in sorted(by_impl.get(impl, {}).items()):
                ok = sum(x == "pass" for x in got)
                passed, total = passed + ok, total + len(got)
                gates.append(
                    {"name": gate, "passed": ok, "total": len(got), "failed": ok < len(got)}
                )
            gates.sort(key=lambda g: not g["failed"])  # failures first, where the eye lands
            row_cells.append(gates)
        cls = "pass" if passed == total else "fail"
        rows.append(
            {
                "algorithm": algorithm,
                "passed": passed,
                "total": total,
                "cls": cls,
                "cells": row_cells,
            }
        )
    return {
        "title": "Verdicts by algorithm and implementation",
        "impls": impls,
        "rows": rows,
        "caption": "Each verdict is one (problem, parameters) case of a gate. A gate in green "
        "passed every case; one in red failed some, with its passed / verdicts count. Details, "
        "p-values, n and the detectable effect are in each run's table below.",
    }


def claims_summary(sections: list[dict[str, Any]]) -> dict[str, Any]:
    """The first screen's count of claims by verdict: the papers' claims and the harness's own
    apart, primary readings only, with what the rule alone gives for "setting differs"."""
    from harness.experiments.claims import counts, differs_alone, primary, tally_text

    def of(kind: str, claims: list[dict[str, Any]]) -> dict[str, Any]:
        mine = primary(claims, kind)
        return {
            "total": len(mine),
            "counts": counts(mine),
            "alone": differs_alone(mine),
            "text": tally_text(mine),
        }

    every = [v for s in sections for v in s.get("claims", [])]
    paper, harness = of("paper", every), of("harness", every)
    return {
        **paper,
        "decided": decided_count(sections),
        "harness": harness,
        "experiments": [
            {"name": s["name"], "text": tally_text(s.get("claims", []))}
            for s in sections
            if primary(s.get("claims", []))
        ],
    }


def decided_count(sections: list[dict[str, Any]]) -> dict[str, Any]:
    """Paper claims (primary readings) decided, reproduced or not, by this report's runs or by
    their experiments' recorded deciding runs (bench/results/decided), and how many recorded
    verdicts were made by other code of their experiment."""
    from harness.experiments.claims import primary

    decided = ("reproduced", "not reproduced")
    total = here = there = either = stale = 0
    for s in sections:
        recorded = s.get("recorded") or {}
        theirs = {r["id"]: r["verdict"] for r in recorded.get("final", [])}
        for v in primary(s.get("claims", []), "paper"):
            total += 1
            a, b = v["verdict"] in decided, theirs.get(v["id"]) in decided
            here, there, either = here + a, there + b, either + (a or b)
            stale += b and bool(recorded.get("stale"))
    text = (
        f"{either} of {total} paper claims decided: {here} by these runs, {there} by recorded "
        f"deciding runs" + (f" ({stale} of those recorded with other code)" if stale else "")
    )
    return {"total": total, "here": here, "recorded": there, "either": either, "stale": stale,
            "text": text}  # fmt: skip


def _experiment_family(section: dict[str, Any]) -> str:
    """The paper file an experiment reproduces: its family heading in section 2."""
    return str(section.get("paper", "")).split(",", 1)[0] or "other"


def _gib(ram: Any) -> str:
    """asv stores RAM as a byte count in a string."""
    try:
        return f"{int(ram) / 2**30:.1f} GiB"
    except (TypeError, ValueError):
        return str(ram or "-")


def provenance_rows(
    verification: list[dict[str, Any]],
    inputs: ReportInputs,
    asv: AsvResults | None,
    bench: list[BenchFile],
) -> dict[str, Any]:
    """Section 6: where every input came from: commits, machines, versions, seeds."""
    from harness.store import EXPERIMENT_MANIFEST, provenance, read_manifest

    rows = []

    def add(kind: str, source: str, commit: Any, machine: Any, python: Any, extra: str) -> None:
        rows.append(
            [
                cell(kind),
                cell(source),
                cell(commit or "-"),
                cell(machine or "-"),
                cell(python or "-"),
                cell(extra),
            ]
        )

    for s in verification:
        p, c = s["provenance"], s["config"]
        dirty = " (uncommitted changes)" if p.get("dirty") else ""
        add(
            "verification",
            s["run"],
            f"{p.get('commit')}{dirty}",
            p.get("machine"),
            p.get("python"),
            f"seed {c.get('seed')}, level {c.get('level')}",
        )
    for path in inputs.experiments:
        m = read_manifest(path, EXPERIMENT_MANIFEST)
        p, st = m.get("provenance", {}), m.get("settings", {})
        add(
            f"experiment {st.get('experiment')}",
            str(path),
            p.get("commit"),
            p.get("machine"),
            p.get("python"),
            f"seed {st.get('seed', '-')}, level {st.get('level', '-')}",
        )
    if asv is not None:
        for machine, info in sorted(asv.machines.items()):
            commits = sorted({pt.commit[:8] for pt in asv.points if pt.machine == machine})
            add(
                "asv",
                machine,
                ", ".join(commits),
                f"{info.get('cpu', '-')} x{info.get('num_cpu', '-')}",
                info.get("python", "-"),
                f"os {info.get('os', '-')}, ram {_gib(info.get('ram'))}",
            )
    for f in bench:
        mi, ci = f.machine, f.commit
        dirty = " (uncommitted changes)" if ci.get("dirty") else ""
        add(
            "pytest-benchmark",
            f.source,
            f"{ci.get('id', '-')}{dirty}",
            mi.get("node"),
            mi.get("python_version"),
            f"{(mi.get('cpu') or {}).get('brand_raw', '-')}, {f.datetime}",
        )
    me = provenance()
    versions = ", ".join(f"{k} {v}" for k, v in sorted(me["packages"].items()) if v)
    add("this report", "harness report", me["commit"], me["machine"], me["python"], versions)
    return table(
        "Provenance of every input",
        ["input", "source", "commit", "machine", "Python", "seed / level / versions"],
        rows,
    )


def build_context(paths: list[Path]) -> dict[str, Any]:
    """All six sections from whatever inputs were given; absent ones are listed as missing."""
    inputs = classify_inputs(paths)
    # Load every input first, so a bad one fails before any figure is drawn.
    summaries = [load_run(r) for r in inputs.runs]
    asv = load_asv(list(inputs.asv)) if inputs.asv else None
    bench = [load_pytest_benchmark(p) for p in inputs.benchmarks]
    limits = [load_speed_limits(p) for p in inputs.limits]
    hardware = [load_hardware(p) for p in inputs.hardware]
    verification = [verification_section(s, k) for k, s in enumerate(summaries, 1)]
    families: dict[str, list[dict[str, Any]]] = {}
    for path in inputs.experiments:
        section = experiment_section(path)
        families.setdefault(_experiment_family(section), []).append(section)
    speed = speed_section(bench)
    return {
        "claims": claims_summary([s for _, group in sorted(families.items()) for s in group]),
        "matrix": verdict_matrix(verification),
        "verification": verification,
        "calibrations": [s for p in inputs.calibrations for s in calibration_section(p)],
        "families": sorted(families.items()),
        "speed": speed,
        "limits": limits_section(limits),
        "hardware": hardware_section(hardware),
        "timings": asv_section(asv),
        "provenance": provenance_rows(verification, inputs, asv, bench),
        "glance": [run_glance(s) for s in verification],
        "not_run": not_run(missing_inputs(inputs, verification, set(speed["timed"]))),
    }


def write_report(runs: list[Path], output: Path) -> Path:
    env = Environment(
        loader=PackageLoader("harness", "templates"),
        autoescape=select_autoescape(["html", "j2"], default=True),
    )
    env.globals["numeric_columns"] = numeric_columns
    html = env.get_template("report.html.j2").render(**build_context(runs))
    output.parent.mkdir(parents=True, exist_ok=True)
    tmp = output.with_suffix(".tmp")
    tmp.write_text(html, encoding="utf-8")
    tmp.replace(output)
    return output
