"""The one record store: a run directory holding a manifest and JSON Lines records.

``harness verify`` and every ``harness reproduce`` write through this module. A run directory
holds a manifest (``run.json`` for a verification, ``experiment.json`` for an experiment) with
the settings and the provenance of the code that made it, and ``records.jsonl``.

Each task's records are appended in one write followed by fsync, each line carrying the task's
key (``task_id``) and how many lines the task wrote (``task_lines``). A kill can therefore only
leave a torn last task: on load it is recognised and dropped (and cut from the file by
:func:`repair`), and the task simply runs again. A task key seen twice keeps its first complete
copy, so a record is never counted twice.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import math
import os
import platform
import subprocess
import tempfile
import time
import warnings
from collections.abc import Iterable, Mapping
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

RECORDS = "records.jsonl"
RUN_MANIFEST = "run.json"
EXPERIMENT_MANIFEST = "experiment.json"
PACKAGES = (
    "sampler-harness",
    "numpy",
    "scipy",
    "numba",
    "statsmodels",
    "arviz-stats",
    "distributed",
)


@lru_cache(maxsize=1)
def provenance() -> dict[str, Any]:
    """Commit, code digest, machine and package versions of this process (computed once)."""
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


def clean(value: Any) -> Any:
    """Make NumPy scalars, tuples and non-finite floats JSON-safe."""
    if isinstance(value, dict):
        return {k: clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clean(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, str):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, float) and math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return value


def write_json(path: Path, data: Any) -> None:
    """Write ``data`` as JSON atomically (a temporary file, then a rename)."""
    path = Path(path)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(clean(data), indent=2, sort_keys=True), encoding="utf-8")
    os.replace(tmp, path)


def read_manifest(out: Path, name: str) -> dict[str, Any]:
    path = Path(out) / name
    if not path.is_file():
        raise ValueError(f"{str(out)!r} holds no {name}; valid: a directory this harness wrote")
    return json.loads(path.read_text(encoding="utf-8"))


def _first_difference(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    for key in sorted(set(old) | set(new)):
        if old.get(key) != new.get(key):
            return key
    return "?"


def open_run(
    out: Path, manifest: str, settings: Mapping[str, Any], move_stale: bool = False
) -> Path:
    """Create ``out`` for a run with ``settings``, or reopen one made by the same settings and
    code; return its records path, its torn last task (if any) cut.

    A directory made with other settings or other code (a digest of the harness and
    implementation sources, so an uncommitted edit counts) is refused, naming the first
    difference; with ``move_stale`` it is renamed to ``OUT.<time>`` (nothing is deleted) and a
    fresh run starts. A non-empty directory this harness did not make is always refused.
    """
    out = Path(out)
    settings = clean(dict(settings))
    check_out(out)
    path = out / manifest
    if path.is_file():
        old = json.loads(path.read_text(encoding="utf-8"))
        why = None
        if old.get("settings") != settings:
            key = _first_difference(old.get("settings") or {}, settings)
            why = f"other settings (first difference: {key!r})"
        elif old.get("provenance", {}).get("source_digest") != provenance()["source_digest"]:
            why = "other code (the sources changed since)"
        if why is None:
            records = out / RECORDS
            repair(records)
            return records
        if not move_stale:
            raise ValueError(
                f"--out {str(out)!r} holds a run with {why}; resume it with the same options "
                "and code, choose another --out, or pass --move-stale to move it aside "
                "(nothing was changed)"
            )
        out.rename(out.with_name(f"{out.name}.{time.strftime('%Y%m%dT%H%M%S')}"))
    elif out.is_dir() and any(out.iterdir()):
        raise ValueError(
            f"--out {str(out)!r} is a non-empty directory without {manifest}; "
            "valid: a new or empty directory, or one this command made"
        )
    try:
        out.mkdir(parents=True, exist_ok=True)
        write_json(path, {"settings": settings, "provenance": provenance()})
    except OSError as exc:  # raced with check_out, or a full disk: still one line
        raise ValueError(
            f"--out {out}: cannot create a run directory there ({_reason(exc)})"
        ) from None
    return out / RECORDS


def check_out(out: Path, option: str = "--out") -> None:
    """Refuse, before any work, a run directory that cannot be created or written to:
    ValueError naming ``option``. Nothing is left behind."""
    out = Path(out)
    if _is_file(out):
        raise ValueError(f"{option} {str(out)!r} is a file; valid: a directory (new or resumable)")
    check_writable(out, option, "create a run directory")


def check_output_file(output: Path, option: str, what: str) -> None:
    """Refuse, before any work, an output file that cannot be written (its folder cannot be
    made or written to, or it is a directory): ValueError naming ``option`` and saying that
    ``what`` (e.g. "write the report") cannot be done there."""
    output = Path(output)
    is_dir = False
    with contextlib.suppress(OSError):  # unsearchable: check_writable names the reason
        is_dir = output.is_dir()
    if is_dir:
        raise ValueError(f"{option} {output}: is a directory; valid: a file path")
    check_writable(output.parent, option, what, shown=output)


def check_writable(folder: Path, option: str, what: str, shown: Path | None = None) -> None:
    """Create and remove a probe file in ``folder``, or in its nearest existing ancestor when
    it does not exist yet (where its mkdir would need to write). The probe is the only honest
    test: ``os.access`` says yes to root on a read-only mount and in /proc."""
    shown = folder if shown is None else shown
    try:
        probe = Path(folder)
        while not probe.exists() and probe != probe.parent:
            probe = probe.parent
        if not probe.is_dir():
            raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(probe))
        fd, name = tempfile.mkstemp(prefix=".harness-probe-", dir=probe)
        os.close(fd)
        os.unlink(name)
    except OSError as exc:
        raise ValueError(f"{option} {shown}: cannot {what} there ({_reason(exc)})") from None


def _is_file(path: Path) -> bool:
    try:
        return path.exists() and not path.is_dir()
    except OSError:  # e.g. a folder above it cannot be searched: check_writable says so
        return False


def _reason(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def append_task(path: Path, task_id: str, records: list[dict[str, Any]]) -> None:
    """Append one task's records in one write, then fsync: a kill leaves at most a torn task."""
    if not records:
        raise ValueError(f"task {task_id!r} returned no records; valid: at least one record")
    k = len(records)
    lines = [
        json.dumps(clean({**r, "task_id": task_id, "task_lines": k}), sort_keys=True) + "\n"
        for r in records
    ]
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("".join(lines))
        fh.flush()
        os.fsync(fh.fileno())


class RecordsRepaired(UserWarning):
    """Lines of a records file were torn, unreadable or repeated and are not used."""


def _complete_tasks(raw: str) -> tuple[list[dict[str, Any]], int]:
    """The records of complete tasks, first copy per task; and how many lines were dropped."""
    parsed: list[dict[str, Any]] = []
    lines = raw.splitlines(keepends=True)
    dropped = 0
    for k, line in enumerate(lines):
        if not line.endswith("\n"):
            dropped += len(lines) - k
            break  # cut short by a kill
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            dropped += 1
            continue
        if isinstance(record, dict):
            parsed.append(record)
        else:
            dropped += 1
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    i = 0
    while i < len(parsed):
        # One task's lines are consecutive (one write); a group shorter than it says is torn.
        tid = parsed[i].get("task_id", parsed[i].get("key"))
        want = int(parsed[i].get("task_lines", 1))
        group = [parsed[i]]
        while (
            len(group) < want
            and i + len(group) < len(parsed)
            and parsed[i + len(group)].get("task_id") == tid
        ):
            group.append(parsed[i + len(group)])
        i += len(group)
        if tid is None or len(group) != want or tid in seen:
            dropped += len(group)
            continue
        seen.add(tid)
        out.extend(group)
    return out, dropped


def load_records(path: Path) -> list[dict[str, Any]]:
    """The records of every complete task in ``path`` (none if it does not exist)."""
    path = Path(path)
    if not path.exists():
        return []
    records, dropped = _complete_tasks(path.read_text(encoding="utf-8"))
    _warn(path, dropped, "not used")
    return records


def _warn(path: Path, dropped: int, what: str) -> None:
    if dropped:
        warnings.warn(
            f"{path}: {dropped} torn, unreadable or repeated line(s) {what}; their tasks run "
            "again on the next resume",
            RecordsRepaired,
            stacklevel=3,
        )


def repair(path: Path) -> None:
    """Rewrite ``path`` without torn, unreadable or repeated tasks, so appends start clean."""
    path = Path(path)
    if not path.exists():
        return
    records, dropped = _complete_tasks(path.read_text(encoding="utf-8"))
    if not dropped:
        return
    _warn(path, dropped, "dropped")
    tmp = path.with_suffix(".tmp")
    tmp.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in records))
    os.replace(tmp, path)


def done_tasks(records: Iterable[dict[str, Any]]) -> set[str]:
    """The keys of the tasks whose records are on disk."""
    return {r.get("task_id", r.get("key")) for r in records}


#: A run directory's wall times, one entry per call that ran its tasks.
WALL = "wall.json"


def recorded_wall(out: Path) -> dict[str, Any] | None:
    """The wall time of the calls that ran this directory's tasks (None where not recorded)."""
    path = Path(out) / WALL
    if not path.is_file():
        return None
    calls = json.loads(path.read_text(encoding="utf-8"))
    return {
        "wall_s": sum(float(c["wall_s"]) for c in calls),
        "invocations": len(calls),
        "tasks": sum(int(c["tasks"]) for c in calls),
    }
