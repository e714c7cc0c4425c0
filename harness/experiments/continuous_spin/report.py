"""The report section of the continuous spin experiment (003, Sec. 4.2, Fig. 1c/2c).

003_07f92522b9b1c588.txt, Sec. 4.2. Plain data for the template: figures as inline SVG strings,
tables as rows of cells. The template escapes every text it gets from this module.
"""

from __future__ import annotations

from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from harness.experiments.continuous_spin.settings import (
    PAPER_FACTORS,
    PAPER_L,
    PAPER_REFERENCE_STEPS,
    ContinuousSpinConfig,
    reference_setting,
)
from harness.experiments.report_parts import by_label as _by_label
from harness.experiments.report_parts import cell, table
from harness.experiments.report_parts import fmt as _g
from harness.figures import inline_svg as _svg
from harness.text_table import text_table

COLORS = {"gibbs-its": "#000000", "pgits": "#1f78b4", "pgda": "#e6550d"}


def _averaged(recs: list[dict[str, Any]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Iterations, mean sampler seconds and mean sym KL over replicates (same checkpoints)."""
    its = np.asarray(recs[0]["iterations"], dtype=float)
    secs = np.mean([r["sampler_s"] for r in recs], axis=0)
    err = np.mean([r["sym_kl"] for r in recs], axis=0)
    return its, secs, err


def kl_figure(
    chains: list[dict[str, Any]], config: ContinuousSpinConfig, reference: dict[str, Any], x: str
) -> str:
    """Sym KL against iterations (``x = "iterations"``) or sampler seconds (``"time"``)."""
    if x not in ("iterations", "time"):
        raise ValueError(f"x = {x!r} is invalid; valid: iterations, time")
    fig, ax = plt.subplots(figsize=(5.6, 3.8))
    groups = _by_label(chains)
    for a in config.algorithms:
        recs = groups.get(a)
        if not recs:
            continue
        its, secs, err = _averaged(recs)
        xs = its if x == "iterations" else secs
        keep = xs > 0  # log axis: the first checkpoint can take ~0 s
        name = f"{a} ({len(recs)} run{'s' if len(recs) > 1 else ''})"
        ax.plot(xs[keep], err[keep], color=COLORS.get(a), lw=1.3, label=name)
    if x == "iterations" and chains:
        # The finite-sample floor depends only on the iteration count, not on the sampler.
        its = np.asarray(chains[0]["iterations"], dtype=float)
        ax.plot(its, chains[0]["floor"], color="#999999", ls="--", lw=1, label="floor (iid)")
    ax.axhline(
        reference["split_half_kl"] / 4, color="#999999", ls=":", lw=1, label="reference noise"
    )
    ax.set(xscale="log", yscale="log", ylabel="symmetric KL (mean over variables)")
    ax.set_xlabel("iterations" if x == "iterations" else "sampler time (s)")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=7, frameon=False)
    return _svg(fig)


def figure_groups(
    chains: list[dict[str, Any]], config: ContinuousSpinConfig, reference: dict[str, Any]
) -> list[dict[str, Any]]:
    if not chains:
        return []
    caption = (
        f"{config.side} x {config.side} continuous spin model, beta = {config.beta:g}, A_ij = "
        f"exp(-{config.scale:g} d^2), L = {reference['L']:.4f}; lambda = {config.lam_l2:g} "
        f"L^2, m = {config.m}, k = {config.k} (PGDA). Sym KL between running per-variable "
        f"histograms ({config.n_bins} bins on [0, 1], 0.5 pseudo-counts) and those of a "
        f"{reference['n_steps']:.3g}-iteration Gibbs-ITS reference ({reference['burn_in']:.3g} "
        "dropped), mean over variables and over the runs in the legend. Dashed: "
        "2 (n_bins - 1) n_vars (1/T + 1/R), the floor for independent update values; dotted: the "
        "reference's own share, measured (sym KL of its halves / 4). Time: Numba sampler "
        "calls only."
    )
    figures = [
        {
            "title": "sym KL vs iterations (Fig. 1c)",
            "svg": kl_figure(chains, config, reference, "iterations"),
        },
        {
            "title": "sym KL vs wall time (Fig. 2c)",
            "svg": kl_figure(chains, config, reference, "time"),
        },
    ]
    return [{"title": "Symmetric KL divergence", "caption": caption, "figures": figures}]


def factors_table(
    chains: list[dict[str, Any]], config: ContinuousSpinConfig, reference: dict[str, Any]
) -> dict[str, Any]:
    """Factors per iteration beside 003's 190, and the cost and final error of each sampler."""
    groups = _by_label(chains)
    rows = [
        [
            cell("reference"),
            cell(f"gibbs-its, m = {config.m}"),
            cell(1, "num"),
            cell(reference["n_steps"], "num"),
            cell(_g(reference["factors_per_iter"], ".4g"), "num"),
            cell("-", "num"),
            cell("-", "num"),
            cell(_g(reference["evals_per_iter"], ".4g"), "num"),
            cell("-", "num"),
            cell(_g(reference["accept_rate"], ".3g"), "num"),
            cell(_g(1e6 * reference["sampler_s"] / reference["n_steps"], ".3g"), "num"),
            cell(f"{_g(reference['split_half_kl'] / 4, '.3g')} (halves / 4)", "num"),
        ]
    ]
    for a in config.algorithms:
        recs = groups.get(a)
        if not recs:
            continue

        def mean(field: str, recs: list[dict[str, Any]] = recs) -> float | None:
            vals = [r[field] for r in recs if r.get(field) is not None]
            return float(np.mean(vals)) if vals else None

        params = ", ".join(f"{k} = {v:.4g}" for k, v in recs[0]["params"].items())
        us = float(np.mean([1e6 * r["sampler_s"][-1] / r["n_steps"] for r in recs]))
        rows.append(
            [
                cell(a),
                cell(params),
                cell(len(recs), "num"),
                cell(recs[0]["n_steps"], "num"),
                cell(_g(mean("factors_per_iter"), ".4g"), "num"),
                cell(_g(mean("draws_per_iter"), ".4g"), "num"),
                cell(_g(mean("kept_per_iter"), ".4g"), "num"),
                cell(_g(mean("evals_per_iter"), ".4g"), "num"),
                cell(_g(recs[0].get("paper_factors"), "g"), "num"),
                cell(_g(mean("accept_rate"), ".3g"), "num"),
                cell(_g(us, ".3g"), "num"),
                cell(_g(float(np.mean([r["sym_kl"][-1] for r in recs])), ".3g"), "num"),
            ]
        )
    columns = (
        "sampler",
        "parameters",
        "runs",
        "iterations",
        "distinct factors / iter",
        "draws B / iter",
        "kept draws / iter",
        "factor evaluations / iter",
        "paper (003 Sec. 4.2)",
        "accept rate",
        "us / iter",
        "final sym KL",
    )
    floor = chains[0]["floor"][-1] if chains else None
    caption = (
        "Means over all iterations and runs, from the kernels' extras. 'distinct': factors "
        "touched (Gibbs-ITS: the site's degree; Poisson-Gibbs: factors with s_phi > 0). 'draws "
        "B': Poisson envelope draws (expected (lambda/L + 1) sum of M over the site's factors); "
        "'kept': sum of s_phi after thinning, the minibatch size. 003's 190 is the minibatch "
        "size: compare with 'draws B' / 'kept', not with 'distinct'. 'factor evaluations': "
        "phi evaluations, counting each of the m + 1 interpolation nodes and the MH check. "
        f"Floor of the final sym KL for independent updates: {_g(floor, '.3g')}."
    )
    return table(
        "Factors per iteration and cost", columns, rows, caption, _banner(chains, reference)
    )


def _banner(chains: list[dict[str, Any]], reference: dict[str, Any]) -> dict[str, Any]:
    lines = [f"L = {reference['L']:.4f} here; 003 gives L = {PAPER_L:g}."]
    for label, recs in _by_label(chains).items():
        if recs[0].get("draws_per_iter") is None:
            continue
        draws = float(np.mean([r["draws_per_iter"] for r in recs]))
        kept = float(np.mean([r["kept_per_iter"] for r in recs]))
        lines.append(
            f"{label}: draws B / iter = {draws:.4g}, kept = {kept:.4g}, against the paper's "
            f"{PAPER_FACTORS:g}."
        )
    if reference["n_steps"] != PAPER_REFERENCE_STEPS:
        lines.append(
            f"Reference: {reference['n_steps']:.3g} iterations "
            f"(paper: {PAPER_REFERENCE_STEPS:.0e})."
        )
    return {"cls": "pass", "lines": lines}


def records_table(chains: list[dict[str, Any]]) -> dict[str, Any]:
    rows = []
    for r in sorted(chains, key=lambda r: (r["label"], r["replicate"])):
        rows.append(
            [
                cell(r["label"]),
                cell(r["replicate"], "num"),
                cell(r["n_steps"], "num"),
                cell(r["chunks"], "num"),
                cell(_g(r["sym_kl"][-1], ".4g"), "num"),
                cell(_g(r["floor"][-1], ".4g"), "num"),
                cell(_g(r["sampler_s"][-1], ".4g"), "num"),
                cell(_g(r["wall_s"], ".4g"), "num"),
            ]
        )
    columns = (
        "sampler",
        "run",
        "iterations",
        "chunks",
        "final sym KL",
        "floor (iid)",
        "sampler s",
        "wall s",
    )
    caption = "One row per compared chain. 'wall s' adds the histogram bookkeeping."
    return table("All chains", columns, rows, caption)


def _settings_rows(config: ContinuousSpinConfig) -> list[tuple[str, str]]:
    return [
        ("level", config.level),
        ("seed", str(config.seed)),
        (
            "model",
            f"{config.side} x {config.side} grid, n = {config.side**2}, x_i in [0, 1], beta = "
            f"{config.beta:g}, A_ij = exp(-{config.scale:g} ||p_i - p_j||^2), fully connected",
        ),
        (
            "samplers",
            f"{', '.join(config.algorithms)}; lambda = {config.lam_l2:g} L^2, m = {config.m}, "
            f"k = {config.k}; {config.n_steps} iterations, {config.replicates} run(s) each",
        ),
        (
            "reference",
            f"gibbs-its, m = {config.m}, {config.reference_steps} iterations, first "
            f"{config.reference_burn_in} dropped",
        ),
        ("histograms", f"{config.n_bins} equal bins on [0, 1], 0.5 pseudo-counts per bin"),
        ("checkpoints per run", f"about {config.checkpoints}, geometric from 10 iterations"),
    ]


def report(
    config: ContinuousSpinConfig, records: list[dict[str, Any]], manifest: dict[str, Any]
) -> dict[str, Any]:
    """The section's own content; the framework adds completeness and provenance."""
    del manifest  # provenance is shown by the framework and the report's section 6
    ref_key = reference_setting(config).key
    reference = next((r for r in records if r["key"] == ref_key), None)
    chains = [r for r in records if r.get("type") == "chain"]
    ready = reference is not None and bool(chains)
    return {
        "title": "Continuous spin model: symmetric KL of Gibbs-ITS, PGITS and PGDA",
        "notes": list(config.notes),
        "settings": _settings_rows(config),
        "figure_groups": figure_groups(chains, config, reference) if ready else [],
        "tables": [factors_table(chains, config, reference)] if ready else [],
        "records_table": records_table(chains) if chains else None,
    }


def _summary_row(r: dict[str, Any]) -> list[str]:
    ref = r.get("type") == "reference"
    secs = r["sampler_s"] if ref else r["sampler_s"][-1]
    return [
        "reference" if ref else r["label"],
        str(-1 if ref else r["replicate"]),
        str(r["n_steps"]),
        f"{1e6 * secs / r['n_steps']:.3g}",
        f"{r['factors_per_iter']:.4g}",
        _g(r.get("draws_per_iter"), ".4g"),
        _g(r.get("paper_factors"), "g"),
        f"{r['split_half_kl'] if ref else r['sym_kl'][-1]:.4g}",
    ]


def summary(records: list[dict[str, Any]]) -> str:
    """Per-chain cost and final sym KL as a plain-text table (for the terminal).

    For the reference, 'final sym KL' is the KL between its two halves.
    """
    chains = [r for r in records if r.get("type") in ("chain", "reference")]
    chains.sort(key=lambda r: (r["type"] == "chain", r.get("label", ""), r.get("replicate", -1)))
    headers = ("sampler", "rep", "iters", "us/iter", "factors", "draws", "paper", "final symKL")
    return text_table(headers, [_summary_row(r) for r in chains], align="rrrrrrrr")
