"""Do two runs give the same numbers? Every ``records.jsonl`` under one run directory (a verify
run, an experiment's, or a folder holding both, as ``make run`` writes) against the file at the
same place under the other, record by record, timing and provenance aside.

A refactor that claims to change no result is checked by this, not by reading two reports.
Timing is what a rerun on the same machine changes anyway: fields named for seconds or wall
time (``wall_time``, ``sampler_s``, ``exact_s_per_draw``, ``load_avg``...), and the provenance
that :func:`harness.store.provenance` stamps (commit, code digest, machine, versions). Values
computed from timings under other names (a speed-up, its ratio to a saving) are not guessed:
they are listed as differing fields, and ``ignore`` names them once read.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.store import load_records, provenance

RECORDS = "records.jsonl"
#: A key naming a time: one of these words between underscores (``run_wall_s``, ``setup_s``).
TIMING = re.compile(r"(^|_)(wall|time|times|seconds|second|secs|s|load)(_|$)")


@dataclass(frozen=True)
class Difference:
    """One field that differs in ``count`` records, with the first such record's values."""

    field: str
    count: int
    task: str
    old: Any
    new: Any


@dataclass(frozen=True)
class Comparison:
    """The records of one run file under both directories."""

    path: str
    old_records: int
    new_records: int
    same: int
    differences: tuple[Difference, ...]
    only_old: int
    only_new: int

    @property
    def identical(self) -> bool:
        return not self.differences and not self.only_old and not self.only_new


def _comparable(value: Any, ignore: frozenset[str]) -> Any:
    if isinstance(value, dict):
        return {
            k: _comparable(v, ignore)
            for k, v in value.items()
            if k not in ignore and not TIMING.search(k)
        }
    if isinstance(value, list):
        return [_comparable(v, ignore) for v in value]
    return value


def _keyed(records: list[dict[str, Any]]) -> dict[tuple[str, int], dict[str, Any]]:
    """Each record under (its task, its place among that task's records)."""
    seen: Counter[str] = Counter()
    keyed = {}
    for record in records:
        task = str(record.get("task_id", record.get("key", "")))
        keyed[task, seen[task]] = record
        seen[task] += 1
    return keyed


def compare_records(
    path: str, old: list[dict[str, Any]], new: list[dict[str, Any]], ignore: frozenset[str]
) -> Comparison:
    a, b = _keyed(old), _keyed(new)
    same = 0
    counts: Counter[str] = Counter()
    first: dict[str, tuple[str, Any, Any]] = {}
    for key in a.keys() & b.keys():
        x, y = _comparable(a[key], ignore), _comparable(b[key], ignore)
        if x == y:
            same += 1
            continue
        for field in sorted(x.keys() | y.keys()):
            if x.get(field) != y.get(field):
                counts[field] += 1
                first.setdefault(field, (key[0], x.get(field), y.get(field)))
    differences = tuple(Difference(f, n, *first[f]) for f, n in counts.items())
    only_old, only_new = len(a.keys() - b.keys()), len(b.keys() - a.keys())
    return Comparison(path, len(old), len(new), same, differences, only_old, only_new)


def compare_runs(old: Path, new: Path, ignore: Iterable[str] = ()) -> list[Comparison]:
    """One :class:`Comparison` per records file under either directory."""
    for folder, option in ((old, "OLD"), (new, "NEW")):
        if not Path(folder).is_dir():
            raise ValueError(f"{option} = {str(folder)!r} is invalid; valid: a run directory")
    found = {p.relative_to(old) for p in Path(old).rglob(RECORDS)}
    found |= {p.relative_to(new) for p in Path(new).rglob(RECORDS)}
    if not found:
        raise ValueError(f"no {RECORDS} under {str(old)!r} or {str(new)!r}; valid: run directories")
    skip = frozenset(provenance()) | frozenset(ignore)
    return [
        compare_records(
            str(rel), load_records(Path(old) / rel), load_records(Path(new) / rel), skip
        )
        for rel in sorted(found)
    ]


def _short(value: Any, width: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def summary(comparisons: list[Comparison]) -> str:
    """A line per records file, the differing fields under it, then the totals."""
    lines = []
    for c in comparisons:
        head = f"{c.path}: {c.same} of {c.old_records} records the same"
        if c.new_records != c.old_records:
            head += f" ({c.new_records} in NEW)"
        if c.only_old or c.only_new:
            head += f"; {c.only_old} only in OLD, {c.only_new} only in NEW"
        lines.append(head)
        for d in sorted(c.differences, key=lambda d: (-d.count, d.field)):
            lines.append(
                f"  {d.field}: differs in {d.count}; first in {d.task}: "
                f"{_short(d.old)} -> {_short(d.new)}"
            )
    same = sum(c.identical for c in comparisons)
    records = sum(c.same for c in comparisons)
    lines.append(
        f"{same} of {len(comparisons)} runs identical, {records} records the same "
        "(timing and provenance aside)"
    )
    return "\n".join(lines)
