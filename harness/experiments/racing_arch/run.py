"""The tasks of the ARCH experiment (000_26bed7cc1ef3ab92.txt, Sec. 5.2) and their plan.

One pilot task fits every model (the pseudo-priors); then each chain (part) runs as a sequence
of chunk tasks of ``chunk`` sweeps. A chunk starts from the state saved in the previous chunk's
record (chain state and Generator state), so a resumed run draws exactly what an uninterrupted
one would; a fixed-pi~ run starts once both adaptations it needs are finished.
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Mapping, Sequence
from typing import Any

from harness.engine import Records, Task
from harness.experiments.racing_arch.chain import (
    ChainState,
    Problem,
    build_problem,
    first_state,
    fixed_log_pi_tilde,
    part_length,
    part_names,
    pilot_fit,
    run_chunk,
)
from harness.experiments.racing_arch.model import (
    config_data,
    describe_data,
    fit_from_record,
    fit_to_record,
)
from harness.experiments.racing_arch.settings import MODELS, ArchConfig


def pilot_task(config: ArchConfig) -> Records:
    """The pilot fit of every model (pseudo-priors, preconditioners, anchors) and the data."""
    data = config_data(config)
    t0 = time.perf_counter()
    fits = tuple(pilot_fit(q, data, config) for q in MODELS)
    return [
        {
            "key": "pilot",
            "kind": "pilot",
            "wall_s": time.perf_counter() - t0,
            "models": [fit_to_record(f) for f in fits],
            "data": describe_data(config, data),
        }
    ]


@functools.lru_cache(maxsize=2)
def _problem(config: ArchConfig, models: str) -> Problem:
    return build_problem(config, tuple(fit_from_record(m) for m in json.loads(models)))


def problem_of(config: ArchConfig, pilot: Mapping[str, Any]) -> Problem:
    """The problem of ``config`` with the pilot's fits (built once per process and pilot)."""
    return _problem(config, json.dumps(pilot["models"]))


def chunk_task(
    config: ArchConfig,
    part: str,
    start: int,
    pilot: Mapping[str, Any],
    previous: Mapping[str, Any] | None,
    adapt_exact: Sequence[Mapping[str, Any]] = (),
) -> Records:
    """Sweeps ``start``.. of ``part``. ``previous`` is the record this chunk continues: the chunk
    before it, or for a run's first chunk the last chunk of its sampler's adaptation;
    ``adapt_exact`` (a run's first chunk only) are the exact adaptation's chunks, which fix pi~.
    """
    problem = problem_of(config, pilot)
    if start > 0:
        if previous is None:
            raise ValueError(f"{part}:{start} needs the chunk before it; valid: its record")
        st = ChainState.from_record(previous["state"])
    else:
        fixed = fixed_log_pi_tilde(config, adapt_exact) if part.startswith("run/") else None
        st = first_state(problem, part, previous, fixed)
    return [run_chunk(problem, part, st, start)]


def _starts(config: ArchConfig, part: str) -> range:
    return range(0, part_length(config, part), config.chunk)


def plan(config: ArchConfig, records: Sequence[Mapping[str, Any]], part: str = "all") -> list[Task]:
    """The pilot; each chain's chunks up to the first not on disk; a run's chunks once both
    adaptations it starts from are on disk."""
    tasks = [Task("pilot", pilot_task, (config,), label="pilot")]
    by_key = {r["key"]: r for r in records if "key" in r}
    pilot = by_key.get("pilot")
    if pilot is None:
        return tasks
    finished = {
        p: [by_key.get(f"{p}:{s}") for s in _starts(config, p)]
        for p in ("adapt/exact", "adapt/sub")
    }
    for name in part_names(config):
        previous, adapt_exact = None, ()
        if name.startswith("run/"):
            own = finished[f"adapt/{name.split('/')[1]}"]
            if None in own or None in finished["adapt/exact"]:
                continue
            previous, adapt_exact = own[-1], tuple(finished["adapt/exact"])
        for start in _starts(config, name):
            key = f"{name}:{start}"
            inputs = (config, name, start, pilot, previous, adapt_exact if start == 0 else ())
            tasks.append(Task(key, chunk_task, inputs, label=key))
            previous = by_key.get(key)
            if previous is None:
                break
    return tasks
