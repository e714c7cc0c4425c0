"""Across hardware for MCMC: a regular MH step on the GPU against FlyMC's subsampled step on a
CPU core (002_3c1996bf78df7865.txt, Table 1's two columns, timed instead of counted).

A regular random-walk MH step reads all N likelihood terms; FlyMC (002, Alg. 1) reads only the
bright ones and the q_db share of dark ones it proposes to brighten. :func:`mcmc_rows` times,
per N, seconds per step of ``rwmh`` on Numba (one core) and on the ``cuda`` key, and of
``flymc-mh`` on Numba, on synthetic logistic data (P = 10, X ~ N(0, 1/P), bounds tuned at the
MAP), with the same step size for both chains. It reports per-step time and queries, not
mixing: per-step cost is what the hardware changes, and 002's Table 1 gives FlyMC's ESS per
step beside the regular chain's.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from harness.display import microseconds, record_table
from harness.registry import build_registry
from harness.spec import sample
from harness.targets.glm import from_data
from harness.targets.glm_data import synthetic_logistic

GRID_N = (10_000, 100_000, 1_000_000)
P = 10
#: The MH step, in units of 1/sqrt(N): near 2.38/sqrt(P) posterior sds on these data.
STEP_SCALE = 5.0


def mcmc_target(N: int) -> Any:
    """Synthetic logistic data of size N (seed 0), MAP-tuned bounds."""
    return from_data(synthetic_logistic(N, P, seed=0), tuning="map")


def chain_call(spec: Any, impl: str, target: Any, step: float | None = None) -> Any:
    """``call(n, seed)``: an n-step chain of ``spec``'s ``impl`` from the MAP; ``step``
    defaults to STEP_SCALE / sqrt(N). The ``cuda`` key's rwmh gets its data uploaded once,
    here, as the exact GPU draws do (a chain that keeps its data on the device)."""
    step = STEP_SCALE / math.sqrt(target.N) if step is None else step
    if impl == "cuda" and spec.name == "rwmh":
        from implementations.firefly import cuda

        data = cuda.resident(target)
        return lambda n, seed: cuda.rwmh_resident(
            data, target, n, np.random.default_rng(seed), step=step
        )
    return lambda n, seed: sample(spec, impl, target, n, np.random.default_rng(seed), step=step)


def mcmc_rows(
    per_step: Any, Ns: tuple[int, ...] = GRID_N, no_gpu: str | None = None
) -> list[dict[str, Any]]:
    """One row per N. ``per_step(call)`` times ``call(n, seed)`` (n chain steps) and returns
    (seconds per step, the last chain), as :func:`harness.speed.hardware.per_draw` does; ``no_gpu``:
    why the cuda column is empty, or None."""
    registry = build_registry()
    rwmh, flymc = registry.get("rwmh"), registry.get("flymc-mh")
    rows = []
    for N in Ns:
        target = mcmc_target(N)

        cpu_s, regular = per_step(chain_call(rwmh, "numba", target))
        fly_s, fly = per_step(chain_call(flymc, "numba", target))
        gpu_s = None if no_gpu else per_step(chain_call(rwmh, "cuda", target))[0]
        fly_queries = fly.evals / len(fly.values)
        rows.append(
            {
                "N": N,
                "step": STEP_SCALE / math.sqrt(N),
                "rwmh_cpu_s": cpu_s,
                "rwmh_gpu_s": gpu_s,
                "flymc_cpu_s": fly_s,
                "rwmh_acceptance": float(np.mean(regular.extras["accepted"])),
                "flymc_acceptance": float(np.mean(fly.extras["accepted"])),
                "flymc_queries_per_step": fly_queries,
                "query_saving": N / fly_queries,
                "flymc_beats_gpu": None if gpu_s is None else bool(fly_s < gpu_s),
                "gpu_data_resident": True,
            }
        )
    return rows


MCMC_COLUMNS = (
    ("N", "r", lambda r: f"{r['N']:.0e}"),
    ("rwmh 1 core", "r", lambda r: microseconds(r["rwmh_cpu_s"])),
    ("rwmh GPU", "r", lambda r: microseconds(r["rwmh_gpu_s"])),
    ("flymc-mh 1 core", "r", lambda r: microseconds(r["flymc_cpu_s"])),
    ("FlyMC query saving", "r", lambda r: f"{r['query_saving']:.3g}"),
    ("accept", "r", lambda r: f"{r['rwmh_acceptance']:.2f} / {r['flymc_acceptance']:.2f}"),
)


def format_mcmc(rows: list[dict[str, Any]]) -> str:
    head = f"time per MH step, us (logistic, P = {P}, step {STEP_SCALE:g}/sqrt(N), MAP bounds)"
    return "\n".join([head, record_table(rows, MCMC_COLUMNS)])
