"""Timings for the report: asv results from any number of machines, and pytest-benchmark JSON.

asv (format version 2) keeps one folder per machine, ``RESULTS/<machine>/machine.json``, and one
file per commit and environment, ``RESULTS/<machine>/<commit>-<env>.json``, whose ``results`` map
each benchmark to a row laid out by ``result_columns``: ``result`` and ``stats_q_25`` /
``stats_q_75`` hold one value per parameter combination, in ``itertools.product`` order of
``params``. Skipped or failed combinations are ``null`` (or NaN).

pytest-benchmark writes ``{"machine_info", "commit_info", "benchmarks": [...]}``; each benchmark
has ``group``, ``params`` and ``stats`` (``median``, ``q1``, ``q3``, ``rounds`` ...).
"""

from __future__ import annotations

import itertools
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ASV_MACHINE_FILE = "machine.json"


@dataclass(frozen=True)
class AsvPoint:
    """One benchmark at one parameter combination, on one machine, at one commit."""

    machine: str
    commit: str
    date: int
    benchmark: str
    label: str
    kind: str
    unit: str
    value: float
    q25: float | None
    q75: float | None


@dataclass(frozen=True)
class AsvResults:
    """Every asv point found under one or more results folders, and each machine's description."""

    points: tuple[AsvPoint, ...]
    machines: dict[str, dict[str, Any]] = field(default_factory=dict)
    sources: tuple[str, ...] = ()
    failed: int = 0


@dataclass(frozen=True)
class BenchRow:
    """One pytest-benchmark measurement."""

    source: str
    group: str
    name: str
    params: dict[str, Any]
    median: float
    q1: float
    q3: float
    rounds: int


@dataclass(frozen=True)
class BenchFile:
    source: str
    rows: tuple[BenchRow, ...]
    machine: dict[str, Any]
    commit: dict[str, Any]
    datetime: str


def is_asv_results(path: Path) -> bool:
    """A folder with at least one ``<machine>/machine.json`` (or a machine folder itself)."""
    path = Path(path)
    if not path.is_dir():
        return False
    if (path / ASV_MACHINE_FILE).is_file():
        return True
    return any((p / ASV_MACHINE_FILE).is_file() for p in path.iterdir() if p.is_dir())


def json_file(path: Path) -> Any:
    """The content of a ``.json`` file, or None where ``path`` is none or not readable JSON: how
    the report tells its inputs apart by their content."""
    path = Path(path)
    if not (path.is_file() and path.suffix == ".json"):
        return None
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def is_pytest_benchmark(path: Path) -> bool:
    data = json_file(path)
    return isinstance(data, dict) and isinstance(data.get("benchmarks"), list)


def _param_label(values: tuple[str, ...]) -> str:
    return ", ".join(str(v).strip("'\"") for v in values)


def _finite(x: Any) -> float | None:
    if isinstance(x, int | float) and math.isfinite(x):
        return float(x)
    return None


def _benchmark_meta(root: Path) -> dict[str, dict[str, Any]]:
    path = root / "benchmarks.json"
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text())
    except ValueError:
        return {}
    return {k: v for k, v in data.items() if isinstance(v, dict)}


def _kind(name: str, meta: dict[str, Any]) -> str:
    kind = meta.get("type")
    if kind:
        return str(kind)
    leaf = name.rsplit(".", 1)[-1]
    return leaf.split("_", 1)[0] if "_" in leaf else "time"


def _points_of_file(path: Path, machine: str, meta: dict[str, dict[str, Any]]) -> list[AsvPoint]:
    data = json.loads(path.read_text())
    columns = data.get("result_columns", [])
    if not columns or "results" not in data:
        raise ValueError(f"{str(path)!r} is not an asv results file (format version 2)")
    col = {c: i for i, c in enumerate(columns)}
    points: list[AsvPoint] = []
    for name, row in data["results"].items():

        def column(key: str, row: list[Any] = row) -> Any:
            i = col.get(key)
            return row[i] if i is not None and i < len(row) else None

        result = column("result")
        params = column("params") or []
        if result is None:
            continue
        combos = list(itertools.product(*params)) if params else [()]
        values = result if isinstance(result, list) else [result]
        q25 = column("stats_q_25") or [None] * len(values)
        q75 = column("stats_q_75") or [None] * len(values)
        info = meta.get(name, {})
        for combo, v, lo, hi in zip(combos, values, q25, q75, strict=False):
            value = _finite(v)
            if value is None:
                continue
            label = name if not combo else f"{name}({_param_label(combo)})"
            points.append(
                AsvPoint(
                    machine=machine,
                    commit=str(data.get("commit_hash", "?")),
                    date=int(data.get("date") or 0),
                    benchmark=name,
                    label=label,
                    kind=_kind(name, info),
                    unit=str(
                        info.get(
                            "unit", "seconds" if name.split(".")[-1].startswith("time_") else ""
                        )
                    ),
                    value=value,
                    q25=_finite(lo),
                    q75=_finite(hi),
                )
            )
    return points


def load_asv(paths: list[Path]) -> AsvResults:
    """All points under the given results folders (``.asv/results`` or copies from machines)."""
    points: list[AsvPoint] = []
    machines: dict[str, dict[str, Any]] = {}
    failed = 0
    for root in paths:
        root = Path(root)
        if not is_asv_results(root):
            raise ValueError(f"asv results folder {str(root)!r} has no <machine>/machine.json")
        single = (root / ASV_MACHINE_FILE).is_file()
        dirs = [root] if single else sorted(p for p in root.iterdir() if p.is_dir())
        meta = _benchmark_meta(root.parent if single else root)
        for d in dirs:
            if not (d / ASV_MACHINE_FILE).is_file():
                continue
            info = json.loads((d / ASV_MACHINE_FILE).read_text())
            machines[d.name] = {k: v for k, v in info.items() if k != "version"}
            for f in sorted(d.glob("*.json")):
                if f.name == ASV_MACHINE_FILE:
                    continue
                try:
                    points.extend(_points_of_file(f, d.name, meta))
                except (ValueError, KeyError, TypeError):
                    failed += 1
    return AsvResults(tuple(points), machines, tuple(str(p) for p in paths), failed)


def load_pytest_benchmark(path: Path) -> BenchFile:
    path = Path(path)
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as err:
        raise ValueError(
            f"pytest-benchmark file {str(path)!r} is not readable JSON: {err}"
        ) from err
    if not isinstance(data, dict) or not isinstance(data.get("benchmarks"), list):
        raise ValueError(
            f"{str(path)!r} has no 'benchmarks' list (pytest-benchmark --benchmark-json)"
        )
    rows = []
    for b in data["benchmarks"]:
        stats = b.get("stats", {})
        median = _finite(stats.get("median"))
        if median is None:
            continue
        rows.append(
            BenchRow(
                source=str(path),
                group=str(b.get("group") or ""),
                name=str(b.get("name", "?")),
                params=dict(b.get("params") or {}),
                median=median,
                q1=_finite(stats.get("q1")) or median,
                q3=_finite(stats.get("q3")) or median,
                rounds=int(stats.get("rounds", 0)),
            )
        )
    return BenchFile(
        str(path),
        tuple(rows),
        dict(data.get("machine_info") or {}),
        dict(data.get("commit_info") or {}),
        str(data.get("datetime", "")),
    )


def _algorithm_and_impl(row: BenchRow) -> tuple[str, str] | None:
    algorithm = row.params.get("algorithm") or row.group or None
    impl = row.params.get("impl")
    if impl is None:
        for candidate in ("reference", "numba"):
            if candidate in row.name:
                impl = candidate
    if not algorithm or impl not in ("reference", "numba"):
        return None
    return str(algorithm), str(impl)


@dataclass(frozen=True)
class Speedup:
    """Reference / Numba time of one algorithm (and problem), measured in one process."""

    algorithm: str
    problem: str
    reference_median: float
    numba_median: float
    speedup: float
    low: float
    high: float
    source: str


def speedups(files: list[BenchFile]) -> list[Speedup]:
    """Median speedup with an interquartile range: [q1_ref / q3_numba, q3_ref / q1_numba]."""
    out = []
    for f in files:
        pairs: dict[tuple[str, str], dict[str, BenchRow]] = {}
        for row in f.rows:
            key = _algorithm_and_impl(row)
            if key is None:
                continue
            problem = str(row.params.get("problem") or row.params.get("size") or "")
            pairs.setdefault((key[0], problem), {})[key[1]] = row
        for (algorithm, problem), both in sorted(pairs.items()):
            if set(both) != {"reference", "numba"}:
                continue
            ref, fast = both["reference"], both["numba"]
            out.append(
                Speedup(
                    algorithm=algorithm,
                    problem=problem,
                    reference_median=ref.median,
                    numba_median=fast.median,
                    speedup=ref.median / fast.median,
                    low=ref.q1 / fast.q3,
                    high=ref.q3 / fast.q1,
                    source=f.source,
                )
            )
    return out
