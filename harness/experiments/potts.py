"""Potts model: marginal error vs iterations and wall time (003_07f92522b9b1c588.txt, Sec. 4.1).

003, Sec. 4.1 (Fig. 1a/1b, 2a/2b): a fully connected Potts model on a 20 x 20 grid (n = 400),
D = 10, beta = 4.6, A_ij = exp(-1.5 ||p_i - p_j||^2) with grid coordinates p (L = 5.09).
Plain Gibbs, Poisson-Gibbs with lambda in {0.1, 1, 5} L^2 and DoubleMIN-Gibbs with lambda = L^2
and lambda2 in {1, 1e4} L^2, all started from one constant state. By symmetry each marginal is
uniform over the D values, so the l2 distance between the running empirical marginals and
uniform measures convergence.

One record per finished (sampler, replicate) run lands in OUT/records.jsonl: the error at
geometric checkpoints, the sampler time spent up to each checkpoint and the mean factor counts
per iteration. A resumed run skips every run already on disk.
"""

from __future__ import annotations

import dataclasses
import math
import sys
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from harness.experiments.store import (
    RunSummary,
    append_record,
    check_int,
    check_positive,
    check_run_args,
    checkpoints,
    load_records,
    setting_rng,
    spawn_key,
    start_run,
)
from harness.registry import build_registry
from harness.results import provenance
from harness.runner import check_seed
from harness.spec import Chain
from harness.targets.factor_graph import FactorGraphTarget, potts_grid
from implementations.minibatch_gibbs.reference import global_alias

NAME = "potts"
PAPER = "003_07f92522b9b1c588.txt, Sec. 4.1 (Fig. 1a/1b, 2a/2b)"
SUMMARY = "Potts 20x20: Gibbs, Poisson-Gibbs, DoubleMIN-Gibbs marginal error vs iterations/time"
LEVELS = ("quick", "full")
ALGORITHMS = ("gibbs", "poisson-gibbs", "double-min-gibbs")
IMPL = "numba"
#: 003, Sec. 4.1: mean factors evaluated per iteration (Poisson-Gibbs) and Gibbs' neighbours.
PAPER_FACTORS = {"gibbs": 399.0, "pg-0.1": 7.0, "pg-1": 28.0, "pg-5": 132.0}
PAPER_L = 5.09
#: Longest chunk handed to one sampler call: its (steps, n_vars) int64 output must fit in memory.
MAX_CHUNK = 25_000


@dataclass(frozen=True)
class SamplerSetting:
    """One line of Fig. 1/2: an algorithm, its minibatch sizes in units of L^2, its length."""

    label: str
    algorithm: str
    n_steps: int
    lam_l2: float | None = None
    lam2_l2: float | None = None
    paper_factors: float | None = None

    def params(self, L: float) -> dict[str, float]:
        out: dict[str, float] = {}
        if self.lam_l2 is not None:
            out["lam"] = self.lam_l2 * L * L
        if self.lam2_l2 is not None:
            out["lam2"] = self.lam2_l2 * L * L
        return out

    def describe(self) -> str:
        parts = [self.algorithm]
        if self.lam_l2 is not None:
            parts.append(f"lam = {self.lam_l2:g} L^2")
        if self.lam2_l2 is not None:
            parts.append(f"lam2 = {self.lam2_l2:g} L^2")
        return ", ".join(parts) + f", {self.n_steps} iterations"


@dataclass(frozen=True)
class PottsConfig:
    """Everything that determines the records (stored as the settings in experiment.json)."""

    level: str
    seed: int
    side: int
    beta: float
    D: int
    scale: float
    replicates: int
    checkpoints: int
    samplers: tuple[SamplerSetting, ...]
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # Fail before any work, naming the offending parameter.
        if self.level not in LEVELS:
            raise ValueError(f"level = {self.level!r} is invalid; valid: {', '.join(LEVELS)}")
        check_seed(self.seed)
        check_int(self.side, "side", 2)
        check_int(self.D, "D", 2)
        check_int(self.replicates, "replicates", 1)
        check_int(self.checkpoints, "checkpoints", 2)
        check_positive(self.beta, "beta")
        check_positive(self.scale, "scale")
        if not self.samplers:
            raise ValueError("samplers is empty; valid: at least one SamplerSetting")
        labels = [s.label for s in self.samplers]
        if len(set(labels)) != len(labels):
            raise ValueError(f"samplers: labels {labels} repeat; valid: distinct labels")
        for s in self.samplers:
            if s.algorithm not in ALGORITHMS:
                raise ValueError(
                    f"samplers[{s.label!r}].algorithm = {s.algorithm!r} is invalid; "
                    f"valid: {', '.join(ALGORITHMS)}"
                )
            check_int(s.n_steps, f"samplers[{s.label!r}].n_steps", 1)
            needs_lam = s.algorithm != "gibbs"
            needs_lam2 = s.algorithm == "double-min-gibbs"
            checks = (("lam_l2", s.lam_l2, needs_lam), ("lam2_l2", s.lam2_l2, needs_lam2))
            for name, value, needed in checks:
                if needed:
                    check_positive(value, f"samplers[{s.label!r}].{name}")
                elif value is not None:
                    raise ValueError(
                        f"samplers[{s.label!r}].{name} = {value!r} is invalid for "
                        f"{s.algorithm}; valid: None"
                    )

    @property
    def n_vars(self) -> int:
        return self.side * self.side

    def manifest(self) -> dict[str, Any]:
        return {"experiment": NAME, **dataclasses.asdict(self)}

    @classmethod
    def from_manifest(cls, m: dict[str, Any]) -> PottsConfig:
        """The inverse of :meth:`manifest` (JSON turns tuples into lists)."""
        keep = {f.name for f in dataclasses.fields(cls)}
        args = {k: v for k, v in m.items() if k in keep}
        args["samplers"] = tuple(SamplerSetting(**s) for s in m["samplers"])
        args["notes"] = tuple(m.get("notes", ()))
        return cls(**args)


def paper_samplers(n_steps: int, double_min_big_steps: int) -> tuple[SamplerSetting, ...]:
    """003, Sec. 4.1's six lines; DoubleMIN's first (proposal) minibatch is lambda = L^2."""
    return (
        SamplerSetting("gibbs", "gibbs", n_steps, paper_factors=PAPER_FACTORS["gibbs"]),
        SamplerSetting("pg-0.1", "poisson-gibbs", n_steps, 0.1, None, PAPER_FACTORS["pg-0.1"]),
        SamplerSetting("pg-1", "poisson-gibbs", n_steps, 1.0, None, PAPER_FACTORS["pg-1"]),
        SamplerSetting("pg-5", "poisson-gibbs", n_steps, 5.0, None, PAPER_FACTORS["pg-5"]),
        SamplerSetting("dmin-1", "double-min-gibbs", n_steps, 1.0, 1.0),
        SamplerSetting("dmin-1e4", "double-min-gibbs", double_min_big_steps, 1.0, 1e4),
    )


_COMMON_NOTES = (
    "DoubleMIN-Gibbs uses lambda = L^2 for its first (proposal) minibatch, as 003 sets "
    "lambda = L^2 for all minibatch methods; lambda2 is its second (M-H correction) minibatch.",
    "Error: mean over sites of the l2 distance between the running empirical marginal and "
    "uniform(1/D) (the convention of the paper's code); the records also hold the pooled "
    "sqrt(sum over sites and values of (marginal - 1/D)^2). Every state after each "
    "single-site step counts, from step 1 (no burn-in); start: all sites at value 0.",
    "Time: only the sampler calls (Numba, compiled beforehand) are timed, chunk by chunk; the "
    "histogram bookkeeping between chunks is not. Each call also copies the n_vars-long state "
    "into its output after every step, a cost all samplers share.",
    "The DoubleMIN kernel draws a fresh estimate of the current energy at the start of every "
    "call, so each chunk boundary refreshes its pseudo-marginal state (about "
    "n_steps / 25000 + checkpoints times per run); this can unstick a stuck chain. Its "
    "wrapper also rebuilds a global alias table at every call (~50 ms here): that set-up is "
    "timed apart and counted once per run, not once per chunk.",
    "exp(-1.5 d^2) underflows to 0 for far pairs (d^2 > ~496), so those factors are absent: "
    "sites have 369 to 399 factors, not 399 each; their weight is below 1e-300.",
)


def config_for_level(level: str, seed: int = 0) -> PottsConfig:
    """The settings of ``level``; see the module docstring."""
    if level not in LEVELS:
        raise ValueError(f"--level {level!r} is invalid; valid: {', '.join(LEVELS)}")
    seed = check_seed(seed)
    if level == "quick":
        return PottsConfig(
            level="quick",
            seed=seed,
            side=20,
            beta=4.6,
            D=10,
            scale=1.5,
            replicates=1,
            checkpoints=30,
            # DoubleMIN with lambda2 = 1e4 L^2 draws ~2.6e5 factors a step (~10 ms).
            samplers=paper_samplers(200_000, 3_000),
            notes=(
                "quick level: the paper's model (20 x 20, D = 10, beta = 4.6), but 2e5 "
                "iterations per run (paper: 1e6; code: 1e6), one run per sampler (paper: "
                "average of 3), DoubleMIN with lambda2 = 1e4 L^2 for 3e3 iterations only.",
                *_COMMON_NOTES,
            ),
        )
    return PottsConfig(
        level="full",
        seed=seed,
        side=20,
        beta=4.6,
        D=10,
        scale=1.5,
        replicates=3,
        checkpoints=40,
        samplers=paper_samplers(1_000_000, 100_000),
        notes=(
            "full level: the paper's sizes (1e6 iterations, 3 runs averaged), except DoubleMIN "
            "with lambda2 = 1e4 L^2, run for 1e5 iterations (~10 ms an iteration: 1e6 would "
            "take about 3 h per run).",
            *_COMMON_NOTES,
        ),
    )


@dataclass(frozen=True)
class RunSetting:
    """One chain: a sampler setting and a replicate index."""

    sampler: SamplerSetting
    replicate: int
    side: int
    beta: float
    D: int
    scale: float
    checkpoints: int

    @property
    def key(self) -> str:
        s = self.sampler
        return (
            f"chain|{s.label}|{s.algorithm}|lam={s.lam_l2}|lam2={s.lam2_l2}|steps={s.n_steps}|"
            f"side={self.side}|D={self.D}|beta={self.beta:g}|scale={self.scale:g}|"
            f"cp={self.checkpoints}|rep={self.replicate}"
        )


@dataclass(frozen=True)
class ChainRecord:
    key: str
    label: str
    algorithm: str
    replicate: int
    n_steps: int
    params: dict[str, float]
    L: float
    n_vars: int
    D: int
    iterations: tuple[int, ...]
    sampler_s: tuple[float, ...]
    error: tuple[float, ...]
    error_pooled: tuple[float, ...]
    factors_per_iter: float
    draws_per_iter: float | None
    kept_per_iter: float | None
    second_per_iter: float | None
    accept_rate: float | None
    paper_factors: float | None
    chunks: int
    setup_s: float
    wall_s: float
    seed: int
    spawn_key: tuple[int, ...]
    code: str
    impl: str = IMPL
    type: str = "chain"
    experiment: str = NAME


def plan(config: PottsConfig) -> tuple[RunSetting, ...]:
    return tuple(
        RunSetting(s, r, config.side, config.beta, config.D, config.scale, config.checkpoints)
        for s in config.samplers
        for r in range(config.replicates)
    )


@lru_cache(maxsize=2)
def build_target(side: int, beta: float, D: int, scale: float) -> FactorGraphTarget:
    return potts_grid(side, beta, D, scale=scale)


@lru_cache(maxsize=1)
def _kernels() -> dict[str, Callable[..., Chain]]:
    registry = build_registry()
    return {name: registry.get(name).implementation(IMPL) for name in ALGORITHMS}


def warm_kernels() -> None:
    """Compile (or load from cache) every kernel, so no timed chunk includes it."""
    tiny = potts_grid(2, 1.0, 3)
    params: dict[str, dict[str, float]] = {
        "gibbs": {},
        "poisson-gibbs": {"lam": 2.0},
        "double-min-gibbs": {"lam": 2.0, "lam2": 2.0},
    }
    for name, kernel in _kernels().items():
        kernel(tiny, 3, np.random.default_rng(0), **params[name])


def _marginal_errors(counts: np.ndarray, t: int) -> tuple[float, float]:
    """(mean over sites of the per-site l2 error, pooled l2 error) of counts / t against 1/D."""
    diff = counts / t - 1.0 / counts.shape[1]
    per_site = np.sqrt((diff * diff).sum(axis=1))
    return float(per_site.mean()), float(math.sqrt(float((diff * diff).sum())))


def _per_call_setup(target: FactorGraphTarget, algorithm: str) -> float:
    """Seconds of set-up that the wrapper repeats at every call, to count once, not per chunk.

    The DoubleMIN wrapper rebuilds the global alias table over all factors (in Python, ~50 ms
    for the 20 x 20 model) at each call; the other wrappers only allocate their outputs.
    """
    if algorithm != "double-min-gibbs":
        return 0.0
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        global_alias(target)
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def run_chain_setting(s: RunSetting, seed: int) -> ChainRecord:
    """Run one chain in chunks; record the error and the sampler time at each checkpoint."""
    t_start = time.perf_counter()
    target = build_target(s.side, s.beta, s.D, s.scale)
    kernel = _kernels()[s.sampler.algorithm]
    params = s.sampler.params(target.L)
    rng = setting_rng(seed, s.key)
    n, D = target.n_vars, target.D
    offsets = (np.arange(n, dtype=np.int64) * D)[None, :]
    counts = np.zeros((n, D), dtype=np.int64)
    x = np.zeros(n, dtype=np.int64)
    sums: dict[str, float] = {}
    errors, pooled, times = [], [], []
    done, chunks = 0, 0
    marks = checkpoints(s.sampler.n_steps, s.checkpoints)
    setup = _per_call_setup(target, s.sampler.algorithm)
    spent = setup  # paid once, as a sampler that is not cut into chunks would
    for mark in marks:
        while done < mark:
            steps = min(MAX_CHUNK, mark - done)
            t0 = time.perf_counter()
            chain = kernel(target, steps, rng, x0=x, **params)
            spent += max(time.perf_counter() - t0 - setup, 0.0)
            chunks += 1
            flat = (chain.values + offsets).ravel()
            counts += np.bincount(flat, minlength=n * D).reshape(n, D)
            x = chain.values[-1].copy()
            for name, arr in chain.extras.items():
                sums[name] = sums.get(name, 0.0) + float(np.sum(arr))
            done += steps
        e, p = _marginal_errors(counts, done)
        errors.append(e)
        pooled.append(p)
        times.append(spent)

    def mean(name: str) -> float | None:
        return sums[name] / done if name in sums else None

    return ChainRecord(
        key=s.key,
        label=s.sampler.label,
        algorithm=s.sampler.algorithm,
        replicate=s.replicate,
        n_steps=s.sampler.n_steps,
        params=params,
        L=target.L,
        n_vars=n,
        D=D,
        iterations=marks,
        sampler_s=tuple(times),
        error=tuple(errors),
        error_pooled=tuple(pooled),
        factors_per_iter=sums["factors_per_step"] / done,
        draws_per_iter=mean("draws_per_step"),
        kept_per_iter=mean("kept_per_step"),
        second_per_iter=mean("second_per_step"),
        accept_rate=mean("accepted"),
        paper_factors=s.sampler.paper_factors,
        chunks=chunks,
        setup_s=setup,
        wall_s=time.perf_counter() - t_start,
        seed=seed,
        spawn_key=spawn_key(s.key),
        code=provenance()["source_digest"],
    )


def run(
    config: PottsConfig,
    out: Path,
    progress: bool = True,
    part: str = "all",
    workers: int = 1,
    log: Callable[[str], None] = lambda msg: print(msg, file=sys.stderr),
) -> RunSummary:
    """Run (or resume) the experiment into ``out``; return what this invocation did.

    ``workers`` > 1 runs chains in parallel processes: faster, but their timings then share
    the CPU (keep 1 for the wall-time figure).
    """
    check_run_args(part, workers)
    t0 = time.perf_counter()
    out = Path(out)
    path, done = start_run(out, config.manifest())
    settings = plan(config)
    todo = [s for s in settings if s.key not in done]
    log(f"{NAME}: {len(settings)} chains planned, {len(done)} already on disk, {len(todo)} to run")
    if todo:
        warm_kernels()
        _run_chains(todo, config.seed, path, progress, workers)
    records = load_records(path)
    return RunSummary(
        out=str(out),
        planned=len(settings),
        already_done=len(done),
        ran=len(todo),
        skipped_by_rule=0,
        wall_s=time.perf_counter() - t0,
        speed=tuple(_speed_row(r) for r in records if r.get("type") == "chain"),
    )


def _run_chains(
    todo: list[RunSetting], seed: int, path: Path, progress: bool, workers: int
) -> None:
    bar = tqdm(total=len(todo), desc="potts chains", unit="chain", disable=not progress)
    with bar:
        if workers <= 1:
            for s in todo:
                bar.set_postfix_str(f"{s.sampler.label} rep {s.replicate}")
                append_record(path, dataclasses.asdict(run_chain_setting(s, seed)))
                bar.update()
            return
        with ProcessPoolExecutor(max_workers=workers, initializer=warm_kernels) as pool:
            futures = [pool.submit(run_chain_setting, s, seed) for s in todo]
            for fut in as_completed(futures):
                append_record(path, dataclasses.asdict(fut.result()))
                bar.update()


def _speed_row(r: dict[str, Any]) -> dict[str, Any]:
    return {
        "label": r["label"],
        "replicate": r["replicate"],
        "n_steps": r["n_steps"],
        "us_per_iter": 1e6 * r["sampler_s"][-1] / r["n_steps"],
        "factors_per_iter": r["factors_per_iter"],
        "draws_per_iter": r["draws_per_iter"],
        "paper_factors": r["paper_factors"],
        "final_error": r["error"][-1],
        "L": r["L"],
    }


def format_speed(records: Any) -> str:
    """Per-chain cost and final error as a plain-text table (for the terminal)."""
    rows = [r if "us_per_iter" in r else _speed_row(r) for r in records]
    lines = [
        f"{'sampler':>9} {'rep':>3} {'iters':>8} {'us/iter':>9} {'factors':>8} {'draws':>8} "
        f"{'paper':>6} {'final error':>11}"
    ]
    for r in sorted(rows, key=lambda r: (r["label"], r["replicate"])):
        draws = "-" if r["draws_per_iter"] is None else f"{r['draws_per_iter']:.4g}"
        paper = "-" if r["paper_factors"] is None else f"{r['paper_factors']:g}"
        lines.append(
            f"{r['label']:>9} {r['replicate']:>3} {r['n_steps']:>8} {r['us_per_iter']:>9.3g} "
            f"{r['factors_per_iter']:>8.4g} {draws:>8} {paper:>6} {r['final_error']:>11.4g}"
        )
    return "\n".join(lines)
