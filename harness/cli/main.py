"""The ``harness`` command line: list, verify, report, calibrate, draw, speed, reproduce.

Exit codes: 0 when every gate passes, 1 when any gate fails, 2 on bad usage or bad input.
Errors are one line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import warnings
from pathlib import Path
from typing import Any

from harness.cli.parser import build_parser
from harness.declare import overrides
from harness.display import text_table
from harness.gates.multiple import Escalation
from harness.registry import build_registry
from harness.report.verdict_text import print_verdicts


def _cmd_list(args: argparse.Namespace) -> int:
    from harness.experiments import experiment_names

    if args.experiments:
        print("\n".join(experiment_names()))
        return 0
    registry = build_registry(args.plugin)
    problems = registry.all_problems()  # the catalog's, then the plugins'
    rows = [
        {
            "name": s.name,
            "family": s.family,
            "guarantee": s.guarantee,
            "entry": s.entry,
            "targets": list(s.target_kinds),
            "implementations": list(s.implementations),
            "paper": s.paper,
            "params": {p.name: {"default": p.default, "valid": p.range_text()} for p in s.params},
            "summary": s.summary,
        }
        for s in registry
    ]
    from harness.devices import runnable, unavailable

    machine = {"runnable": list(runnable()), "cuda": unavailable("cuda") or "available"}
    if args.json:
        data = {"algorithms": rows, "this_machine": machine}
        if args.problems:
            data["problems"] = [
                {"name": p.name, "kind": p.kind, "levels": list(p.levels)} for p in problems
            ]
        print(json.dumps(data, indent=2))
        return 0
    cells = [
        (
            r["name"],
            r["family"],
            r["guarantee"],
            ",".join(r["targets"]),
            ",".join(r["implementations"]),
            r["paper"],
        )
        for r in rows
    ]
    names = ("algorithm", "family", "guarantee", "targets", "impls", "paper")
    print(text_table(names, cells, sep=" "))
    print(f"\nthis machine runs: {', '.join(machine['runnable'])} (cuda: {machine['cuda']})")
    if args.problems:
        print()
        rows = [(p.name, p.kind, ",".join(p.levels)) for p in problems]
        print(text_table(("problem", "kind", "levels"), rows, sep=" "))
    return 0


def _cmd_verify(args: argparse.Namespace) -> int:
    from harness.devices import runnable
    from harness.store import RECORDS, check_out, load_records
    from harness.verify.config import RunConfig
    from harness.verify.runner import verify

    check_out(args.out)  # a run that cannot be written is refused before any work
    impls = runnable() if args.impl == ("all",) else args.impl
    config = RunConfig(
        algorithms=tuple(dict.fromkeys(args.algorithm)),
        impls=tuple(impls),
        level=args.level,
        seed=args.seed,
        alpha=args.alpha,
        plugins=tuple(args.plugin),
        escalation=Escalation(),
        reference=args.reference,
        problems=tuple(dict.fromkeys(args.problem)),
    )
    summary = verify(
        config,
        args.out,
        workers=args.workers,
        progress=not args.no_progress,
        log=lambda msg: print(msg, file=sys.stderr),
        move_stale=args.move_stale,
        scheduler=args.scheduler,
        task_timeout=args.task_timeout,
    )
    verdicts = summary["verdicts"]
    print_verdicts(verdicts, load_records(args.out / RECORDS), verbose=args.verbose)
    failed = sum(v["verdict"] == "fail" for v in verdicts)
    print(f"{len(verdicts) - failed} passed, {failed} failed  (records: {args.out})")
    return 0 if failed == 0 and verdicts else 1


def _cmd_report(args: argparse.Namespace) -> int:
    from harness.report.page import classify_inputs, write_report
    from harness.store import check_output_file

    first = classify_inputs(args.runs[:1])
    in_place = first.runs or first.experiments
    output = args.output or (
        args.runs[0] / "report.html" if in_place else Path("reports") / "report.html"
    )
    check_output_file(output, "--output", "write the report")  # before reading every input
    path = write_report(args.runs, output)
    print(f"report written to {path}")
    return 0


def _parse_params(items: list[str]) -> dict[str, Any]:
    """``NAME=VALUE`` pairs; VALUE as JSON (numbers, true/false), else as a string."""
    params: dict[str, Any] = {}
    for item in items:
        name, sep, text = item.partition("=")
        if not sep or not name:
            raise ValueError(f"--param {item!r} is not NAME=VALUE (e.g. --param extra_draws=1)")
        try:
            params[name] = json.loads(text)
        except json.JSONDecodeError:
            params[name] = text
    return params


def _cmd_calibrate(args: argparse.Namespace) -> int:
    from harness.verify.calibration import calibrate, format_calibration

    params = _parse_params(args.param) if args.param else None
    results = [
        calibrate(
            args.algorithm,
            problem=problem,
            impl=args.impl,
            seeds=args.seeds,
            n=args.n,
            alpha=args.alpha,
            plugins=tuple(args.plugin),
            progress=True,
            params=params,
            factor=args.factor,
            error=args.error,
            early_stop=not args.all_seeds,
        )
        for problem in (dict.fromkeys(args.problem) or [None])
    ]
    print("\n\n".join(format_calibration(r) for r in results))
    if args.json:
        data = results[0] if len(results) == 1 else results
        args.json.write_text(json.dumps(data, indent=2))
    return 0 if all(r["calibrated"] for r in results) else 1


def _cmd_draw(args: argparse.Namespace) -> int:
    import numpy as np

    from harness.spec import check_seed, sample
    from harness.targets.discrete import DiscreteFactorTarget

    text = args.log_weights.strip()
    try:
        weights = [float(w) for w in text.split(",")] if text else []
    except ValueError:
        raise ValueError(
            f"--log-weights {args.log_weights!r} is invalid; valid: comma-separated numbers"
        ) from None
    target = DiscreteFactorTarget(np.array(weights, dtype=np.float64).reshape(-1, 1))
    spec = build_registry(args.plugin).get(args.algorithm)
    rng = np.random.default_rng(check_seed(args.seed))
    draws = sample(spec, args.impl, target, args.n, rng)
    counts = np.bincount(draws.values, minlength=target.D)
    rows = [
        (str(i), str(counts[i]), f"{counts[i] / args.n:.4f}", f"{target.pmf[i]:.4f}")
        for i in range(target.D)
    ]
    print(text_table(("state", "count", "frequency", "exact"), rows, align="rrrr"))
    print(f"{draws.evals} factor evaluations")
    return 0


def _cmd_speed(args: argparse.Namespace) -> int:
    from harness.speed import ratios as speed

    repeat = max(args.repeat, 3)
    algorithms = args.algorithm or ["gumbel-max", "cdf-inversion"]
    sizes = [speed.parse_size(s) for s in args.size]
    if args.hardware or args.bandwidth:
        from harness.speed import hardware

        if args.bandwidth:
            result = {"bandwidth": hardware.bandwidth(repeat=repeat)}
            text = hardware.format_bandwidth(result["bandwidth"])
        else:
            result = {"hardware": hardware.hardware_table(repeat=repeat, budget_s=args.budget)}
            text = hardware.format_hardware(result["hardware"])
    elif args.limits:
        from harness.speed import limits as speed_limits

        result = speed_limits.measure_limits(repeat=repeat)
        text = speed_limits.format_limits(result)
    elif args.memory:
        result = speed.memory_speed(algorithms, sizes or list(speed.MEMORY_SIZES), repeat=repeat)
        text = speed.format_memory_speed(result)
    elif args.pm_selection:
        result = speed.selection_scaling(args.m, repeat=repeat)
        text = speed.format_selection_scaling(result)
    elif args.racing:
        result = speed.racing_speed(repeat=repeat)
        text = speed.format_racing_speed(result)
    elif args.degree_scaling:
        result = speed.degree_scaling(args.degrees, repeat=repeat)
        text = speed.format_degree_scaling(result)
    else:
        sizes = sizes or [(10, 100_000), (1000, 100)]
        result = speed.speed_ratios(algorithms, sizes, args.draws, args.repeat)
        text = speed.format_speed(result)
    print(text)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    return 0


def _cmd_reproduce(args: argparse.Namespace) -> int:
    from harness.experiments import get_experiment
    from harness.experiments.framework import run
    from harness.report.page import write_report
    from harness.store import check_out

    experiment = get_experiment(args.experiment)
    if args.help_params:
        print(_params_text(experiment))
        return 0
    if args.part not in experiment.parts:
        raise ValueError(f"--part {args.part!r} is invalid; valid: {', '.join(experiment.parts)}")
    changes = overrides(experiment.config_type, args.settings, args.config)
    config = dataclasses.replace(experiment.config(args.level, args.seed), **changes)
    if args.decide:
        return _decide(args, experiment, changes)
    if args.record:
        raise ValueError("--record is invalid without --decide; valid: --decide --record")
    out = args.out or Path("reports") / f"{experiment.name}-{args.level}"
    check_out(out)  # before the backend starts or a task runs
    summary = run(
        experiment,
        args.level,
        args.seed,
        out,
        config=config,
        part=args.part,
        scheduler=args.scheduler,
        workers=args.workers,
        progress=not args.no_progress,
        move_stale=args.move_stale,
        log=lambda msg: print(msg, file=sys.stderr),
        task_timeout=args.task_timeout,
    )
    report = write_report([out], out / "report.html")
    print(
        f"{experiment.name} ({args.level}): {summary.ran} tasks run now, "
        f"{summary.already_done} already on disk, {summary.planned} planned; "
        f"{summary.wall_s:.1f} s"
    )
    if summary.text:
        print(summary.text)
    print(f"records: {out / 'records.jsonl'}\nreport: {report}")
    return 0


def _params_text(experiment: Any) -> str:
    """``reproduce NAME --help-params``: the declared parameters as a table."""
    from harness.declare import params_rows

    head = ("parameter", "type", "valid", "default", "quick", "full", "what")
    rows = params_rows(experiment.config_type)
    return (
        f"{experiment.name}: set with --set PARAM=VALUE or --config FILE.toml "
        f"(replicates: {', '.join(experiment.replicates) or 'none'})\n"
        + text_table(head, [[c if len(c) < 60 else c[:57] + "..." for c in r] for r in rows])
    )


def _decide(args: argparse.Namespace, experiment: Any, changes: dict[str, Any]) -> int:
    """``reproduce --decide``: the two-stage deciding run (harness.experiments.decide)."""
    from harness.experiments import decide
    from harness.experiments.claims import Verdict, claims_text
    from harness.experiments.framework import run
    from harness.report.page import write_report
    from harness.store import check_out, write_json

    budget = decide.parse_budget(args.budget)
    decide.replicate_values(
        experiment, dataclasses.replace(experiment.config(args.level, args.seed), **changes)
    )
    if args.part != "all":
        raise ValueError(f"--part {args.part!r} is invalid with --decide; valid: all")
    out = args.out or Path("reports") / f"{experiment.name}-{args.level}-decide"
    check_out(out)
    decided = decide.decide(
        experiment,
        args.level,
        args.seed,
        out,
        budget,
        run,
        lambda msg: print(msg, file=sys.stderr),
        overrides=changes,
        scheduler=args.scheduler,
        workers=args.workers,
        progress=not args.no_progress,
        move_stale=args.move_stale,
        task_timeout=args.task_timeout,
    )
    write_json(out / "decided.json", decided)
    final = [Verdict(**v) for v in decided["final"]]
    stage = decided["final_from"]
    report = write_report([out / stage], out / "report.html")
    print(f"{experiment.name} ({args.level}, decided from {stage}):")
    print(claims_text(final))
    if args.record:
        command = " ".join(
            [
                "harness",
                "reproduce",
                experiment.name,
                "--level",
                args.level,
                "--seed",
                str(args.seed),
                "--decide",
                "--budget",
                args.budget,
                *(f"--set {t}" for t in args.settings),
                *([f"--config {args.config}"] if args.config else []),
            ]
        )
        print(f"recorded: {decide.write_record(decided, out, command)}")
    print(f"decided: {out / 'decided.json'}\nreport: {report}")
    return 0


def _cmd_compare(args: argparse.Namespace) -> int:
    from harness.report.same_numbers import compare_runs, summary

    ignore = [f.strip() for f in args.ignore.split(",") if f.strip()]
    comparisons = compare_runs(args.old, args.new, ignore)
    print(summary(comparisons))
    return 0 if all(c.identical for c in comparisons) else 1


COMMANDS = {
    "list": _cmd_list,
    "verify": _cmd_verify,
    "report": _cmd_report,
    "calibrate": _cmd_calibrate,
    "draw": _cmd_draw,
    "speed": _cmd_speed,
    "reproduce": _cmd_reproduce,
    "compare": _cmd_compare,
}


def _one_line_warning(message: Any, category: Any, *args: Any, **kwargs: Any) -> None:
    print(f"harness: warning: {message}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _one_line_warning
            return COMMANDS[args.command](args)
    except (ValueError, RuntimeError, FileNotFoundError) as exc:
        print(f"harness {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"harness {args.command}: interrupted; finished results are kept", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (e.g. `harness list | head`): stop quietly, as Unix tools do.
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
