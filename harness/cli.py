"""The ``harness`` command line: list, verify, report, calibrate, draw, speed, reproduce.

Exit codes: 0 when every gate passes, 1 when any gate fails, 2 on bad usage or bad input.
Errors are one line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from harness.gates.multiple import Escalation
from harness.registry import build_registry
from harness.spec import IMPLEMENTATION_NAMES
from harness.text_table import text_table

EPILOG_VERIFY = """\
how it decides:
  Each algorithm runs on the standard problems of its target kinds (see `harness list
  --problems`), once per implementation, with seeds spawned from --seed. The reference and the
  Numba version get the same seed and must agree bit for bit. Exact samplers face chi-square
  (discrete) or Kolmogorov-Smirnov (continuous) gates against exact ground truth. All p-values
  of a run share one family-wise --alpha (Holm); a borderline result is re-run with 4x the
  draws (up to 3 stages) instead of loosening any bound. Each verdict states the smallest
  discrepancy it could have detected.

what it prints:
  One line per algorithm and implementation: gates passed out of all, the worst (smallest)
  Holm-adjusted p-value, and wall time summed over its records; then every failed verdict in
  full (gate, problem, parameters, statistic, p-value, n, detectable effect, detail).
  --verbose first prints every verdict, one line each. OUT/records.jsonl and
  OUT/summary.json hold everything either way; `harness report OUT` renders them.

examples:
  harness verify                                   every algorithm, both implementations
  harness verify --algorithm gumbel-max --impl numba --seed 7
  harness verify --plugin my_samplers.py --algorithm my-sampler
  harness verify --algorithm gumbel-max --verbose  every verdict, one line each
  harness verify --out runs/today                  rerun the same command to resume a killed run
  harness verify --scheduler local:4               on a Dask LocalCluster of 4 worker processes
  harness verify --scheduler tcp://10.0.0.5:8786   on a running Dask cluster (see README)

where it runs (--scheduler):
  process        a local process pool of --workers processes (the default: all cores)
  inprocess      one task after another in this process
  local:K        a Dask LocalCluster of K single-threaded worker processes
  tcp://H:P      a running Dask scheduler; start one with `dask scheduler` and workers with
                 `dask worker tcp://H:P` on machines with the same code and environment
  Every backend gives the same records for the same --seed (only wall time and host differ).
  Only this process writes OUT, so killing it loses at most the tasks in flight.
"""


def _reproduce_epilog() -> str:
    """The experiments' help, from the one EXPERIMENTS table."""
    from harness.experiments import EXPERIMENTS

    lines = []
    for e in EXPERIMENTS:
        lines.append(f"{e.name} ({e.paper}): {e.summary}")
        lines.extend(textwrap.wrap(e.help, width=92, initial_indent="  ", subsequent_indent="  "))
    lines += [
        "",
        "levels: quick (minutes, reduced sizes; what `make run` runs) or full (the paper's sizes).",
        "",
        "where it runs: --scheduler as for `harness verify` (default: a process pool of",
        "--workers processes, default 1, so timings do not share the CPU); every backend gives",
        "the same records for the same --seed, apart from timings.",
        "",
        "output (--out, default reports/EXPERIMENT-LEVEL):",
        "  experiment.json  the settings and the code's provenance; a directory made with other",
        "                   settings or code is refused (or moved aside with --move-stale)",
        "  records.jsonl    one group of JSON lines per finished task",
        "  claims.json      every paper claim the experiment checks, with its verdict:",
        "                   reproduced, not reproduced, inconclusive or setting differs,",
        "                   our value and 95% interval beside the paper's, and the reason",
        "  report.html      written at the end; `harness report DIR [DIR ...]` renders it again,",
        "                   also next to verification runs",
        "  A killed run keeps every finished task: run the same command again to resume.",
        "",
        "examples:",
        "  harness reproduce racing-synthetic                         quick level",
        "  harness reproduce racing-synthetic --level full --workers 2 --out runs/fig1",
        "  harness reproduce potts --level full --scheduler local:8 --out runs/potts",
        "  harness reproduce minibatch-gap --part exact --out runs/gap",
    ]
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="harness",
        description="Verify and benchmark scalable samplers: statistical verdicts, measured "
        "costs, readable reports.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=textwrap.dedent(
            """\
            start here:
              harness list                      what is registered
              harness verify --out runs/a       verdicts for everything (resumable)
              harness report runs/a             an HTML page of the verdicts
            """
        ),
    )
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    lst = sub.add_parser("list", help="list registered algorithms (and problems)")
    lst.add_argument("--json", action="store_true", help="machine-readable output")
    lst.add_argument("--problems", action="store_true", help="list verification problems too")
    lst.add_argument(
        "--experiments",
        action="store_true",
        help="print only the paper experiments' names, one per line (what `make run` runs)",
    )
    lst.add_argument(
        "--plugin",
        action="append",
        default=[],
        metavar="MODULE_OR_FILE",
        help="also list the algorithms (and, with --problems, the problems) a plugin registers",
    )

    ver = sub.add_parser(
        "verify",
        help="run the statistical gates and print verdicts",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=EPILOG_VERIFY,
    )
    ver.add_argument(
        "--algorithm",
        action="append",
        default=[],
        metavar="NAME",
        help="algorithm to verify (repeatable; default: all registered)",
    )
    ver.add_argument(
        "--problem",
        action="append",
        default=[],
        metavar="NAME",
        help="only this problem, from the catalog or a --plugin (repeatable; default: every "
        "problem that fits) - to check one new problem of your own",
    )
    ver.add_argument(
        "--impl",
        default="all",
        type=_impl_list,
        metavar="{" + ",".join([*IMPLEMENTATION_NAMES, "all"]) + "}",
        help="implementation keys to run, comma-separated (numba,cuda: both, and the cuda "
        "draws checked against numba's under the same seed); default: all, every key this "
        "machine can run: reference and numba, and cuda where numba-cuda sees a device "
        "(`harness list` says which)",
    )
    ver.add_argument(
        "--reference",
        default="prefix",
        choices=["prefix", "full"],
        help="how a reference beside its Numba twin is verified (with --impl all): 'prefix' "
        "(default) runs both on the first 256 draws of one stream and requires them equal bit "
        "for bit, the statistical gates running at full n on the Numba output only; 'full' runs "
        "every gate on the reference's own full sample too (the pure-Python references then "
        "dominate the run's time)",
    )
    ver.add_argument(
        "--level",
        default="quick",
        choices=["quick", "full"],
        help="quick: CI-sized problems and 2e4 draws; full: more problems and 1e5 draws",
    )
    ver.add_argument("--seed", type=int, default=0, help="run seed (integer >= 0; default 0)")
    ver.add_argument(
        "--alpha",
        type=float,
        default=1e-4,
        help="family-wise false-failure budget of the whole run (default 1e-4)",
    )
    ver.add_argument(
        "--plugin",
        action="append",
        default=[],
        metavar="MODULE_OR_FILE",
        help="import a module or .py file that calls harness.register(spec) or "
        "harness.register_problem(...) (repeatable)",
    )
    ver.add_argument(
        "--out",
        type=Path,
        default=Path("reports/latest"),
        help="run directory for records, samples and summary (default reports/latest)",
    )
    ver.add_argument(
        "--move-stale",
        action="store_true",
        help="if --out holds a run with other settings or code, rename it to OUT.<time> and "
        "start fresh (default: refuse)",
    )
    _add_backend_args(ver, "processes for --scheduler process (default: all cores)")
    ver.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    ver.add_argument(
        "--verbose",
        action="store_true",
        help="print every verdict (one line per algorithm, implementation, problem and gate) "
        "before the per-algorithm summary",
    )

    rep = sub.add_parser(
        "report",
        help="write one static HTML report of verdicts, experiments, speedups and asv timings",
        description="One self-contained HTML page (inline SVG, no scripts, no network; opens "
        "from file://) with six sections: 1 verdict summary, 2-3 each family's plots and the "
        "papers' numbers beside ours, 4 reference-vs-Numba speedups (pytest-benchmark), 5 asv "
        "timings by machine and commit, 6 provenance. Inputs are recognised by their content; "
        "give any mix. Missing inputs are listed at the top of the page instead of failing.",
        epilog="inputs:\n"
        "  RUN          a directory written by `harness verify --out RUN`\n"
        "  EXPERIMENT   a directory written by `harness reproduce NAME --out EXPERIMENT`\n"
        "  ASV_RESULTS  an asv results folder (e.g. .asv/results) with <machine>/machine.json;\n"
        "               several folders (one per machine) merge\n"
        "  BENCH.json   a pytest-benchmark --benchmark-json file (`make bench` writes\n"
        "               reports/bench/pytest-benchmark.json)\n\n"
        "example:\n"
        "  harness report reports/latest reports/latest/potts .asv/results \\\n"
        "      reports/bench/pytest-benchmark.json --output reports/report.html",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    rep.add_argument(
        "runs",
        nargs="+",
        type=Path,
        metavar="INPUT",
        help="verification runs, experiment directories, asv results folders, pytest-benchmark "
        "JSON files, `harness calibrate --json` files",
    )
    rep.add_argument(
        "--output",
        type=Path,
        default=None,
        help="HTML file to write (default: INPUT/report.html when the first input is a run or "
        "experiment directory, else reports/report.html)",
    )

    cal = sub.add_parser(
        "calibrate",
        help="measure the false-failure rate of the gates on a correct sampler",
        description="Run one algorithm on one problem over many seeds, with the parameters\n"
        "`harness verify` gives it there (exact_answer=True for an approximate sampler), and\n"
        "decide for each gate whether its rate of failures at --alpha lies within --factor of\n"
        "alpha, each decision wrong with probability at most --error (a sequential test:\n"
        "looks at 50 seeds, every doubling and the last seed; it stops once every gate is\n"
        "decided). Also shows where each gate's p-values leave their simultaneous ECDF band and\n"
        "its power both ways. Exit 0 when no gate is rejected, 1 when one is (its rate outside\n"
        "the zone, or its p-values not uniform), 2 on a usage error.",
        epilog="how a gate is judged (the 'kind' column):\n"
        "  test      one test with an exact null: its rate within [alpha / factor, alpha *\n"
        "            factor] and its p-values uniform (KS p >= 0.001)\n"
        "  combined  tests merged by Bonferroni or Holm: rate at most alpha * factor, p-values\n"
        "            not stochastically smaller than uniform (one-sided KS)\n"
        "  bound     a gate that must prove something (error <= delta, ESS >= 100): its rate\n"
        "            of failed proofs at most alpha * factor\n"
        "decisions: 'accept: rate in [lo, hi]' (the interval lies in the zone), 'reject: rate\n"
        "above/below' (outside it), 'undecided after N seeds' (more --seeds would decide)\n\n"
        "examples:\n  harness calibrate --algorithm gibbs --seeds 500\n"
        "  harness calibrate --algorithm racing-normal --problem race-normal-D2-N1000-s0.3\n"
        "  harness calibrate --algorithm astar --problem clutter-D1 --param extra_draws=1\n"
        "  harness calibrate --algorithm gumbel-max --seeds 4000 --factor 1.2 --error 0.01\n"
        "  harness reproduce gate-quality --level full   # every algorithm, and the planted bugs\n",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    cal.add_argument(
        "--algorithm", required=True, help="the registered algorithm to run (required)"
    )
    cal.add_argument(
        "--problem",
        action="append",
        default=[],
        metavar="NAME",
        help="problem name, from the catalog or a --plugin (repeatable: each is calibrated in "
        "turn; default: the first fitting)",
    )
    cal.add_argument(
        "--impl",
        default="numba",
        choices=IMPLEMENTATION_NAMES,
        help="the implementation to run (default: %(default)s)",
    )
    cal.add_argument(
        "--seeds",
        type=int,
        default=500,
        help="the most seeds to run, >= 10; fewer when every gate is decided first "
        "(default: %(default)s)",
    )
    cal.add_argument(
        "--n", type=int, default=5000, help="draws (or steps) per seed (default: %(default)s)"
    )
    cal.add_argument(
        "--alpha",
        type=float,
        default=0.05,
        help="the level each seed's gates run at, in (0, 1) (default: %(default)s)",
    )
    cal.add_argument(
        "--factor",
        type=float,
        default=1.5,
        help="the tolerated zone: a rate within this factor of alpha, > 1 (default: %(default)s)",
    )
    cal.add_argument(
        "--error",
        type=float,
        default=0.001,
        help="the largest probability that a gate's decision is wrong, in (0, 0.5) (default: "
        "%(default)s)",
    )
    cal.add_argument(
        "--all-seeds",
        action="store_true",
        help="run every one of --seeds even when every gate is decided earlier (default: stop "
        "once decided)",
    )
    cal.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="an algorithm parameter (repeatable; VALUE read as JSON: 1, 0.3, true); any "
        "--param replaces the parameters of verify's first check on the problem (default: "
        "verify's)",
    )
    cal.add_argument(
        "--plugin",
        action="append",
        default=[],
        metavar="MODULE_OR_FILE",
        help="a module or .py file that registers algorithms or problems (repeatable; default: "
        "none)",
    )
    cal.add_argument(
        "--json",
        type=Path,
        default=None,
        help="also write the result as JSON; `harness report` plots it (default: none)",
    )

    drw = sub.add_parser(
        "draw",
        help="draw from a discrete distribution given by log-weights",
        description="Draw from p(i) ∝ exp(w_i) with one registered discrete sampler and print "
        "the counts beside the exact pmf.",
        epilog="example: harness draw --algorithm gumbel-max --log-weights 0,1,2 --n 10000",
    )
    drw.add_argument("--algorithm", default="gumbel-max")
    drw.add_argument(
        "--log-weights",
        required=True,
        metavar="W1,W2,...",
        help="comma-separated finite log-weights, one per state",
    )
    drw.add_argument("--n", type=int, default=1000, help="number of draws (>= 1)")
    drw.add_argument("--seed", type=int, default=0)
    drw.add_argument("--impl", default="numba", choices=IMPLEMENTATION_NAMES)
    drw.add_argument("--plugin", action="append", default=[], metavar="MODULE_OR_FILE")

    spd = sub.add_parser(
        "speed",
        help="Numba-to-reference speed ratios, measured side by side in one process",
    )
    spd.add_argument("--algorithm", action="append", default=[], metavar="NAME")
    spd.add_argument(
        "--size",
        action="append",
        default=[],
        metavar="D,N",
        help="synthetic problem size (repeatable; default 10,100000 and 1000,100)",
    )
    spd.add_argument("--draws", type=int, default=20, help="draws per timed call")
    spd.add_argument("--repeat", type=int, default=7, help="timed calls per implementation")
    spd.add_argument("--json", type=Path, default=None, help="also write the result as JSON")
    spd.add_argument(
        "--degree-scaling",
        action="store_true",
        help="instead: Gibbs vs Poisson-Gibbs time per step on complete graphs of growing degree "
        "at fixed L = 2 (003 Statement 1: Poisson-Gibbs costs O(lam + L), not O(degree); its "
        "time vs the smallest degree has the limit 1.5); the 'graph MB' column (what each "
        "kernel reads at random) shows when the graph leaves the CPU caches",
    )
    spd.add_argument(
        "--degrees",
        type=int,
        nargs="+",
        default=[40, 100, 400],
        metavar="D",
        help="degrees for --degree-scaling (default: 40 100 400)",
    )
    spd.add_argument(
        "--memory",
        action="store_true",
        help="instead: Numba time per exact draw (gumbel-max, cdf-inversion by default) against "
        "a streaming numpy.sum over the same D x N log-factor array, at --size (default "
        "10,100000 100,10000 1000,100); a draw reads every factor, so the sum is the floor, "
        "and the limit is 1.5x",
    )
    spd.add_argument(
        "--pm-selection",
        action="store_true",
        help="instead: PM-A*'s pick of the next region (004 Sec. 4.3) from the balanced tree "
        "against drawing all m truncated Gumbels, per pick, as m grows (the tree should stay "
        "within 3x of its time at the smallest m)",
    )
    spd.add_argument(
        "--limits",
        action="store_true",
        help="instead: every figure that has a limit, in one run of a few minutes (exact draws "
        "/ numpy.sum <= 1.5; racing speedup / saving on computed terms >= 0.7; Poisson-Gibbs "
        "degree 1000 / degree 20 <= 1.5; PM-A* pick at m = 1e5 / m = 1e2 <= 3); with --json "
        "FILE, `harness report FILE` shows each against its limit (make bench writes "
        "reports/bench/speed-limits.json)",
    )
    spd.add_argument(
        "--racing",
        action="store_true",
        help="instead: Racing-Normal against exact Gumbel-max at D = 10, N = 1e5, on "
        "precomputed reward matrices (sigma 1e-5, 1e-3, 1e-2) and on likelihood terms computed "
        "from data (logistic, Student-t); evaluation saving, wall-clock speedup and their "
        "ratio, which must reach 0.7 on computed terms",
    )
    spd.add_argument(
        "--hardware",
        action="store_true",
        help="instead: time per draw of racing-normal (Numba, 1 core; all cores as a bound), "
        "exact gumbel-max (Numba, all cores) and exact gumbel-max (cuda, data on the device) "
        "over D in {10, 100, 1000} x N in {1e4, 1e5, 1e6}, on precomputed and computed "
        "(logistic) rewards, and the saving racing needs to tie the GPU; the cuda column is "
        "empty on a machine without a device (`harness report FILE` shows the panel)",
    )
    spd.add_argument(
        "--bandwidth",
        action="store_true",
        help="instead (needs a CUDA device): the cuda gumbel-max draw over 1000 x 1e5 stored "
        "log-factors against a device-to-device copy of the same bytes (limit 1.5x)",
    )
    spd.add_argument(
        "--budget",
        type=float,
        default=300.0,
        help="--hardware: seconds after which the remaining cells are listed, not measured "
        "(default: %(default)s)",
    )
    spd.add_argument(
        "--m",
        type=int,
        nargs="+",
        default=[100, 1000, 10_000, 100_000],
        metavar="M",
        help="numbers of truncated Gumbels for --pm-selection (default: 100 1000 10000 100000)",
    )
    _add_reproduce(sub)
    return p


def _add_backend_args(p: argparse.ArgumentParser, workers_help: str) -> None:
    from harness.engine import SCHEDULER_HELP

    p.add_argument(
        "--scheduler",
        default=None,
        metavar="WHERE",
        help=f"where tasks run: {SCHEDULER_HELP}",
    )
    p.add_argument("--workers", type=int, default=None, help=workers_help)
    p.add_argument(
        "--task-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="stop any task that runs longer (a failed 'runs' verdict; the run goes on); "
        "default: 600 s at --level quick and 3600 s at full for verify, 1800 s and 12 h for "
        "reproduce",
    )


def _add_reproduce(sub: argparse._SubParsersAction) -> None:
    from harness.experiments import EXPERIMENTS

    rep = sub.add_parser(
        "reproduce",
        help="reproduce a paper experiment (see EXPERIMENT below) into a directory",
        description="Rerun a paper experiment, record every setting, judge each of the paper's "
        "claims it checks by a decision rule fixed in the code, print the claims table and "
        "write an HTML report. A claim that does not reproduce is a finding: the exit code "
        "stays 0.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=_reproduce_epilog(),
    )
    rep.add_argument(
        "experiment",
        metavar="EXPERIMENT",
        help="one of " + ", ".join(e.name for e in EXPERIMENTS) + " (each described below)",
    )
    rep.add_argument(
        "--level",
        default="quick",
        help="quick (minutes, reduced sizes) or full (the paper's sizes); default quick",
    )
    rep.add_argument(
        "--out", type=Path, default=None, help="directory (default reports/EXPERIMENT-LEVEL)"
    )
    rep.add_argument("--seed", type=int, default=0, help="experiment seed (integer >= 0)")
    rep.add_argument(
        "--part",
        default="all",
        help="a subset of the experiment: all (default); racing-synthetic: errors or speed; "
        "minibatch-gap: exact or chains",
    )
    _add_backend_args(rep, "processes for --scheduler process (default 1)")
    rep.add_argument(
        "--move-stale",
        action="store_true",
        help="if --out holds a run with other settings or code, rename it to OUT.<time> and "
        "start fresh (default: refuse)",
    )
    rep.add_argument("--no-progress", action="store_true", help="hide the progress bars")


def _impl_list(text: str) -> tuple[str, ...]:
    """--impl KEY[,KEY...]: implementation keys, or 'all'."""
    keys = tuple(dict.fromkeys(k.strip() for k in text.split(",") if k.strip()))
    valid = (*IMPLEMENTATION_NAMES, "all")
    if not keys or any(k not in valid for k in keys) or ("all" in keys and len(keys) > 1):
        raise argparse.ArgumentTypeError(
            f"{text!r} is invalid; valid: 'all' or keys from {', '.join(valid[:-1])}, "
            "comma-separated"
        )
    return keys


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


def _fmt(x: object, spec: str = ".3g") -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return format(x, spec)
    return str(x)


def _params_text(v: dict) -> str:
    return "".join(f" {k}={val}" for k, val in (v.get("params") or {}).items())


def _by_case(verdicts: list[dict]) -> list[dict]:
    return sorted(
        verdicts, key=lambda v: (v["algorithm"], v["problem"], str(v["params"]), str(v["impl"]))
    )


def verdict_table(verdicts: list[dict]) -> str:
    """Every verdict, one line each (``harness verify --verbose``)."""
    cols = ("algorithm", "impl", "problem", "gate", "n", "statistic", "adj. p", "detectable", "")
    rows = []
    for v in _by_case(verdicts):
        verdict = v["verdict"].upper() + (" (inconclusive)" if v.get("inconclusive") else "")
        rows.append(
            (
                v["algorithm"],
                str(v["impl"]),
                v["problem"] + _params_text(v),
                v["gate"],
                _fmt(v.get("n")),
                _fmt(v.get("statistic")),
                _fmt(v.get("adjusted_p")),
                _fmt(v.get("detectable")),
                verdict,
            )
        )
    return text_table(cols, rows)


def _wall_times(records: list[dict]) -> dict[tuple[str, str], float]:
    """Wall time per (algorithm, impl), summed over its tasks at every stage (each record of a
    task repeats the task's time, so a task counts once)."""
    per_task: dict[str, tuple[tuple[str, str], float]] = {}
    for r in records:
        if r.get("type") == "gate" and r.get("task_id") not in per_task:
            key = (r["algorithm"], str(r["impl"]))
            per_task[r.get("task_id")] = (key, float(r.get("wall_time") or 0.0))
    totals: dict[tuple[str, str], float] = {}
    for key, wall in per_task.values():
        totals[key] = totals.get(key, 0.0) + wall
    return totals


def summary_table(verdicts: list[dict], records: list[dict]) -> str:
    """One line per (algorithm, implementation): gates passed of all, the smallest
    Holm-adjusted p-value, wall time summed over its records."""
    groups: dict[tuple[str, str], list[dict]] = {}
    for v in verdicts:
        groups.setdefault((v["algorithm"], str(v["impl"])), []).append(v)
    walls = _wall_times(records)
    rows = []
    for (algorithm, impl), group in sorted(groups.items()):
        passed = sum(v["verdict"] == "pass" for v in group)
        adjusted = [v["adjusted_p"] for v in group if v.get("adjusted_p") is not None]
        rows.append(
            (
                algorithm,
                impl,
                f"{passed}/{len(group)}",
                _fmt(min(adjusted)) if adjusted else "-",
                f"{walls.get((algorithm, impl), 0.0):.1f}",
                "PASS" if passed == len(group) else "FAIL",
            )
        )
    cols = ("algorithm", "impl", "gates passed", "worst adj. p", "wall s", "")
    return text_table(cols, rows, align="llrrrl")


def failure_text(v: dict) -> str:
    """One failed verdict in full: what failed where, its numbers, and the gate's detail."""
    head = f"FAILED {v['gate']}: {v['algorithm']} [{v['impl']}] on {v['problem']}{_params_text(v)}"
    numbers = f"statistic {_fmt(v.get('statistic'))}, p {_fmt(v.get('p_value'))}"
    if v.get("adjusted_p") is not None:
        numbers += f" (Holm-adjusted {_fmt(v['adjusted_p'])})"
    numbers += f", n {_fmt(v.get('n'))}, detectable {_fmt(v.get('detectable'))}"
    if v.get("detectable_measure") and v.get("detectable") is not None:
        numbers += f" ({v['detectable_measure']})"
    numbers += f", stage {int(v.get('stage') or 0) + 1}"
    lines = [head, f"  {numbers}"]
    if v.get("detail"):
        lines.append(f"  {v['detail']}")
    return "\n".join(lines)


def print_verdicts(
    verdicts: list[dict],
    records: Sequence[dict] = (),
    verbose: bool = False,
    stream: TextIO | None = None,
) -> None:
    """The run's verdicts: with ``verbose`` every one, then one line per algorithm and
    implementation, then every failed verdict in full."""
    stream = stream or sys.stdout  # looked up now, so a redirected stdout is honoured
    if verbose:
        print(verdict_table(verdicts), file=stream)
        print(file=stream)
    print(summary_table(verdicts, list(records)), file=stream)
    for v in _by_case(verdicts):
        if v["verdict"] == "fail":
            print(failure_text(v), file=stream)


def _cmd_verify(args: argparse.Namespace) -> int:
    from harness.devices import runnable
    from harness.runner import RunConfig, verify
    from harness.store import RECORDS, load_records

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
    from harness.report import classify_inputs, write_report

    first = classify_inputs(args.runs[:1])
    in_place = first.runs or first.experiments
    output = args.output or (
        args.runs[0] / "report.html" if in_place else Path("reports") / "report.html"
    )
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
    from harness.calibration import calibrate, format_calibration

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
    from harness import speed

    repeat = max(args.repeat, 3)
    algorithms = args.algorithm or ["gumbel-max", "cdf-inversion"]
    sizes = [speed.parse_size(s) for s in args.size]
    if args.hardware or args.bandwidth:
        from harness import hardware

        if args.bandwidth:
            result = {"bandwidth": hardware.bandwidth(repeat=repeat)}
            text = hardware.format_bandwidth(result["bandwidth"])
        else:
            result = {"hardware": hardware.hardware_table(repeat=repeat, budget_s=args.budget)}
            text = hardware.format_hardware(result["hardware"])
    elif args.limits:
        from harness import speed_limits

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
    from harness.report import write_report

    experiment = get_experiment(args.experiment)
    out = args.out or Path("reports") / f"{experiment.name}-{args.level}"
    summary = run(
        experiment,
        args.level,
        args.seed,
        out,
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


COMMANDS = {
    "list": _cmd_list,
    "verify": _cmd_verify,
    "report": _cmd_report,
    "calibrate": _cmd_calibrate,
    "draw": _cmd_draw,
    "speed": _cmd_speed,
    "reproduce": _cmd_reproduce,
}


def _one_line_warning(message: Any, category: Any, *args: Any, **kwargs: Any) -> None:
    print(f"harness: warning: {message}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
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
