"""The report section and terminal summary of the FlyMC Table 1 reproduction."""

from __future__ import annotations

from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from harness.experiments.flymc_table1.settings import (
    COLUMN_NAMES,
    COLUMNS,
    MODELS,
    PAPER,
    PAPER_DATA,
    PAPER_N,
    THETA_STEP,
    Table1Config,
)
from harness.experiments.report_parts import cell, table
from harness.experiments.report_parts import fmt as _g
from harness.figures import inline_svg
from harness.text_table import text_table

UPDATE = {"mh": "random-walk MH", "mala": "MALA (Langevin)", "slice": "slice sampling"}


def _rows(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in records if r.get("type") == "row"]


def with_speedups(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each row with ``speedup``: its ESS per query over the regular chain's on the same model
    and data (002, Table 1's last column), None where that chain is missing."""
    rows = _rows(records)
    base = {
        (r["model"], r["data"]): r["ess_mean_per_1000"] / r["queries_per_iter"]
        for r in rows
        if r["column"] == "regular" and r["queries_per_iter"] > 0
    }
    out = []
    for r in rows:
        ref = base.get((r["model"], r["data"]))
        eff = r["ess_mean_per_1000"] / r["queries_per_iter"] if r["queries_per_iter"] else None
        out.append({**r, "speedup": eff / ref if ref and eff is not None else None})
    order = {c: i for i, c in enumerate(COLUMNS)}
    return sorted(out, key=lambda r: (MODELS.index(r["model"]), r["data"], order[r["column"]]))


def table1(records: list[dict[str, Any]]) -> dict[str, Any]:
    rows = []
    for r in with_speedups(records):
        paper = PAPER.get((r["model"], r["column"])) if r["data"] == "synthetic" else None
        rows.append(
            [
                cell(f"{r['model']} ({r['data']}, N = {r['N']:,}, D = {r['D']})"),
                cell(COLUMN_NAMES[r["column"]]),
                cell(_g(r["queries_per_iter"], ".4g"), "num"),
                cell(_g(paper[0] if paper else None, ",.0f"), "num"),
                cell(_g(100.0 * r["queries_per_iter"] / r["N"], ".3g"), "num"),
                cell(_g(100.0 * paper[0] / PAPER_N[r["model"]] if paper else None, ".3g"), "num"),
                cell(_g(r["ess_mean_per_1000"], ".3g"), "num"),
                cell(_g(paper[1] if paper else None, "g"), "num"),
                cell(_g(r["ess_min_per_1000"], ".3g"), "num"),
                cell(_g(r["speedup"], ".3g"), "num"),
                cell(_g(paper[2] if paper else None, "g"), "num"),
                cell(_g(r["accept_rate"], ".2f"), "num"),
                cell(_g(r["bright_mean"], ".4g"), "num"),
                cell(_g(1e3 * r["seconds_per_iter"], ".3g"), "num"),
            ]
        )
    columns = (
        "model (data)",
        "algorithm",
        "queries / it",
        "paper",
        "% of N",
        "paper",
        "ESS / 1000 it (mean)",
        "paper",
        "ESS / 1000 it (min)",
        "speedup",
        "paper",
        "accept",
        "bright",
        "ms / it",
    )
    caption = (
        "Ours beside 002's Table 1 (the paper's column after each of ours; its data: "
        + "; ".join(f"{m}: {d}" for m, d in PAPER_DATA.items())
        + "). Queries: distinct (theta, n) likelihood evaluations per iteration after burn-in. "
        "ESS: bulk ESS from arviz-stats per coordinate, averaged (mean) and the slowest (min), "
        "per 1000 iterations after burn-in. Speedup: ESS (mean) per query over the regular "
        "chain's on the same data. MAP-finding is not counted (see the MAP table)."
    )
    return table("Table 1: queries, effective samples and speedup", columns, rows, caption)


def map_table(records: list[dict[str, Any]]) -> dict[str, Any]:
    rows = []
    for r in with_speedups(records):
        if r["column"] != "map":
            continue
        rows.append(
            [
                cell(f"{r['model']} ({r['data']})"),
                cell(_g(r["map_evaluations"], "d"), "num"),
                cell(_g(r["map_likelihood_evals"], ",d"), "num"),
                cell(_g(r["map_likelihood_evals"] / r["queries_per_iter"], ".3g"), "num"),
                cell(_g(r["map_seconds"], ".3g"), "num"),
            ]
        )
    return table(
        "Cost of finding theta_MAP (kept apart from the chains)",
        ("model (data)", "L-BFGS-B evaluations", "likelihood terms", "= FlyMC iterations", "s"),
        rows,
        "scipy's L-BFGS-B from theta = 0 with the analytic gradient; each evaluation reads all "
        "N terms. The last numeric column divides that cost by MAP-tuned FlyMC's queries per "
        "iteration.",
    )


def _bars(records: list[dict[str, Any]], field: str, paper_index: int, ylabel: str) -> str:
    """Ours against the paper's, one pair of bars per synthetic row; queries per iteration are
    shown as a share of N (the data sizes differ)."""
    rows = [r for r in with_speedups(records) if r["data"] == "synthetic"]
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    labels, ours, theirs = [], [], []
    for r in rows:
        paper = PAPER[(r["model"], r["column"])][paper_index]
        value = r[field] if r[field] is not None else np.nan
        if field == "queries_per_iter":
            value, paper = value / r["N"], paper / PAPER_N[r["model"]]
        labels.append(f"{r['model']}\n{r['column']}")
        ours.append(value)
        theirs.append(paper)
    x = np.arange(len(labels))
    ax.bar(x - 0.2, ours, 0.4, label="ours (synthetic stand-in)", color="#1f78b4")
    ax.bar(x + 0.2, theirs, 0.4, label="002, Table 1", color="#bbbbbb")
    ax.set_xticks(x, labels, fontsize=7)
    ax.set(yscale="log", ylabel=ylabel)
    ax.grid(True, axis="y", which="major", alpha=0.3)
    ax.legend(fontsize=7, frameon=False)
    return inline_svg(fig)


def scaling_figure(records: list[dict[str, Any]]) -> str | None:
    recs = [r for r in records if r.get("type") == "scaling"]
    if not recs:
        return None
    fig, (left, right) = plt.subplots(1, 2, figsize=(8.4, 3.4))
    for (algorithm, impl), color, style in (
        (("flymc-mh", "numba"), "#1f78b4", "-"),
        (("rwmh", "numba"), "#e6550d", "-"),
        (("flymc-mh", "reference"), "#1f78b4", "--"),
        (("rwmh", "reference"), "#e6550d", "--"),
    ):
        pts = sorted(
            (r for r in recs if (r["algorithm"], r["impl"]) == (algorithm, impl)),
            key=lambda r: r["N"],
        )
        if not pts:
            continue
        N = [r["N"] for r in pts]
        name = f"{algorithm} ({impl})"
        left.plot(
            N, [r["seconds_per_iter"] for r in pts], style, color=color, marker="o", label=name
        )
        right.plot(
            N,
            [r["seconds_per_iter"] / max(r["queries_per_iter"], 1.0) for r in pts],
            style,
            color=color,
            marker="o",
            label=name,
        )
    left.set(xscale="log", yscale="log", xlabel="N", ylabel="seconds / iteration")
    right.set(xscale="log", yscale="log", xlabel="N", ylabel="seconds / query")
    for ax in (left, right):
        ax.grid(True, which="major", alpha=0.3)
    left.legend(fontsize=7, frameon=False)
    fig.tight_layout()
    return inline_svg(fig)


def scaling_table(records: list[dict[str, Any]]) -> dict[str, Any]:
    recs = sorted(
        (r for r in records if r.get("type") == "scaling"),
        key=lambda r: (r["impl"], r["algorithm"], r["N"]),
    )
    rows = [
        [
            cell(r["algorithm"]),
            cell(r["impl"]),
            cell(f"{r['N']:,}", "num"),
            cell(_g(r["queries_per_iter"], ".4g"), "num"),
            cell(_g(r["bright_mean"], ".4g"), "num"),
            cell(_g(1e6 * r["seconds_per_iter"], ".4g"), "num"),
            cell(_g(1e9 * r["seconds_per_iter"] / max(r["queries_per_iter"], 1.0), ".3g"), "num"),
        ]
        for r in recs
    ]
    return table(
        "Scaling: one iteration as N grows (logistic, P = 10, MAP-tuned bounds)",
        ("algorithm", "impl", "N", "queries / it", "bright", "us / it", "ns / query"),
        rows,
        "FlyMC's cost per iteration follows its queries (bright points plus q_db times the "
        "dark ones) and the O(D^2) collapsed bound, not N times D as regular MH's does.",
    )


def report(config: Table1Config, records: list[dict[str, Any]], manifest: dict[str, Any]) -> dict:
    del manifest
    groups = []
    if _rows(records):
        groups.append(
            {
                "title": "Table 1 beside the paper",
                "caption": "Log scale. Ours on the synthetic stand-ins; the paper's on MNIST, "
                "CIFAR-10 and OPV (OPV's N taken as 1.8e6, which the paper's text here does "
                "not state).",
                "figures": [
                    {
                        "title": "likelihood queries per iteration, as a share of N",
                        "svg": _bars(records, "queries_per_iter", 0, "queries / iteration / N"),
                    },
                    {
                        "title": "speedup (ESS per query over regular MCMC)",
                        "svg": _bars(records, "speedup", 2, "speedup"),
                    },
                ],
            }
        )
    svg = scaling_figure(records)
    if svg:
        groups.append(
            {
                "title": "Time per iteration against N",
                "caption": "MAP-tuned FlyMC-MH against regular random-walk MH, Numba (solid) "
                "and the reference (dashed, small N only).",
                "figures": [{"title": "seconds per iteration and per query", "svg": svg}],
            }
        )
    tables = []
    if _rows(records):
        tables += [table1(records), map_table(records)]
    if any(r.get("type") == "scaling" for r in records):
        tables.append(scaling_table(records))
    return {
        "title": "Firefly Monte Carlo: Table 1 of 002",
        "notes": [*config.notes, *_notes(records, config.q_db)],
        "settings": [
            (
                "rows",
                f"{len(config.rows)}: "
                + ", ".join(f"{m} with {UPDATE[THETA_STEP[m]]}" for m in MODELS),
            ),
            ("q_db (FlyMC, implicit z updates)", f"{config.q_db:g}"),
            ("burn-in", f"{config.burn_in:.0%} of each chain"),
            ("start and step", "theta_MAP; steps from the Laplace approximation there"),
            (
                "scaling",
                f"N in {', '.join(f'{n:,}' for n in config.scaling_N)}, "
                f"{config.scaling_iterations} iterations; reference up to N = "
                f"{config.reference_max_N:,}",
            ),
        ],
        "figure_groups": groups,
        "tables": tables,
    }


def _notes(records: list[dict[str, Any]], q_db: float) -> list[str]:
    """Where ours differ from the paper's, and why, from the records."""
    rows = {(r["model"], r["data"], r["column"]): r for r in with_speedups(records)}
    out = []
    tuned = rows.get(("logistic", "synthetic", "map"))
    if tuned:
        out.append(
            f"MAP-tuned FlyMC on the N = {tuned['N']:,} logistic stand-in: "
            f"{tuned['queries_per_iter']:.0f} queries per iteration = "
            f"{100 * tuned['queries_per_iter'] / tuned['N']:.2f}% of N (paper: 207 = 1.7%), "
            f"speedup {_g(tuned['speedup'])} over regular MH (paper: 22)."
        )
    for model in MODELS:
        untuned = rows.get((model, "synthetic", "untuned"))
        tuned = rows.get((model, "synthetic", "map"))
        if not (untuned and tuned):
            continue
        paper_share = PAPER[(model, "untuned")][0] / PAPER_N[model]
        out.append(
            f"{model}: untuned FlyMC kept {100 * untuned['bright_mean'] / untuned['N']:.3g}% of "
            f"the data bright and queried {100 * untuned['queries_per_iter'] / untuned['N']:.3g}% "
            f"of N per iteration (paper: {100 * paper_share:.3g}%); MAP-tuned FlyMC kept "
            f"{tuned['bright_mean']:.3g} points bright, so most of its "
            f"{tuned['queries_per_iter']:.4g} queries are the q_db N_dark = "
            f"{q_db * (tuned['N'] - tuned['bright_mean']):.4g} dark proposals of the implicit z "
            "update."
        )
    if out:
        out.append(
            "Why the speedups exceed the paper's: on prior-predictive data with features of "
            "variance 1/P, x_n . theta stays near the bounds' expansion points, so even untuned "
            "bounds are tight (few bright points); MNIST's, CIFAR-10's and OPV's features are "
            "not like that, and the paper's q_db is not known (ours is the 0.01 that MAP-tuned "
            "FlyMC needs to stay under 5% of N, below the authors' code default of 0.1). The "
            "ESS per 1000 iterations are of the paper's order; they depend on our "
            "Laplace-scaled steps, not the paper's (unknown) ones."
        )
    return out


def summary(records: list[dict[str, Any]]) -> str:
    rows = [
        (
            r["model"],
            r["data"],
            r["column"],
            _g(r["queries_per_iter"], ".4g"),
            _g(r["ess_mean_per_1000"], ".3g"),
            _g(r["speedup"], ".3g"),
        )
        for r in with_speedups(records)
    ]
    text = text_table(("model", "data", "column", "queries/it", "ESS/1000 it", "speedup"), rows)
    scaling = [
        (
            r["algorithm"],
            r["impl"],
            f"{r['N']:,}",
            _g(r["queries_per_iter"], ".4g"),
            _g(1e6 * r["seconds_per_iter"], ".4g"),
        )
        for r in sorted(
            (r for r in records if r.get("type") == "scaling"),
            key=lambda r: (r["impl"], r["algorithm"], r["N"]),
        )
    ]
    if scaling:
        text += "\n\n" + text_table(("algorithm", "impl", "N", "queries/it", "us/it"), scaling)
    return text
