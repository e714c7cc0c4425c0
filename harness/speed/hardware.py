"""Across hardware: when does racing on a CPU still beat an exact draw on a GPU?

Racing-Normal (000_26bed7cc1ef3ab92.txt, Alg. 1) reads fewer likelihood terms than an exact
Gumbel-max draw (000, Sec. 2.1, Eq. 2), which reads all N x D; a GPU reads all of them at HBM
speed. :func:`hardware_table` times, per cell of D x N and per kind of rewards (a precomputed
matrix, or logistic terms computed from data):

- racing-normal, Numba, one core (measured); all cores is the one-core time over the cores, an
  upper bound (draws are independent) that is labelled as such, not measured;
- exact gumbel-max, Numba, all cores (``parallel=True``);
- exact gumbel-max, the ``cuda`` key, data resident on the device (uploaded once, as a sampler
  that keeps its data there would).

From racing's evaluations per draw and its time, its cost per reward read; the saving it needs
to tie the GPU is N D x (cost per reward) / (GPU time per draw), against the saving it gets.
:func:`bandwidth` compares the device's read of 1e8 stored log-factors with a device-to-device
copy of the same bytes, both timed with CUDA events in one run.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from harness.devices import cuda_unavailable, simulated
from harness.display import fmt, microseconds, record_table
from harness.registry import build_registry
from harness.spec import sample
from harness.speed.hardware_mcmc import format_mcmc, mcmc_rows
from harness.targets.discrete import synthetic_rewards
from harness.targets.likelihood_terms import logistic_candidates

GRID_D = (10, 100, 1000)
GRID_N = (10_000, 100_000, 1_000_000)
KINDS = ("precomputed", "computed")
#: Precomputed cells larger than this many factors (8 bytes each) are not built: D = 1000,
#: N = 1e6 would hold 8 GB twice (the matrix and racing's layout of it).
MAX_STORED = 100_000_000
SIGMA = 1e-3  # precomputed rewards' spread (000 Sec. 5.1's synthetic family)
SPREAD, P = 10.0, 10  # computed logistic terms: candidates' spread, features
DELTA = 0.05
DRAWS_PER_CALL = 5  # the asv suite's draws per timed call


def draw_function(impl: str, target: Any) -> Callable[[int, int], Any]:
    """``draw(n, seed)``: n exact gumbel-max draws on ``target``, the ``numba`` key on all
    cores or the ``cuda`` key with the data uploaded once, here."""
    if impl == "cuda":
        from implementations.gumbel import cuda

        data = cuda.resident(target)
        return lambda n, seed: cuda.gumbel_max_resident(data, n, np.random.default_rng(seed))
    exact = build_registry().get("gumbel-max")
    return lambda n, seed: sample(
        exact, impl, target, n, np.random.default_rng(seed), parallel=impl == "numba"
    )


def cell_target(kind: str, D: int, N: int) -> Any:
    """The (kind, D, N) cell's target: synthetic precomputed rewards or logistic terms."""
    if kind == "precomputed":
        return synthetic_rewards(D, N, "normal", SIGMA, np.random.default_rng(0))
    return logistic_candidates(N, D, P, SPREAD, 3)


#: The fewest draws a timed call makes, whatever its time.
MIN_DRAWS = 50


def per_draw(call: Callable[[int, int], Any], seconds: float, repeat: int) -> tuple[float, Any]:
    """Median seconds per draw of ``call(n, seed)``, n sized so one call takes ``seconds`` (at
    least MIN_DRAWS: on a loaded machine one slow draw would leave a one-draw output, whose
    acceptance rate says nothing); also the last call's output. The first call (compilation,
    uploads) is not timed."""
    call(1, 0)
    t0 = time.perf_counter()
    call(1, 1)
    n = int(np.clip(seconds / max(time.perf_counter() - t0, 1e-9), MIN_DRAWS, 2000))
    times, out = [], None
    for r in range(repeat):
        t0 = time.perf_counter()
        out = call(n, 2 + r)
        times.append((time.perf_counter() - t0) / n)
    return float(np.median(times)), out


def hardware_table(
    Ds: tuple[int, ...] = GRID_D,
    Ns: tuple[int, ...] = GRID_N,
    kinds: tuple[str, ...] = KINDS,
    repeat: int = 3,
    seconds: float = 0.1,
    budget_s: float = 300.0,
    mcmc_Ns: tuple[int, ...] = GRID_N,
) -> dict[str, Any]:
    """Every (kind, D, N) cell in turn until ``budget_s`` is spent; cells left over are listed
    as not measured. The ``cuda`` column is None where this machine has no device. Then the
    MCMC rows (:mod:`harness.speed.hardware_mcmc`) for ``mcmc_Ns``, outside the budget."""
    for name, values in (("D", Ds), ("N", Ns)):
        if not values or any(int(v) != v or v < 2 for v in values):
            raise ValueError(f"parameter {name!r} = {values!r} is invalid; valid: integers >= 2")
    for kind in kinds:
        if kind not in KINDS:
            raise ValueError(f"kind = {kind!r} is invalid; valid: {', '.join(KINDS)}")
    registry = build_registry()
    race = registry.get("racing-normal")
    no_gpu = cuda_unavailable() or ("numba-cuda's simulator" if simulated() else None)
    cores = os.cpu_count() or 1
    start = time.perf_counter()
    rows, skipped = [], []
    for kind in kinds:
        for D in Ds:
            for N in Ns:
                cell = {"kind": kind, "D": D, "N": N}
                if kind == "precomputed" and D * N > MAX_STORED:
                    skipped.append({**cell, "why": f"D N > {MAX_STORED:.0e} stored factors"})
                    continue
                if time.perf_counter() - start > budget_s:
                    skipped.append({**cell, "why": f"the run's budget of {budget_s:g} s"})
                    continue
                rows.append(_cell(race, kind, D, N, repeat, seconds, no_gpu, cores))
    mcmc = mcmc_rows(lambda call: per_draw(call, seconds, repeat), mcmc_Ns, no_gpu)
    return {
        "rows": rows,
        "mcmc": mcmc,
        "skipped": skipped,
        "cores": cores,
        "gpu": no_gpu is None and _device_name(),
        "no_gpu": no_gpu,
        "delta": DELTA,
        "wall_s": time.perf_counter() - start,
    }


def _cell(race, kind, D, N, repeat, seconds, no_gpu, cores) -> dict[str, Any]:
    target = cell_target(kind, D, N)

    def racing(n, seed):
        return sample(race, "numba", target, n, np.random.default_rng(seed), delta=DELTA)

    race_s, got = per_draw(racing, seconds, repeat)
    evals = got.evals / got.values.size
    cpu_s, _ = per_draw(draw_function("numba", target), seconds, repeat)
    gpu_s = None if no_gpu else per_draw(draw_function("cuda", target), seconds, repeat)[0]
    per_read = race_s / evals
    return {
        "kind": kind,
        "D": D,
        "N": N,
        "racing_1core_s": race_s,
        "racing_allcores_bound_s": race_s / cores,
        "racing_evals_per_draw": evals,
        "saving": N * D / evals,
        "exact_cpu_s": cpu_s,
        "exact_gpu_s": gpu_s,
        "needed_saving_1core": None if gpu_s is None else N * D * per_read / gpu_s,
        "racing_beats_gpu": None if gpu_s is None else bool(race_s < gpu_s),
    }


def _device_name() -> str:
    from numba import cuda

    name = cuda.get_current_device().name
    return name.decode() if isinstance(name, bytes) else str(name)


def bandwidth(D: int = 1000, N: int = 100_000, draws: int = 10, repeat: int = 5) -> dict[str, Any]:
    """The device's read of D x N stored factors for ``draws`` Gumbel-max draws (the partial-sum
    kernel, and the whole draw with the pick) against copying the same bytes device to device,
    each timed with CUDA events, median of ``repeat``; ratio = draw time / copy time."""
    reason = cuda_unavailable()
    if reason is not None:
        raise RuntimeError(f"the bandwidth check needs the cuda key: {reason}")
    from numba import cuda as nc

    from implementations.gumbel import cuda

    rng = np.random.default_rng(0)
    factors = nc.to_device(rng.standard_normal((D, N)))
    data = cuda.Resident(D, N, nc.to_device(np.zeros(D)), factors=factors)
    copy = nc.device_array_like(factors)

    def events(fn) -> float:
        fn()
        nc.synchronize()
        out = []
        for _ in range(repeat):
            a, b = nc.event(), nc.event()
            a.record()
            fn()
            b.record()
            b.synchronize()
            out.append(nc.event_elapsed_time(a, b) / 1e3)
        return float(np.median(out))

    read_s = events(lambda: cuda.row_sums(data, draws)) / draws
    draw_s = events(lambda: cuda.gumbel_max_resident(data, draws, rng)) / draws
    copy_s = events(lambda: copy.copy_to_device(factors))
    size = 8.0 * D * N
    return {
        "D": D,
        "N": N,
        "bytes": size,
        "read_s": read_s,
        "draw_s": draw_s,
        "copy_s": copy_s,
        "read_GBps": size / read_s / 1e9,
        "copy_GBps": 2.0 * size / copy_s / 1e9,  # a copy reads and writes the bytes
        "ratio_read": read_s / copy_s,
        "ratio_draw": draw_s / copy_s,
        "limit": 1.5,
        "device": _device_name(),
    }


DRAW_COLUMNS = (
    ("rewards", "l", lambda r: r["kind"]),
    ("D", "r", lambda r: str(r["D"])),
    ("N", "r", lambda r: f"{r['N']:.0e}"),
    ("racing 1 core", "r", lambda r: microseconds(r["racing_1core_s"])),
    ("racing all (bound)", "r", lambda r: microseconds(r["racing_allcores_bound_s"])),
    ("exact CPU all", "r", lambda r: microseconds(r["exact_cpu_s"])),
    ("exact GPU", "r", lambda r: microseconds(r["exact_gpu_s"])),
    ("racing saving", "r", lambda r: f"{r['saving']:.3g}"),
    ("saving to tie GPU", "r", lambda r: fmt(r["needed_saving_1core"])),
)


def format_hardware(result: dict[str, Any]) -> str:
    head = (
        f"time per draw, us (racing-normal delta = {result['delta']:g}; all cores = "
        f"{result['cores']}; GPU: {result['gpu'] or 'none, ' + str(result['no_gpu'])})"
    )
    lines = [head, record_table(result["rows"], DRAW_COLUMNS)]
    lines += [
        f"not measured: {s['kind']} D={s['D']} N={s['N']:.0e} ({s['why']})"
        for s in result["skipped"]
    ]
    if result.get("mcmc"):
        lines += ["", format_mcmc(result["mcmc"])]
    return "\n".join(lines)


def format_bandwidth(result: dict[str, Any]) -> str:
    return (
        f"{result['device']}: {result['D']} x {result['N']} stored log-factors "
        f"({result['bytes'] / 1e9:.2f} GB): read {microseconds(result['read_s'])} us "
        f"({result['read_GBps']:.0f} GB/s), whole draw {microseconds(result['draw_s'])} us, "
        f"device-to-device copy {microseconds(result['copy_s'])} us "
        f"({result['copy_GBps']:.0f} GB/s read + written); "
        f"draw / copy = {result['ratio_draw']:.2f} "
        f"(limit {result['limit']:g}), read / copy = {result['ratio_read']:.2f}"
    )
