"""``harness reproduce racing-arch`` and its report section (000_26bed7cc1ef3ab92.txt, Sec. 5.2).

A thin adapter: running is :func:`harness.experiments.racing_arch.run_arch`, the numbers come
from :func:`~harness.experiments.racing_arch.arch_summary`; this module gives them the runner
and renderer shape the CLI and the report expect of every experiment.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.experiments.racing_arch import (
    PAPER_REF,
    ArchConfig,
    _parts,
    arch_figures,
    arch_summary,
    run_arch,
)
from harness.experiments.report_parts import cell, table
from harness.experiments.store import RECORDS_FILE, load_records
from harness.figures import inline_svg as _svg


@dataclass(frozen=True)
class ArchRunSummary:
    ran: int
    already_done: int
    skipped_by_rule: int
    wall_s: float
    speed: tuple = ()


def config_for_level(level: str, seed: int) -> ArchConfig:
    return ArchConfig.from_level(level, seed)


def run(
    config: ArchConfig,
    out: Path,
    progress: bool = True,
    part: str = "all",
    workers: int = 1,
    log: Callable[[str], None] | None = None,
) -> ArchRunSummary:
    """Run or resume; ``part`` and ``workers`` exist for the CLI's sake and must stay default."""
    if part != "all":
        raise ValueError(f"--part = {part!r} is invalid for racing-arch; valid: all")
    if workers != 1:
        raise ValueError(f"--workers = {workers!r} is invalid for racing-arch; valid: 1")
    path = Path(out) / RECORDS_FILE
    before = len(load_records(path)) if path.exists() else 0
    start = time.perf_counter()
    run_arch(config, Path(out), progress=progress)
    after = len(load_records(path))
    return ArchRunSummary(after - before, before, 0, time.perf_counter() - start)


def format_speed(speed: Any) -> str:
    return ""


def _fmt(x: Any) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:.3g}"
    return str(x)


def section(out: Path) -> dict[str, Any]:
    summary = arch_summary(Path(out))
    cfg = summary["config"]
    figures = [
        {"title": name.replace("_", " "), "svg": _svg(fig)}
        for name, fig in arch_figures(summary).items()
        if fig is not None
    ]
    rows = [
        [cell(r["quantity"]), cell(_fmt(r["paper"]), "num"), cell(_fmt(r["ours"]), "num")]
        for r in summary["paper_vs_ours"]
    ]
    paper_table = table(
        "The paper's numbers next to ours",
        ("quantity", "paper (000, Sec. 5.2)", "ours"),
        rows,
        "Paper: ~13,000 5-minute index returns, Q = {5, ..., 30}, m1 = 50, delta = 0.05, 1e5 "
        "iterations. Ours: simulated data and the settings listed above.",
    )
    missing = list(summary.get("missing") or [])
    config = ArchConfig(**{k: v for k, v in cfg.items() if k in ArchConfig.__dataclass_fields__})
    planned = len(_parts(config)) + 1  # the pilot, then each adaptation and run part
    return {
        "kind": "experiment",
        "name": "racing-arch",
        "title": "Bayesian ARCH model selection: Racing-Normal Gibbs and racing MH vs exact",
        "paper": PAPER_REF,
        "path": str(out),
        "complete": bool(summary.get("complete")),
        "missing": len(missing),
        "planned": planned,
        "notes": list(summary.get("notes") or []) + [f"Missing: {m}" for m in missing],
        "settings": [(k, _fmt(v)) for k, v in cfg.items()],
        "skipped": [],
        "code_versions": [],
        "wall_s": 0.0,
        "figure_groups": [
            {
                "title": "000, Fig. 2(b)-(d) on simulated data",
                "caption": "Solid: exact sampler; dashed: Sub (Racing-Normal Gibbs for q, SGLD "
                "corrected by racing MH). Left: estimated log p(q | r) against likelihood "
                "evaluations during adaptation; middle: adjusted posterior of q; right: "
                "autocorrelation of q.",
                "figures": figures,
            }
        ],
        "tables": [paper_table],
        "records_table": None,
    }
