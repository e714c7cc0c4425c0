"""The task engine behind ``harness verify`` and every ``harness reproduce``.

A :class:`Task` is a pure function, its inputs and a seed key: the same task gives the same
records wherever it runs, apart from the wall time and host it records. The engine runs tasks
on a backend, shows one progress bar whatever the backend, and appends each finished task's
records to the run's store (:mod:`harness.store`) at once, so an interrupted run keeps every
finished task and a rerun skips them.

Backends (``--scheduler``):

- ``inprocess``: one task after another in this process (debugging, tiny runs);
- ``process`` (the default): a local process pool of ``--workers`` processes;
- ``local:K``: a ``distributed.LocalCluster`` of K single-threaded worker processes;
- ``tcp://HOST:PORT``: a running Dask scheduler (``dask scheduler`` and ``dask worker ADDRESS``
  on any machines that share this code and its environment).

Only the process that called the engine writes records; workers return them. Killing that
process therefore loses at most the tasks in flight, never a written one.
"""

from __future__ import annotations

import hashlib
import os
import sys
import traceback
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from tqdm import tqdm

from harness.store import append_task

Records = list[dict[str, Any]]


@dataclass(frozen=True)
class SeedKey:
    """Where a task's randomness comes from: ``SeedSequence(entropy, spawn_key=spawn_key)``.

    A task's stream depends only on the run seed and the task's own key, never on the order in
    which tasks run, so a resumed or distributed run draws what an uninterrupted one would.
    """

    entropy: int
    spawn_key: tuple[int, ...]

    @classmethod
    def from_label(cls, entropy: int, label: str, *extra: int) -> SeedKey:
        """The run seed spawned by two 32-bit words of SHA-256(label), then ``extra`` words."""
        return cls(int(entropy), label_words(label) + tuple(int(e) for e in extra))

    def generator(self) -> np.random.Generator:
        return np.random.default_rng(np.random.SeedSequence(self.entropy, spawn_key=self.spawn_key))

    def to_dict(self) -> dict[str, Any]:
        return {"entropy": self.entropy, "spawn_key": list(self.spawn_key)}


def label_words(label: str) -> tuple[int, int]:
    """Two 32-bit words of SHA-256(label): a stable spawn key for a task's label."""
    digest = hashlib.sha256(label.encode()).digest()
    return (int.from_bytes(digest[:4], "little"), int.from_bytes(digest[4:8], "little"))


@dataclass(frozen=True)
class Task:
    """``fn(*inputs)`` (plus ``rng=seed.generator()`` when ``seed`` is set) -> records.

    ``fn`` must be importable by name (a module-level function) so that worker processes and
    Dask workers can run it. ``key`` identifies the task in the store; ``label`` is what the
    progress bar shows while it runs. ``on_error(task, text)`` turns a raised exception into
    records (a failed verdict, say); without it the run stops with the error, keeping every
    finished task.
    """

    key: str
    fn: Callable[..., Records]
    inputs: tuple[Any, ...] = ()
    seed: SeedKey | None = None
    label: str = ""
    on_error: Callable[[Task, str], Records] | None = field(default=None, compare=False)


def execute(task: Task) -> Records:
    """Run one task where it lands (this process, a pool worker or a Dask worker)."""
    kwargs = {"rng": task.seed.generator()} if task.seed is not None else {}
    return task.fn(*task.inputs, **kwargs)


@dataclass(frozen=True)
class Outcome:
    task: Task
    records: Records | None
    error: str | None = None


class Backend(Protocol):
    name: str

    def run(self, tasks: Sequence[Task]) -> Iterator[Outcome]:
        """Yield each task's outcome as it finishes, in any order."""
        ...


def _error_text(exc: BaseException) -> str:
    tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__, limit=3))
    return f"{type(exc).__name__}: {exc}\n{tb[-1500:]}"


@dataclass(frozen=True)
class InProcess:
    """Every task in this process, one after another."""

    initializer: Callable[[], None] | None = None
    name: str = "inprocess"

    def run(self, tasks: Sequence[Task]) -> Iterator[Outcome]:
        if self.initializer is not None and tasks:
            self.initializer()
        for task in tasks:
            try:
                yield Outcome(task, execute(task))
            except Exception as exc:
                yield Outcome(task, None, _error_text(exc))


@dataclass(frozen=True)
class ProcessPool:
    """A local ``ProcessPoolExecutor`` of ``workers`` processes."""

    workers: int
    initializer: Callable[[], None] | None = None
    name: str = "process"

    def run(self, tasks: Sequence[Task]) -> Iterator[Outcome]:
        if self.workers <= 1 or len(tasks) <= 1:
            yield from InProcess(self.initializer).run(tasks)
            return
        workers = min(self.workers, len(tasks))
        with ProcessPoolExecutor(max_workers=workers, initializer=self.initializer) as pool:
            futures = {pool.submit(execute, t): t for t in tasks}
            try:
                for fut in as_completed(futures):
                    try:
                        yield Outcome(futures[fut], fut.result())
                    except Exception as exc:
                        yield Outcome(futures[fut], None, _error_text(exc))
            finally:
                for fut in futures:
                    fut.cancel()


@dataclass(frozen=True)
class Dask:
    """Dask distributed: ``address`` is ``local:K`` (a LocalCluster of K worker processes,
    started and stopped here) or the ``tcp://HOST:PORT`` of a running scheduler."""

    address: str
    initializer: Callable[[], None] | None = None
    name: str = "dask"

    def run(self, tasks: Sequence[Task]) -> Iterator[Outcome]:
        if not tasks:
            return
        import logging

        from distributed import Client, LocalCluster
        from distributed import as_completed as dask_completed

        logging.getLogger("distributed").setLevel(logging.ERROR)
        cluster = None
        if self.address.startswith("local:"):
            cluster = LocalCluster(
                n_workers=int(self.address.split(":", 1)[1]),
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                silence_logs=logging.ERROR,
            )
            client = Client(cluster)
        else:
            client = Client(self.address, timeout="30s")
        try:
            if self.initializer is not None:
                client.run(self.initializer)
            # pure=False: Dask must not merge two equal tasks, and a key per task names it.
            futures = [
                client.submit(execute, t, pure=False, key=f"task-{_short(t.key)}") for t in tasks
            ]
            by_key = {f.key: t for f, t in zip(futures, tasks, strict=True)}
            for fut in dask_completed(futures):
                task = by_key[fut.key]
                try:
                    yield Outcome(task, fut.result())
                except Exception as exc:
                    yield Outcome(task, None, _error_text(exc))
                fut.release()
        finally:
            client.close()
            if cluster is not None:
                cluster.close()


def _short(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()[:24]


SCHEDULER_HELP = (
    "'process' (a local process pool, the default), 'inprocess', 'local:K' (a Dask "
    "LocalCluster of K workers) or 'tcp://HOST:PORT' (a running Dask scheduler)"
)


def backend_for(
    scheduler: str | None,
    workers: int | None = None,
    initializer: Callable[[], None] | None = None,
) -> Backend:
    """The backend named by ``--scheduler`` (see the module docstring); ValueError otherwise."""
    if workers is not None and (isinstance(workers, bool) or workers < 1):
        raise ValueError(f"--workers = {workers!r} is invalid; valid: an integer >= 1")
    scheduler = scheduler or "process"
    if scheduler == "process":
        return ProcessPool(workers or os.cpu_count() or 1, initializer)
    if scheduler == "inprocess":
        return InProcess(initializer)
    if workers is not None:
        raise ValueError(
            f"--workers = {workers} does not apply to --scheduler {scheduler!r}; valid: "
            "--workers with 'process' only (a Dask cluster has its own workers)"
        )
    if scheduler.startswith("local:"):
        k = scheduler.split(":", 1)[1]
        if not k.isdigit() or int(k) < 1:
            raise ValueError(
                f"--scheduler {scheduler!r} is invalid; valid: local:K with K an integer >= 1"
            )
        return Dask(scheduler, initializer)
    if scheduler.startswith("tcp://") and ":" in scheduler[len("tcp://") :]:
        return Dask(scheduler, initializer)
    raise ValueError(f"--scheduler {scheduler!r} is invalid; valid: {SCHEDULER_HELP}")


def run_tasks(
    tasks: Sequence[Task],
    records_path: Path,
    backend: Backend,
    progress: bool = True,
    desc: str = "tasks",
    before_append: Callable[[Task, Records], Records] | None = None,
) -> int:
    """Run ``tasks`` on ``backend``, appending each one's records as it finishes.

    ``before_append(task, records)`` may move bulky payloads out of the records (sample files)
    before they are written. A task that raises and has no ``on_error`` stops the run: the
    others in flight are abandoned, what finished is kept, and a RuntimeError names the task.
    Returns the number of tasks run.
    """
    keys = [t.key for t in tasks]
    if len(set(keys)) != len(keys):
        dup = next(k for k in keys if keys.count(k) > 1)
        raise ValueError(f"task key {dup!r} appears twice; valid: one task per key")
    bar = tqdm(
        total=len(tasks),
        desc=f"{desc} [{backend.name}]",
        unit="task",
        disable=not progress or not tasks,
        file=sys.stderr,
    )
    done = 0
    try:
        for outcome in backend.run(tasks):
            task, records = outcome.task, outcome.records
            if outcome.error is not None:
                if task.on_error is None:
                    first = outcome.error.splitlines()[0]
                    raise RuntimeError(
                        f"task {task.label or task.key!r} failed: {first} "
                        f"({done} finished tasks are kept; rerun to resume)"
                    )
                records = task.on_error(task, outcome.error)
            if before_append is not None:
                records = before_append(task, records)
            append_task(records_path, task.key, records)
            done += 1
            bar.set_postfix_str(task.label[:40], refresh=False)
            bar.update()
    finally:
        bar.close()
    return done
