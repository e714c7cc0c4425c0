"""An experiment directory: its settings (``experiment.json``) and its records (JSON Lines).

Each finished setting is one line, appended and fsynced at once, so a kill loses at most the
setting that was running. A resumed run skips every key already on disk; a directory made with
other settings is refused, never mixed or overwritten.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from harness.results import _clean, provenance

EXPERIMENT_FILE = "experiment.json"
RECORDS_FILE = "records.jsonl"


def is_experiment_dir(path: Path) -> bool:
    return (Path(path) / EXPERIMENT_FILE).is_file()


def read_manifest(out: Path) -> dict[str, Any]:
    path = Path(out) / EXPERIMENT_FILE
    if not path.is_file():
        raise ValueError(f"{str(out)!r} is not an experiment directory (no {EXPERIMENT_FILE})")
    return json.loads(path.read_text(encoding="utf-8"))


def _first_difference(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    for key in sorted(set(old) | set(new)):
        if old.get(key) != new.get(key):
            return key
    return "?"


def open_experiment(out: Path, settings: Mapping[str, Any]) -> None:
    """Create ``out`` with its settings, or check that an existing one has the same settings.

    Only the settings decide: the code version is stored with every record instead, so a long
    run survives an unrelated edit (the report says when records come from several versions).
    """
    out = Path(out)
    settings = _clean(dict(settings))
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {str(out)!r} is a file; valid: a directory (new or resumable)")
    if is_experiment_dir(out):
        old = read_manifest(out).get("settings")
        if old != settings:
            key = _first_difference(old or {}, settings)
            raise ValueError(
                f"--out {str(out)!r} holds an experiment with other settings (first difference: "
                f"{key!r}); rerun with the same options to resume, or choose another --out"
            )
        return
    if out.is_dir() and any(out.iterdir()):
        raise ValueError(
            f"--out {str(out)!r} is a non-empty directory without {EXPERIMENT_FILE}; "
            "valid: a new or empty directory, or one this command made"
        )
    out.mkdir(parents=True, exist_ok=True)
    manifest = {"settings": settings, "created_by": _provenance_summary()}
    tmp = out / (EXPERIMENT_FILE + ".tmp")
    tmp.write_text(json.dumps(manifest, indent=2, sort_keys=True), encoding="utf-8")
    os.replace(tmp, out / EXPERIMENT_FILE)


def _provenance_summary() -> dict[str, Any]:
    p = provenance()
    keep = ("commit", "dirty", "source_digest", "machine", "arch", "cpus", "python", "packages")
    return {k: p.get(k) for k in keep}


def start_run(out: Path, settings: Mapping[str, Any]) -> tuple[Path, set[str]]:
    """Open (or reopen, same settings only) ``out`` for a run: its records path, with a torn last
    line cut, and the keys of the settings already recorded there, which a resumed run skips."""
    out = Path(out)
    open_experiment(out, settings)
    path = out / RECORDS_FILE
    repair_records(path)
    return path, {r["key"] for r in load_records(path)}


def repair_records(path: Path) -> None:
    """Cut a last line that a kill left without its newline, so the next append starts clean."""
    if not path.exists():
        return
    data = path.read_bytes()
    if not data or data.endswith(b"\n"):
        return
    cut = data.rfind(b"\n") + 1
    with open(path, "r+b") as fh:
        fh.truncate(cut)
        fh.flush()
        os.fsync(fh.fileno())


def append_record(path: Path, record: Mapping[str, Any]) -> None:
    """One record as one line: a single write, then fsync (survives a kill at any point)."""
    line = json.dumps(_clean(dict(record)), sort_keys=True) + "\n"
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(line)
        fh.flush()
        os.fsync(fh.fileno())


def load_records(path: Path) -> list[dict[str, Any]]:
    """Complete records, first occurrence per ``key``; torn or unreadable lines are skipped."""
    path = Path(path)
    if not path.exists():
        return []
    seen: set[str] = set()
    out: list[dict[str, Any]] = []
    for line in path.read_text(encoding="utf-8").splitlines(keepends=True):
        if not line.endswith("\n"):
            break  # cut short by a kill
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        key = record.get("key") if isinstance(record, dict) else None
        if key is None or key in seen:
            continue
        seen.add(key)
        out.append(record)
    return out


@dataclass(frozen=True)
class RunSummary:
    """What one ``reproduce`` invocation did; the records themselves are in OUT/records.jsonl."""

    out: str
    planned: int
    already_done: int
    ran: int
    skipped_by_rule: int
    wall_s: float
    speed: tuple[dict[str, Any], ...] = ()


def check_run_args(part: str, workers: int, parts: tuple[str, ...] = ("all",)) -> None:
    """``--part`` must be one of ``parts`` and ``--workers`` an integer >= 1."""
    if part not in parts:
        raise ValueError(f"--part {part!r} is invalid; valid: {', '.join(parts)}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"--workers = {workers!r} is invalid; valid: an integer >= 1")


def spawn_key(label: str) -> tuple[int, ...]:
    """Two 32-bit words of SHA-256(label): one stable stream per setting, whatever the order in
    which settings run or resume."""
    digest = hashlib.sha256(label.encode()).digest()
    return (int.from_bytes(digest[:4], "little"), int.from_bytes(digest[4:8], "little"))


def setting_rng(seed: int, label: str, *extra: int) -> np.random.Generator:
    """The Generator of one setting: the run seed, spawned by the setting's label (and ``extra``
    words), so a resumed run draws what an uninterrupted one would have."""
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=spawn_key(label) + extra))


def checkpoints(n_steps: int, count: int) -> tuple[int, ...]:
    """About ``count`` geometric iteration counts from 10 (or 1) up to ``n_steps``, inclusive."""
    start = min(10, n_steps)
    grid = np.geomspace(start, n_steps, count)
    return tuple(sorted(set(np.rint(grid).astype(int).tolist()) | {n_steps}))


def lists_to_tuples(d: dict[str, Any]) -> dict[str, Any]:
    """A manifest entry read back from JSON: its lists become the tuples the frozen config holds."""
    return {k: tuple(v) if isinstance(v, list) else v for k, v in d.items()}


def check_int(value: Any, name: str, low: int) -> None:
    """An experiment setting that must be an integer >= ``low`` (bool is not an integer)."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < low:
        raise ValueError(f"{name} = {value!r} is invalid; valid: an integer >= {low}")


def check_positive(value: Any, name: str) -> None:
    """An experiment setting that must be a finite number > 0."""
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if not ok or not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} = {value!r} is invalid; valid: a finite number > 0")
