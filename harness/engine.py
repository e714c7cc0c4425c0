"""The task engine behind ``harness verify`` and every ``harness reproduce``.

A task (:class:`harness.tasks.Task`) is a pure function, its inputs and a seed key: the same
task gives the same records wherever it runs, apart from the wall time and host it records.
The engine runs tasks on a backend, shows one progress bar whatever the backend, and appends
each finished task's records to the run's store (:mod:`harness.store`) at once, so an
interrupted run keeps every finished task and a rerun skips them.

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
import time
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from tqdm import tqdm

from harness.store import append_task
from harness.tasks import Outcome, Records, Task, error_text, execute


def execute_with_plugins(task: Task, plugins: Mapping[str, Any]) -> Records:
    """:func:`execute` on a Dask worker, which may share neither this machine nor this
    folder: the ``.py`` plugins loaded here travel with each task
    (:func:`harness.registry.plugin_sources`), so a plugin given by a relative path, or one
    that imports modules beside it, loads there as it did here."""
    from harness.registry import receive_plugin_sources

    receive_plugin_sources(plugins)
    return execute(task)


class Backend(Protocol):
    name: str

    def run(self, tasks: Sequence[Task]) -> Iterator[Outcome]:
        """Yield each task's outcome as it finishes, in any order."""
        ...


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
                yield Outcome(task, None, error_text(exc))


@dataclass(frozen=True)
class ProcessPool:
    """A local pool of ``workers`` processes. With a budget every task runs in a worker this
    process can kill (:mod:`harness.workers`), one worker included; without one, a single
    worker means this process."""

    workers: int
    initializer: Callable[[], None] | None = None
    budget_s: float | None = None
    name: str = "process"
    #: Budgeted workers between runs: a later stage reuses them (warm, kernels compiled); they
    #: are stopped when the pool is collected.
    idle: list[Any] = field(default_factory=list, compare=False, repr=False)

    def __post_init__(self) -> None:
        from harness.workers import stop_all

        weakref.finalize(self, stop_all, self.idle)

    def run(self, tasks: Sequence[Task]) -> Iterator[Outcome]:
        if self.budget_s is not None and tasks:
            from harness.workers import supervised

            yield from supervised(
                tasks, self.workers, self.initializer, self.budget_s, Outcome, self.idle
            )
            return
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
                        yield Outcome(futures[fut], None, error_text(exc))
            finally:
                for fut in futures:
                    fut.cancel()


#: Seconds to reach a ``tcp://`` scheduler, and to wait for a worker when none is there.
CONNECT_S = 5.0
WORKER_WAIT_S = 60.0


@dataclass(frozen=True)
class Dask:
    """Dask distributed: ``address`` is ``local:K`` (a LocalCluster of K worker processes,
    started and stopped here) or the ``tcp://HOST:PORT`` of a running scheduler.

    No more tasks are in flight than the cluster has worker threads. A task's budget runs from
    when the scheduler first reports it processing (polled each second); a task past it is
    cancelled and its worker restarted (the only way to stop compiled code). A cluster with no
    worker for :data:`WORKER_WAIT_S` seconds stops the run with a RuntimeError.
    """

    address: str
    initializer: Callable[[], None] | None = None
    budget_s: float | None = None
    name: str = "dask"

    def _client(self) -> tuple[Any, Any]:
        import logging

        from distributed import Client, LocalCluster

        logging.getLogger("distributed").setLevel(logging.ERROR)
        if self.address.startswith("local:"):
            cluster = LocalCluster(
                n_workers=int(self.address.split(":", 1)[1]),
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                silence_logs=logging.ERROR,
            )
            return Client(cluster), cluster
        try:
            return Client(self.address, timeout=f"{CONNECT_S:g}s"), None
        except (OSError, TimeoutError) as exc:
            raise RuntimeError(
                f"--scheduler {self.address}: no Dask scheduler answered within {CONNECT_S:g} s "
                f"({type(exc).__name__}); start one with `dask scheduler`"
            ) from None

    def _slots(self, client: Any) -> int:
        """Worker threads now; waits up to WORKER_WAIT_S for one, then gives up."""
        try:
            client.wait_for_workers(1, timeout=WORKER_WAIT_S)
        except TimeoutError:
            raise RuntimeError(
                f"--scheduler {self.address}: no Dask worker for {WORKER_WAIT_S:g} s; start "
                f"one with `dask worker {self.address}`"
            ) from None
        return max(1, sum(client.nthreads().values()))

    def run(self, tasks: Sequence[Task]) -> Iterator[Outcome]:
        if not tasks:
            return
        from distributed import wait

        from harness.registry import plugin_sources

        plugins = plugin_sources()
        client, cluster = self._client()
        try:
            slots = self._slots(client)
            if self.initializer is not None:
                client.run(self.initializer)
            queue, running = list(reversed(tasks)), {}
            while queue or running:
                while queue and len(running) < slots:
                    t = queue.pop()
                    # pure=False: Dask must not merge two equal tasks; a key per task names it.
                    fut = client.submit(
                        execute_with_plugins, t, plugins, pure=False, key=f"task-{_short(t.key)}"
                    )
                    running[fut] = (t, None)
                timeout = 5.0 if self.budget_s is None else 1.0
                try:
                    done = wait(list(running), timeout=timeout, return_when="FIRST_COMPLETED").done
                except TimeoutError:  # Dask's wait raises where the standard one returns
                    done = set()
                for fut in done:
                    task, _ = running.pop(fut)
                    try:
                        yield Outcome(task, fut.result())
                    except Exception as exc:
                        yield Outcome(task, None, error_text(exc))
                    fut.release()
                if self.budget_s is not None:
                    yield from self._stop_overdue(client, running)
                slots = self._slots(client)
        finally:
            client.close(timeout=30)
            if cluster is not None:
                cluster.close(timeout=30)

    def _stop_overdue(self, client: Any, running: dict[Any, Any]) -> Iterator[Outcome]:
        assert self.budget_s is not None
        now, busy = time.monotonic(), client.processing()
        started = {key for keys in busy.values() for key in keys}
        for fut, (task, since) in list(running.items()):
            if since is None and fut.key in started:
                running[fut] = (task, now)
        overdue = [
            f
            for f, (_, since) in running.items()
            if since is not None and now - since > self.budget_s
        ]
        for fut in overdue:
            task, _ = running.pop(fut)
            where = [w for w, keys in busy.items() if fut.key in keys]
            fut.cancel()
            if where:
                client.restart_workers(where, raise_for_error=False)
                if self.initializer is not None:
                    client.run(self.initializer)
            yield Outcome(
                task, None, f"TimeoutError: stopped after its budget of {self.budget_s:g} s"
            )


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
    budget_s: float | None = None,
) -> Backend:
    """The backend named by ``--scheduler`` (see the module docstring); ValueError otherwise.
    ``budget_s`` is every task's time budget (``inprocess``, for debugging, enforces none)."""
    if workers is not None and (isinstance(workers, bool) or workers < 1):
        raise ValueError(f"--workers = {workers!r} is invalid; valid: an integer >= 1")
    check_budget(budget_s)
    scheduler = scheduler or "process"
    if scheduler == "process":
        return ProcessPool(workers or os.cpu_count() or 1, initializer, budget_s)
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
        return Dask(scheduler, initializer, budget_s)
    if scheduler.startswith("tcp://") and ":" in scheduler[len("tcp://") :]:
        _reachable(scheduler)
        return Dask(scheduler, initializer, budget_s)
    raise ValueError(f"--scheduler {scheduler!r} is invalid; valid: {SCHEDULER_HELP}")


#: Default task budgets in seconds, by what runs and its level; ``--task-timeout`` overrides.
BUDGETS = {
    ("verify", "quick"): 600.0,
    ("verify", "full"): 3600.0,
    ("experiment", "quick"): 1800.0,
    ("experiment", "full"): 12 * 3600.0,
}


def _reachable(address: str) -> None:
    """Refuse, before any work, a scheduler address where no Dask scheduler answers: nothing
    listens, something else does (an HTTP server such as Dask's dashboard, a Dask worker), or
    the handshake fails. RuntimeError with one line naming the address."""
    problem = _probe(address)
    if problem is not None:
        raise RuntimeError(f"--scheduler {address}: {problem}")


#: Seconds a Dask server takes to send its handshake after accepting (it speaks first).
GREETING_S = 3.0
#: A Dask message starts with its length (8 bytes); a handshake is far below this.
_MAX_GREETING = 1 << 20
_USE_SCHEDULER = "give the tcp:// address `dask scheduler` prints (port 8786 by default)"


def _probe(address: str) -> str | None:
    """What is wrong with ``address`` as a Dask scheduler, or None when one answers.

    First a raw socket: a Dask server sends its handshake as soon as it accepts, so silence
    means another protocol (HTTP is asked for, to name the dashboard port), and bytes that are
    not a plausible Dask frame mean something else entirely (Dask would read their first 8
    bytes as a length and try to allocate it). Then Dask's own handshake and ``identity``
    call, which says whether a scheduler or a worker answered."""
    import socket

    host, _, port = address[len("tcp://") :].rpartition(":")
    try:
        sock = socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_S)
    except (OSError, ValueError) as exc:
        return f"no Dask scheduler answers there ({exc}); start one with `dask scheduler`"
    with sock:
        greeting = _read_some(sock, 8, GREETING_S)
        if not greeting:
            try:
                sock.sendall(f"GET / HTTP/1.0\r\nHost: {host}\r\n\r\n".encode())
            except OSError:  # it hung up: not HTTP either
                return _not_dask(b"")
            return _not_dask(_read_some(sock, 1024, GREETING_S))
    size = int.from_bytes(greeting[:8].ljust(8, b"\0"), "little")
    if len(greeting) < 8 or not 0 < size <= _MAX_GREETING:
        return (
            f"something other than a Dask scheduler answers there (it sent {greeting[:16]!r}, "
            f"not a Dask handshake); {_USE_SCHEDULER}"
        )
    return _identity(address)


def _read_some(sock: Any, n: int, timeout_s: float) -> bytes:
    """Up to ``n`` bytes, or fewer when the peer stops sending for ``timeout_s`` or closes."""
    sock.settimeout(timeout_s)
    data = b""
    try:
        while len(data) < n and (chunk := sock.recv(n - len(data))):
            data += chunk
    except OSError:  # a timeout or a reset: what came so far is the answer
        pass
    return data


def _not_dask(answer: bytes) -> str:
    """The message for a server that did not speak first, by what it said to an HTTP GET."""
    if not answer.startswith(b"HTTP/"):
        return (
            "something listens there but is not a Dask scheduler (it sent no Dask handshake "
            f"within {GREETING_S:g} s and does not speak HTTP); {_USE_SCHEDULER}"
        )
    head = answer.split(b"\r\n\r\n", 1)[0].lower()
    # Dask's dashboard (tornado) redirects / to its status page, with or without bokeh.
    if b"location: status" in head or b"location: /status" in head:
        return f"this is Dask's dashboard port, not the scheduler's; {_USE_SCHEDULER}"
    return (
        "an HTTP server answers there, not a Dask scheduler (Dask's dashboard port is not the "
        f"scheduler's); {_USE_SCHEDULER}"
    )


def _identity(address: str) -> str | None:
    """Dask's handshake and ``identity`` call, in a thread of its own (the caller may be inside
    an event loop), under CONNECT_S seconds."""
    import asyncio
    import threading

    result: dict[str, Any] = {}

    async def ask() -> Any:
        from distributed.comm import connect

        comm = await connect(address, timeout=CONNECT_S)
        try:
            await comm.write({"op": "identity", "reply": True})
            return await comm.read()
        finally:
            comm.abort()

    def target() -> None:
        try:
            result["reply"] = asyncio.run(asyncio.wait_for(ask(), CONNECT_S))
        except BaseException as exc:  # reported below, as one line
            result["error"] = exc

    thread = threading.Thread(target=target, name="scheduler-probe", daemon=True)
    thread.start()
    thread.join(CONNECT_S + 2)
    if "reply" not in result:
        exc = result.get("error")
        why = "no reply" if exc is None else type(exc).__name__
        if exc is not None and str(exc).strip():
            why += f": {str(exc).strip().splitlines()[0]}"
        return f"the Dask handshake failed ({why}); {_USE_SCHEDULER}"
    reply = result["reply"]
    kind = reply.get("type") if isinstance(reply, dict) else None
    if kind == "Scheduler":
        return None
    if kind in ("Worker", "Nanny"):
        return f"a Dask {kind.lower()} answers there, not the scheduler; {_USE_SCHEDULER}"
    return f"something other than a Dask scheduler answers there ({kind!r}); {_USE_SCHEDULER}"


def check_budget(budget_s: Any) -> float | None:
    """A task budget: None (no limit) or a number of seconds > 0."""
    if budget_s is None:
        return None
    if isinstance(budget_s, bool) or not isinstance(budget_s, int | float) or not budget_s > 0:
        raise ValueError(
            f"--task-timeout = {budget_s!r} is invalid; valid: a number of seconds > 0"
        )
    return float(budget_s)


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
    before they are written. A task that fails (raises, dies or runs past its budget) becomes
    records through its ``on_error``; without one it is left unrecorded, the other tasks go on,
    and at the end a RuntimeError names the failed tasks (what finished is kept; a rerun
    retries them). Returns the number of tasks recorded.
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
    done, failed = 0, []
    try:
        for outcome in backend.run(tasks):
            task, records = outcome.task, outcome.records
            bar.set_postfix_str(task.label[:40], refresh=False)
            bar.update()
            if outcome.error is not None:
                if task.on_error is None:
                    failed.append(f"{task.label or task.key!r}: {outcome.error.splitlines()[0]}")
                    continue
                records = task.on_error(task, outcome.error)
            if before_append is not None:
                records = before_append(task, records)
            append_task(records_path, task.key, records)
            done += 1
    finally:
        bar.close()
    if failed:
        more = f" (and {len(failed) - 3} more)" if len(failed) > 3 else ""
        raise RuntimeError(
            f"{len(failed)} task(s) failed: {'; '.join(failed[:3])}{more}; {done} finished "
            "tasks are kept; rerun to retry the failed ones"
        )
    return done
