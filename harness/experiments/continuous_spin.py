"""Continuous spin model: symmetric KL vs iterations and wall time (003, Sec. 4.2, Fig. 1c/2c).

003_07f92522b9b1c588.txt, Sec. 4.2: U(x) = sum_ij beta A_ij (x_i x_j + 1) on [0, 1]^n, beta = 1,
L = 13.71, lambda = L^2; PGITS with m = 3, PGDA with m = 3 and k = 10; ground truth from Gibbs-ITS
run for 1e7 iterations; error = symmetric KL divergence; 190 factors per iteration on average.
003 does not state A; ``continuous_spin_grid`` uses A_ij = exp(-0.4 ||p_i - p_j||^2) on a 20 x 20
grid, which reproduces L = 13.708 (notes-minibatch-gibbs.md, Sec. 10).

Plan: one long Gibbs-ITS reference chain (its per-variable histograms are the ground truth), then
the compared chains (PGITS, PGDA and an independent Gibbs-ITS), each scored at geometric
checkpoints by the symmetric KL between its running per-variable histograms and the reference's.
One record per finished chain lands in OUT/records.jsonl; a resumed run skips what is on disk.
"""

from __future__ import annotations

import dataclasses
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
from harness.targets.continuous_factor_graph import (
    ContinuousFactorGraphTarget,
    continuous_spin_grid,
)

NAME = "continuous-spin"
PAPER = "003_07f92522b9b1c588.txt, Sec. 4.2 (Fig. 1c, 2c)"
SUMMARY = "Continuous spin 20x20: Gibbs-ITS, PGITS, PGDA symmetric KL vs iterations/time"
LEVELS = ("quick", "full")
ALGORITHMS = ("gibbs-its", "pgits", "pgda")
REFERENCE_ALGORITHM = "gibbs-its"
IMPL = "numba"
PAPER_L = 13.71
#: 003, Sec. 4.2: "the average number of evaluated factors per iteration of Poisson-Gibbs is 190".
PAPER_FACTORS = 190.0
PAPER_REFERENCE_STEPS = 10_000_000
#: Longest chunk per sampler call: its (steps, n_vars) float64 output must fit in memory.
MAX_CHUNK = 25_000
#: Pseudo-count per bin, so that an empty bin gives a finite KL (Jeffreys' 1/2).
PSEUDO_COUNT = 0.5


@dataclass(frozen=True)
class ContinuousSpinConfig:
    """Everything that determines the records (stored as the settings in experiment.json)."""

    level: str
    seed: int
    side: int
    beta: float
    scale: float
    lam_l2: float
    m: int
    k: int
    n_bins: int
    reference_steps: int
    reference_burn_in: int
    n_steps: int
    replicates: int
    checkpoints: int
    algorithms: tuple[str, ...] = ALGORITHMS
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # Fail before any work, naming the offending parameter.
        if self.level not in LEVELS:
            raise ValueError(f"level = {self.level!r} is invalid; valid: {', '.join(LEVELS)}")
        check_seed(self.seed)
        check_int(self.side, "side", 2)
        check_positive(self.beta, "beta")
        check_positive(self.scale, "scale")
        check_positive(self.lam_l2, "lam_l2")
        check_int(self.m, "m", 1)
        check_int(self.k, "k", 1)
        check_int(self.n_bins, "n_bins", 2)
        check_int(self.reference_steps, "reference_steps", 2)
        check_int(self.reference_burn_in, "reference_burn_in", 0)
        if self.reference_burn_in >= self.reference_steps // 2:
            raise ValueError(
                f"reference_burn_in = {self.reference_burn_in!r} is invalid; valid: an integer "
                f"< reference_steps / 2 = {self.reference_steps // 2}"
            )
        check_int(self.n_steps, "n_steps", 1)
        check_int(self.replicates, "replicates", 1)
        check_int(self.checkpoints, "checkpoints", 2)
        if not self.algorithms or len(set(self.algorithms)) != len(self.algorithms):
            raise ValueError(f"algorithms = {self.algorithms!r} is invalid; valid: distinct names")
        for a in self.algorithms:
            if a not in ALGORITHMS:
                raise ValueError(f"algorithms: {a!r} is invalid; valid: {', '.join(ALGORITHMS)}")

    @property
    def n_vars(self) -> int:
        return self.side * self.side

    def manifest(self) -> dict[str, Any]:
        return {"experiment": NAME, **dataclasses.asdict(self)}

    @classmethod
    def from_manifest(cls, m: dict[str, Any]) -> ContinuousSpinConfig:
        """The inverse of :meth:`manifest` (JSON turns tuples into lists)."""
        keep = {f.name for f in dataclasses.fields(cls)}
        args = {k: v for k, v in m.items() if k in keep}
        args["algorithms"] = tuple(m["algorithms"])
        args["notes"] = tuple(m.get("notes", ()))
        return cls(**args)


_COMMON_NOTES = (
    "Error: for each variable, the symmetric KL sum_b (p_b - q_b) log(p_b / q_b) between the "
    "chain's running histogram p and the reference histogram q on n_bins equal bins of [0, 1], "
    "each smoothed with 0.5 pseudo-counts per bin; then averaged over the variables. Every "
    "state after each single-site step counts, from step 1 (no burn-in); start: all x_i = 0 "
    "(003 states neither).",
    "Floor: with T states per chain and R reference states, independent draws would give "
    "E[sym KL] ~ (n_bins - 1)(1/T + 1/R). Under random scan a variable is updated about T / "
    "n_vars times and holds each value for a geometric number of steps, which halves the "
    "effective count again, so the floor for independent update values is 2 (n_bins - 1) "
    "n_vars (1/T + 1/R) (drawn dashed); MCMC correlation raises it by the integrated "
    "autocorrelation time. The reference's own share is also measured: the sym KL between its "
    "two halves, / 4.",
    "The compared Gibbs-ITS chain is independent of the reference (its own random stream).",
    "Time: only the sampler calls (Numba, compiled beforehand) are timed, chunk by chunk; the "
    "histogram bookkeeping between chunks is not. Each call copies the n_vars-long state into "
    "its output after every step, a cost all samplers share.",
    "Factors per iteration: 'draws' (Poisson envelope draws B, expected (lam/L + 1) sum M over "
    "the site's factors) and 'kept' (sum of s_phi after thinning) are the minibatch size that "
    "003's 190 describes; 'distinct' counts the factors with s_phi > 0.",
)


def config_for_level(level: str, seed: int = 0) -> ContinuousSpinConfig:
    """The settings of ``level``; see the module docstring."""
    if level not in LEVELS:
        raise ValueError(f"--level {level!r} is invalid; valid: {', '.join(LEVELS)}")
    seed = check_seed(seed)
    common = {"seed": seed, "beta": 1.0, "scale": 0.4, "lam_l2": 1.0, "m": 3, "k": 10}
    if level == "quick":
        return ContinuousSpinConfig(
            level="quick",
            side=20,
            n_bins=20,
            reference_steps=2_000_000,
            reference_burn_in=100_000,
            n_steps=300_000,
            replicates=1,
            checkpoints=25,
            notes=(
                "quick level: the paper's model (20 x 20, L = 13.708), a 2e6-iteration "
                "reference (paper: 1e7), 3e5 iterations per chain, one run per sampler "
                "(paper: average of 3).",
                *_COMMON_NOTES,
            ),
            **common,
        )
    return ContinuousSpinConfig(
        level="full",
        side=20,
        n_bins=20,
        reference_steps=PAPER_REFERENCE_STEPS,
        reference_burn_in=500_000,
        n_steps=1_000_000,
        replicates=3,
        checkpoints=40,
        notes=(
            "full level: the paper's model (20 x 20, L = 13.708) and reference length (1e7 "
            "Gibbs-ITS iterations, first 5e5 dropped as burn-in; 003 states no burn-in), 3 runs "
            "per sampler as in 003. 003 does not state the compared chains' length; 1e6 "
            "iterations as in its Sec. 4.1.",
            *_COMMON_NOTES,
        ),
        **common,
    )


@dataclass(frozen=True)
class RunSetting:
    """One chain: the reference (``replicate = -1``) or a compared sampler and replicate."""

    algorithm: str
    replicate: int
    n_steps: int
    burn_in: int
    side: int
    beta: float
    scale: float
    lam_l2: float
    m: int
    k: int
    n_bins: int
    checkpoints: int

    @property
    def is_reference(self) -> bool:
        return self.replicate < 0

    @property
    def key(self) -> str:
        role = "reference" if self.is_reference else "chain"
        return (
            f"{role}|{self.algorithm}|steps={self.n_steps}|burn={self.burn_in}|side={self.side}|"
            f"beta={self.beta:g}|scale={self.scale:g}|lam={self.lam_l2:g}L2|m={self.m}|"
            f"k={self.k}|bins={self.n_bins}|cp={self.checkpoints}|rep={self.replicate}"
        )

    def params(self, L: float) -> dict[str, float]:
        if self.algorithm == "gibbs-its":
            return {"m": self.m}
        out: dict[str, float] = {"lam": self.lam_l2 * L * L, "m": self.m}
        if self.algorithm == "pgda":
            out["k"] = self.k
        return out


def _setting(config: ContinuousSpinConfig, algorithm: str, rep: int, steps: int, burn: int):
    return RunSetting(
        algorithm, rep, steps, burn, config.side, config.beta, config.scale, config.lam_l2,
        config.m, config.k, config.n_bins, config.checkpoints,
    )  # fmt: skip


def reference_setting(config: ContinuousSpinConfig) -> RunSetting:
    return _setting(
        config, REFERENCE_ALGORITHM, -1, config.reference_steps, config.reference_burn_in
    )


def plan(config: ContinuousSpinConfig) -> tuple[RunSetting, ...]:
    """The reference first (every other chain is scored against it), then the compared chains."""
    chains = tuple(
        _setting(config, a, r, config.n_steps, 0)
        for a in config.algorithms
        for r in range(config.replicates)
    )
    return (reference_setting(config), *chains)


@lru_cache(maxsize=2)
def build_target(side: int, beta: float, scale: float) -> ContinuousFactorGraphTarget:
    return continuous_spin_grid(side, beta, scale)


@lru_cache(maxsize=1)
def _kernels() -> dict[str, Callable[..., Chain]]:
    registry = build_registry()
    return {name: registry.get(name).implementation(IMPL) for name in ALGORITHMS}


def warm_kernels() -> None:
    """Compile (or load from cache) every kernel, so no timed chunk includes it."""
    tiny = continuous_spin_grid(2)
    params = {"gibbs-its": {"m": 3}, "pgits": {"lam": 2.0, "m": 3}}
    params["pgda"] = {"lam": 2.0, "m": 3, "k": 10}
    for name, kernel in _kernels().items():
        kernel(tiny, 3, np.random.default_rng(0), **params[name])


def bin_counts(values: np.ndarray, n_bins: int) -> np.ndarray:
    """(n_vars, n_bins) counts of the rows of ``values`` on equal bins of [0, 1]."""
    n = values.shape[1]
    idx = np.minimum((values * n_bins).astype(np.int64), n_bins - 1)
    flat = (idx + (np.arange(n, dtype=np.int64) * n_bins)[None, :]).ravel()
    return np.bincount(flat, minlength=n * n_bins).reshape(n, n_bins)


def sym_kl(counts: np.ndarray, ref_counts: np.ndarray) -> float:
    """Mean over variables of the symmetric KL between two smoothed per-variable histograms."""
    p = counts + PSEUDO_COUNT
    q = ref_counts + PSEUDO_COUNT
    p = p / p.sum(axis=1, keepdims=True)
    q = q / q.sum(axis=1, keepdims=True)
    return float(((p - q) * np.log(p / q)).sum(axis=1).mean())


def kl_floor(n_bins: int, n_vars: int, steps: int, ref_states: int) -> float:
    """2 (n_bins - 1) n_vars (1/T + 1/R): sym KL floor of T- and R-step random-scan histograms.

    (n_bins - 1) / N is E[sym KL] of N independent draws; T / n_vars updates per variable,
    each held for a geometric number of steps (weights with CV^2 ~ 1), give N ~ T / (2 n_vars).
    """
    return 2.0 * (n_bins - 1) * n_vars * (1.0 / steps + 1.0 / ref_states)


@dataclass(frozen=True)
class ReferenceRecord:
    key: str
    algorithm: str
    n_steps: int
    burn_in: int
    params: dict[str, float]
    L: float
    n_vars: int
    n_factors: int
    n_bins: int
    counts: tuple[tuple[int, ...], ...]
    split_half_kl: float
    factors_per_iter: float
    evals_per_iter: float
    accept_rate: float | None
    sampler_s: float
    wall_s: float
    seed: int
    spawn_key: tuple[int, ...]
    code: str
    impl: str = IMPL
    type: str = "reference"
    experiment: str = NAME


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
    n_bins: int
    iterations: tuple[int, ...]
    sampler_s: tuple[float, ...]
    sym_kl: tuple[float, ...]
    floor: tuple[float, ...]
    reference_key: str
    factors_per_iter: float
    evals_per_iter: float
    draws_per_iter: float | None
    kept_per_iter: float | None
    accept_rate: float | None
    paper_factors: float | None
    chunks: int
    wall_s: float
    seed: int
    spawn_key: tuple[int, ...]
    code: str
    impl: str = IMPL
    type: str = "chain"
    experiment: str = NAME


def _run_chunks(
    s: RunSetting, seed: int, marks: tuple[int, ...], on_mark: Callable[[np.ndarray], None]
) -> tuple[list[float], dict[str, float], int, ContinuousFactorGraphTarget, dict[str, float]]:
    """Run one chain in chunks; at each mark hand the running counts to ``on_mark``.

    Counts start after ``s.burn_in`` steps; returns the sampler seconds at each mark, the
    summed extras (over counted steps), the number of chunks, the target and the parameters.
    """
    target = build_target(s.side, s.beta, s.scale)
    kernel = _kernels()[s.algorithm]
    params = s.params(target.L)
    rng = setting_rng(seed, s.key)
    counts = np.zeros((target.n_vars, s.n_bins), dtype=np.int64)
    x = np.zeros(target.n_vars)
    sums: dict[str, float] = {}
    times: list[float] = []
    done, chunks, spent = 0, 0, 0.0
    for mark in marks:
        while done < mark:
            steps = min(MAX_CHUNK, mark - done)
            t0 = time.perf_counter()
            chain = kernel(target, steps, rng, x0=x, **params)
            spent += time.perf_counter() - t0
            chunks += 1
            skip = max(s.burn_in - done, 0)  # only the reference drops a burn-in
            if skip < steps:
                counts += bin_counts(chain.values[skip:], s.n_bins)
                for name, arr in chain.extras.items():
                    sums[name] = sums.get(name, 0.0) + float(np.sum(arr[skip:]))
            x = chain.values[-1].copy()
            done += steps
        on_mark(counts)
        times.append(spent)
    return times, sums, chunks, target, params


def run_reference(s: RunSetting, seed: int) -> ReferenceRecord:
    """The long Gibbs-ITS chain; keeps its histograms at the half and at the end."""
    t_start = time.perf_counter()
    half = s.burn_in + (s.n_steps - s.burn_in) // 2
    snaps: list[np.ndarray] = []
    times, sums, _, target, params = _run_chunks(
        s, seed, (half, s.n_steps), lambda c: snaps.append(c.copy())
    )
    first, full = snaps
    n = s.n_steps - s.burn_in
    return ReferenceRecord(
        key=s.key,
        algorithm=s.algorithm,
        n_steps=s.n_steps,
        burn_in=s.burn_in,
        params=params,
        L=target.L,
        n_vars=target.n_vars,
        n_factors=target.n_factors,
        n_bins=s.n_bins,
        counts=tuple(tuple(int(v) for v in row) for row in full.tolist()),
        split_half_kl=sym_kl(first, full - first),
        factors_per_iter=sums["factors_per_step"] / n,
        evals_per_iter=sums["evals_per_step"] / n,
        accept_rate=sums["accepted"] / n if "accepted" in sums else None,
        sampler_s=times[-1],
        wall_s=time.perf_counter() - t_start,
        seed=seed,
        spawn_key=spawn_key(s.key),
        code=provenance()["source_digest"],
    )


def run_chain_setting(s: RunSetting, seed: int, reference: dict[str, Any]) -> ChainRecord:
    """One compared chain, scored against the reference at each checkpoint."""
    t_start = time.perf_counter()
    ref = np.asarray(reference["counts"], dtype=np.int64)
    ref_states = int(ref[0].sum())
    marks = checkpoints(s.n_steps, s.checkpoints)
    errors: list[float] = []
    times, sums, chunks, target, params = _run_chunks(
        s, seed, marks, lambda c: errors.append(sym_kl(c, ref))
    )
    n = s.n_steps

    def mean(name: str) -> float | None:
        return sums[name] / n if name in sums else None

    return ChainRecord(
        key=s.key,
        label=s.algorithm,
        algorithm=s.algorithm,
        replicate=s.replicate,
        n_steps=n,
        params=params,
        L=target.L,
        n_vars=target.n_vars,
        n_bins=s.n_bins,
        iterations=marks,
        sampler_s=tuple(times),
        sym_kl=tuple(errors),
        floor=tuple(kl_floor(s.n_bins, target.n_vars, t, ref_states) for t in marks),
        reference_key=reference["key"],
        factors_per_iter=sums["factors_per_step"] / n,
        evals_per_iter=sums["evals_per_step"] / n,
        draws_per_iter=mean("draws_per_step"),
        kept_per_iter=mean("kept_per_step"),
        accept_rate=mean("accepted"),
        paper_factors=PAPER_FACTORS if s.algorithm != "gibbs-its" else None,
        chunks=chunks,
        wall_s=time.perf_counter() - t_start,
        seed=seed,
        spawn_key=spawn_key(s.key),
        code=provenance()["source_digest"],
    )


def run(
    config: ContinuousSpinConfig,
    out: Path,
    progress: bool = True,
    part: str = "all",
    workers: int = 1,
    log: Callable[[str], None] = lambda msg: print(msg, file=sys.stderr),
) -> RunSummary:
    """Run (or resume) the experiment into ``out``; return what this invocation did.

    The reference runs first, alone; ``workers`` > 1 then runs the compared chains in parallel
    processes: faster, but their timings share the CPU (keep 1 for the wall-time figure).
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
        ref_setting = settings[0]
        if ref_setting in todo:
            log(f"{NAME}: reference {ref_setting.algorithm}, {ref_setting.n_steps} iterations")
            append_record(path, dataclasses.asdict(run_reference(ref_setting, config.seed)))
        reference = next(r for r in load_records(path) if r["key"] == ref_setting.key)
        chains = [s for s in todo if not s.is_reference]
        _run_chains(chains, config.seed, reference, path, progress, workers)
    records = load_records(path)
    return RunSummary(
        out=str(out),
        planned=len(settings),
        already_done=len(done),
        ran=len(todo),
        skipped_by_rule=0,
        wall_s=time.perf_counter() - t0,
        speed=tuple(_speed_row(r) for r in records if r.get("type") in ("chain", "reference")),
    )


def _run_chains(
    todo: list[RunSetting],
    seed: int,
    reference: dict[str, Any],
    path: Path,
    progress: bool,
    workers: int,
) -> None:
    bar = tqdm(total=len(todo), desc="continuous-spin chains", unit="chain", disable=not progress)
    with bar:
        if workers <= 1:
            for s in todo:
                bar.set_postfix_str(f"{s.algorithm} rep {s.replicate}")
                append_record(path, dataclasses.asdict(run_chain_setting(s, seed, reference)))
                bar.update()
            return
        with ProcessPoolExecutor(max_workers=workers, initializer=warm_kernels) as pool:
            futures = [pool.submit(run_chain_setting, s, seed, reference) for s in todo]
            for fut in as_completed(futures):
                append_record(path, dataclasses.asdict(fut.result()))
                bar.update()


def _speed_row(r: dict[str, Any]) -> dict[str, Any]:
    ref = r.get("type") == "reference"
    secs = r["sampler_s"] if ref else r["sampler_s"][-1]
    return {
        "label": "reference" if ref else r["label"],
        "replicate": -1 if ref else r["replicate"],
        "n_steps": r["n_steps"],
        "us_per_iter": 1e6 * secs / r["n_steps"],
        "factors_per_iter": r["factors_per_iter"],
        "draws_per_iter": r.get("draws_per_iter"),
        "paper_factors": r.get("paper_factors"),
        "final_sym_kl": r["split_half_kl"] if ref else r["sym_kl"][-1],
        "L": r["L"],
    }


def format_speed(records: Any) -> str:
    """Per-chain cost and final sym KL as a plain-text table (for the terminal).

    For the reference, 'final sym KL' is the KL between its two halves.
    """
    rows = [r if "us_per_iter" in r else _speed_row(r) for r in records]
    lines = [
        f"{'sampler':>10} {'rep':>3} {'iters':>9} {'us/iter':>9} {'factors':>8} {'draws':>8} "
        f"{'paper':>6} {'final symKL':>11}"
    ]
    for r in sorted(rows, key=lambda r: (r["replicate"] >= 0, r["label"], r["replicate"])):
        draws = "-" if r["draws_per_iter"] is None else f"{r['draws_per_iter']:.4g}"
        paper = "-" if r["paper_factors"] is None else f"{r['paper_factors']:g}"
        lines.append(
            f"{r['label']:>10} {r['replicate']:>3} {r['n_steps']:>9} {r['us_per_iter']:>9.3g} "
            f"{r['factors_per_iter']:>8.4g} {draws:>8} {paper:>6} {r['final_sym_kl']:>11.4g}"
        )
    return "\n".join(lines)
