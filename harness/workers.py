"""Worker processes the engine can stop: each task runs under a time budget.

A compiled kernel that loops forever never returns to the interpreter, so no signal or
exception can stop it from inside; only killing its process can. Each worker here is a forked
process that runs the initializer (kernel warm-up) once, says it is ready, then runs one task at
a time. The parent starts a task's clock when it hands the task to a ready worker, so warm-up
never counts against a budget. A task past its budget has its worker killed and replaced; the
task becomes an error outcome that names the budget; the other tasks go on.
"""

from __future__ import annotations

import dataclasses
import multiprocessing as mp
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any

from harness.tasks import Task, error_text, execute

#: How long a worker may take to start and warm up before the pool gives up on it.
START_BUDGET_S = 600.0


#: Seconds between a worker's checks that the process that started it is still alive.
ORPHAN_POLL_S = 1.0


def exit_with_parent(parent_pid: int) -> None:
    """Make this forked process exit once ``parent_pid`` is gone. A parent killed with SIGKILL
    cannot stop its workers, and a worker blocked on its pipe never sees EOF: each fork also
    inherits the parent's ends of the pipes of the workers forked before it."""

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(ORPHAN_POLL_S)
        os._exit(0)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def _serve(conn: Connection, initializer: Callable[[], None] | None, parent_pid: int) -> None:
    """A worker's life: warm up, then run tasks until told to stop (None)."""
    exit_with_parent(parent_pid)
    try:
        if initializer is not None:
            initializer()
        conn.send(("ready", None))
        while (task := conn.recv()) is not None:
            try:
                conn.send(("done", execute(task)))
            except Exception as exc:
                conn.send(("error", error_text(exc)))
    except (EOFError, KeyboardInterrupt, BrokenPipeError):
        pass


@dataclass
class _Worker:
    process: Any
    conn: Connection
    started: float = field(default_factory=time.monotonic)
    ready: bool = False
    task: Any = None
    since: float = 0.0
    held: set[str] = field(default_factory=set)

    def stop(self) -> None:
        if self.process.is_alive():
            self.process.kill()
        self.process.join(timeout=5)
        self.conn.close()


def _start(initializer: Callable[[], None] | None) -> _Worker:
    ctx = mp.get_context("fork")
    parent, child = ctx.Pipe()
    process = ctx.Process(target=_serve, args=(child, initializer, os.getpid()), daemon=True)
    process.start()
    child.close()
    return _Worker(process, parent)


def next_task(queue: Sequence[Task], held: set[str], others: set[str]) -> int:
    """The index in ``queue`` (run order) of the task a free worker takes: the first whose
    affinity it holds, else the first that no other worker holds, else the first. Two workers
    that each compiled a problem's kernels and built its target (seconds to a minute for a
    box density's A* kernels or a GLM's quadrature truth) would do that work twice."""
    first_free = None
    for k, task in enumerate(queue):
        key = task.affinity
        if key and key in held:
            return k
        if first_free is None and not (key and key in others):
            first_free = k
    return 0 if first_free is None else first_free


def stop_all(workers: list[_Worker]) -> None:
    """Stop every worker in ``workers`` and empty the list."""
    for w in workers:
        w.stop()
    workers.clear()


def supervised(
    tasks: Sequence[Any],
    workers: int,
    initializer: Callable[[], None] | None,
    budget_s: float,
    outcome: Callable[[Any, Any, str | None], Any],
    idle: list[_Worker] | None = None,
) -> Iterator[Any]:
    """Run ``tasks`` on ``workers`` forked processes, each task under ``budget_s`` seconds;
    yield ``outcome(task, records, error)`` as each finishes, fails or runs out of time.

    ``idle``: workers kept from an earlier call, used first, and where those without a task go
    back at the end, ready or still warming up (one with a task left is stopped). A run of
    stages (an experiment's, verify's escalations) then warms up and compiles its kernels once
    a worker, not once a stage."""
    queue = list(tasks)
    pool = [w for w in idle or () if w.process.is_alive()]
    if idle is not None:
        idle.clear()
    pool += [_start(initializer) for _ in range(min(workers, len(tasks)) - len(pool))]
    try:
        while queue or any(w.task is not None for w in pool):
            for w in pool:
                if w.ready and w.task is None and queue:
                    others = set().union(*(v.held for v in pool if v is not w))
                    w.task, w.since = queue.pop(next_task(queue, w.held, others)), time.monotonic()
                    if w.task.affinity:
                        w.held.add(w.task.affinity)
                    # on_error runs here, in the parent: the worker needs the rest only.
                    w.conn.send(dataclasses.replace(w.task, on_error=None))
            now = time.monotonic()
            deadlines = [w.since + budget_s for w in pool if w.task is not None]
            deadlines += [w.started + START_BUDGET_S for w in pool if not w.ready]
            ready = wait([w.conn for w in pool], timeout=max(0.0, min(deadlines) - now))
            for k, w in enumerate(pool):
                if w.conn in ready:
                    try:
                        kind, payload = w.conn.recv()
                    except (EOFError, OSError):
                        code = w.process.exitcode
                        w.stop()
                        pool[k] = _start(initializer)
                        if w.task is None:
                            raise RuntimeError(
                                f"a worker process died while starting (exit code {code})"
                            ) from None
                        yield outcome(w.task, None, f"its worker process died (exit code {code})")
                        continue
                    if kind == "ready":
                        w.ready = True
                    else:
                        task, w.task = w.task, None
                        done = kind == "done"
                        yield outcome(task, payload if done else None, None if done else payload)
                elif w.task is not None and time.monotonic() - w.since > budget_s:
                    w.stop()
                    pool[k] = _start(initializer)
                    yield outcome(
                        w.task, None, f"TimeoutError: stopped after its budget of {budget_s:g} s"
                    )
                elif not w.ready and time.monotonic() - w.started > START_BUDGET_S:
                    raise RuntimeError(
                        f"a worker process did not start within {START_BUDGET_S:g} s"
                    )
    finally:
        for w in pool:  # kept when asked, warming up or idle; an abandoned task is not waited for
            if idle is not None and w.task is None and w.process.is_alive():
                idle.append(w)
            else:
                w.stop()


def call_with_budget(fn: Callable[..., Any], args: tuple[Any, ...], budget_s: float) -> Any:
    """``fn(*args)`` in a forked process (so nothing needs pickling but the result), stopped
    after ``budget_s`` seconds with a TimeoutError; an exception inside is raised here as a
    RuntimeError carrying its text."""
    ctx = mp.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    here = os.getpid()

    def target() -> None:
        exit_with_parent(here)  # a hung user function must not outlive a killed caller
        try:
            child.send(("done", fn(*args)))
        except BaseException as exc:
            child.send(("error", error_text(exc)))

    process = ctx.Process(target=target, daemon=True)
    process.start()
    child.close()
    try:
        if not parent.poll(budget_s):
            raise TimeoutError(f"the function did not return within its budget of {budget_s:g} s")
        kind, payload = parent.recv()
    except EOFError:
        raise RuntimeError(f"the function's process died (exit code {process.exitcode})") from None
    finally:
        if process.is_alive():
            process.kill()
        process.join(timeout=5)
        parent.close()
    if kind == "error":
        raise RuntimeError(f"the function raised {payload.splitlines()[0]}")
    return payload
