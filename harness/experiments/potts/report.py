"""The report section of the Potts experiment (003_07f92522b9b1c588.txt, Sec. 4.1, Fig. 1/2).

Plain data for the template: figures as inline SVG strings, tables as rows of cells. The
template escapes every text it gets from this module.
"""

from __future__ import annotations

from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from harness.experiments.potts.settings import PAPER_L, PottsConfig
from harness.experiments.report_parts import by_label as _by_label
from harness.experiments.report_parts import cell, table
from harness.experiments.report_parts import fmt as _g
from harness.figures import inline_svg as _svg
from harness.text_table import text_table

COLORS = {
    "gibbs": "#000000",
    "pg-0.1": "#a6cee3",
    "pg-1": "#1f78b4",
    "pg-5": "#08306b",
    "dmin-1": "#e6550d",
    "dmin-1e4": "#a63603",
}


def _averaged(recs: list[dict[str, Any]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Iterations, mean sampler seconds and mean error over replicates (same checkpoints)."""
    its = np.asarray(recs[0]["iterations"], dtype=float)
    secs = np.mean([r["sampler_s"] for r in recs], axis=0)
    err = np.mean([r["error"] for r in recs], axis=0)
    return its, secs, err


def error_figure(chains: list[dict[str, Any]], config: PottsConfig, x: str) -> str:
    """Marginal error against iterations (``x = "iterations"``) or sampler seconds (``"time"``)."""
    if x not in ("iterations", "time"):
        raise ValueError(f"x = {x!r} is invalid; valid: iterations, time")
    fig, ax = plt.subplots(figsize=(5.6, 3.8))
    groups = _by_label(chains)
    for s in config.samplers:
        recs = groups.get(s.label)
        if not recs:
            continue
        its, secs, err = _averaged(recs)
        xs = its if x == "iterations" else secs
        keep = xs > 0  # log axis: the first checkpoint can take ~0 s
        name = f"{s.label} ({len(recs)} run{'s' if len(recs) > 1 else ''})"
        ax.plot(xs[keep], err[keep], color=COLORS.get(s.label), lw=1.3, label=name)
    ax.set(xscale="log", yscale="log", ylabel="marginal l2 error (mean over sites)")
    ax.set_xlabel("iterations" if x == "iterations" else "sampler time (s)")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=7, frameon=False)
    return _svg(fig)


def figure_groups(chains: list[dict[str, Any]], config: PottsConfig) -> list[dict[str, Any]]:
    if not chains:
        return []
    L = chains[0]["L"]
    caption = (
        f"{config.side} x {config.side} Potts, D = {config.D}, beta = {config.beta:g}, L = "
        f"{L:.4f}. Error: mean over the {config.side**2} sites of the l2 distance between the "
        "running empirical marginal and uniform, averaged over the runs shown in the legend. "
        "pg-c: Poisson-Gibbs with lambda = c L^2; dmin-c: DoubleMIN-Gibbs with lambda = L^2 and "
        "lambda2 = c L^2. Time: Numba sampler calls only, summed chunk by chunk."
    )
    figures = [
        {
            "title": "error vs iterations (Fig. 1a/1b)",
            "svg": error_figure(chains, config, "iterations"),
        },
        {"title": "error vs wall time (Fig. 2a/2b)", "svg": error_figure(chains, config, "time")},
    ]
    return [{"title": "Marginal error", "caption": caption, "figures": figures}]


def factors_table(chains: list[dict[str, Any]], config: PottsConfig) -> dict[str, Any]:
    """Mean factors per iteration next to 003's 7 / 28 / 132 and Gibbs' 399 neighbours."""
    groups = _by_label(chains)
    rows = []
    for s in config.samplers:
        recs = groups.get(s.label)
        if not recs:
            continue

        def mean(field: str, recs: list[dict[str, Any]] = recs) -> float | None:
            vals = [r[field] for r in recs if r.get(field) is not None]
            return float(np.mean(vals)) if vals else None

        params = ", ".join(f"{k} = {v:.4g}" for k, v in recs[0]["params"].items()) or "-"
        us = float(np.mean([1e6 * r["sampler_s"][-1] / r["n_steps"] for r in recs]))
        rows.append(
            [
                cell(s.label),
                cell(s.describe()),
                cell(params),
                cell(len(recs), "num"),
                cell(_g(mean("factors_per_iter"), ".4g"), "num"),
                cell(_g(mean("draws_per_iter"), ".4g"), "num"),
                cell(_g(mean("kept_per_iter"), ".4g"), "num"),
                cell(_g(mean("second_per_iter"), ".4g"), "num"),
                cell(_g(s.paper_factors, "g"), "num"),
                cell(_g(mean("accept_rate"), ".3g"), "num"),
                cell(_g(us, ".3g"), "num"),
                cell(_g(float(np.mean([r["error"][-1] for r in recs])), ".3g"), "num"),
            ]
        )
    columns = (
        "sampler",
        "setting",
        "parameters",
        "runs",
        "distinct factors / iter",
        "draws B / iter",
        "kept draws / iter",
        "2nd minibatch / iter",
        "paper (003 Sec. 4.1)",
        "accept rate",
        "us / iter",
        "final error",
    )
    caption = (
        "Means over all iterations and runs, from the kernels' extras. For Gibbs 'distinct "
        "factors' is the site's degree (paper: 399 neighbours; here far pairs underflow to "
        "A_ij = 0, so degrees are 369 to 399). For Poisson-Gibbs: 'draws B' is the Poisson "
        "envelope count drawn with Statement 1 (expected (lambda/L + 1) sum_{A[i]} M_phi), "
        "'kept' the draws left after thinning (sum of s_phi), 'distinct' the factors with "
        "s_phi > 0 (the ones whose D values are evaluated). 003 reports 7, 28 and 132; compare "
        "with 'draws B'. For DoubleMIN-Gibbs, 'draws B' is its local proposal minibatch and "
        "'2nd minibatch' the global one drawn for the M-H correction."
    )
    return table("Factors per iteration", columns, rows, caption, _factor_banner(chains))


def _factor_banner(chains: list[dict[str, Any]]) -> dict[str, Any] | None:
    lines = []
    if chains:
        L = chains[0]["L"]
        lines.append(f"L = {L:.4f} here; 003 gives L = {PAPER_L:g}.")
    for label, recs in _by_label(chains).items():
        paper = recs[0].get("paper_factors")
        if paper is None or recs[0]["algorithm"] != "poisson-gibbs":
            continue
        draws = float(np.mean([r["draws_per_iter"] for r in recs]))
        lines.append(f"{label}: draws B / iter = {draws:.3g} against the paper's {paper:g}.")
    return {"cls": "pass", "lines": lines} if lines else None


def records_table(chains: list[dict[str, Any]]) -> dict[str, Any]:
    rows = []
    for r in sorted(chains, key=lambda r: (r["label"], r["replicate"])):
        rows.append(
            [
                cell(r["label"]),
                cell(r["replicate"], "num"),
                cell(r["n_steps"], "num"),
                cell(r["chunks"], "num"),
                cell(_g(r["error"][-1], ".4g"), "num"),
                cell(_g(r["error_pooled"][-1], ".4g"), "num"),
                cell(_g(r["sampler_s"][-1], ".4g"), "num"),
                cell(_g(r.get("setup_s"), ".3g"), "num"),
                cell(_g(r["wall_s"], ".4g"), "num"),
            ]
        )
    columns = (
        "sampler",
        "run",
        "iterations",
        "chunks",
        "final error (mean over sites)",
        "final pooled error",
        "sampler s",
        "set-up s (counted once)",
        "wall s",
    )
    caption = (
        "One row per chain. Pooled error: sqrt(sum over sites and values of (marginal - 1/D)^2). "
        "'wall s' adds the histogram bookkeeping to the sampler time. 'set-up s': "
        "per-call set-up of the DoubleMIN wrapper (global alias table), kept once per run in "
        "'sampler s' and taken out of every chunk."
    )
    return table("All chains", columns, rows, caption)


def _settings_rows(config: PottsConfig) -> list[tuple[str, str]]:
    rows = [
        ("level", config.level),
        ("seed", str(config.seed)),
        (
            "model",
            f"{config.side} x {config.side} grid, n = {config.side**2}, D = {config.D}, beta = "
            f"{config.beta:g}, A_ij = exp(-{config.scale:g} ||p_i - p_j||^2), fully connected",
        ),
        ("runs per sampler", str(config.replicates)),
        ("checkpoints per run", f"about {config.checkpoints}, geometric from 10 iterations"),
    ]
    for s in config.samplers:
        rows.append((f"sampler {s.label}", s.describe()))
    return rows


def report(
    config: PottsConfig, records: list[dict[str, Any]], manifest: dict[str, Any]
) -> dict[str, Any]:
    """The section's own content; the framework adds completeness and provenance."""
    del manifest  # provenance is shown by the framework and the report's section 6
    chains = [r for r in records if r.get("type") == "chain"]
    return {
        "title": "Potts model: marginal error of Gibbs, Poisson-Gibbs and DoubleMIN-Gibbs",
        "notes": list(config.notes),
        "settings": _settings_rows(config),
        "figure_groups": figure_groups(chains, config),
        "tables": [factors_table(chains, config)] if chains else [],
        "records_table": records_table(chains) if chains else None,
    }


def summary(records: list[dict[str, Any]]) -> str:
    """Per-chain cost and final error as a plain-text table (for the terminal)."""
    chains = sorted(
        (r for r in records if r.get("type") == "chain"), key=lambda r: (r["label"], r["replicate"])
    )
    rows = [
        [
            r["label"],
            str(r["replicate"]),
            str(r["n_steps"]),
            f"{1e6 * r['sampler_s'][-1] / r['n_steps']:.3g}",
            f"{r['factors_per_iter']:.4g}",
            _g(r["draws_per_iter"], ".4g"),
            _g(r["paper_factors"], "g"),
            f"{r['error'][-1]:.4g}",
        ]
        for r in chains
    ]
    headers = ("sampler", "rep", "iters", "us/iter", "factors", "draws", "paper", "final error")
    return text_table(headers, rows, align="rrrrrrrr")
