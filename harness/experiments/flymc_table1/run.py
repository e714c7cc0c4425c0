"""One row of FlyMC's Table 1, and one size of the scaling part, as records.

Every chain of a row's model and data set starts at theta_MAP with the same step, set from the
Laplace approximation there (the paper's steps are not known): random-walk MH
2.38 / sqrt(D) sd_min, MALA 1.2 D^(-1/6) sd_min, slice width 4 sd_max, sd_min and sd_max the
posterior's smallest and largest standard deviations over eigen-directions.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from harness.experiments.flymc_table1.settings import THETA_STEP, Row
from harness.gates.mcmc import bulk_ess
from harness.registry import registry_for
from harness.spec import sample
from harness.targets import glm_data
from harness.targets.glm import GLMTarget, from_data

#: Data sets are drawn with this seed whatever the run's seed (the run's seed drives chains).
DATA_SEED = 0
#: Features of the scaling part's logistic data.
SCALING_P = 10


def data_set(model: str, data: str, N: int) -> glm_data.GLMData:
    if data == "digits":
        return glm_data.digits_7_vs_9()
    if model == "logistic":
        return glm_data.synthetic_logistic(N, seed=DATA_SEED)
    if model == "softmax":
        return glm_data.synthetic_softmax(N, seed=DATA_SEED)
    return glm_data.synthetic_robust(N, seed=DATA_SEED)


def laplace_scales(target: GLMTarget, theta: np.ndarray) -> tuple[float, float]:
    """(sd_min, sd_max): 1 / sqrt of the largest and smallest eigenvalues of the negative log
    posterior's Hessian at theta, by central differences of its gradient."""
    D = theta.size
    H = np.empty((D, D))
    for j in range(D):
        h = 1e-5 * max(1.0, abs(theta[j]))
        e = np.zeros(D)
        e[j] = h
        H[:, j] = -(target.grad_log_posterior(theta + e) - target.grad_log_posterior(theta - e))
        H[:, j] /= 2.0 * h
    eig = np.linalg.eigvalsh(0.5 * (H + H.T))
    eig = np.clip(eig, 1e-12, None)
    return 1.0 / math.sqrt(float(eig.max())), 1.0 / math.sqrt(float(eig.min()))


def step_for(theta_step: str, D: int, sd_min: float, sd_max: float) -> float:
    if theta_step == "mh":
        return 2.38 / math.sqrt(D) * sd_min
    if theta_step == "mala":
        return 1.2 * D ** (-1.0 / 6.0) * sd_min
    return 4.0 * sd_max


def _ess(values: np.ndarray) -> np.ndarray:
    """Bulk ESS (arviz-stats, rank-normalised) of every coordinate of one chain; 0 for a
    coordinate that never moved."""
    return np.array([bulk_ess(values[:, j]) or 0.0 for j in range(values.shape[1])])


def run_row(row: Row, q_db: float, burn_in: float, rng: np.random.Generator) -> list[dict]:
    """The chain of one row (Numba), with its queries, ESS and time after burn-in."""
    data = data_set(row.model, row.data, row.N)
    tuned = from_data(data, "map")
    theta_map = np.array(tuned.theta_tuning)
    sd_min, sd_max = laplace_scales(tuned, theta_map)
    theta_step = THETA_STEP[row.model]
    step = step_for(theta_step, tuned.D, sd_min, sd_max)
    target = from_data(data, "untuned") if row.column == "untuned" else tuned
    params: dict[str, Any] = {"step": step}
    if row.column != "regular":
        params["q_db"] = q_db
    spec = registry_for(()).get(row.algorithm)
    start = time.perf_counter()
    chain = sample(spec, "numba", target, row.iterations, rng, x0=theta_map, **params)
    wall = time.perf_counter() - start
    first = int(burn_in * row.iterations)
    values = np.asarray(chain.values)[first:]
    ess = _ess(values)
    kept = values.shape[0]
    per_step = np.asarray(chain.extras["draw_evals"])[first:]
    # Every column starts at theta_MAP with the same step; only MAP-tuned FlyMC needs its bounds.
    cost = tuned.map_cost if row.column == "map" else None
    return [
        {
            "type": "row",
            "label": row.label,
            "model": row.model,
            "data": row.data,
            "source": data.source,
            "column": row.column,
            "algorithm": row.algorithm,
            "N": int(target.N),
            "D": int(target.D),
            "iterations": row.iterations,
            "kept": kept,
            "step": step,
            "q_db": params.get("q_db"),
            "sd_min": sd_min,
            "sd_max": sd_max,
            "queries_per_iter": float(per_step.mean()),
            "ess_mean_per_1000": 1000.0 * float(ess.mean()) / kept,
            "ess_min_per_1000": 1000.0 * float(ess.min()) / kept,
            "accept_rate": float(np.mean(chain.extras["accepted"][first:])),
            "bright_mean": (
                float(np.mean(chain.extras["bright"][first:])) if "bright" in chain.extras else None
            ),
            "seconds_per_iter": wall / row.iterations,
            "wall_s": wall,
            "map_evaluations": cost.evaluations if cost else None,
            "map_likelihood_evals": cost.likelihood_evals if cost else None,
            "map_seconds": cost.seconds if cost else None,
        }
    ]


def run_scaling(
    N: int, iterations: int, q_db: float, reference: bool, rng: np.random.Generator
) -> list[dict]:
    """Seconds, queries and bright points per iteration of MAP-tuned FlyMC-MH and regular MH on
    logistic data of size N (Numba; the reference too when ``reference``)."""
    data = glm_data.synthetic_logistic(N, SCALING_P, seed=DATA_SEED)
    target = from_data(data, "map")
    theta_map = np.array(target.theta_tuning)
    sd_min, sd_max = laplace_scales(target, theta_map)
    step = step_for("mh", target.D, sd_min, sd_max)
    registry = registry_for(())
    out = []
    impls = ("numba", "reference") if reference else ("numba",)
    for impl in impls:
        for algorithm, params in (("flymc-mh", {"q_db": q_db}), ("rwmh", {})):
            n = iterations if impl == "numba" else max(10, iterations // 10)
            spec = registry.get(algorithm)
            start = time.perf_counter()
            chain = sample(spec, impl, target, n, rng, x0=theta_map, step=step, **params)
            wall = time.perf_counter() - start
            half = n // 2  # after z has left its all-dark start
            per_step = np.asarray(chain.extras["draw_evals"])[half:]
            bright = chain.extras.get("bright")
            out.append(
                {
                    "type": "scaling",
                    "label": f"{algorithm} {impl} N={N}",
                    "algorithm": algorithm,
                    "impl": impl,
                    "N": N,
                    "iterations": n,
                    "seconds_per_iter": wall / n,
                    "wall_s": wall,
                    "queries_per_iter": float(per_step.mean()),
                    "bright_mean": None if bright is None else float(np.mean(bright[half:])),
                }
            )
    return out


def warm() -> None:
    """Compile the chain kernel in this worker before anything is timed."""
    from implementations.firefly import fast

    target = from_data(glm_data.synthetic_logistic(20, 2, seed=1), "untuned")
    fast.flymc(target, 2, np.random.default_rng(0))
    fast.regular(target, 2, np.random.default_rng(0))
