"""The ``harness`` command line's argument parser: one builder per command, each with the
help text, defaults and examples `--help` shows."""

from __future__ import annotations

import argparse
import textwrap
from pathlib import Path

from harness.cli.help import (
    DESCRIPTION_CALIBRATE,
    EPILOG_CALIBRATE,
    EPILOG_LIST,
    EPILOG_VERIFY,
    reproduce_epilog,
)
from harness.spec import IMPLEMENTATION_NAMES, LEVELS
from harness.verify.config import REFERENCE_MODES, default


def build_parser() -> argparse.ArgumentParser:
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
    _add_list(sub)
    _add_verify(sub)
    _add_report(sub)
    _add_calibrate(sub)
    _add_draw(sub)
    _add_speed(sub)
    _add_reproduce(sub)
    _add_compare(sub)
    return p


def _add_compare(sub: argparse._SubParsersAction) -> None:
    cmp = sub.add_parser(
        "compare",
        help="do two run directories hold the same numbers? (timing and provenance aside)",
        description="Compare every records.jsonl under OLD with the one at the same place under "
        "NEW, record by record, leaving out timing fields (seconds, wall time, load) and "
        "provenance (commit, code digest, machine, versions). Lists each field that differs, in "
        "how many records, and its first old and new values. Exit 0: all the same; 1: any "
        "difference; 2: bad input.",
        epilog="example: harness compare reports/before reports/latest --ignore speedup,ratio",
    )
    cmp.add_argument("old", type=Path, metavar="OLD", help="a run directory, or a folder of them")
    cmp.add_argument("new", type=Path, metavar="NEW", help="the run directory to compare with it")
    cmp.add_argument(
        "--ignore",
        default="",
        metavar="F1,F2,...",
        help="more fields to leave out, such as values computed from timings (default: none)",
    )


def _add_list(sub: argparse._SubParsersAction) -> None:
    lst = sub.add_parser(
        "list",
        help="list registered algorithms (and problems)",
        description="List what the harness can verify: the registered algorithms (built-in and "
        "from plugins), and with --problems the problems they run on.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=EPILOG_LIST,
    )
    lst.add_argument("--json", action="store_true", help="machine-readable output")
    lst.add_argument("--problems", action="store_true", help="list verification problems too")
    lst.add_argument(
        "--experiments",
        action="store_true",
        help="print only the paper experiments' names, one per line (what `make run` runs)",
    )
    _add_plugin(
        lst, "also list the algorithms (and, with --problems, the problems) a plugin registers"
    )


def _add_verify(sub: argparse._SubParsersAction) -> None:
    ver = sub.add_parser(
        "verify",
        help="run the statistical gates and print verdicts",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=EPILOG_VERIFY,
    )
    _repeatable(
        ver,
        "--algorithm",
        "NAME",
        "algorithm to verify (repeatable; default: all registered)",
    )
    _repeatable(
        ver,
        "--problem",
        "NAME",
        "only this problem, from the catalog or a --plugin (repeatable; default: every "
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
        default=default("reference"),
        choices=REFERENCE_MODES,
        help="how a reference beside its Numba twin is verified (with --impl all): 'stream' "
        "(default) runs the reference on the whole stream of n draws and compares every draw "
        "with the Numba output of the same seed (block digests; a failure names the first "
        "differing draw), the statistical gates running on the Numba output only; a spec whose "
        "reference is too slow for that (the racing family, pm-astar) declares how many first "
        "draws it compares instead, and its verdict says so; 'prefix' compares the first 256 "
        "draws only (a quick look); 'full' compares every draw of every reference and also runs "
        "every gate on the reference's own sample",
    )
    ver.add_argument(
        "--level",
        default=default("level"),
        choices=LEVELS,
        help="quick: CI-sized problems and 2e4 draws; full: more problems and 1e5 draws",
    )
    ver.add_argument(
        "--seed",
        type=int,
        default=default("seed"),
        help=f"run seed (integer >= 0; default {default('seed')})",
    )
    ver.add_argument(
        "--alpha",
        type=float,
        default=default("alpha"),
        help=f"family-wise false-failure budget of the whole run (default {default('alpha'):g})",
    )
    _add_plugin(
        ver,
        "import a module or .py file that calls harness.register(spec) or "
        "harness.register_problem(...) (repeatable)",
    )
    ver.add_argument(
        "--out",
        type=Path,
        default=Path("reports/latest"),
        help="run directory for records, samples and summary (default reports/latest)",
    )
    _add_move_stale(ver)
    _add_backend_args(ver, "processes for --scheduler process (default: all cores)")
    ver.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    ver.add_argument(
        "--verbose",
        action="store_true",
        help="print every verdict (one line per algorithm, implementation, problem and gate) "
        "before the per-algorithm summary",
    )


def _add_report(sub: argparse._SubParsersAction) -> None:
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


def _add_calibrate(sub: argparse._SubParsersAction) -> None:
    cal = sub.add_parser(
        "calibrate",
        help="measure the false-failure rate of the gates on a correct sampler",
        description=DESCRIPTION_CALIBRATE,
        epilog=EPILOG_CALIBRATE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    cal.add_argument(
        "--algorithm", required=True, help="the registered algorithm to run (required)"
    )
    _repeatable(
        cal,
        "--problem",
        "NAME",
        "problem name, from the catalog or a --plugin (repeatable: each is calibrated in "
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
    _repeatable(
        cal,
        "--param",
        "NAME=VALUE",
        "an algorithm parameter (repeatable; VALUE read as JSON: 1, 0.3, true); any "
        "--param replaces the parameters of verify's first check on the problem (default: "
        "verify's)",
    )
    _add_plugin(
        cal,
        "a module or .py file that registers algorithms or problems (repeatable; default: none)",
    )
    cal.add_argument(
        "--json",
        type=Path,
        default=None,
        help="also write the result as JSON; `harness report` plots it (default: none)",
    )


def _add_draw(sub: argparse._SubParsersAction) -> None:
    drw = sub.add_parser(
        "draw",
        help="draw from a discrete distribution given by log-weights",
        description="Draw from p(i) ∝ exp(w_i) with one registered discrete sampler and print "
        "the counts beside the exact pmf.",
        epilog="example: harness draw --algorithm gumbel-max --log-weights 0,1,2 --n 10000",
    )
    drw.add_argument(
        "--algorithm",
        default="gumbel-max",
        help="a registered sampler of discrete targets (default: %(default)s)",
    )
    drw.add_argument(
        "--log-weights",
        required=True,
        metavar="W1,W2,...",
        help="comma-separated finite log-weights, one per state",
    )
    drw.add_argument(
        "--n", type=int, default=1000, help="number of draws, >= 1 (default: %(default)s)"
    )
    drw.add_argument("--seed", type=int, default=0, help="the run's seed (default: %(default)s)")
    drw.add_argument(
        "--impl",
        default="numba",
        choices=IMPLEMENTATION_NAMES,
        help="implementation key (default: %(default)s)",
    )
    _add_plugin(drw, "a plugin whose sampler --algorithm names (repeatable)")


def _add_speed(sub: argparse._SubParsersAction) -> None:
    spd = sub.add_parser(
        "speed",
        help="Numba-to-reference speed ratios, measured side by side in one process",
        description="Speed as ratios measured side by side in one process (absolute times on a "
        "shared machine are noise). Without a mode option: the Numba version against the "
        "reference on synthetic discrete problems. One mode option instead runs one study "
        "(--memory, --racing, --degree-scaling, --pm-selection, --limits, --hardware, "
        "--bandwidth).",
        epilog="examples:\n  harness speed --limits --json reports/bench/speed-limits.json\n"
        "  harness speed --hardware --json hw.json   # with a CUDA device: the GPU column too",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _repeatable(
        spd,
        "--algorithm",
        "NAME",
        "algorithm to time (repeatable; default: gumbel-max and cdf-inversion)",
    )
    _repeatable(
        spd,
        "--size",
        "D,N",
        "synthetic problem size (repeatable; default 10,100000 and 1000,100)",
    )
    spd.add_argument(
        "--draws", type=int, default=20, help="draws per timed call (default: %(default)s)"
    )
    spd.add_argument(
        "--repeat",
        type=int,
        default=7,
        help="timed calls per implementation, at least 3 (default: %(default)s)",
    )
    spd.add_argument(
        "--json", type=Path, default=None, help="also write the result as JSON (default: none)"
    )
    _add_speed_studies(spd)


def _add_speed_studies(spd: argparse.ArgumentParser) -> None:
    """The mode options, each one study instead of the default ratios, and their settings."""
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
        "(logistic) rewards, and the saving racing needs to tie the GPU; then time per MH "
        "step of rwmh (1 core, and cuda) and flymc-mh (1 core) at N in {1e4, 1e5, 1e6}; the "
        "cuda columns are empty on a machine without a device (`harness report FILE` shows "
        "the panel)",
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
        help="--hardware: seconds after which the remaining draw cells are listed, not "
        "measured; the MCMC rows always run (default: %(default)s)",
    )
    spd.add_argument(
        "--m",
        type=int,
        nargs="+",
        default=[100, 1000, 10_000, 100_000],
        metavar="M",
        help="numbers of truncated Gumbels for --pm-selection (default: 100 1000 10000 100000)",
    )


def _repeatable(p: argparse.ArgumentParser, flag: str, metavar: str, help: str) -> None:
    """An option that may be given several times, collected into a list (default: empty)."""
    p.add_argument(flag, action="append", default=[], metavar=metavar, help=help)


def _add_plugin(p: argparse.ArgumentParser, help: str) -> None:
    _repeatable(p, "--plugin", "MODULE_OR_FILE", help)


def _add_move_stale(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--move-stale",
        action="store_true",
        help="if --out holds a run with other settings or code, rename it to OUT.<time> and "
        "start fresh (default: refuse)",
    )


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
        epilog=reproduce_epilog(),
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
    parts = "; ".join(
        f"{e.name}: {', '.join(e.parts[1:])}" for e in EXPERIMENTS if len(e.parts) > 1
    )
    rep.add_argument(
        "--part",
        default="all",
        choices=sorted({p for e in EXPERIMENTS for p in e.parts}),
        metavar="PART",
        help=f"a subset of the experiment: all (default); {parts}",
    )
    rep.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="PARAM=VALUE",
        dest="settings",
        help="set a declared parameter of the experiment (repeatable; a tuple: comma-separated "
        "values): `--set data_sets=3`; --help-params lists them",
    )
    rep.add_argument(
        "--config",
        type=Path,
        default=None,
        metavar="FILE.toml",
        help="parameters from a TOML file of `name = value` lines (--set wins)",
    )
    rep.add_argument(
        "--help-params",
        action="store_true",
        help="list the experiment's parameters (type, valid range, default, quick and full "
        "values) and exit",
    )
    rep.add_argument(
        "--decide",
        action="store_true",
        help="run until the claims are decided, in two stages: the pilot (the ordinary run, "
        "into OUT/pilot) sizes a second run under another seed (OUT/decide) with every "
        "replicate parameter multiplied by the largest factor the inconclusive claims ask for, "
        "within --budget; the second run's verdicts are final (docs/verdicts.md says why the "
        "95%% holds); default OUT: reports/EXPERIMENT-LEVEL-decide",
    )
    rep.add_argument(
        "--budget",
        default="2h",
        metavar="DURATION",
        help="with --decide: the most wall time the second stage may take, estimated from the "
        "pilot's (600s, 45m, 2h; default 2h)",
    )
    rep.add_argument(
        "--record",
        action="store_true",
        help="with --decide: also write the deciding run (verdicts, plan, the final stage's "
        "records, commit, machine, command, wall time) to "
        "bench/results/decided/EXPERIMENT-LEVEL.json.gz, which the report shows beside "
        "fresh runs and which is kept under version control",
    )
    _add_backend_args(rep, "processes for --scheduler process (default 1)")
    _add_move_stale(rep)
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
