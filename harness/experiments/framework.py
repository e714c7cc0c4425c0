"""The experiment contract, and what the framework does for every experiment.

An experiment subclasses :class:`Experiment` and declares what is its own: a config class (its
parameters declared once, :mod:`harness.declare`), a plan of tasks, the paper's
claims (:mod:`harness.experiments.claims`), its figures and tables, the columns of its records
table, and ``warm`` (compiles kernels in every worker before a timed task runs).

The framework owns the rest: the run directory and its manifest (:mod:`harness.store`),
resume, the backend (``--scheduler``, ``--workers``), the progress bar, task seeds, the claims'
verdicts (printed, written to ``claims.json`` and shown first in the report), the settings
list, the records table and the frame of the report section.
"""

from __future__ import annotations

import json
import math
import sys
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar, get_args

from harness.declare import Config, check_level, from_manifest, settings_rows
from harness.display import cell, table, text_table
from harness.engine import BUDGETS, backend_for, run_tasks
from harness.experiments.claims import Claim, Given, Verdict, claims_text, judge_all, tally_text
from harness.experiments.decide import recorded_verdicts
from harness.store import (
    EXPERIMENT_MANIFEST,
    RECORDS,
    WALL,
    done_tasks,
    load_records,
    open_run,
    provenance,
    read_manifest,
    recorded_wall,
    write_json,
)
from harness.tasks import Records, SeedKey, Task

CLAIMS = "claims.json"
#: Each ``harness reproduce`` call's wall time and tasks run, appended as the call ends.
#: The terminal shows the records table only up to this many rows (the report shows all).
TERMINAL_ROWS = 40
C = TypeVar("C", bound=Config)


@dataclass(frozen=True)
class Column:
    """A column of the records table: a record field (or a function of the record) and its
    number format; a missing or NaN value shows as '-'."""

    title: str
    value: str | Callable[[dict[str, Any]], Any]
    fmt: str = ""

    def text(self, record: dict[str, Any]) -> str:
        v = record.get(self.value) if isinstance(self.value, str) else self.value(record)
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return "-"
        return format(v, self.fmt) if self.fmt and isinstance(v, int | float) else str(v)


class Experiment(ABC, Generic[C]):
    """A paper experiment: declarations the framework reads, and methods it calls.

    A concrete experiment's ``config_type`` is its type argument (``Experiment[MyConfig]``),
    its ``name`` that config's ``experiment`` and its ``help`` its docstring, on one line.
    """

    name: ClassVar[str]
    paper: ClassVar[str]
    summary: ClassVar[str]
    help: ClassVar[str]
    title: ClassVar[str]
    config_type: ClassVar[type[Config]]
    #: The valid ``--part`` values; "all" runs everything.
    parts: ClassVar[tuple[str, ...]] = ("all",)
    #: False when nothing is timed, so tasks may share the CPU (all cores by default).
    timed: ClassVar[bool] = True
    #: The integer parameters that count independent replicates (seeds, chains, data sets):
    #: ``--decide`` multiplies them all by one factor to add replicates
    #: (:mod:`harness.experiments.decide`); empty when nothing can be replicated.
    replicates: ClassVar[tuple[str, ...]] = ()
    #: The records table: its columns, and the record types it lists (all when empty), read
    #: from the records' ``record_field``.
    columns: ClassVar[tuple[Column, ...]] = ()
    record_types: ClassVar[tuple[str, ...]] = ()
    record_field: ClassVar[str] = "type"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for base in cls.__dict__.get("__orig_bases__", ()):
            configs = [a for a in get_args(base) if isinstance(a, type) and issubclass(a, Config)]
            if configs and "config_type" not in cls.__dict__:
                cls.config_type = configs[0]
        if "config_type" in cls.__dict__:
            cls.name = cls.__dict__.get("name", cls.config_type.experiment)
            cls.help = cls.__dict__.get("help", " ".join((cls.__doc__ or "").split()))

    def config(self, level: str, seed: int = 0) -> C:
        """The settings of ``level``, from the config's declared level values."""
        return self.config_type.for_level(level, seed)  # type: ignore[return-value]

    @abstractmethod
    def plan(self, config: C, records: Records, part: str) -> list[Task]:
        """Every task that can be planned given the records on disk, finished ones included
        (the framework skips those). It is called again after each round, so a task that
        needs another's result is planned once that result is in ``records``."""

    @abstractmethod
    def claims(self, config: C) -> tuple[Claim, ...]:
        """The paper's claims this experiment checks, each with its decision rule."""

    def givens(self, config: C) -> tuple[Given, ...]:
        """The paper's numbers our run takes as inputs or meets by construction: listed with
        the settings, never judged or counted."""
        return ()

    def warm(self) -> None:
        """Compile (or load) the kernels in each worker before any timed task runs."""

    def figures(self, config: C, records: Records) -> list[dict[str, Any]]:
        """Figure groups: {"title", "caption", "figures": [{"title", "svg"}]}."""
        return []

    def tables(self, config: C, records: Records) -> list[dict[str, Any]]:
        return []

    def skipped(self, config: C) -> list[str]:
        """Settings the level leaves out on purpose, one line each (shown in the report)."""
        return []

    def settings(self, config: C) -> list[tuple[str, str]]:
        return settings_rows(config)

    def has_warm(self) -> bool:
        return type(self).warm is not Experiment.warm


def task(
    config: Config,
    key: str,
    fn: Callable[..., Records],
    *inputs: Any,
    label: str = "",
    seeded: bool = True,
) -> Task:
    """A task of ``config``'s run; its generator is spawned from the run seed and ``key``."""
    seed = SeedKey.from_label(config.seed, key) if seeded else None
    return Task(key=key, fn=fn, inputs=inputs, seed=seed, label=label or key)


@dataclass(frozen=True)
class RunSummary:
    """What one ``harness reproduce`` invocation did; the records are in OUT/records.jsonl."""

    out: str
    planned: int
    already_done: int
    ran: int
    wall_s: float
    text: str
    verdicts: tuple[Verdict, ...] = ()


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


def run(
    experiment: Experiment[Any],
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
    config: Config | None = None,
    task_timeout: float | None = None,
) -> RunSummary:
    """Run (or resume) ``experiment`` into ``out``; every check happens before any work.

    ``config`` replaces the level's settings (a config of the experiment's own class), for a
    run at sizes of one's own; ``level`` and ``seed`` are then unused.
    """
    check_level(level)
    if part not in experiment.parts:
        raise ValueError(f"--part {part!r} is invalid; valid: {', '.join(experiment.parts)}")
    if config is None:
        config = experiment.config(level, seed)
    elif not isinstance(config, experiment.config_type):
        raise ValueError(
            f"config = {type(config).__name__} is invalid for {experiment.name}; "
            f"valid: a {experiment.config_type.__name__}"
        )
    if workers is None and scheduler in (None, "process") and experiment.timed:
        workers = 1  # experiments time their samplers: by default they do not share the CPU
    warm = experiment.warm if experiment.has_warm() else None
    budget = task_timeout if task_timeout is not None else BUDGETS[("experiment", config.level)]
    backend = backend_for(scheduler, workers, warm, budget)
    start = time.perf_counter()
    out = Path(out)
    path = open_run(out, EXPERIMENT_MANIFEST, config.manifest(), move_stale)
    records = load_records(path)
    already = done_tasks(records)
    planned: set[str] = set()
    stamp = _stamp(experiment.name)
    wall = _CallWall(out / WALL, start)
    ran = 0

    def stamp_and_time(task: Task, records: Records) -> Records:
        wall.finished_task()
        return stamp(task, records)

    try:
        while True:
            tasks = experiment.plan(config, records, part)
            planned |= {t.key for t in tasks}
            todo = [t for t in tasks if t.key not in done_tasks(records)]
            if ran == 0:
                log(
                    f"{experiment.name}: {len(tasks)} tasks planned, {len(already & planned)} "
                    f"already on disk, {len(todo)} to run now"
                )
            elif todo:
                log(f"{experiment.name}: {len(todo)} more tasks planned from the results so far")
            if not todo:
                break
            wall.begin()
            ran += run_tasks(todo, path, backend, progress, experiment.name, stamp_and_time)
            records = load_records(path)
    finally:  # an interrupted call's finished tasks took time too
        wall.end(len(done_tasks(load_records(path)) - already))
    mine = _planned_records(experiment, config, records)
    verdicts = judged(experiment, config, mine)
    write_json(out / CLAIMS, [v.to_dict() for v in verdicts])
    text = records_text(experiment, mine) + "\n\n" + claims_text(verdicts)
    return RunSummary(
        out=str(out),
        planned=len(planned),
        already_done=len(already & planned),
        ran=ran,
        wall_s=time.perf_counter() - start,
        text=text,
        verdicts=tuple(verdicts),
    )


class _CallWall:
    """This call's entry in OUT/wall.json: written when the call starts running tasks, rewritten
    as each task finishes and when the call ends, so a call killed outright (SIGKILL, power
    loss) still leaves its time up to its last finished task (``"ended": false``). A call that
    only resumed, with nothing to run, adds nothing."""

    def __init__(self, path: Path, start: float) -> None:
        self.path, self.start = path, start
        self.calls: list[dict[str, Any]] | None = None
        self.tasks = 0

    def begin(self) -> None:
        if self.calls is None:
            self.calls = self.earlier()
            self._write(ended=False)

    def earlier(self) -> list[dict[str, Any]]:
        return json.loads(self.path.read_text(encoding="utf-8")) if self.path.is_file() else []

    def finished_task(self) -> None:
        self.tasks += 1
        self._write(ended=False)

    def end(self, tasks: int) -> None:
        self.tasks = tasks
        self._write(ended=True)

    def _write(self, ended: bool) -> None:
        if self.calls is None:
            return
        this = {"wall_s": time.perf_counter() - self.start, "tasks": self.tasks, "ended": ended}
        write_json(self.path, [*self.calls, this])


def _planned_records(experiment: Experiment[Any], config: Config, records: Records) -> Records:
    planned = {t.key for t in experiment.plan(config, records, "all")}
    return [r for r in records if r.get("task_id") in planned]


def judged(experiment: Experiment[Any], config: Config, records: Records) -> list[Verdict]:
    """Every claim of ``experiment`` judged on ``records``; claim ids must be distinct."""
    try:
        return judge_all(experiment.claims(config), records)
    except ValueError as exc:
        raise ValueError(f"{experiment.name}: {exc}") from None


def _rows(experiment: Experiment[Any], records: Records) -> list[dict[str, Any]]:
    kinds = experiment.record_types
    return [r for r in records if not kinds or r.get(experiment.record_field) in kinds]


def records_text(experiment: Experiment[Any], records: Records) -> str:
    """The records table for the terminal (the report lists every row)."""
    rows = _rows(experiment, records)
    if not experiment.columns or not rows:
        return f"{len(records)} records"
    body = [[c.text(r) for c in experiment.columns] for r in rows[:TERMINAL_ROWS]]
    more = len(rows) - TERMINAL_ROWS
    tail = f"\n... and {more} more rows (the report lists them all)" if more > 0 else ""
    titles = [c.title for c in experiment.columns]
    return text_table(titles, body, align="l" * len(titles)) + tail


def records_table(experiment: Experiment[Any], records: Records) -> dict[str, Any] | None:
    rows = _rows(experiment, records)
    if not experiment.columns or not rows:
        return None
    body = [[cell(c.text(r), "num" if c.fmt else "") for c in experiment.columns] for r in rows]
    return table("All records", [c.title for c in experiment.columns], body, "One row per record.")


def recorded_cell(v: Verdict, recorded: dict[str, Any] | None) -> dict[str, Any]:
    """The recorded deciding run's verdict of claim ``v`` (harness.experiments.decide), marked
    when the experiment's code has changed since it was recorded."""
    if recorded is None:
        return cell("-")
    got = next((r for r in recorded["final"] if r["id"] == v.id), None)
    if got is None:
        return cell("not in the recorded run")
    stale = " (recorded with other code: stale)" if recorded["stale"] else ""
    text = f"{got['verdict']}: {got['ours']} ({recorded['level']}, {recorded['recorded']}){stale}"
    return cell(text, "verdict-" + got["verdict"].replace(" ", "-"))


def claims_table(
    verdicts: Sequence[Verdict], recorded: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The section's opening table: each claim beside our value and its verdict, and the
    recorded deciding run's where there is one; another reading of a claim sits under it,
    marked, and is not counted."""
    rows = [
        [
            cell(f"another reading of {v.reading_of}: {v.id}" if v.reading_of else v.id),
            cell(v.paper),
            cell(v.text),
            cell(v.paper_value or "-", "num"),
            cell(f"{v.quantity}: {v.ours}" + (f" ({v.n} {v.unit}, {v.how})" if v.n else "")),
            cell(v.rule),
            cell(v.verdict, "verdict-" + v.verdict.replace(" ", "-")),
            *([recorded_cell(v, recorded)] if recorded else []),
            cell(v.reason),
            cell(v.fails_if or "-"),
        ]
        for v in verdicts
    ]
    columns = (
        "claim",
        "where",
        "the paper says",
        "paper",
        "ours [95%]",
        "rule",
        "verdict",
        *(("recorded deciding run",) if recorded else ()),
        "why",
        "it would have failed if",
    )
    title = (
        "Harness claims"
        if verdicts and all(v.kind == "harness" for v in verdicts)
        else ("Paper claims")
    )
    primaries = sum(not v.reading_of for v in verdicts)
    caption = f"{tally_text(verdicts)} (of {primaries})."
    if primaries < len(verdicts):
        caption += f" {len(verdicts) - primaries} other readings are shown under their claims."
    if recorded:
        caption += (
            f" The recorded deciding run ({recorded['command']}; commit "
            f"{str(recorded['commit'])[:10]}, {recorded['wall_s'] / 60:.0f} min): "
            f"{tally_text([Verdict(**r) for r in recorded['final']])}"
            + (", made by other code of this experiment (stale)." if recorded["stale"] else ".")
        )
    return table(title, columns, rows, caption)


def givens_table(givens: Sequence[Given]) -> dict[str, Any] | None:
    """The paper's numbers that our run takes as inputs or meets by construction."""
    if not givens:
        return None
    rows = [
        [cell(g.what), cell(g.paper), cell(g.value), cell(g.basis), cell(g.why)] for g in givens
    ]
    caption = (
        "Not claims: our run cannot fail them, because we set them from the paper or they hold "
        "by construction. They are not counted."
    )
    return table(
        "Taken from the paper or true by construction",
        ("what", "where", "paper", "basis", "why"),
        rows,
        caption,
    )


def is_experiment_dir(path: Path) -> bool:
    return (Path(path) / EXPERIMENT_MANIFEST).is_file()


def experiment_of(path: Path) -> str | None:
    """The name of the experiment that wrote ``path``."""
    return read_manifest(path, EXPERIMENT_MANIFEST).get("settings", {}).get("experiment")


def section(experiment: Experiment[Any], out: Path) -> dict[str, Any]:
    """The report section of an experiment directory: claims first, then the experiment's
    figures and tables, its settings, provenance and records."""
    manifest = read_manifest(out, EXPERIMENT_MANIFEST)
    config = from_manifest(experiment.config_type, manifest["settings"])
    records = load_records(Path(out) / RECORDS)
    planned = {t.key for t in experiment.plan(config, records, "all")}
    present = done_tasks(records) & planned
    mine = [r for r in records if r.get("task_id") in planned]
    verdicts = judged(experiment, config, mine)
    recorded = recorded_verdicts(experiment)
    made_by = manifest.get("provenance", {})
    settings = [
        *experiment.settings(config),
        (
            "made by",
            f"commit {made_by.get('commit')}, machine {made_by.get('machine')} "
            f"({made_by.get('cpus')} CPUs), Python {made_by.get('python')}",
        ),
    ]
    return {
        "kind": "experiment",
        "name": experiment.name,
        "title": experiment.title,
        "paper": experiment.paper,
        "path": str(out),
        "complete": present == planned,
        "missing": len(planned - present),
        "planned": len(planned),
        "code_versions": [made_by.get("source_digest", "?")],
        "wall": recorded_wall(out),
        "notes": list(config.notes),
        "skipped": experiment.skipped(config),
        "claims": [v.to_dict() for v in verdicts],
        "claims_table": claims_table(verdicts, recorded),
        "recorded": recorded,
        "givens_table": givens_table(experiment.givens(config)),
        "figure_groups": experiment.figures(config, mine),
        "tables": experiment.tables(config, mine),
        "records_table": records_table(experiment, mine),
        "settings": settings,
    }
