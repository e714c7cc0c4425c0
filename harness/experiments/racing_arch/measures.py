"""What the racing-arch claims read from the records: the chains of one data set (``dataset``:
an index's returns, or the simulated variant), their costs, ESS and errors, and the estimates
with their intervals."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from harness.experiments import claims as c
from harness.experiments.racing_arch import chain
from harness.experiments.racing_arch.study import findings
from harness.gates.mcmc import bulk_ess
from harness.targets.arch import MODELS
from harness.tasks import Records

if TYPE_CHECKING:
    from harness.experiments.racing_arch import ArchConfig

Chain = list[dict[str, Any]]
Measure = Callable[[Records], c.Estimate]
#: Nats (max over q) within which the adaptation's estimate of log p(q | r) counts as arrived.
CONVERGED_NATS = 5.0


def dataset(record: dict[str, Any]) -> str:
    """The data set a record ran on; records written before the field were simulated."""
    return str(record.get("dataset", "simulated"))


def chains(records: Records, prefix: str, data: str) -> list[Chain]:
    """The chunks of every part named ``prefix``... on data set ``data``, each part's in sweep
    order."""
    parts: dict[str, Chain] = {}
    for r in records:
        if r.get("kind") == "chunk" and r["part"].startswith(prefix) and dataset(r) == data:
            parts.setdefault(r["part"], []).append(r)
    return [sorted(parts[p], key=lambda r: r["start"]) for p in sorted(parts)]


def per_chain(records: Records, sampler: str, fn: Callable[[Chain], Any], data: str) -> list[Any]:
    """``fn`` of each fixed-pi~ chain of ``sampler`` on ``data``."""
    if runs := chains(records, f"run/{sampler}/", data):
        return [fn(ch) for ch in runs]
    raise c.Inconclusive(f"no fixed-pi~ chain of {sampler} on the {data} returns yet")


def q_values(ch: Chain) -> list[int]:
    return [v for r in ch for v in r["q"]]


def trace(ch: Chain) -> np.ndarray:
    return np.asarray([t for r in ch for t in r["trace"]])


def evals(ch: Chain) -> int:
    return sum(r["gibbs_evals"] + r["mh_evals"] for r in ch)


def sweeps(ch: Chain) -> int:
    return sum(r["stop"] - r["start"] for r in ch)


def ess(ch: Chain) -> float:
    """Bulk ESS of q; a chain that never left its model has none."""
    return bulk_ess(np.asarray(q_values(ch), dtype=np.float64)) or 0.0


def adjusted_posterior(q: list[int]) -> np.ndarray:
    """p~(q | r): the visit frequencies of fixed-pi~ sweeps."""
    counts = np.array([q.count(m) for m in MODELS], dtype=np.float64)
    return counts / max(counts.sum(), 1.0)


def reference(config: ArchConfig, records: Records) -> np.ndarray | None:
    """log p(q | r) on ``config.data`` the adaptations are measured against: the exact fixed
    runs' estimate (visit frequencies reweighted by pi / pi~), else where the exact adaptation
    ended."""
    adapt = chains(records, "adapt/exact", config.data)
    if not adapt:
        return None
    runs = chains(records, "run/exact/", config.data)
    if runs and sweeps(adapt[0]) >= config.adapt_iterations:
        pooled = adjusted_posterior([v for ch in runs for v in q_values(ch)])
        with np.errstate(divide="ignore"):
            fixed = chain.fixed_log_pi_tilde(config, adapt[0])
            est = chain.log_posterior_estimate(chain.LOG_PI + np.log(pooled), fixed)
        if np.all(np.isfinite(est)):
            return est
    return chain.log_posterior_estimate(
        chain.LOG_PI, np.asarray(adapt[0][-1]["state"]["log_pi_tilde"])
    )


def convergence_speedup(config: ArchConfig) -> Measure:
    """Evaluations until the estimate first comes within CONVERGED_NATS of the reference for
    every q (after it, the rarest models' estimates keep moving by nats, for both), exact / Sub,
    on ``config.data``."""

    def first_within(tr: np.ndarray, ref: np.ndarray) -> float | None:
        hits = (float(t[1]) for t in tr if np.max(np.abs(t[2:] - ref)) <= CONVERGED_NATS)
        return next(hits, None)

    def measure(records: Records) -> c.Estimate:
        ref = reference(config, records)
        if ref is None:
            raise c.Inconclusive("the exact adaptation has not run yet")
        hits = [
            [first_within(trace(ch), ref) for ch in chains(records, f"adapt/{s}", config.data)]
            for s in chain.SAMPLERS
        ]
        if any(None in h for h in hits):
            raise c.Inconclusive(f"an adaptation never came within {CONVERGED_NATS:g} nats")
        # one adaptation run a sampler: the fixed-pi~ chains start from it, so more chains
        # (the replicate) add none
        return c.ratio_of_means(hits[0], hits[1], "adaptation runs")  # type: ignore[arg-type]

    return measure


def ratio(fn: Callable[[Chain], float], num: str, den: str, data: str) -> Measure:
    """``num`` / ``den`` of the mean of ``fn`` over the fixed-pi~ chains on ``data``."""
    return lambda rs: c.ratio_of_means(
        per_chain(rs, num, fn, data), per_chain(rs, den, fn, data), "chains"
    )


def cv_reduction(name: str, data: str) -> Measure:
    """A variance cut (log10 raw / residual): the mean over each of Sub's chains' Gibbs draws,
    then over the chains."""

    def of(ch: Chain) -> float:
        n = sum(r["cv_log10"][name]["n"] for r in ch)
        return sum(r["cv_log10"][name]["sum"] for r in ch) / n if n else math.nan

    return lambda rs: c.mean_interval(per_chain(rs, "sub", of, data), "chains")


def error_rate(step: str, data: str) -> Measure:
    """Sub's decisions unlike the exact ones, pooled over its fixed-pi~ chains (one Gibbs draw
    and one MH test a sweep); ``how`` says what the diagnosis in this directory found."""
    tries = "gibbs_draws" if step == "gibbs" else "mh_tests"

    def total(rs: Records, field: str) -> int:
        return sum(per_chain(rs, "sub", lambda ch: sum(r[field] for r in ch), data))

    def measure(rs: Records) -> c.Estimate:
        est = c.proportion(total(rs, f"{step}_errors"), total(rs, tries), "sweeps")
        return dataclasses.replace(est, how=f"{est.how}; {findings(rs, step)}")

    return measure


def bias(data: str) -> Measure:
    """Total variation between Sub's and exact's pooled p~(q | r) on ``data``, bootstrapped over
    pairs of chains (independent chains, paired only to resample both alike)."""

    def tv(pairs: list[tuple[Chain, Chain]]) -> float:
        a, b = (adjusted_posterior([v for p in pairs for v in q_values(p[i])]) for i in (0, 1))
        return 0.5 * float(np.abs(a - b).sum())

    def measure(records: Records) -> c.Estimate:
        exact, sub = (per_chain(records, s, list, data) for s in ("exact", "sub"))
        return c.bootstrap(list(zip(exact, sub, strict=False)), tv, "chains")

    return measure
