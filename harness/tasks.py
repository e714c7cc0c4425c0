"""What the engine runs: a task, its seed, its records and its outcome.

A :class:`Task` is a pure function, its inputs and a seed key (:class:`SeedKey`): the same
task gives the same records wherever it runs, apart from the wall time and host it records.
This module is all that the engine (:mod:`harness.engine`, which schedules tasks on a
backend) and its worker processes (:mod:`harness.workers`, which run them) share; experiments
and the verification runner build their tasks from it.
"""

from __future__ import annotations

import hashlib
import traceback
import zlib
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from harness.store import clean

Records = list[dict[str, Any]]


@dataclass(frozen=True)
class SeedKey:
    """Where a task's randomness comes from: ``SeedSequence(entropy, spawn_key=spawn_key)``.

    A task's stream depends only on the run seed and the task's own key, never on the order in
    which tasks run, so a resumed or distributed run draws what an uninterrupted one would.
    Experiments key a task by :meth:`from_label`, verification by :meth:`from_crc32`.
    """

    entropy: int
    spawn_key: tuple[int, ...]

    @classmethod
    def from_label(cls, entropy: int, label: str, *extra: int) -> SeedKey:
        """The run seed spawned by two 32-bit words of SHA-256(label), then ``extra`` words."""
        return cls(int(entropy), label_words(label) + tuple(int(e) for e in extra))

    @classmethod
    def from_crc32(cls, entropy: int, label: str, *extra: int) -> SeedKey:
        """The run seed spawned by CRC-32(label), then ``extra`` words: a verification task's
        key (label: its case key, extra: its stage).

        Verification keeps CRC-32 rather than the SHA-256 words of :meth:`from_label` because
        its streams are on record: only the keys that earlier runs drew with let a run under
        the same ``--seed`` reproduce their samples and every verdict statistic bit for bit.
        """
        return cls(int(entropy), (zlib.crc32(label.encode()), *(int(e) for e in extra)))

    def generator(self) -> np.random.Generator:
        return np.random.default_rng(np.random.SeedSequence(self.entropy, spawn_key=self.spawn_key))

    def to_dict(self) -> dict[str, Any]:
        return clean(asdict(self))


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
    finished task. ``affinity`` names what a worker builds for the task and keeps for the next
    one (a problem's target, its compiled kernels): a local pool hands a worker the tasks of the
    affinities it holds first (:func:`harness.workers.supervised`); it never changes a result.
    """

    key: str
    fn: Callable[..., Records]
    inputs: tuple[Any, ...] = ()
    seed: SeedKey | None = None
    label: str = ""
    on_error: Callable[[Task, str], Records] | None = field(default=None, compare=False)
    affinity: str = field(default="", compare=False)


def execute(task: Task) -> Records:
    """Run one task where it lands (this process, a pool worker or a Dask worker)."""
    kwargs = {"rng": task.seed.generator()} if task.seed is not None else {}
    return task.fn(*task.inputs, **kwargs)


@dataclass(frozen=True)
class Outcome:
    task: Task
    records: Records | None
    error: str | None = None


def error_text(exc: BaseException) -> str:
    tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__, limit=3))
    return f"{type(exc).__name__}: {exc}\n{tb[-1500:]}"
