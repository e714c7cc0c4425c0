"""The long help texts of the ``harness`` command line (``--help`` epilogs and descriptions),
apart from the parser that shows them (harness/cli/parser.py)."""

from __future__ import annotations

import textwrap

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


DESCRIPTION_CALIBRATE = (
    "Run one algorithm on one problem over many seeds, with the parameters\n"
    "`harness verify` gives it there (exact_answer=True for an approximate sampler), and\n"
    "decide for each gate whether its rate of failures at --alpha lies within --factor of\n"
    "alpha, each decision wrong with probability at most --error (a sequential test:\n"
    "looks at 50 seeds, every doubling and the last seed; it stops once every gate is\n"
    "decided). Also shows where each gate's p-values leave their simultaneous ECDF band and\n"
    "its power both ways. Exit 0 when no gate is rejected, 1 when one is (its rate outside\n"
    "the zone, or its p-values not uniform), 2 on a usage error."
)

EPILOG_CALIBRATE = (
    "how a gate is judged (the 'kind' column):\n"
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
    "  harness reproduce gate-quality --level full   # every algorithm, and the planted bugs\n"
)


def reproduce_epilog() -> str:
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
        "                   reproduced, not reproduced, inconclusive or setting differs",
        "                   (with what its rule alone gives), our value and 95% interval",
        "                   beside the paper's, the reason, and what would have made it fail;",
        "                   other readings of a claim follow it (reading_of) and are not counted",
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


EPILOG_LIST = """\
what it shows:
  One row per registered algorithm: its family, its guarantee (exact draws, approximate within
  a promised delta, or an MCMC kernel), the target kinds it accepts, the implementation keys
  this machine can run (reference, numba, cuda) and the paper section it follows. With
  --problems, the verification problems too: name, target kind and the levels they run at.

examples:
  harness list                                   # the algorithms
  harness list --problems                        # and the problems verify runs them on
  harness list --plugin my_sampler.py            # with the algorithms a plugin registers
  harness list --problems --plugin my_problem.py # with a plugin's problems
  harness list --json | python -m json.tool      # everything, machine-readable
  harness list --experiments                     # the paper experiments `make run` runs
"""
