"""Numba-to-reference speed ratios, timed side by side in one process.

Absolute times on a shared machine are noise; a ratio of the two implementations timed in
alternation on the same input is not. Each repeat times the reference and then the Numba
version on the same problem; the report gives the median ratio and its interquartile range.
"""

from __future__ import annotations

import time
from typing import Any, NamedTuple

import numpy as np

from harness.display import record_table, yes_no
from harness.registry import build_registry
from harness.spec import Param, check_sample_size, sample
from harness.targets.discrete import synthetic_rewards

#: Timed repeats of each measurement: at least 3 for a median and an interquartile range.
REPEAT = Param("repeat", 5, int, low=3)


def parse_size(text: str) -> tuple[int, int]:
    try:
        d, n = (int(float(v)) for v in text.split(","))
    except ValueError:
        raise ValueError(f"--size {text!r} is invalid; valid: D,N such as 10,100000") from None
    if d < 1 or n < 2:
        raise ValueError(f"--size {text!r} is invalid; valid: D >= 1 and N >= 2")
    return d, n


def _speed_targets(spec: Any, sizes: list[tuple[int, int]]) -> list[tuple[Any, Any, Any]]:
    """(D, N, target) to time on: synthetic rewards of each size for discrete samplers, else
    the first quick verification problem of the sampler's target kind."""
    if "discrete" in spec.target_kinds:
        return [
            (D, N, synthetic_rewards(D, N, "normal", 1.0, np.random.default_rng(0)))
            for D, N in sizes
        ]
    from harness.targets.catalog import build_target, problems

    kind = spec.target_kinds[0]
    found = problems(kind, "quick")
    if not found:
        raise ValueError(f"no verification problem of kind {kind!r} to time {spec.name!r} on")
    target = build_target(found[0].name)
    size = getattr(target, "N", getattr(target, "n_vars", "-"))
    return [(getattr(target, "D", "-"), size, target)]


def speed_ratios(
    algorithms: list[str], sizes: list[tuple[int, int]], draws: int, repeat: int
) -> dict[str, Any]:
    draws = check_sample_size(draws, "draws")
    repeat = REPEAT.check(repeat)
    registry = build_registry()
    rows = []
    for name in algorithms:
        spec = registry.get(name)
        if not {"reference", "numba"} <= set(spec.implementations):
            raise ValueError(f"{name!r} has implementations {list(spec.implementations)}")
        for D, N, target in _speed_targets(spec, sizes):
            sample(spec, "numba", target, 1, np.random.default_rng(0))  # compile and warm
            ref, fast = [], []
            for r in range(repeat):
                for impl, store in (("reference", ref), ("numba", fast)):
                    rng = np.random.default_rng(r)
                    t0 = time.perf_counter()
                    sample(spec, impl, target, draws, rng)
                    store.append(time.perf_counter() - t0)
            ratios = np.asarray(ref) / np.asarray(fast)
            rows.append(
                {
                    "algorithm": name,
                    "D": D,
                    "N": N,
                    "draws": draws,
                    "reference_s_per_draw": float(np.median(ref)) / draws,
                    "numba_s_per_draw": float(np.median(fast)) / draws,
                    "ratio_median": float(np.median(ratios)),
                    "ratio_iqr": [
                        float(np.percentile(ratios, 25)),
                        float(np.percentile(ratios, 75)),
                    ],
                }
            )
    return {"rows": rows, "repeat": repeat}


def format_speed(result: dict[str, Any]) -> str:
    columns = [
        ("algorithm", "l", lambda r: r["algorithm"]),
        ("D", "r", lambda r: str(r["D"])),
        ("N", "r", lambda r: str(r["N"])),
        ("ref s/draw", "r", lambda r: f"{r['reference_s_per_draw']:.3e}"),
        ("numba s/draw", "r", lambda r: f"{r['numba_s_per_draw']:.3e}"),
        ("ratio", "r", lambda r: f"{r['ratio_median']:.1f}"),
        ("IQR", "l", lambda r: "[{:.1f}, {:.1f}]".format(*r["ratio_iqr"])),
    ]
    return record_table(result["rows"], columns)


def _uniform_potts(n: int, L: float, beta: float = 1.0, D: int = 4) -> Any:
    """A complete graph whose every variable has degree n - 1 and the same L = beta sum_j A_ij."""
    from harness.targets.factor_graph import potts_target

    A = np.full((n, n), L / (beta * (n - 1)))
    np.fill_diagonal(A, 0.0)
    return potts_target(A, beta, D, name=f"uniform-potts-n{n}")


#: 003 Statement 1: a Poisson-Gibbs step costs O(lam + L), not O(degree); at fixed L its time
#: per step at any degree may be at most this many times its time at the smallest degree.
DEGREE_LIMIT = 1.5

#: The arrays each algorithm's Numba kernel reads at random (the 'graph MB' column).
_RANDOM_READS = {
    "gibbs": ("tables", "adj_factors", "adj_pos", "adj_other"),
    "poisson-gibbs": ("slot_records", "adj_indptr", "m_sum"),
}


def _graph_bytes(target: Any, algorithm: str) -> int:
    """Bytes a step of ``algorithm`` may touch at random. Once they leave the CPU caches each
    random read costs a memory access, degree-free or not."""
    return sum(getattr(target, a).nbytes for a in _RANDOM_READS[algorithm])


def degree_scaling(
    degrees: list[int], L: float = 2.0, steps: int = 20_000, repeat: int = 5
) -> dict[str, Any]:
    """003, Statement 1: a Poisson-Gibbs step costs O(lam + L), not O(degree).

    On complete graphs of growing degree with L held fixed, time Gibbs and Poisson-Gibbs
    (lam = L^2, Numba) side by side, alternating within each repeat; report the median time per
    step and factors per step, and each one's time relative to the smallest degree (Poisson-Gibbs
    against DEGREE_LIMIT; Gibbs is O(degree) by design). Both keep one
    state per sweep (thin = n): storing every state would copy n values per step, an O(degree)
    cost of recording that is not part of the transition.
    """
    if len(degrees) < 2:
        raise ValueError(f"degrees = {degrees}; valid: at least two degrees, each >= 2")
    degrees = [Param("degree", 2, int, low=2).check(d) for d in degrees]
    steps = check_sample_size(steps, "steps")
    repeat = REPEAT.check(repeat)
    registry = build_registry()
    algorithms = {"gibbs": {}, "poisson-gibbs": {"lam": L * L}}
    rows = []
    for degree in sorted(degrees):
        target = _uniform_potts(degree + 1, L)
        thin = {"thin": target.n_vars}
        times: dict[str, list[float]] = {a: [] for a in algorithms}
        factors: dict[str, float] = {}
        for name, params in algorithms.items():  # compile and warm
            sample(
                registry.get(name),
                "numba",
                target,
                2 * target.n_vars,
                np.random.default_rng(0),
                **params,
                **thin,
            )
        for r in range(repeat):
            for name, params in algorithms.items():
                rng = np.random.default_rng(r)
                t0 = time.perf_counter()
                chain = sample(registry.get(name), "numba", target, steps, rng, **params, **thin)
                times[name].append((time.perf_counter() - t0) / steps)
                factors[name] = float(np.mean(chain.extras["factors_per_step"]))
        for name in algorithms:
            rows.append(
                {
                    "algorithm": name,
                    "degree": degree,
                    "L": float(target.L),
                    "s_per_step": float(np.median(times[name])),
                    "factors_per_step": factors[name],
                    "graph_mb": _graph_bytes(target, name) / 2**20,
                    "limit": DEGREE_LIMIT if name == "poisson-gibbs" else None,
                }
            )
    for name in algorithms:
        mine = [r for r in rows if r["algorithm"] == name]
        for r in mine:
            r["time_vs_smallest_degree"] = r["s_per_step"] / mine[0]["s_per_step"]
    return {"rows": rows, "repeat": repeat, "steps": steps, "limit": DEGREE_LIMIT}


def format_degree_scaling(result: dict[str, Any]) -> str:
    columns = [
        ("algorithm", "l", lambda r: r["algorithm"]),
        ("degree", "r", lambda r: str(r["degree"])),
        ("L", "r", lambda r: f"{r['L']:.2f}"),
        ("graph MB", "r", lambda r: f"{r['graph_mb']:.1f}"),
        ("us/step", "r", lambda r: f"{1e6 * r['s_per_step']:.2f}"),
        ("factors/step", "r", lambda r: f"{r['factors_per_step']:.1f}"),
        ("time vs smallest", "r", lambda r: f"{r['time_vs_smallest_degree']:.2f}"),
        ("limit", "r", lambda r: "-" if r.get("limit") is None else f"{r['limit']:g}"),
    ]
    text = record_table(result["rows"], columns)
    poisson = [r for r in result["rows"] if r["algorithm"] == "poisson-gibbs"]
    if "limit" not in result or not poisson:
        return text
    # The worst of the larger degrees (the smallest is the 1.00 they are measured against).
    worst = max(poisson[1:] or poisson, key=lambda r: r["time_vs_smallest_degree"])
    verdict = "within" if worst["time_vs_smallest_degree"] <= result["limit"] else "OVER"
    return (
        text + f"\npoisson-gibbs at degree {worst['degree']} / degree {poisson[0]['degree']}: "
        f"{worst['time_vs_smallest_degree']:.2f} ({verdict} the limit {result['limit']:g} of "
        "003 Statement 1's O(lam + L); gibbs is O(degree) by design)"
    )


class SelectionTree(NamedTuple):
    """m truncated Gumbels (bounds ``b``, log masses ``a``) in PM-A*'s balanced tree, the
    arrays of ``implementations.astar.gumbel_tree``."""

    a: np.ndarray
    b: np.ndarray
    fl: np.ndarray
    it: np.ndarray
    meta: np.ndarray
    free: np.ndarray
    stack: np.ndarray


def selection_tree(m: int, rng: np.random.Generator) -> SelectionTree:
    """The tree the selection benchmark times: a ~ N(0, 1.5^2), b = a + N(0.5, 1.5^2)."""
    from implementations.astar import pm_fast

    a = rng.normal(0.0, 1.5, m)
    b = a + rng.normal(0.5, 1.5, m)
    fl, it, meta, free, stack = pm_fast.tree.tree_new(m)
    for j in range(m):
        pm_fast.tree.tree_insert(
            fl, it, meta, free, stack, b[j], a[j], a[j] - b[j], rng.random(), j
        )
    return SelectionTree(a, b, fl, it, meta, free, stack)


def selection_scaling(sizes: list[int], picks: int = 2000, repeat: int = 5) -> dict[str, Any]:
    """004 Sec. 4.3: PM-A*'s next region in O(log m). For each number m of truncated Gumbels,
    the Numba time per pick from the balanced tree (draw, then delete and re-insert the picked
    element, as an expansion does) and per pick by drawing all m (the linear scan), alternating
    within each repeat; medians, and the tree's time relative to the smallest m."""
    from implementations.astar import pm_fast

    if len(sizes) < 2:
        raise ValueError(f"sizes = {sizes}; valid: at least two sizes, each >= 2")
    sizes = sorted(Param("m", 2, int, low=2).check(m) for m in sizes)
    picks = check_sample_size(picks, "picks")
    repeat = REPEAT.check(repeat)
    rows = []
    for m in sizes:
        rng = np.random.default_rng(m)
        a, b, fl, it, meta, free, stack = selection_tree(m, rng)
        pm_fast.tree_pick_loop(fl, it, meta, free, stack, 10, rng)  # compile and warm
        pm_fast.linear_pick_loop(a.copy(), b.copy(), 2, rng)
        linear_picks = max(3, min(picks, 2_000_000 // m))
        tree_t, linear_t = [], []
        for _ in range(repeat):
            t0 = time.perf_counter()
            pm_fast.tree_pick_loop(fl, it, meta, free, stack, picks, rng)
            tree_t.append((time.perf_counter() - t0) / picks)
            aa, bb = a.copy(), b.copy()
            t0 = time.perf_counter()
            pm_fast.linear_pick_loop(aa, bb, linear_picks, rng)
            linear_t.append((time.perf_counter() - t0) / linear_picks)
        rows.append(
            {
                "m": m,
                "tree_s_per_pick": float(np.median(tree_t)),
                "linear_s_per_pick": float(np.median(linear_t)),
            }
        )
    base = rows[0]["tree_s_per_pick"]
    for r in rows:
        r["tree_vs_smallest_m"] = r["tree_s_per_pick"] / base
        r["linear_vs_tree"] = r["linear_s_per_pick"] / r["tree_s_per_pick"]
    return {"picks": picks, "repeat": repeat, "limit": 3.0, "rows": rows}


def format_selection_scaling(result: dict[str, Any]) -> str:
    columns = [
        ("m", "r", lambda r: f"{r['m']:,}"),
        ("tree us/pick", "r", lambda r: f"{1e6 * r['tree_s_per_pick']:.3f}"),
        ("linear us/pick", "r", lambda r: f"{1e6 * r['linear_s_per_pick']:.3g}"),
        ("tree vs smallest m", "r", lambda r: f"{r['tree_vs_smallest_m']:.2f}"),
        ("linear / tree", "r", lambda r: f"{r['linear_vs_tree']:.3g}"),
    ]
    worst = max(r["tree_vs_smallest_m"] for r in result["rows"])
    verdict = "within" if worst <= result["limit"] else "OVER"
    return (
        record_table(result["rows"], columns)
        + f"\ntree at the largest m / smallest m: {worst:.2f} ({verdict} the limit "
        f"{result['limit']:g} of 004 Sec. 4.3's O(log m))"
    )


#: Issue limit: an exact draw may take at most this many times a streaming numpy.sum over the
#: same log-factor array (the in-run proxy for reading it at memory speed).
MEMORY_LIMIT = 1.5
MEMORY_SIZES = ((10, 100_000), (100, 10_000), (1000, 100))


def memory_speed(
    algorithms: list[str], sizes: list[tuple[int, int]], draws: int = 50, repeat: int = 7
) -> dict[str, Any]:
    """Numba time per exact draw against ``numpy.sum`` over the same D x N array, timed in
    alternation within each repeat on one process (000 Sec. 2.1: a draw reads all N x D
    factors, so the sum is the floor); medians, and each ratio against MEMORY_LIMIT."""
    draws = check_sample_size(draws, "draws")
    repeat = REPEAT.check(repeat)
    registry = build_registry()
    rows = []
    for name in algorithms:
        spec = registry.get(name)
        if "numba" not in spec.implementations or "discrete" not in spec.target_kinds:
            raise ValueError(
                f"algorithm {name!r} is invalid for the memory-speed table; valid: an exact "
                "sampler of discrete targets with a Numba implementation (gumbel-max, "
                "cdf-inversion, top-down)"
            )
        for D, N in sizes:
            target = synthetic_rewards(D, N, "normal", 1.0, np.random.default_rng(0))
            array = target.log_factors
            sample(spec, "numba", target, 2, np.random.default_rng(0))  # compile and warm
            array.sum()
            fast, streamed = [], []
            for r in range(repeat):
                rng = np.random.default_rng(r)
                t0 = time.perf_counter()
                sample(spec, "numba", target, draws, rng)
                fast.append((time.perf_counter() - t0) / draws)
                t0 = time.perf_counter()
                for _ in range(draws):
                    array.sum()
                streamed.append((time.perf_counter() - t0) / draws)
            ratio = float(np.median(np.asarray(fast) / np.asarray(streamed)))
            rows.append(
                {
                    "algorithm": name,
                    "D": D,
                    "N": N,
                    "numba_s_per_draw": float(np.median(fast)),
                    "numpy_sum_s": float(np.median(streamed)),
                    "ratio": ratio,
                    "limit": MEMORY_LIMIT,
                    "within": ratio <= MEMORY_LIMIT,
                }
            )
    return {"rows": rows, "draws": draws, "repeat": repeat, "limit": MEMORY_LIMIT}


def format_memory_speed(result: dict[str, Any]) -> str:
    columns = [
        ("algorithm", "l", lambda r: r["algorithm"]),
        ("D", "r", lambda r: str(r["D"])),
        ("N", "r", lambda r: f"{r['N']:,}"),
        ("numba us/draw", "r", lambda r: f"{1e6 * r['numba_s_per_draw']:.1f}"),
        ("numpy.sum us", "r", lambda r: f"{1e6 * r['numpy_sum_s']:.1f}"),
        ("ratio", "r", lambda r: f"{r['ratio']:.2f}"),
        (f"<= {result['limit']:g}", "l", lambda r: yes_no(r["within"])),
    ]
    return record_table(result["rows"], columns)


#: Issue limit: on likelihood terms computed from data, Racing-Normal's wall-clock speedup over
#: exact Gumbel-max must be at least this share of its saving in evaluations.
RACING_LIMIT = 0.7
#: (kind of rewards, model or reward distribution, knob) at D = 10, N = 1e5: precomputed
#: matrices of 000 Sec. 5.1 at three noise levels sigma, and computed terms of two models with
#: candidates ``spread`` apart (harness.targets.likelihood_terms; P = 10 features).
RACING_CASES = (
    ("precomputed", "normal", 1e-5),
    ("precomputed", "normal", 1e-3),
    ("precomputed", "normal", 1e-2),
    ("computed", "logistic", 1000.0),
    ("computed", "student-t", 300.0),
    ("computed", "student-t", 1000.0),
)


def _racing_target(rewards: str, model: str, knob: float, D: int, N: int) -> Any:
    from harness.targets.likelihood_terms import logistic_candidates, studentt_candidates

    if rewards == "precomputed":
        return synthetic_rewards(D, N, model, knob, np.random.default_rng(0))
    build = logistic_candidates if model == "logistic" else studentt_candidates
    return build(N, D, 10, knob, 3)


def racing_speed(
    D: int = 10,
    N: int = 100_000,
    delta: float = 0.05,
    repeat: int = 5,
    cases: tuple[tuple[str, str, float], ...] = RACING_CASES,
) -> dict[str, Any]:
    """Racing-Normal (000, Alg. 1) against exact Gumbel-max, Numba, timed in alternation.

    saving = N D / (mean rewards a race reads); speedup = exact s/draw / racing s/draw; their
    ratio is 1 when a raced reward costs what an exact one does. On a precomputed matrix an
    exact reward is a streamed read (under a nanosecond) and a raced one a random index (a
    Generator call); on computed likelihood terms both cost a term's arithmetic, and the ratio
    must reach RACING_LIMIT.
    """
    D = Param("D", 10, int, low=2).check(D)
    N = Param("N", 100_000, int, low=2).check(N)
    delta = Param("delta", 0.05, low=0.0, high=1.0, low_inclusive=False).check(delta)
    repeat = REPEAT.check(repeat)
    registry = build_registry()
    race, exact = registry.get("racing-normal"), registry.get("gumbel-max")
    rows = []
    for rewards, model, knob in cases:
        target = _racing_target(rewards, model, knob, D, N)
        sample(race, "numba", target, 2, np.random.default_rng(0), delta=delta)  # compile, warm
        sample(exact, "numba", target, 1, np.random.default_rng(0))
        # Enough draws that one timed call takes about 0.1 s of either sampler.
        t0 = time.perf_counter()
        sample(exact, "numba", target, 1, np.random.default_rng(1))
        exact_draws = int(np.clip(0.1 / (time.perf_counter() - t0), 2, 500))
        racing_t, exact_t, evals, draws = [], [], 0, 0
        for r in range(repeat):
            race_draws = 4 * exact_draws
            t0 = time.perf_counter()
            got = sample(race, "numba", target, race_draws, np.random.default_rng(r), delta=delta)
            racing_t.append((time.perf_counter() - t0) / race_draws)
            evals += got.evals
            draws += race_draws
            t0 = time.perf_counter()
            sample(exact, "numba", target, exact_draws, np.random.default_rng(r))
            exact_t.append((time.perf_counter() - t0) / exact_draws)
        saving = N * D / (evals / draws)
        speedup = float(np.median(exact_t) / np.median(racing_t))
        each = np.asarray(exact_t) / np.asarray(racing_t) / saving
        limit = RACING_LIMIT if rewards == "computed" else None
        rows.append(
            {
                "rewards": rewards,
                "model": model,
                "knob": knob,
                "D": D,
                "N": N,
                "delta": delta,
                "exact_s_per_draw": float(np.median(exact_t)),
                "racing_s_per_draw": float(np.median(racing_t)),
                "saving": saving,
                "speedup": speedup,
                "ratio": speedup / saving,
                "ratio_range": [float(each.min()), float(each.max())],
                "limit": limit,
                "within": None if limit is None else bool(speedup / saving >= limit),
            }
        )
    return {"rows": rows, "repeat": repeat, "limit": RACING_LIMIT}


def format_racing_speed(result: dict[str, Any]) -> str:
    columns = [
        ("rewards", "l", lambda r: r["rewards"]),
        ("model", "l", lambda r: r["model"]),
        ("sigma/spread", "r", lambda r: f"{r['knob']:g}"),
        ("exact us/draw", "r", lambda r: f"{1e6 * r['exact_s_per_draw']:.0f}"),
        ("racing us/draw", "r", lambda r: f"{1e6 * r['racing_s_per_draw']:.1f}"),
        ("saving", "r", lambda r: f"{r['saving']:.3g}"),
        ("speedup", "r", lambda r: f"{r['speedup']:.3g}"),
        ("speedup/saving", "r", lambda r: f"{r['ratio']:.3f}"),
        ("range", "l", lambda r: "[{:.2f}, {:.2f}]".format(*r["ratio_range"])),
        (
            f">= {result['limit']:g}",
            "l",
            lambda r: "-" if r["within"] is None else yes_no(r["within"]),
        ),
    ]
    return record_table(result["rows"], columns)
