"""Gate quality: both error rates of every gate. The false-failure rate of each gate on every
registered algorithm (correct samplers, many seeds), and the catch rate of ``harness verify``
on the planted bugs (``tests/plugins/planted_*.py``); families registered later join with no
edit here."""

from __future__ import annotations

import json
import re
import tempfile
from dataclasses import dataclass
from functools import partial
from glob import glob
from pathlib import Path
from typing import Any

import numpy as np

import harness.experiments.claims as cl
from harness.checks.cases import plan_cases
from harness.declare import Config, param
from harness.display import cell, table
from harness.experiments.framework import Column, Experiment, task
from harness.gates.ecdf_bands import ecdf_band
from harness.registry import build_registry, registry_for
from harness.spec import LEVELS
from harness.tasks import Records, Task
from harness.verify.calibration import RATE_HEADERS, GateRate, gate_rate, gate_rows, rate_row
from harness.verify.config import RunConfig
from harness.verify.runner import NON_STATISTICAL, verify

PLANTED_GLOB = "tests/plugins/planted_*.py"  # relative to the directory the command runs in
PLANTED_PREFIX = "planted:"
IMPL = "numba"
CATCH_BARS = {"quick": 0.90, "full": 0.95}  # the project's bar for the planted suite
OWN = "the harness's own gates"
#: A gate is called calibrated only when the upper end of its rate's 99.9% interval is at most
#: this many times alpha (:func:`calibration_word`).
NARROW = 2.0
CALIBRATED, TOO_FEW, MISCALIBRATED = "calibrated", "too few seeds to tell", "miscalibrated"
CAPTION = (
    "calibrated: the 99.9% Clopper-Pearson interval of the rate holds alpha (for a combined or "
    "bound gate: starts at or below it, conservative by design), the p-values pass a KS test of "
    "uniformity (p >= 0.001; one-sided for combined gates), and the interval is narrow enough to "
    f"say so: its upper end is at most {NARROW:g} alpha. Where only that last part fails: too "
    "few seeds to tell (more seeds narrow the interval); where the others fail: miscalibrated."
)
#: Calibrated gates whose p-value bands are plotted beside every miscalibrated one.
PASSING_BANDS = 4
BAND_CAPTION = (
    "The ECDF of each gate's p-values over the seeds minus the uniform CDF, with its 99.9% "
    "simultaneous band (Säilynoja, Bürkner and Vehtari 2022). A calibrated test stays inside; a "
    "curve above the band means too many small p-values (too many false failures); combined "
    "gates may sit below by design, so only exits above count for them (marked red). Shown: "
    "every miscalibrated gate, then the others nearest to failing."
)
#: What a catch record keeps of each verdict (the report says why an escaped bug escaped).
GATE_FIELDS = ("problem", "gate", "p_value", "adjusted_p", "verdict", "stage", "detectable")
GATE_FIELDS += ("detectable_measure", "detail")


@dataclass(frozen=True, kw_only=True)
class GateQualityConfig(Config):
    experiment = "gate-quality"
    # The quick level's false-failure part is a smoke test: every gate on every algorithm's first
    # five quick cases (seed s on case s mod cases). The rates come from the full level. Five
    # seeds is the least the claims' bootstrap over seeds takes.
    seeds: int = param(low=5, quick=5, full=500, doc="seeds per algorithm")
    n: int = param(
        low=100, quick=5_000, full=20_000, doc="draws or steps per seed (fewer where verify's are)"
    )
    alpha: float = param(0.05, low=0.0, high=1.0, open=True, doc="alpha")
    chunk: int = param(low=1, quick=5, full=25, doc="seeds per task")
    catch_levels: tuple[str, ...] = param(
        choices=LEVELS, quick=("quick",), full=("quick", "full"), doc="planted bugs at levels"
    )
    planted: tuple[str, ...] = param((), empty=True, doc="planted-bug files")


def correct_algorithms() -> list[tuple[str, str]]:
    """(family, algorithm) of every registered algorithm with a Numba implementation."""
    return [(s.family, s.name) for s in build_registry() if IMPL in s.implementations]


def false_failures(
    name: str, first: int, count: int, n: int, alpha: float, impl: str, rng: np.random.Generator
) -> Records:
    """Seeds first .. first + count - 1, seed s on case s mod len(verify's quick cases)."""
    spec = build_registry().get(name)
    cases = [(c.problem, dict(c.params), c.n) for c in plan_cases([spec], "quick")]
    rows = []
    for seed, child in zip(range(first, first + count), rng.spawn(count), strict=True):
        problem, params, case_n = cases[seed % len(cases)]
        for row in gate_rows(spec, impl, problem, params, min(n, case_n), alpha, child):
            rows.append({**row, "seed": seed, "problem": problem, "params": json.dumps(params)})
    head = {"type": "ffr", "family": spec.family, "algorithm": name, "first": first}
    return [{**head, "count": count, "n": n, "alpha": alpha, "rows": rows}]


def planted_bugs(files: tuple[str, ...]) -> list[dict[str, str]]:
    """The planted bugs of the plugin ``files``, read from their ``Bug:`` and ``Caught by:``."""
    out: list[dict[str, str]] = []
    for path in files:
        for spec in registry_for((path,)):
            if not spec.family.startswith(PLANTED_PREFIX) or spec.name in [b["name"] for b in out]:
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


def catch(bug: dict[str, str], level: str, seed: int, rng: np.random.Generator) -> Records:
    """``harness verify`` of the bug: caught when a gate but runs/coverage fails (no ``rng``).
    No stage runs after a statistical failure (``until_failure``): whether it is caught is the
    same, and ``failed_gates`` lists the gates that had failed by then."""
    plugin = str(Path(bug["file"]).resolve())
    config = RunConfig((bug["name"],), ("reference",), level, seed, plugins=(plugin,))
    with tempfile.TemporaryDirectory(prefix="planted-") as tmp:
        done = verify(
            config, Path(tmp) / "run", 1, False, scheduler="inprocess", until_failure=True
        )
    verdicts = done["verdicts"]
    failed = [v for v in verdicts if v["verdict"] == "fail"]
    statistical = [v for v in failed if v["gate"] not in NON_STATISTICAL]
    record = {"type": "catch", **bug, "level": level, "caught": bool(statistical)}
    record["crashed"] = any(v["gate"] == "runs" for v in failed)
    record["failed_gates"] = sorted({v["gate"] for v in statistical})
    record["gates"] = [{k: v.get(k) for k in GATE_FIELDS} for v in verdicts]
    return [record]


def calibration_word(g: GateRate, alpha: float) -> str:
    """What the report calls gate ``g``: "calibrated", "too few seeds to tell" or
    "miscalibrated".

    The rule: ``g.calibrated`` (calibrate's test: the rate's 99.9% Clopper-Pearson interval
    holds alpha, or for a combined or bound gate starts at or below it, and the p-values look
    uniform) false is "miscalibrated": the seeds already show it. Otherwise the gate is
    "calibrated" only when the interval is narrow enough to say so, which is when its upper end
    is at most ``NARROW`` (2) times alpha: the seeds then show that the gate fails correct
    samplers at most twice as often as it promises. A wider interval holds alpha but also rates
    far above it, so it is "too few seeds to tell". At alpha = 0.05 a gate with no failure
    needs 73 seeds, one failing at exactly alpha about 330 (the full level runs 500); the
    quick level's five never suffice.
    """
    if not g.calibrated:
        return MISCALIBRATED
    return CALIBRATED if g.interval[1] <= NARROW * alpha else TOO_FEW


def _gate_rows(records: Records) -> Records:
    return [
        {**row, "family": r["family"], "algorithm": r["algorithm"]}
        for r in records
        if r.get("type") == "ffr"
        for row in r["rows"]
    ]


def rates(records: Records, alpha: float, by: tuple[str, ...]) -> list[tuple[tuple, GateRate]]:
    """One :class:`GateRate` per group of ``by`` (e.g. ("family", "gate")), in sorted order."""
    groups: dict[tuple, Records] = {}
    for row in _gate_rows(records):
        groups.setdefault(tuple(row[k] for k in by), []).append(row)
    return [(key, gate_rate(key[-1], rows, alpha)) for key, rows in sorted(groups.items())]


def escape_reason(r: dict[str, Any]) -> str:
    """Why a planted bug escaped: the expected gates' verdicts with what they could detect."""
    if r["crashed"]:
        return "the sampler raised (a crash is not a catch)"
    expected = [g.strip() for g in r["expected"].split(",") if g.strip()]
    parts = []
    for g in [g for g in r["gates"] if g["gate"] in expected] or r["gates"]:
        p = g.get("adjusted_p") if g.get("adjusted_p") is not None else g.get("p_value")
        p_text = "" if p is None else f" p = {p:.3g},"
        det = g.get("detectable")
        det_text = "" if det is None else f" detectable {det:.3g} ({g['detectable_measure']})"
        parts.append(f"{g['gate']} on {g['problem']} (stage {g['stage']}):{p_text}{det_text}")
    return "; ".join(parts) + ": the bug's effect is below what these gates resolve at this level"


def _pooled(records: Records, alpha: float, kinds: tuple[str, ...]) -> cl.Estimate:
    """Rejections / trials of the gates of ``kinds``, over alpha, bootstrapped over the seeds
    (the gates of one seed see the same draws; seed s of every algorithm makes one unit)."""
    kind = {key: g.kind for key, g in rates(records, alpha, ("family", "gate"))}
    # One complex number per seed: failures + 1j * trials (sums fast in the bootstrap).
    seeds: dict[int, complex] = {}
    for r in _gate_rows(records):
        k = kind[r["family"], r["gate"]]
        if k in kinds and (k == "bound" or r["p_value"] is not None):
            failed = not r["passed"] if k == "bound" else r["p_value"] < alpha
            seeds[r["seed"]] = seeds.get(r["seed"], 0j) + complex(failed, 1)
    if not seeds:
        raise cl.Inconclusive(f"no false-failure records of {'/'.join(kinds)} gates yet")
    ratio = lambda u: (t := sum(u)).real / t.imag / alpha  # noqa: E731
    return cl.bootstrap(list(seeds.values()), ratio, unit="seeds")


def _worst_gate(records: Records, alpha: float) -> cl.Estimate:
    """The largest rejection rate / alpha over (family, gate), simultaneous intervals."""
    gates = [g for _, g in rates(records, alpha, ("family", "gate"))]
    k, n = [g.failed for g in gates], [g.trials for g in gates]
    return cl.worst_proportion(k, n, [1 / alpha] * len(gates), "seeds")


def _caught(records: Records, level: str) -> cl.Estimate:
    bugs = cl.select(records, "catch", level=level)
    return cl.proportion(sum(r["caught"] for r in bugs), len(bugs), "planted bugs")


class GateQuality(Experiment[GateQualityConfig]):
    """every registered algorithm over many seeds (each seed one of the cases `harness verify
    --level quick` runs), each gate's rejection rate at alpha = 0.05 with a 99.9% interval and the
    uniformity of its p-values; then `harness verify` on every planted bug in
    tests/plugins/planted_*.py. quick: 5 seeds (a smoke check; the rates are decided at full), bugs
    at the default level; full: 500 seeds, bugs at both levels. --part false-failures|catch."""

    replicates = ("seeds",)

    paper = "the harness's own gates (no paper)"
    summary = (
        "Both error rates of every gate: false failures on correct samplers, planted bugs caught"
    )
    title = "Gate quality: false failures on correct samplers, catches of planted bugs"
    parts = ("all", "false-failures", "catch")
    timed = False
    record_types = ("catch",)
    columns = (
        Column("bug", "name"),
        Column("family", "family"),
        Column("level", "level"),
        Column("what is wrong", "bug"),
        Column("expected gate", "expected"),
        Column("caught by", lambda r: ", ".join(r["failed_gates"]) if r["caught"] else "escaped"),
        Column("why not", lambda r: "" if r["caught"] else escape_reason(r)),
    )

    def config(self, level: str, seed: int = 0) -> GateQualityConfig:
        return GateQualityConfig.for_level(level, seed, planted=tuple(sorted(glob(PLANTED_GLOB))))

    def plan(self, config: GateQualityConfig, records: Records, part: str) -> list[Task]:
        tasks = []
        for _, name in correct_algorithms() if part in ("all", "false-failures") else ():
            for first in range(0, config.seeds, config.chunk):
                count = min(config.chunk, config.seeds - first)
                args = (name, first, count, config.n, config.alpha, IMPL)
                key, label = f"ffr|{name}|{first}", f"{name} seeds {first}-{first + count - 1}"
                tasks.append(task(config, key, false_failures, *args, label=label))
        for level in config.catch_levels if part in ("all", "catch") else ():
            for bug in planted_bugs(config.planted):
                key, label = f"catch|{level}|{bug['name']}", f"{bug['name']} ({level})"
                tasks.append(task(config, key, catch, bug, level, config.seed, label=label))
        return tasks

    def claims(self, config: GateQualityConfig) -> tuple[cl.Claim, ...]:
        a = config.alpha
        return (
            cl.Claim(
                "ffr-tests",
                OWN,
                f"The rejection-test gates fail correct samplers at rate alpha = {a:g}.",
                "rejection rate / alpha, pooled over the test gates",
                cl.within_factor(1.0, 1.5),  # "at rate alpha": about alpha, within 1.5x
                partial(_pooled, alpha=a, kinds=("test",)),
                fails_if="the pooled rate lies outside [alpha / 1.5, 1.5 alpha]: a miscalibrated "
                "p-value (too liberal or too conservative) moves it, and the seeds are many",
                kind="harness",
            ),
            cl.Claim(
                "ffr-conservative",
                OWN,
                "The combined and bound gates fail correct samplers at most at rate alpha.",
                "rejection rate / alpha, pooled over the combined and bound gates",
                cl.below(1.0),  # "at most alpha"
                partial(_pooled, alpha=a, kinds=("combined", "bound")),
                fails_if="the pooled rate lies above alpha: a combined or bound gate whose "
                "correction is too weak rejects correct samplers more often",
                kind="harness",
            ),
            cl.Claim(
                "ffr-every-gate",
                OWN,
                "No gate fails correct samplers at a rate above its alpha.",
                "largest rejection rate / alpha over (family, gate)",
                cl.below(1.5),  # consistent with alpha: not above it by more than 1.5x
                partial(_worst_gate, alpha=a),
                fails_if="one (family, gate) rejects correct samplers above 1.5 alpha: any single "
                "miscalibrated gate does",
                kind="harness",
            ),
            *(
                cl.Claim(
                    f"catch-{level}",
                    OWN,
                    f"`harness verify --level {level}` catches the planted bugs.",
                    "share of the planted bugs caught",
                    cl.above(CATCH_BARS[level], f"above {CATCH_BARS[level]:g} (the project's bar)"),
                    partial(_caught, level=level),
                    fails_if="the share caught lies below the bar: a gate too weak at this level "
                    "misses planted bugs",
                    kind="harness",
                )
                for level in config.catch_levels
            ),
        )

    def figures(self, config: GateQualityConfig, records: Records) -> list[dict[str, Any]]:
        """P-value ECDF bands per (family, gate): the miscalibrated ones, then a few others."""
        p_values: dict[tuple, list[float]] = {}
        for row in _gate_rows(records):
            if row.get("p_value") is not None:
                p_values.setdefault((row["family"], row["gate"]), []).append(row["p_value"])
        judged = [
            (key, g)
            for key, g in rates(records, config.alpha, ("family", "gate"))
            if g.kind != "bound" and len(p_values.get(key, ())) >= 2
        ]
        off = [kg for kg in judged if not kg[1].calibrated]
        near = sorted((kg for kg in judged if kg[1].calibrated), key=lambda kg: kg[1].uniformity_p)
        from harness.figures import ecdf_band_svg  # matplotlib: only where a page is drawn

        figures = []
        for (family, gate), g in [*off, *near[:PASSING_BANDS]]:
            band = ecdf_band(p_values[family, gate], gate)
            side = "two-sided" if g.kind == "test" else "above"
            verdict = "pass" if g.calibrated else "fail"
            word = calibration_word(g, config.alpha)
            title = f"{family}: {gate} ({g.kind}), {g.trials} seeds: {word}"
            svg = ecdf_band_svg(band, f"{gate}: {word}", "p-value", side)
            figures.append({"title": title, "svg": svg, "cls": f"ecdf-band {verdict}"})
        if not figures:
            return []
        return [
            {
                "title": "P-values of the gates over seeds",
                "caption": BAND_CAPTION,
                "figures": figures,
            }
        ]

    def tables(self, config: GateQualityConfig, records: Records) -> list[dict[str, Any]]:
        out = []
        for title, by in (("family", ("family",)), ("algorithm", ("family", "algorithm"))):
            rows = []
            for key, g in rates(records, config.alpha, (*by, "gate")):
                *text, _ = rate_row(g.to_dict())
                word = calibration_word(g, config.alpha)
                cls = {CALIBRATED: "pass", MISCALIBRATED: "fail"}.get(word, "")
                rows.append([*map(cell, (*key[:-1], *text)), cell(word, cls)])
            if rows:
                headers = [*by, *RATE_HEADERS[:-1], "calibrated"]
                out.append(table(f"False failures by {title} and gate", headers, rows, CAPTION))
        return out
