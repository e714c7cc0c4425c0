"""The tasks of the PM-A* reproductions: exact draws on the Sec. 5.1 mixture, and best-Gumbel
traces of PM-A*, A* and A* without a bound on the counter-example, clutter and logistic
regression (plus MH from the prior on the latter)."""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
from scipy import stats

from harness.experiments.pm_astar.settings import MH_STEP, SEARCHES
from harness.targets.box_density import clutter
from harness.targets.logistic_box import mika_logistic
from harness.targets.pm_examples import bimodal_mixture, counter_example
from implementations.astar import pm_fast

#: Fig. 2a's histogram grid.
EDGES = np.linspace(-6.0, 6.0, 61)


def build(problem: str, args: dict[str, Any]):
    if problem == "counter":
        return counter_example()
    if problem == "clutter":
        return clutter(int(args["D"]), seed=int(args["seed"]), points=int(args["points"]))
    return mika_logistic(args["set"], seed=int(args.get("seed", 0)))


def _stop(select: str) -> str:
    return "regions" if select == "max-bound" else "global"


def _searches(target) -> dict[str, tuple[str, dict[str, Any]]]:
    """The searches that apply: the trajectory estimator needs the target's gradient."""
    return {
        label: (select, params)
        for label, (select, params) in SEARCHES.items()
        if params.get("estimator") != "trajectory" or target.log_lik_grad is not None
    }


def mixture_task(draws: int, rng: np.random.Generator) -> list[dict[str, Any]]:
    """Exact draws of each search on the Sec. 5.1 mixture, against its quadrature truth."""
    target = bimodal_mixture()
    out = []
    for label, (select, params) in _searches(target).items():
        t0 = time.perf_counter()
        d = pm_fast.pm_search(target, draws, rng, select, stop_bound=_stop(select), **params)
        wall = time.perf_counter() - t0
        x = np.asarray(d.values, dtype=float)
        counts, _ = np.histogram(x, EDGES)
        out.append(
            {
                "type": "mixture",
                "label": label,
                "draws": draws,
                "counts": counts.tolist(),
                "ks_p": float(stats.kstest(x, lambda v: target.marginal_cdf(0, v)).pvalue),
                "gumbel_ks_p": float(
                    stats.kstest(
                        d.extras["gumbel_max"] - target.log_normaliser, stats.gumbel_r.cdf
                    ).pvalue
                ),
                "evals_per_draw": d.evals / draws,
                "bounds_per_draw": float(np.mean(d.extras["bound_evals"])),
                "expansions": float(np.mean(d.extras["expanded"])),
                "draws_wall_s": wall,
            }
        )
    return out


def _filled(trace: np.ndarray, final: float) -> np.ndarray:
    """A run's best value after each expansion, held at its final value after an exact stop."""
    out = trace.copy()
    out[np.isnan(out)] = final
    return out


def trace_task(
    problem: str, args: dict[str, Any], runs: int, horizon: int, rng: np.random.Generator
) -> list[dict[str, Any]]:
    """``runs`` searches of each kind, interleaved, each for ``horizon`` expansions (or to its
    exact stop): the mean best Gumbel value after each expansion and the runs' wall times."""
    target = build(problem, args)
    searches = _searches(target)
    warm = np.random.default_rng(0)
    for select, params in searches.values():  # compile for this target before any timing
        pm_fast.pm_search(target, 1, warm, select, horizon=2, stop_bound=_stop(select), **params)
    traces = {label: [] for label in searches}
    walls = {label: [] for label in searches}
    evals = {label: [] for label in searches}
    bounds = {label: [] for label in searches}
    logliks = {label: [] for label in searches}
    exact = {label: 0 for label in searches}
    for _ in range(runs):
        for label, (select, params) in searches.items():
            t0 = time.perf_counter()
            d = pm_fast.pm_search(
                target, 1, rng, select, horizon=horizon, stop_bound=_stop(select), **params
            )
            walls[label].append(time.perf_counter() - t0)
            traces[label].append(_filled(d.extras["trace"][0], float(d.extras["gumbel_max"][0])))
            evals[label].append(d.evals)
            bounds[label].append(int(d.extras["bound_evals"][0]))
            exact[label] += bool(d.extras["exact_stop"][0])
            x = np.atleast_1d(np.asarray(d.values, dtype=float)[0])
            logliks[label].append(target.o(x))
    records = []
    for label in searches:
        t = np.array(traces[label])
        records.append(
            {
                "type": "trace",
                "problem": problem,
                "args": args,
                "label": label,
                "runs": runs,
                "horizon": horizon,
                "mean_trace": t.mean(axis=0).tolist(),
                "final": t[:, -1].tolist(),
                "run_wall_s": walls[label],
                "evals": evals[label],
                "bounds": bounds[label],
                "loglik": logliks[label],
                "exact_stops": exact[label],
            }
        )
    if problem == "logistic":
        records.append(_mh(target, args, runs, 2 * horizon, rng))
    return records


def _mh(target, args: dict[str, Any], runs: int, steps: int, rng: np.random.Generator) -> dict:
    """Random-walk MH started from a prior draw (004 Sec. 5.3.2's baseline), as many likelihood
    evaluations as PM-A*'s two a expansion: the log-likelihood of its state at the end and the
    best it visited."""
    d = target.d
    final, best, walls = [], [], []
    scale = MH_STEP / math.sqrt(d)
    for _ in range(runs):
        t0 = time.perf_counter()
        x = target.sample_in(target.lo, target.hi, rng.random(d))
        o = target.o(x)
        log_p = target.log_proposal(x) + o
        top = o
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
    return {
        "type": "mh",
        "problem": "logistic",
        "args": args,
        "label": "MH from the prior",
        "runs": runs,
        "steps": steps,
        "loglik": final,
        "best_loglik": best,
        "run_wall_s": walls,
    }
