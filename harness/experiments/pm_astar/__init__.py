"""PM-A* against A* and A* without a bound (004_b270422b62f00607.txt, Sec. 5): exact draws on a
1-D mixture, and the best Gumbel value each search finds on the Sec. 3 counter-example, on
clutter and on Bayesian logistic regression (with MH from the prior).

A* runs under two readings of its bound (``astar_bounds``): ``exact``, a true bound (ours), and
``paper``, 004 Sec. 5.3's SGD estimate of the box's maximum (``pm_examples.with_sgd_bound``),
which is no bound, so that A* prunes and stops early where the estimate falls short. 004's
claims are judged in paper_claims.py."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
from scipy import stats

from harness.declare import Config, param
from harness.display import cell, fmt, table
from harness.experiments import claims as cl
from harness.experiments.framework import Column, Experiment, task
from harness.experiments.plots import Line, group, line_figure
from harness.registry import registry_for
from harness.spec import Draws, sample
from harness.targets.box_density import clutter
from harness.targets.logistic_box import GENERATED, MIKA_SIZES, mika_kind, mika_logistic
from harness.targets.pm_examples import (
    SGD_BATCH,
    SGD_STEPS,
    bimodal_mixture,
    counter_example,
    with_sgd_bound,
)
from harness.tasks import Records, Task

TRAJECTORY = {"estimator": "trajectory", "particles": 4, "step": 0.5}  # ours: 004 tunes SGD
#: The searches: label -> (registered algorithm, parameters), each the Numba build through
#: the registry; A* stops on its regions' bounds, the others on the box's one bound.
SEARCHES: dict[str, tuple[str, dict[str, Any]]] = {
    "PM-A*": ("pm-astar", {"stop_bound": "global"}),
    "PM-A* (trajectory)": ("pm-astar", {"stop_bound": "global", **TRAJECTORY}),
    "A*": ("astar-pm-search", {}),
    "A* without a bound": ("astar-nobound", {}),
}
EDGES = np.linspace(-6.0, 6.0, 61)  # Fig. 2a's histogram grid
#: A*'s bound: a true one (ours) or 004 Sec. 5.3's SGD estimate of the box's maximum; with
#: "paper-nostop" (a diagnostic) A* keeps the estimate's order but runs to the horizon.
BOUNDS = ("exact", "paper", "paper-nostop")
SGD_ASTAR, SGD_ORDER = "A* (SGD bound)", "A* (SGD order, no stop)"
SGD_LABELS = (SGD_ASTAR, SGD_ORDER)
#: An offset far above any gap between Gumbel values here: the order stays, the stop never comes.
SGD_NO_STOP = 1e4
#: The problems where 004's A* used the SGD estimate (Sec. 5.3); the counter-example's D(S) is
#: exact in 004 Sec. 3.
SGD_PROBLEMS = ("clutter", "logistic")


def search(algorithm: str, target: Any, n: int, rng: np.random.Generator, **params: Any) -> Draws:
    """``n`` draws of the registered ``algorithm``'s Numba build (what ``harness verify``
    gates)."""
    return sample(registry_for(()).get(algorithm), "numba", target, n, rng, **params)


def _searches(target: Any) -> dict[str, tuple[str, dict[str, Any]]]:
    """The searches that apply (the trajectory needs a gradient)."""
    grad = target.log_lik_grad is not None
    return {lb: s for lb, s in SEARCHES.items() if grad or "estimator" not in s[1]}


def mixture_task(draws: int, rng: np.random.Generator) -> list[dict[str, Any]]:
    """Exact draws of each search on the Sec. 5.1 mixture, against its quadrature truth."""
    target = bimodal_mixture()
    out = []
    for label, (algorithm, params) in _searches(target).items():
        t0 = time.perf_counter()
        d = search(algorithm, target, draws, rng, **params)
        wall = time.perf_counter() - t0
        x = np.asarray(d.values, dtype=float)
        gumbel = d.extras["gumbel_max"] - target.log_normaliser
        rec = {"type": "mixture", "label": label, "draws": draws}
        rec["counts"] = np.histogram(x, EDGES)[0].tolist()
        rec["ks_p"] = float(stats.kstest(x, lambda v: target.marginal_cdf(0, v)).pvalue)
        rec["gumbel_ks_p"] = float(stats.kstest(gumbel, stats.gumbel_r.cdf).pvalue)
        rec["evals_per_draw"] = d.evals / draws
        rec["evals_sd_per_draw"] = float(np.std(d.extras["draw_evals"], ddof=1))
        rec["bounds_per_draw"] = float(np.mean(d.extras["bound_evals"]))
        rec["expansions"] = float(np.mean(d.extras["expanded"]))
        out.append(rec | {"draws_wall_s": wall})
    return out


def trace_task(
    problem: str,
    args: dict[str, Any],
    runs: int,
    horizon: int,
    bounds: tuple[str, ...] = ("exact",),
    sgd: tuple[int, int] = (SGD_STEPS, SGD_BATCH),
    *,
    rng: np.random.Generator,
) -> list[dict[str, Any]]:
    """``runs`` searches of each kind, interleaved, each for ``horizon`` expansions (or to its
    stop): the mean best Gumbel value after each expansion, each run's at :func:`checkpoints`,
    and the runs' wall times. On clutter and logistic regression, ``bounds`` names A*'s readings
    (:data:`BOUNDS`; ``sgd``: the estimate's steps and minibatch); A* on the SGD estimate draws
    from a generator spawned from ``rng``, so the other searches' streams do not depend on it."""
    if problem == "counter":
        target = counter_example()
    elif problem == "clutter":
        target = clutter(int(args["D"]), seed=int(args["seed"]), points=int(args["points"]))
    else:
        target = mika_logistic(args["set"], seed=int(args.get("seed", 0)))
    paper = [b for b in bounds if b != "exact"] if problem in SGD_PROBLEMS else []
    exact = "exact" in bounds or problem not in SGD_PROBLEMS  # 004 Sec. 3's D(S) is exact
    runs_of = [(lb, s, target, rng) for lb, s in _searches(target).items() if exact or lb != ASTAR]
    for b, own in zip(paper, rng.spawn(len(paper)), strict=True):
        far = SGD_NO_STOP if b == "paper-nostop" else 0.0
        runs_of.append(
            (ASTAR_OF[b], SEARCHES[ASTAR], with_sgd_bound(target, problem, *sgd, far), own)
        )
    warm = np.random.default_rng(0)
    for _, (algorithm, params), t, _ in runs_of:  # compile for each target before any timing
        search(algorithm, t, 1, warm, horizon=2, **params)
    fields = ("trace", "exact", "run_wall_s", "evals", "bounds", "loglik", "expanded")
    got: dict[str, dict[str, list[Any]]] = {lb: {k: [] for k in fields} for lb, *_ in runs_of}
    for _ in range(runs):
        for label, (algorithm, params), t, r in runs_of:
            t0 = time.perf_counter()
            d = search(algorithm, t, 1, r, horizon=horizon, **params)
            g = got[label]
            g["run_wall_s"].append(time.perf_counter() - t0)
            trace = d.extras["trace"][0]  # after an exact stop, held at the final value
            g["trace"].append(np.where(np.isnan(trace), d.extras["gumbel_max"][0], trace))
            g["evals"].append(d.evals)
            g["bounds"].append(int(d.extras["bound_evals"][0]))
            g["exact"].append(bool(d.extras["exact_stop"][0]))
            g["expanded"].append(int(d.extras["expanded"][0]))
            g["loglik"].append(target.o(np.atleast_1d(np.asarray(d.values, dtype=float)[0])))
    records = []
    at = checkpoints(horizon)
    for label, g in got.items():
        t, stops = np.array(g.pop("trace")), sum(g.pop("exact"))
        rec = {"type": "trace", "problem": problem, "args": args, "label": label, "runs": runs}
        rec |= _data(problem, args)
        rec |= {"horizon": horizon, "mean_trace": t.mean(axis=0).tolist()}
        rec |= {"checkpoints": at, "at_checkpoints": t[:, np.array(at) - 1].tolist()}
        if label in SGD_LABELS:
            rec["sgd"] = list(sgd)
        records.append(rec | {"final": t[:, -1].tolist()} | g | {"exact_stops": stops})
    if problem == "logistic":
        records.append(_mh(target, args, runs, 2 * horizon, rng))
    return records


def _data(problem: str, args: dict[str, Any]) -> dict[str, str]:
    """A logistic record's ``data``: the set's generator (ringnorm, twonorm, waveform) or a
    synthetic stand-in (the other ten)."""
    return {"data": mika_kind(args["set"])} if problem == "logistic" else {}


def checkpoints(horizon: int, count: int = 64) -> list[int]:
    """The expansions (1-based) at which each run's best value is kept: ``count`` evenly spread
    up to the horizon, for comparisons at equal time."""
    return sorted({max(1, math.ceil(horizon * j / count)) for j in range(1, count + 1)})


def _mh(target: Any, args: dict[str, Any], runs: int, steps: int, rng: np.random.Generator) -> dict:
    """Random-walk MH from a prior draw (004 Sec. 5.3.2's baseline) with PM-A*'s budget of two
    likelihood evaluations an expansion: its final log-likelihood and the best it visited."""
    d, scale = target.d, 0.05 / math.sqrt(target.d)  # our step, in logistic_box's coordinates
    final, best, walls = [], [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        x = target.sample_in(target.lo, target.hi, rng.random(d))
        top = o = target.o(x)
        log_p = target.log_proposal(x) + o
        for _ in range(steps - 1):
            y = x + scale * rng.standard_normal(d)
            if np.any(y <= target.lo) or np.any(y >= target.hi):
                rng.random()  # keep one uniform a step whatever happens
                continue
            o_y = target.o(y)
            log_q = target.log_proposal(y) + o_y
            if math.log(1.0 - rng.random()) < log_q - log_p:
                x, o, log_p = y, o_y, log_q
                top = max(top, o)
        walls.append(time.perf_counter() - t0)
        final.append(o)
        best.append(top)
    out = {"type": "mh", "problem": "logistic", "args": args, "label": MH, "runs": runs}
    out |= _data("logistic", args)
    return out | {"steps": steps, "loglik": final, "best_loglik": best, "run_wall_s": walls}


PM, TRAJ, ASTAR, NOBOUND, MH = (*SEARCHES, "MH from the prior")
#: The same in every figure.
COLOURS = dict(zip((*SEARCHES, *SGD_LABELS), ("C3", "C1", "C0", "C2", "C4", "C5"), strict=True))
#: A*'s label under each reading of its bound.
ASTAR_OF = {"exact": ASTAR, "paper": SGD_ASTAR, "paper-nostop": SGD_ORDER}
NOTES = (
    "Readings: Fig. 2a's phi_P = -log(...) as a sign typo, N(0, 2) as sd 2; Fig. 2b's spike as "
    "1e100 high, 0.5e-105 wide (1e400 is no double); Fig. 3's clutter as 001's: prior sd 2, "
    "inlier weight 0.5, clutter sd 100, points in [-5,-3]^D and [2,4]^D (004 states none).",
    "A*'s bound, exact: per-point maxima (clutter), exact tangent planes (logistic). Paper "
    "(004 Sec. 5.3): SGD's estimate of the box's maximum, no bound, so A* (SGD bound) prunes and "
    "stops early; 004 tunes SGD but gives no setting. Ours: from the box's middle, cyclic "
    "minibatches, step eta0 / sqrt(1 + t), o at the last point (pm_examples.with_sgd_bound). "
    "The SGD-bound verdicts depend on sgd_steps and sgd_batch (docs/experiments.md).",
    "PM-A* (trajectory): 4 points of a gradient ascent, step 0.5, prior-weighted (004: SGD's).",
    "Fig. 4: ringnorm, twonorm, waveform from their generators (Breiman 1996; waveform as "
    "class 1 vs 2 + 3, our reading); the other ten sets SYNTHETIC stand-ins of their (dim, n). "
    "MH: a random walk, step 0.05 / sqrt(d).",
)


QUICK_SETS = ("titanic", "flare-sonar", "heart", "thyroid", "breast-cancer")


@dataclass(frozen=True, kw_only=True)
class PMConfig(Config):
    experiment = "pm-astar"
    mixture_draws: int = param(low=100, quick=2000, full=20_000, doc="mixture draws a search")
    counter_runs: int = param(low=1, quick=50, full=100, doc="counter-example runs")
    counter_horizon: int = param(low=1, quick=300, full=1000, doc="counter-example expansions")
    clutter_dims: tuple[int, ...] = param((5, 15, 20), low=1, high=100, doc="clutter D")
    clutter_points: int = param(20, low=1, doc="clutter data points")
    clutter_runs: int = param(low=1, quick=20, full=100, doc="clutter runs")
    clutter_horizon: int = param(low=1, quick=1000, full=3000, doc="clutter expansions")
    logistic_sets: tuple[str, ...] = param(
        choices=tuple(MIKA_SIZES), quick=QUICK_SETS, full=tuple(MIKA_SIZES), doc="logistic sets"
    )
    logistic_runs: int = param(low=1, quick=10, full=100, doc="logistic runs")
    logistic_horizon: int = param(low=1, quick=500, full=2000, doc="logistic expansions")
    # 004's A* (SGD's estimate) is the primary reading of Fig. 3 and 4a, so both levels run it
    # (about 15 s more at quick); the default keeps old manifests, written without it, as run.
    astar_bounds: tuple[str, ...] = param(
        BOUNDS[:1],
        choices=BOUNDS,
        quick=BOUNDS[:2],
        full=BOUNDS[:2],
        doc="A*'s bound: exact (a true bound), paper (004's SGD estimate)",
    )
    sgd_steps: int = param(SGD_STEPS, low=1, doc="SGD steps of the paper bound (ours)")
    sgd_batch: int = param(SGD_BATCH, low=1, doc="SGD minibatch of the paper bound (ours)")
    notes: tuple[str, ...] = param((), empty=True, quick=NOTES, full=NOTES)


def _new_data(name: str) -> dict[str, str]:
    """Ringnorm, twonorm and waveform once ran on stand-ins: a field in their arguments gives
    them new task keys, so an old run's records of them do not resume as the generators'."""
    return {"data": "breiman-1996"} if mika_kind(name) == GENERATED else {}


def settings(c: PMConfig) -> dict[str, list[dict[str, Any]]]:
    """Each trace problem's task arguments (runs and horizon: the config's ``<problem>_*``)."""
    return {
        "counter": [{}],
        "clutter": [{"D": D, "seed": 5000 + D, "points": c.clutter_points} for D in c.clutter_dims],
        "logistic": [{"set": s, "seed": 0} | _new_data(s) for s in c.logistic_sets],
    }


#: PM-A*'s estimator in each problem's figure (004 Sec. 5.3 names the trajectory's; Sec. 5.2
#: none, so the prior's, which needs only what A* needs).
PM_OF = {"counter": PM, "clutter": TRAJ, "logistic": TRAJ}
PANELS = {
    "counter": "Fig. 2b: counter-example",
    "clutter": "Fig. 3: clutter, D = {D}",
    "logistic": "Fig. 4a: logistic regression, summed over the data sets",
}


def seconds_per_expansion(r: dict[str, Any]) -> float:
    """Seconds per expansion: the runs' wall time spread evenly over their expansions (the
    horizon, or fewer where a search stopped)."""
    done = float(np.mean(r["expanded"])) if "expanded" in r else r["horizon"]
    return float(np.mean(r["run_wall_s"])) / max(done, 1.0)


def _gap(a: dict[str, Any], b: dict[str, Any]) -> str:
    """mean(a) - mean(b) of the final best values, with its interval where runs allow one."""
    try:
        return cl.sum_of_differences([(a["final"], b["final"])]).text()
    except cl.Inconclusive as exc:
        return fmt(exc.value)


def _of(field: str, f: Any = np.mean) -> Any:
    return lambda r: float(f(r[field])) if field in r else None


class PmAstar(Experiment[PMConfig]):
    """PM-A*, A* and A* without a bound: exact draws on a 1-D mixture (Fig. 2a); the best Gumbel
    value found on the counter-example (Fig. 2b), clutter at D = 5, 15, 20 (Fig. 3) and logistic
    regression on the 13 sets' sizes (ringnorm, twonorm and waveform from their generators, the
    others synthetic stand-ins), with MH (Fig. 4); A* both on a true bound
    and on 004's SGD estimate in its place (Sec. 5.3). The full level runs all 13 sets (hours on
    one core: --scheduler local:K). --part mixture|counter|clutter|logistic."""

    replicates = ("counter_runs", "clutter_runs", "logistic_runs")

    paper = "004_b270422b62f00607.txt, Sec. 5 (Fig. 2a, 2b, 3, 4)"
    summary = "PM-A* vs A* and A* without a bound: mixture, counter-example, clutter, logistic"
    title = "A* sampling with probability matching (PM-A*)"
    parts = ("all", "mixture", "counter", "clutter", "logistic")
    columns = (
        Column("problem", lambda r: r.get("problem", "mixture")),
        Column("setting", lambda r: r.get("args", {}).get("D", r.get("args", {}).get("set"))),
        Column("search", "label"),
        Column("runs", "runs"),
        Column("best Gumbel (mean)", _of("final"), ".4g"),
        Column("sd over runs", _of("final", lambda v: np.std(v, ddof=1)), ".3g"),
        Column("log-lik (mean)", _of("loglik"), ".5g"),
        Column("MH best visited", _of("best_loglik"), ".5g"),
        Column("lik evals / run", _of("evals"), ".4g"),
        Column("bound evals / run", _of("bounds"), ".4g"),
        Column(
            "us / expansion",
            lambda r: 1e6 * seconds_per_expansion(r) if "horizon" in r else None,
            ".3g",
        ),
        Column("stops on the bound", "exact_stops"),
        Column("KS p (x)", "ks_p", ".3g"),
        Column("KS p (Gumbel max)", "gumbel_ks_p", ".3g"),
        Column("lik / draw", "evals_per_draw", ".3g"),
    )

    def plan(self, config: PMConfig, records: Records, part: str) -> list[Task]:
        c = config
        tasks = [task(c, f"mixture|n={c.mixture_draws}", mixture_task, c.mixture_draws)]
        sgd = (c.sgd_steps, c.sgd_batch)
        for problem, arguments in settings(c).items():
            runs, horizon = getattr(c, problem + "_runs"), getattr(c, problem + "_horizon")
            for args in arguments:
                key = f"{problem}|{sorted(args.items())}|runs={runs}|T={horizon}"
                inputs = (problem, args, runs, horizon)
                tasks.append(task(c, key, trace_task, *inputs, c.astar_bounds, sgd))
        return [t for t in tasks if part in ("all", t.key.split("|")[0])]

    def claims(self, config: PMConfig) -> tuple[cl.Claim, ...]:
        from harness.experiments.pm_astar.paper_claims import mixture_claims, trace_claims

        return (*mixture_claims(), *trace_claims(config))

    def givens(self, config: PMConfig) -> tuple[cl.Given, ...]:
        from harness.experiments.pm_astar.paper_claims import paper_givens

        return paper_givens()

    def tables(self, config: PMConfig, records: Records) -> list[dict[str, Any]]:
        """Where PM-A* leads: each setting's gap to every baseline, at equal expansions."""
        rows = []
        for problem, arguments in settings(config).items():
            pm = PM_OF[problem]
            for args in arguments:
                got = {
                    r["label"]: r
                    for r in records
                    if r["type"] == "trace" and r["problem"] == problem and r["args"] == args
                }
                if pm not in got:
                    continue
                row = [cell(problem), cell(args.get("D", args.get("set", "-"))), cell(pm)]
                for b in (ASTAR, SGD_ASTAR, NOBOUND):
                    row.append(cell(_gap(got[pm], got[b]) if b in got else "-", "num"))
                sgd = got.get(SGD_ASTAR)
                stops = f"{sgd['exact_stops']}/{sgd['runs']}" if sgd else "-"
                ratio = (
                    seconds_per_expansion(got[ASTAR]) / seconds_per_expansion(got[pm])
                    if ASTAR in got
                    else None
                )
                rows.append([*row, cell(stops, "num"), cell(fmt(ratio), "num")])
        if not rows:
            return []
        columns = ("problem", "setting", "PM-A*", "- A*", "- A* (SGD bound)", "- A* w/o bound")
        columns += ("A* (SGD bound) stops", "A* / PM-A* time an expansion")
        caption = "Mean best Gumbel value after the horizon, PM-A* minus each baseline, with a 95% "
        caption += "t interval: above 0 where PM-A* leads at equal expansions. Fig. 3 and 4a plot "
        caption += "time: the last column says how many of PM-A*'s expansions one of A*'s costs. "
        caption += "A* (SGD bound) stops where its best value beats every region's G + estimate, "
        caption += "early and not exact."
        return [table("Where PM-A* leads", columns, rows, caption)]

    def skipped(self, config: PMConfig) -> list[str]:
        return ["AIE (Rainforth et al. 2018), a Fig. 4b baseline: only its abstract is available."]

    def figures(self, config: PMConfig, records: Records) -> list[dict[str, Any]]:
        figs: list[tuple[str, str]] = []
        plot = partial(line_figure, logx=False, logy=False)
        if mix := [r for r in records if r["type"] == "mixture"]:
            x, w = 0.5 * (EDGES[1:] + EDGES[:-1]), EDGES[1] - EDGES[0]
            truth = np.exp(-((x + 2) ** 2) / 2) + 2 * np.exp(-((x - 2) ** 2) / 2)
            density = {r["label"]: np.array(r["counts"]) / (r["draws"] * w) for r in mix}
            ls = [Line(lb, x, y, color=COLOURS[lb]) for lb, y in density.items()]
            ls.append(Line("truth", x, truth / math.sqrt(18 * math.pi), color="k", style="--"))
            figs.append(("Fig. 2a: mixture", plot(ls, "x", "density")))
        panels: dict[str, dict[str, Records]] = {}  # figure -> search -> its records
        for r in (r for r in records if r["type"] == "trace"):
            title = PANELS[r["problem"]].format(**r["args"])
            panels.setdefault(title, {}).setdefault(r["label"], []).append(r)
        for title, searches in panels.items():
            timed = not title.startswith("Fig. 2b")  # 004 plots the others against time
            ls = []
            for rs in searches.values():  # a search's mean best value, summed over ``rs``
                t = np.arange(1, rs[0]["horizon"] + 1) * (
                    sum(map(seconds_per_expansion, rs)) if timed else 1
                )
                y = np.sum([r["mean_trace"] for r in rs], axis=0)
                ls.append(Line(rs[0]["label"], t, y, color=COLOURS[rs[0]["label"]]))
            figs.append((title, plot(ls, "seconds" if timed else "expansions", "mean best Gumbel")))
        caption = "Fig. 2a: exact draws against the quadrature density. The others: the mean over "
        caption += "runs of the best Gumbel value found. Fig. 4b's is in the records table."
        return [group("004's figures", caption, *figs)] if figs else []
