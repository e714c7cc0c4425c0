"""Result records: JSON Lines with provenance, written so that an interrupted run loses nothing.

A task's records (one per gate) are written in a single append followed by fsync. Each line
carries the task id and how many lines the task wrote, so a task whose lines were cut short by a
kill is recognised on load and its partial lines dropped; it is then simply run again.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import subprocess
from collections.abc import Iterable
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

RECORDS = "records.jsonl"
MANIFEST = "run.json"
PACKAGES = ("sampler-harness", "numpy", "scipy", "numba", "statsmodels", "arviz-stats")


@lru_cache(maxsize=1)
def provenance() -> dict[str, Any]:
    """Commit, machine and package versions of this process (computed once)."""
    root = Path(__file__).resolve().parent.parent
    commit, dirty = "unknown", None
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True
        ).stdout.strip()
        status = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        dirty = bool(status.strip())
    except (OSError, subprocess.CalledProcessError):
        pass
    digest = hashlib.sha256()
    for folder in ("harness", "implementations"):
        for src in sorted((root / folder).rglob("*.py")):
            digest.update(str(src.relative_to(root)).encode())
            digest.update(src.read_bytes())
    versions = {}
    for pkg in PACKAGES:
        try:
            versions[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            versions[pkg] = None
    return {
        "commit": commit,
        "dirty": dirty,
        "source_digest": digest.hexdigest()[:16],
        "machine": platform.node(),
        "arch": platform.machine(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "packages": versions,
    }


def _clean(value: Any) -> Any:
    """Make NumPy scalars and non-finite floats JSON-safe."""
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, str):
        value = value.item()
    if isinstance(value, float) and value != value:
        return None
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return "inf" if value > 0 else "-inf"
    return value


def append_task(path: Path, task_id: str, records: list[dict[str, Any]]) -> None:
    """Append one task's records atomically enough to survive a kill at any point."""
    k = len(records)
    lines = [
        json.dumps(_clean({**r, "task_id": task_id, "task_lines": k}), sort_keys=True) + "\n"
        for r in records
    ]
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("".join(lines))
        fh.flush()
        os.fsync(fh.fileno())


def load_records(path: Path, repair: bool = False) -> list[dict[str, Any]]:
    """Complete tasks' records. With ``repair`` the file is rewritten without partial tasks."""
    if not path.exists():
        return []
    raw = path.read_text(encoding="utf-8")
    parsed: list[dict[str, Any]] = []
    for line in raw.splitlines(keepends=True):
        if not line.endswith("\n"):
            break  # a line cut short by a kill
        try:
            parsed.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    counts: dict[str, int] = {}
    for r in parsed:
        counts[r.get("task_id", "")] = counts.get(r.get("task_id", ""), 0) + 1
    complete = [r for r in parsed if counts[r.get("task_id", "")] == r.get("task_lines", 1)]
    if repair and len(complete) != len(raw.splitlines()):
        tmp = path.with_suffix(".tmp")
        tmp.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in complete))
        os.replace(tmp, path)
    return complete


def done_tasks(records: Iterable[dict[str, Any]]) -> set[str]:
    return {r["task_id"] for r in records}


def write_json(path: Path, data: Any) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(_clean(data), indent=2, sort_keys=True))
    os.replace(tmp, path)
