"""What every experiment shares: resume, the engine, progress, summaries and the section frame.

An experiment is a package ``harness.experiments.<name>`` that holds only what is its own. Its
``__init__.py`` provides:

- ``config_for_level(level, seed) -> config``: the settings of a level (``quick`` or ``full``),
  a frozen dataclass validated once, with Param, when it is made; ``config.manifest()`` is a
  JSON-ready dict (with ``"experiment"``, ``"level"`` and ``"seed"``);
- ``config_from_manifest(settings) -> config``: the inverse of ``config.manifest()``;
- ``plan(config, records, part) -> list[Task]``: every task that can be planned given the
  records already on disk, finished ones included (the framework skips those). It is called
  again after each round, so a task that needs another's result (a reference chain, an exact
  posterior) is planned once that result is in ``records``; ``part`` selects a subset
  (``PARTS``, default just ``"all"``);
- ``summary(records) -> str``: a plain-text summary for the terminal;
- ``report(config, records, manifest) -> dict``: its report section's own content (title,
  notes, settings, figure groups, tables; see :func:`section`);
- optionally ``PARTS`` (the valid ``--part`` values), ``TIMED = False`` (nothing is timed, so
  the tasks may use every core by default) and ``warm()`` (compiles kernels in each
  worker before any timed task runs).

Each task is an :class:`harness.engine.Task` whose ``fn`` returns the records of one setting.
The framework owns the rest: the directory and its manifest (:mod:`harness.store`), resume,
the backend (``--scheduler``, ``--workers``), the progress bar and the frame of the section.
"""

from __future__ import annotations

import importlib
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from harness.engine import Records, Task, backend_for, run_tasks
from harness.store import (
    EXPERIMENT_MANIFEST,
    RECORDS,
    done_tasks,
    load_records,
    open_run,
    provenance,
    read_manifest,
)

LEVELS = ("quick", "full")


@dataclass(frozen=True)
class Experiment:
    """One line of the ``EXPERIMENTS`` table: an experiment and where it lives."""

    name: str
    paper: str
    summary: str
    help: str
    package: str

    def module(self) -> ModuleType:
        return importlib.import_module(self.package)

    def parts(self) -> tuple[str, ...]:
        return tuple(getattr(self.module(), "PARTS", ("all",)))


@dataclass(frozen=True)
class RunSummary:
    """What one ``harness reproduce`` invocation did; the records are in OUT/records.jsonl."""

    out: str
    planned: int
    already_done: int
    ran: int
    wall_s: float
    text: str


def _stderr(msg: str) -> None:
    print(msg, file=sys.stderr)


def _stamp(name: str) -> Callable[[Task, Records], Records]:
    """Every record names its experiment, the code that made it and its task's seed key."""
    code = provenance()["source_digest"]

    def stamp(task: Task, records: Records) -> Records:
        seed = {}
        if task.seed is not None:
            seed = {"seed": task.seed.entropy, "spawn_key": list(task.seed.spawn_key)}
        return [{"experiment": name, "code": code, **seed, **r} for r in records]

    return stamp


def check_level(level: str) -> str:
    if level not in LEVELS:
        raise ValueError(f"--level {level!r} is invalid; valid: {', '.join(LEVELS)}")
    return level


def run(
    experiment: Experiment,
    level: str,
    seed: int,
    out: Path,
    *,
    part: str = "all",
    scheduler: str | None = None,
    workers: int | None = None,
    progress: bool = True,
    move_stale: bool = False,
    log: Callable[[str], None] = _stderr,
    config: Any = None,
) -> RunSummary:
    """Run (or resume) ``experiment`` into ``out``; every check happens before any work.

    ``config`` replaces the level's settings (a config of the experiment's own class, validated
    when it was made), for a run at sizes of one's own; ``level`` and ``seed`` are then unused.
    """
    module = experiment.module()
    check_level(level)
    parts = experiment.parts()
    if part not in parts:
        raise ValueError(f"--part {part!r} is invalid; valid: {', '.join(parts)}")
    if config is None:
        config = module.config_for_level(level, seed)
    else:
        kind = type(module.config_for_level(level, seed))
        if not isinstance(config, kind):
            raise ValueError(
                f"config = {type(config).__name__} is invalid for {experiment.name}; "
                f"valid: a {kind.__name__}"
            )
    if workers is None and scheduler in (None, "process") and getattr(module, "TIMED", True):
        workers = 1  # experiments time their samplers: by default they do not share the CPU
    backend = backend_for(scheduler, workers, getattr(module, "warm", None))
    start = time.perf_counter()
    out = Path(out)
    path = open_run(out, EXPERIMENT_MANIFEST, config.manifest(), move_stale)
    records = load_records(path)
    already = done_tasks(records)
    planned: set[str] = set()
    stamp = _stamp(experiment.name)
    ran = 0
    while True:
        tasks = module.plan(config, records, part)
        planned |= {t.key for t in tasks}
        done = done_tasks(records)
        todo = [t for t in tasks if t.key not in done]
        if ran == 0:
            log(
                f"{experiment.name}: {len(tasks)} tasks planned, {len(already & planned)} "
                f"already on disk, {len(todo)} to run now"
            )
        elif todo:
            log(f"{experiment.name}: {len(todo)} more tasks planned from the results so far")
        if not todo:
            break
        ran += run_tasks(todo, path, backend, progress, experiment.name, stamp)
        records = load_records(path)
    return RunSummary(
        out=str(out),
        planned=len(planned),
        already_done=len(already & planned),
        ran=ran,
        wall_s=time.perf_counter() - start,
        text=module.summary(records),
    )


def is_experiment_dir(path: Path) -> bool:
    return (Path(path) / EXPERIMENT_MANIFEST).is_file()


def experiment_of(path: Path) -> str | None:
    """The name of the experiment that wrote ``path``."""
    return read_manifest(path, EXPERIMENT_MANIFEST).get("settings", {}).get("experiment")


def section(experiment: Experiment, out: Path) -> dict[str, Any]:
    """The report section of an experiment directory: the frame (completeness, provenance,
    code versions, wall time) around what the experiment's ``report`` builds."""
    module = experiment.module()
    manifest = read_manifest(out, EXPERIMENT_MANIFEST)
    settings = manifest["settings"]
    config = module.config_from_manifest(settings)
    records = load_records(Path(out) / RECORDS)
    planned = {t.key for t in module.plan(config, records, "all")}
    present = done_tasks(records) & planned
    own = module.report(config, [r for r in records if r.get("task_id") in planned], manifest)
    made_by = manifest.get("provenance", {})
    settings_rows = [
        *own.pop("settings", []),
        (
            "made by",
            f"commit {made_by.get('commit')}, machine {made_by.get('machine')} "
            f"({made_by.get('cpus')} CPUs), Python {made_by.get('python')}",
        ),
    ]
    return {
        "kind": "experiment",
        "name": experiment.name,
        "paper": experiment.paper,
        "path": str(out),
        "complete": present == planned,
        "missing": len(planned - present),
        "planned": len(planned),
        "code_versions": [manifest.get("provenance", {}).get("source_digest", "?")],
        "wall_s": sum(float(r.get("wall_s") or 0.0) for r in records),
        "notes": list(getattr(config, "notes", ())),
        "skipped": [],
        "figure_groups": [],
        "tables": [],
        "records_table": None,
        **own,
        "settings": settings_rows,
    }
