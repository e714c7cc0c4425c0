"""The verification run: its tasks and seeds on the engine, and the run's verdicts.

A :class:`CaseRun` is (algorithm x implementation x problem x parameters x stage). Its seed is
spawned from the run's ``SeedSequence`` by :meth:`harness.tasks.SeedKey.from_crc32` (CRC-32 of
the case key, then the stage). The key leaves out the implementation on purpose, so the
reference and the Numba version of a case draw from the same stream and must agree bit for bit.
Each run is a pure function of its inputs and seed, run as a :class:`harness.tasks.Task` on any
backend; its records are appended as soon as it finishes (:mod:`harness.store`), and a resumed
run skips the runs already on disk.
"""

from __future__ import annotations

import hashlib
import io
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from harness.checks.agreement import agreement
from harness.checks.cases import Case, gates_for, plan_cases
from harness.checks.output_contract import contract_result, output_breach, raised_text
from harness.checks.reference_modes import (
    prefix_verdict,
    reference_run,
)
from harness.checks.seed_contract import seed_determinism
from harness.devices import unavailable
from harness.engine import BUDGETS, Backend, backend_for, run_tasks
from harness.gates.device_agreement import device_agreement
from harness.gates.multiple import holm
from harness.gates.result import GateContext, GateResult
from harness.registry import Registry, build_registry, registry_for
from harness.spec import rerun_for, sample
from harness.store import (
    RECORDS,
    RUN_MANIFEST,
    append_task,
    done_tasks,
    load_records,
    open_run,
    provenance,
    write_json,
)
from harness.tasks import SeedKey, Task
from harness.verify.config import RunConfig

SAMPLES = "samples"
SUMMARY = "summary.json"

#: Gates whose failure says the sampler did not run or was not checked, not that it is wrong.
NON_STATISTICAL = ("runs", "coverage")


@dataclass(frozen=True)
class CaseRun:
    """One run of a case: ``n`` draws of implementation ``impl`` at escalation ``stage``, judged
    at ``alpha`` (its share of the stage's); ``prefix``: a reference checked against its Numba
    twin on the first draws only; ``stream``: a reference whose whole stream is compared with
    its twin's, with no gates of its own (:mod:`harness.checks.reference_modes`). The engine runs it
    as a :class:`harness.tasks.Task`."""

    case: Case
    impl: str
    stage: int
    n: int
    seed: int
    alpha: float
    plugins: tuple[str, ...]
    samples_dir: str
    prefix: bool = False
    stream: bool = False

    @property
    def id(self) -> str:
        return f"{self.case.key}|{self.impl}|stage{self.stage}"

    @property
    def seed_key(self) -> SeedKey:
        return SeedKey.from_crc32(self.seed, self.case.key, self.stage)


def validate_config(config: RunConfig) -> list:
    """Check the whole configuration before any work; return the selected specs."""
    return _checked(config)[1]


def _checked(config: RunConfig) -> tuple[Registry, list]:
    """The registry of ``config``'s plugins and the selected specs (see validate_config)."""
    for impl in config.impls:
        if (reason := unavailable(impl)) is not None:
            raise ValueError(f"implementation {impl!r} cannot run on this machine: {reason}")
    registry = build_registry(config.plugins)
    names = config.algorithms or tuple(
        s.name for s in registry if any(i in s.implementations for i in config.impls)
    )
    specs = [registry.get(name) for name in names]
    for spec in specs:
        if not any(impl in spec.implementations for impl in config.impls):
            raise ValueError(
                f"algorithm {spec.name!r} has none of the implementations {list(config.impls)}; "
                f"it has {list(spec.implementations)}"
            )
    return registry, specs


def plan(config: RunConfig, registry: Registry, specs: list) -> list[Case]:
    """The run's cases, on the catalog's problems and the plugins'. A plugin problem used here
    is built (and its target checked) now, so a bad one fails before any work."""
    cases = plan_cases(specs, config.level, registry.problems)
    if config.problems:
        fitting = sorted({c.problem for c in cases})
        unknown = [p for p in config.problems if p not in fitting]
        if unknown:
            raise ValueError(
                f"--problem {unknown[0]!r} is invalid for {', '.join(s.name for s in specs)} at "
                f"level {config.level}; valid: {', '.join(fitting)}"
            )
        cases = [c for c in cases if c.problem in config.problems]
    own = {p.name for p in registry.plugin_problems()}
    for name in dict.fromkeys(c.problem for c in cases if c.problem in own):
        registry.build_target(name)
    return cases


def _digest(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _sample_path(samples_dir: str, task_id: str) -> Path:
    return Path(samples_dir) / (hashlib.sha256(task_id.encode()).hexdigest()[:20] + ".npz")


def _base_record(case: Case, impl: str, stage: int, seed: SeedKey, spec=None) -> dict[str, Any]:
    """The fields every record of a task carries: what ran, with which seed, where."""
    return {
        "type": "gate",
        "algorithm": case.algorithm,
        "family": getattr(spec, "family", None),
        "guarantee": getattr(spec, "guarantee", None),
        "paper": getattr(spec, "paper", None),
        "impl": impl,
        "problem": case.problem,
        "case": case.key,
        "params": dict(case.params),
        "stage": stage,
        "seed": seed.to_dict(),
        **provenance(),
    }


def _not_verified(task: CaseRun, gate: str, detail: str) -> GateResult:
    """A verdict of failure without a statistic: the sampler raised ("runs"), a worker died,
    or no gate applies to it yet ("coverage"). Never a silent pass."""
    return GateResult.of_bound(gate, 0.0, False, task.n, None, "-", task.alpha, detail=detail)


#: The field of a task's first record that carries its samples (an .npz file's bytes) from the
#: worker to the process that writes the run; it is saved to OUT/samples and never recorded.
SAMPLE_FIELD = "_samples_npz"


def execute(task: CaseRun, rng: np.random.Generator) -> list[dict[str, Any]]:
    """Run one task and return its records (one per gate). Runs wherever the engine puts it;
    it writes nothing: its samples travel back inside the first record."""
    registry = registry_for(task.plugins)
    spec = registry.get(task.case.algorithm)
    target = registry.build_target(task.case.problem)
    base = _base_record(task.case, task.impl, task.stage, task.seed_key, spec)
    if task.prefix:
        rngs = (rng, task.seed_key.generator())
        fail = lambda detail: _not_verified(task, "runs", detail)  # noqa: E731
        got, evals, wall = prefix_verdict(
            spec, target, task.n, task.case.params, rngs, task.alpha, fail
        )
        per_draw = None if evals is None else evals / task.n
        return [
            {**base, "wall_time": wall, "evals": evals, "evals_per_draw": per_draw, **got.to_dict()}
        ]
    start = time.perf_counter()
    try:
        draws = sample(spec, task.impl, target, task.n, rng, **task.case.params)
    except Exception as exc:  # a broken sampler is a failed verdict, not a crashed run
        failed = _not_verified(task, "runs", raised_text(exc))
        return [
            {**base, "wall_time": time.perf_counter() - start, "evals": None, **failed.to_dict()}
        ]
    wall = time.perf_counter() - start
    # The output contract before any statistic: a breach is the task's one verdict.
    contract = contract_result(output_breach(target, draws, task.n), task.n, task.alpha)
    if not contract.passed:
        return [{**base, "wall_time": wall, "evals": None, **contract.to_dict()}]
    state = rng.bit_generator.state
    buffer = io.BytesIO()
    np.savez_compressed(
        buffer,
        values=np.asarray(draws.values),
        evals=np.int64(draws.evals),
        rng_state=np.array(json.dumps(state, sort_keys=True, default=str)),
        **{f"extra_{k}": np.asarray(v) for k, v in draws.extras.items()},
    )
    base.update(
        wall_time=wall,
        evals=int(draws.evals),
        evals_per_draw=draws.evals / task.n,
        values_digest=hashlib.sha256(np.ascontiguousarray(draws.values).tobytes()).hexdigest()[:16],
        rng_digest=_digest(state),
    )
    rerun = rerun_for(spec, task.impl, task.case.params)
    gates = [contract, *_seed_contract(task, spec, target, rerun)]
    try:  # a stream-mode reference is judged by its agreement with its twin alone
        if not task.stream:
            context = GateContext(rerun, rng)
            gates += gates_for(spec, target, draws, task.alpha, task.case.params, context)
    except NotImplementedError as exc:
        gates.append(_not_verified(task, "coverage", str(exc)))
    records = [{**base, **g.to_dict()} for g in gates]
    records[0][SAMPLE_FIELD] = buffer.getvalue()
    return records


def _seed_contract(task: CaseRun, spec: Any, target: Any, rerun: Any) -> list[GateResult]:
    """The seed contract on the first stage (:mod:`harness.checks.seed_contract`); device builds are
    left out: they agree with Numba within summation order, not bit for bit."""
    if task.stage != 0 or task.impl == "cuda":
        return []
    splits = spec.splits(task.case.params)
    call = lambda m, g: rerun(target, m, g)  # noqa: E731
    return [seed_determinism(call, target, task.seed_key, task.n, splits, task.alpha)]


def _crashed(engine_task: Task, error: str) -> list[dict[str, Any]]:
    """The records of a task whose worker raised or died: a failed "runs" verdict."""
    task: CaseRun = engine_task.inputs[0]
    # The error's first line (type and message): a worker's traceback tail says nothing to a user.
    failed = _not_verified(task, "runs", (error.strip().splitlines() or ["?"])[0][:500])
    base = _base_record(task.case, task.impl, task.stage, task.seed_key)
    return [{**base, **failed.to_dict()}]


def _save_samples(engine_task: Task, records: list[dict[str, Any]]) -> list[dict]:
    """Write a task's samples to OUT/samples before its records land, then drop them."""
    task: CaseRun = engine_task.inputs[0]
    payload = records[0].pop(SAMPLE_FIELD, None) if records else None
    if payload is not None:
        path = _sample_path(task.samples_dir, task.id)
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(payload)
        tmp.replace(path)
    return records


def load_sample(samples_dir: str, task_id: str) -> dict[str, Any] | None:
    path = _sample_path(samples_dir, task_id)
    if not path.exists():
        return None
    with np.load(path) as data:
        return {
            "values": data["values"],
            "evals": int(data["evals"]),
            "rng_state": str(data["rng_state"]),
            "extras": {k[len("extra_") :]: data[k] for k in data.files if k.startswith("extra_")},
        }


#: The pairs of keys compared under the same seed: the reference against Numba bit for bit
#: (or within the spec's Agreement), Numba against the device build within summation order.
AGREEMENT_PAIRS = (("reference", "numba"), ("numba", "cuda"))


def _agreement_records(
    config: RunConfig, case: Case, stage: int, samples_dir: str, specs: dict, registry: Registry
) -> list[dict[str, Any]] | None:
    spec = specs[case.algorithm]
    records = []
    for pair in AGREEMENT_PAIRS:
        if not all(i in config.impls and i in spec.implementations for i in pair):
            continue
        loaded = []
        for impl in pair:
            tid = CaseRun(case, impl, stage, 0, config.seed, 0.0, config.plugins, samples_dir).id
            if (got := load_sample(samples_dir, tid)) is None:
                break
            loaded.append(got)
        if len(loaded) < 2:
            continue
        if pair[1] == "cuda":
            chain = spec.entry == "run_chain"
            result = device_agreement(loaded[0], loaded[1], config.alpha, chain=chain)
        else:
            kind = registry.build_target(case.problem).kind
            result = agreement(spec, kind, loaded[0], loaded[1], config.alpha)
        seed = SeedKey.from_crc32(config.seed, case.key, stage)
        records.append(
            {
                **_base_record(case, "-vs-".join(pair), stage, seed, spec),
                "wall_time": 0.0,
                "evals": None,
                **result.to_dict(),
            }
        )
    return records or None


def decide(records: list[dict[str, Any]], config: RunConfig) -> dict[str, Any]:
    """Holm per stage, escalation, and the final verdict of every (case, impl, gate).

    Returns {"verdicts": [...], "escalate": {stage: set of (case, impl)}}.
    """
    policy = config.escalation
    by_stage: dict[int, list[dict[str, Any]]] = {}
    for r in records:
        if r.get("type") == "gate":
            by_stage.setdefault(int(r["stage"]), []).append(r)
    final: dict[tuple[str, str, str], dict[str, Any]] = {}
    escalate: dict[int, set[tuple[str, str]]] = {}
    for stage in sorted(by_stage):
        rows = by_stage[stage]
        tested = [r for r in rows if r.get("multiple_testing") and r.get("p_value") is not None]
        _, adjusted = holm([r["p_value"] for r in tested], policy.stage_alpha(config.alpha))
        adj = {id(r): float(p) for r, p in zip(tested, adjusted, strict=True)}
        for r in rows:
            key = (r["case"], r["impl"], r["gate"])
            if id(r) in adj:
                decision = policy.decide(adj[id(r)], config.alpha, stage)
                passed = decision != "fail"
            elif not r["passed"] and r.get("escalate_when_failed") and stage + 1 < policy.stages:
                decision, passed = "escalate", True
            else:
                decision = "pass" if r["passed"] else "fail"
                passed = bool(r["passed"])
            if decision == "escalate":
                escalate.setdefault(stage + 1, set()).add((r["case"], r["impl"]))
            previous = final.get(key)
            if previous is not None and previous["verdict"] == "fail":
                continue  # a rejection at any stage stands (the alpha of every stage is spent)
            final[key] = {
                **{
                    k: r.get(k)
                    for k in (
                        "algorithm",
                        "family",
                        "guarantee",
                        "paper",
                        "impl",
                        "problem",
                        "params",
                        "gate",
                        "statistic",
                        "p_value",
                        "n",
                        "detectable",
                        "detectable_measure",
                        "power",
                        "interval",
                        "detail",
                        "evals",
                        "evals_per_draw",
                        "wall_time",
                        "commit",
                        "machine",
                    )
                },
                "stage": stage,
                "adjusted_p": adj.get(id(r)),
                "decision": decision,
                "verdict": "pass" if passed else "fail",
                "inconclusive": decision == "escalate",
            }
    # An escalated gate that has no later stage on disk (interrupted run) stays inconclusive.
    return {"verdicts": list(final.values()), "escalate": escalate}


@dataclass(frozen=True)
class _RunContext:
    """What every stage of one verification run shares."""

    config: RunConfig
    registry: Registry
    specs: dict[str, Any]
    records_path: Path
    samples_dir: str
    backend: Backend
    progress: bool


def _stage_runs(
    run: _RunContext, cases: list[Case], selected: set[tuple[str, str]] | None, stage: int
) -> list[CaseRun]:
    """The runs of ``stage``: every case at the first, then the cases the last stage escalated
    (``selected``), each as a whole: every implementation reruns, so they stay comparable.
    Each run gets an equal share of the stage's alpha."""
    config = run.config
    keys = None if selected is None else {k for k, _ in selected}
    pairs = [
        (c, impl)
        for c in cases
        for impl in config.impls
        if impl in run.specs[c.algorithm].implementations and (keys is None or c.key in keys)
    ]
    alpha_share = config.escalation.stage_alpha(config.alpha) / max(len(pairs), 1)
    runs = []
    for c, impl in pairs:
        spec = run.specs[c.algorithm]
        n = config.escalation.sample_size(c.n, stage)
        mode, n = reference_run(config.reference, config.impls, spec, impl, n)
        runs.append(
            CaseRun(
                c,
                impl,
                stage,
                n,
                config.seed,
                alpha_share,
                config.plugins,
                run.samples_dir,
                mode == "prefix",
                mode == "stream",
            )
        )
    return runs


def _run_stage(run: _RunContext, runs: list[CaseRun], stage: int, done: set[str]) -> None:
    """Run the stage's tasks that are not on disk (``done``), then record the agreement of
    each case's implementation pairs."""
    todo = [
        Task(r.id, execute, (r,), r.seed_key, r.id, _crashed, affinity=r.case.problem)
        for r in runs
        if r.id not in done
    ]
    run_tasks(
        todo, run.records_path, run.backend, run.progress, f"stage {stage + 1}", _save_samples
    )
    for c in {r.case.key: r.case for r in runs}.values():
        aid = f"agreement|{c.key}|stage{stage}"
        if aid in done:
            continue
        recs = _agreement_records(run.config, c, stage, run.samples_dir, run.specs, run.registry)
        if recs:
            append_task(run.records_path, aid, recs)


def _summarise(config: RunConfig, records: list[dict[str, Any]], cases: int, out: Path) -> dict:
    """The run's final verdicts, written to OUT/summary.json."""
    decided = decide(records, config)
    summary = {
        "config": config.manifest(),
        "provenance": provenance(),
        "verdicts": decided["verdicts"],
        "passed": all(v["verdict"] == "pass" for v in decided["verdicts"]),
        "cases": cases,
    }
    write_json(out / SUMMARY, summary)
    return summary


def verify(
    config: RunConfig,
    out: Path,
    workers: int | None = None,
    progress: bool = True,
    log: Callable[[str], None] | None = None,
    move_stale: bool = False,
    scheduler: str | None = None,
    task_timeout: float | None = None,
    until_failure: bool = False,
) -> dict[str, Any]:
    """Run (or resume) a verification and return its summary; everything lands under ``out``.

    The tasks run on the backend ``scheduler`` and ``workers`` name
    (:func:`harness.engine.backend_for`); every backend gives the same records. Each task runs
    under ``task_timeout`` seconds (default: the level's, :data:`harness.engine.BUDGETS`); one
    past it becomes a failed "runs" verdict and the run goes on. ``until_failure``: no stage
    runs after one in which a statistical gate failed (a rejection at any stage stands, so the
    run fails whatever later stages find; the gates left borderline stay inconclusive). For
    callers that need only whether a bug is caught: gate-quality's catches.
    """
    registry, specs = _checked(config)
    budget = task_timeout if task_timeout is not None else BUDGETS[("verify", config.level)]
    backend = backend_for(scheduler, workers, budget_s=budget)
    cases = plan(config, registry, specs)
    out = Path(out)
    records_path = open_run(out, RUN_MANIFEST, config.manifest(), move_stale)
    (out / SAMPLES).mkdir(exist_ok=True)
    spec_by_name = {s.name: s for s in specs}
    run = _RunContext(
        config, registry, spec_by_name, records_path, str(out / SAMPLES), backend, progress
    )
    records = load_records(records_path)
    if records and log:
        log(f"resuming: {len(done_tasks(records))} finished tasks found in {out / RECORDS}")
    selected: set[tuple[str, str]] | None = None
    for stage in range(config.escalation.stages):
        runs = _stage_runs(run, cases, selected, stage)
        if not runs:
            break
        _run_stage(run, runs, stage, done_tasks(records))
        records = load_records(records_path)
        decided = decide(records, config)
        selected = decided["escalate"].get(stage + 1)
        if not selected or (until_failure and _statistical_failure(decided["verdicts"])):
            break
    return _summarise(config, records, len(cases), out)


def _statistical_failure(verdicts: list[dict[str, Any]]) -> bool:
    """A failed gate other than "runs" (the sampler raised) and "coverage"."""
    return any(v["verdict"] == "fail" and v["gate"] not in NON_STATISTICAL for v in verdicts)
