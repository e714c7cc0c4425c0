"""The tasks of the gate-quality measurement: seeds of a correct sampler, and verify runs of
planted bugs. Each returns its records; neither writes anything."""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from harness.calibration import gate_rows
from harness.gates.multiple import Escalation
from harness.registry import build_registry, registry_for
from harness.runner import RunConfig, verify
from harness.verification import plan_cases

PLANTED_PREFIX = "planted:"


def ffr_cases(algorithm: str) -> list[tuple[str, dict[str, Any], int]]:
    """(problem, params, draws) of every case ``harness verify --level quick`` runs for
    ``algorithm``."""
    spec = build_registry().get(algorithm)
    return [(c.problem, dict(c.params), c.n) for c in plan_cases([spec], "quick")]


def correct_algorithms() -> list[tuple[str, str]]:
    """(family, algorithm) of every registered algorithm with a Numba implementation."""
    return [(s.family, s.name) for s in build_registry() if "numba" in s.implementations]


def false_failures(
    algorithm: str,
    first: int,
    count: int,
    n: int,
    alpha: float,
    impl: str,
    rng: np.random.Generator,
) -> list[dict[str, Any]]:
    """Seeds ``first .. first + count - 1`` of ``algorithm``: seed s runs the case
    s mod (number of cases), on its own child stream of ``rng``, with ``n`` draws or verify's
    own size for the case where that is smaller (a problem that sets fewer draws)."""
    spec = build_registry().get(algorithm)
    cases = ffr_cases(algorithm)
    rows = []
    for seed, child in zip(range(first, first + count), rng.spawn(count), strict=True):
        problem, params, case_n = cases[seed % len(cases)]
        for row in gate_rows(spec, impl, problem, params, min(n, case_n), alpha, child):
            rows.append({**row, "seed": seed, "problem": problem, "params": json.dumps(params)})
    return [
        {
            "type": "ffr",
            "family": spec.family,
            "algorithm": algorithm,
            "first": first,
            "count": count,
            "n": n,
            "alpha": alpha,
            "rows": rows,
        }
    ]


def planted_bugs(files: tuple[str, ...]) -> list[dict[str, str]]:
    """Every planted bug the plugin ``files`` register: name, file, family it imitates, the bug
    and the gates expected to catch it (from its docstring's ``Bug:`` and ``Caught by:``)."""
    out = []
    for path in files:
        for spec in registry_for((path,)):
            if not spec.family.startswith(PLANTED_PREFIX):
                continue
            if any(b["name"] == spec.name for b in out):
                continue
            bug = re.search(r"Bug:\s*(.+?)(?:\n\s*\n|\n\s*Caught by:|$)", spec.summary, re.S)
            expected = re.search(r"Caught by:\s*(.+)", spec.summary)
            out.append(
                {
                    "name": spec.name,
                    "file": path,
                    "family": spec.family[len(PLANTED_PREFIX) :],
                    "bug": " ".join(bug.group(1).split()) if bug else spec.summary.strip(),
                    "expected": expected.group(1).strip() if expected else "",
                }
            )
    return out


def catch(
    bug: dict[str, str], level: str, seed: int, rng: np.random.Generator
) -> list[dict[str, Any]]:
    """``harness verify --plugin FILE --algorithm BUG --impl reference --level LEVEL`` in a
    scratch directory: caught when a gate other than "runs"/"coverage" fails."""
    del rng  # verify derives every stream from its own --seed
    config = RunConfig(
        algorithms=(bug["name"],),
        impls=("reference",),
        level=level,
        seed=seed,
        plugins=(str(Path(bug["file"]).resolve()),),
        escalation=Escalation(),
    )
    with tempfile.TemporaryDirectory(prefix="planted-") as tmp:
        summary = verify(
            config, Path(tmp) / "run", workers=1, progress=False, scheduler="inprocess"
        )
    verdicts = summary["verdicts"]
    failed = [v for v in verdicts if v["verdict"] == "fail"]
    statistical = [v for v in failed if v["gate"] not in ("runs", "coverage")]
    return [
        {
            "type": "catch",
            **bug,
            "level": level,
            "caught": bool(statistical),
            "crashed": any(v["gate"] == "runs" for v in failed),
            "failed_gates": sorted({v["gate"] for v in statistical}),
            "gates": [
                {
                    k: v.get(k)
                    for k in (
                        "problem",
                        "gate",
                        "p_value",
                        "adjusted_p",
                        "verdict",
                        "stage",
                        "detectable",
                        "detectable_measure",
                        "detail",
                    )
                }
                for v in verdicts
            ],
        }
    ]
