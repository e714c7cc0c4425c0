"""The report section and terminal summary of the minibatch-gap experiment
(003_07f92522b9b1c588.txt, Thm. 1-2).

Plain data for the template: figures as inline SVG strings, tables as rows of cells. No HTML is
written here; the template escapes every text it gets from this module.
"""

from __future__ import annotations

from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from harness.experiments.minibatch_gap.chains import OBSERVABLES
from harness.experiments.minibatch_gap.exact_gaps import thm1_bound, thm2_bound
from harness.experiments.minibatch_gap.plan import exact_settings
from harness.experiments.minibatch_gap.settings import MinibatchGapConfig
from harness.experiments.report_parts import cell, table
from harness.experiments.report_parts import fmt as _g
from harness.figures import inline_svg as _svg
from harness.text_table import text_table

COLORS = {"gibbs": "#444444", "poisson-gibbs": "#1b9e77"}
OBS_STYLE = {"energy": "o", "frac0": "s"}


# ---------------------------------------------------------------- figures


def _ratio_panel(ax: plt.Axes, recs: list[dict[str, Any]], thm: int) -> None:
    recs = sorted(recs, key=lambda r: r["lam"])
    L = recs[0]["L"]
    x = np.array([r["lam_over_L"] for r in recs])
    ax.plot(x, [r[f"ratio_thm{thm}"] for r in recs], "o-", color="#1b9e77", ms=4, lw=1.0)
    grid = np.geomspace(x.min() / 1.2, x.max() * 1.2, 200)
    if thm == 1:
        # Thm. 1 is stated for lam >= 2L only: the curve starts there.
        bound = [thm1_bound(L, m * L) for m in grid]
        keep = [b is not None for b in bound]
        ax.plot(grid[keep], [b for b in bound if b is not None], "k--", lw=0.9)
        ax.axvline(2.0, color="#999", lw=0.6, ls=":")
        label = "gap(PG) / gap(Gibbs)"
    else:
        ax.plot(grid, [thm2_bound(L, m * L) for m in grid], "k--", lw=0.9)
        label = "gap(PMH) / gap(MH)"
    ax.set(xscale="log", xlabel="lam / L", ylabel=label, ylim=(0.0, 1.05))
    ax.set_title(f"Thm. {thm}", fontsize=9)


def ratio_figure(recs: list[dict[str, Any]]) -> str:
    """One graph: measured gap ratios against lam / L with each theorem's bound (dashed)."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(8.0, 3.0))
    _ratio_panel(left, recs, 1)
    _ratio_panel(right, recs, 2)
    fig.subplots_adjust(bottom=0.18, wspace=0.3)
    return _svg(fig)


def chain_figure(recs: list[dict[str, Any]]) -> str:
    """Chain-estimated gaps (fitted rate, both observables) against lam / L^2; Gibbs as lines;
    the exact gap as a black marker where the graph is tiny enough."""
    fig, ax = plt.subplots(figsize=(5.6, 3.3))
    pg = sorted((r for r in recs if r["algorithm"] == "poisson-gibbs"), key=lambda r: r["lam"])
    gibbs = [r for r in recs if r["algorithm"] == "gibbs"]
    x = [r["lam_over_L2"] for r in pg]
    for o in OBSERVABLES:
        y = [r["estimates"][o]["fit_gap"] for r in pg]
        ax.plot(x, y, marker=OBS_STYLE[o], color=COLORS["poisson-gibbs"], mfc="none", label=o)
        for r in gibbs:
            ax.axhline(r["estimates"][o]["fit_gap"], color=COLORS["gibbs"], lw=0.8, ls="--")
    exact = [(r["lam_over_L2"], r["exact"]["gap"]) for r in pg if r.get("exact")]
    if exact:
        ax.plot(*zip(*exact, strict=True), "k*", ms=7, label="exact gap (PG)")
        for r in gibbs:
            if r.get("exact"):
                ax.axhline(r["exact"]["gap"], color="k", lw=0.8, ls=":")
    ax.set(xscale="log", xlabel="lam / L^2", ylabel="gap estimate, 1 - exp(-rate)")
    ax.set_ylim(bottom=0.0)
    ax.legend(fontsize=7, frameon=False)
    fig.subplots_adjust(bottom=0.17, left=0.14)
    return _svg(fig)


def figure_groups(exact: list[dict[str, Any]], chains: list[dict[str, Any]]) -> list[dict]:
    groups = []
    by_graph: dict[str, list[dict[str, Any]]] = {}
    for r in exact:
        by_graph.setdefault(r["graph"], []).append(r)
    figures = []
    for name, recs in by_graph.items():
        r = recs[0]
        title = f"{name}: n = {r['n']}, D = {r['D']}, {r['n_factors']} factors, L = {r['L']:.3g}"
        figures.append({"title": title, "svg": ratio_figure(recs)})
    if figures:
        caption = (
            "Exact spectral gaps (1 - lambda_2 of the exact transition matrices) as ratios "
            "against the plain chain, against lam / L (log). Dashed: Thm. 1's bound exp(-4 L^2 / "
            "lam), drawn from lam = 2L where the theorem starts (dotted line); Thm. 2's bound "
            "0.5 exp(-L^2 / (lam + L)) for every lam. The theorem holds where the points lie on "
            "or above the dashed curve."
        )
        groups.append(
            {"title": "Gap ratios against the theorems", "caption": caption, "figures": figures}
        )
    by_chain: dict[str, list[dict[str, Any]]] = {}
    for r in chains:
        by_chain.setdefault(r["chain"], []).append(r)
    figures = []
    for name, recs in by_chain.items():
        r = recs[0]
        title = f"{name}: {r['graph']}, n = {r['n_vars']}, D = {r['D']}, L = {r['L']:.3g}"
        figures.append({"title": title, "svg": chain_figure(recs)})
    if figures:
        caption = (
            "Gap estimated from Numba chains: 1 - exp(-r), r the exponential decay rate of the "
            "autocorrelation of the energy (circles) or the fraction of variables at 0 "
            "(squares), fitted over the late lags; green: Poisson-Gibbs against lam / L^2, "
            "dashed: Gibbs. Stars and dotted lines: the exact gaps (tiny graphs only). Each "
            "estimate sees only the modes its observable overlaps with, so it is an upper "
            "estimate of the gap in general."
        )
        groups.append(
            {"title": "Gaps estimated from chains", "caption": caption, "figures": figures}
        )
    return groups


# ---------------------------------------------------------------- tables


def tightness_table(exact: list[dict[str, Any]]) -> dict[str, Any]:
    """Per graph and theorem: the smallest ratio / bound where the theorem applies."""
    rows = []
    failures = []
    for name in dict.fromkeys(r["graph"] for r in exact):
        recs = [r for r in exact if r["graph"] == name]
        row = [cell(name), cell(_g(recs[0]["L"]), "num")]
        for thm in (1, 2):
            applies = [r for r in recs if r[f"bound_thm{thm}"] is not None]
            if not applies:
                row += [cell("-"), cell("-"), cell("-")]
                continue
            worst = min(applies, key=lambda r: r[f"ratio_thm{thm}"] / r[f"bound_thm{thm}"])
            ok = all(r[f"holds_thm{thm}"] for r in applies)
            failures += [(name, thm, r["lam"]) for r in applies if not r[f"holds_thm{thm}"]]
            row += [
                cell(_g(worst[f"ratio_thm{thm}"] / worst[f"bound_thm{thm}"], ".4g"), "num"),
                cell(f"{worst['lam_label']} ({_g(worst['lam'])})"),
                cell("yes" if ok else "NO", "pass" if ok else "fail"),
            ]
        rows.append(row)
    columns = (
        "graph",
        "L",
        "Thm. 1: min ratio / bound",
        "at lam",
        "Thm. 1 holds",
        "Thm. 2: min ratio / bound",
        "at lam",
        "Thm. 2 holds",
    )
    caption = (
        "ratio / bound >= 1 everywhere means the theorem holds; values far above 1 mean the bound "
        "is loose. Thm. 1 is counted only for lam >= 2L. 'holds' allows the ratio to sit below "
        "the bound by the truncation's worst effect on the gap (gap_error, ~1e-13) only."
    )
    lines = (
        ["Every measured ratio is at or above its theorem's bound."]
        if not failures
        else [
            f"Below the bound: {', '.join(f'{g} Thm. {t} lam {lam:g}' for g, t, lam in failures)}"
        ]
    )
    banner = {"cls": "fail" if failures else "pass", "lines": lines}
    return table("Tightness of the bounds", columns, rows, caption, banner)


def chain_table(chains: list[dict[str, Any]]) -> dict[str, Any]:
    rows = []
    for r in sorted(chains, key=lambda r: (r["chain"], r["algorithm"], r["lam"] or 0.0)):
        ex = r.get("exact") or {}
        for o in OBSERVABLES:
            e = r["estimates"][o]
            exo = ex.get(o, {})
            rows.append(
                [
                    cell(r["chain"]),
                    cell(r["algorithm"]),
                    cell(_g(r["lam_over_L2"])),
                    cell(o),
                    cell(_g(e["one_minus_rho1"], ".4f"), "num"),
                    cell(_g(exo.get("one_minus_rho1"), ".4f"), "num"),
                    cell(_g(e["fit_gap"], ".4f"), "num"),
                    cell(_g(exo.get("fit_gap"), ".4f"), "num"),
                    cell(f"{e['fit_window'][0]}-{e['fit_window'][1]}", "num"),
                    cell(_g(ex.get("gap"), ".4f"), "num"),
                    cell(_g(r["factors_per_step"], ".3g"), "num"),
                    cell(f"{r['n_steps']:g}", "num"),
                    cell(_g(r["wall_s"], ".3g"), "num"),
                ]
            )
    columns = (
        "chain",
        "algorithm",
        "lam / L^2",
        "observable",
        "1 - rho(1)",
        "exact 1 - rho(1)",
        "fitted gap",
        "exact fitted gap",
        "fit lags",
        "exact gap",
        "factors / step",
        "steps",
        "wall s",
    )
    caption = (
        "Chain estimates (one chain per row pair, after burn-in). 1 - rho(1) is a Rayleigh "
        "quotient, so its exact value is >= the gap; the fitted gap 1 - exp(-rate) over the "
        "listed lags approaches the gap only when the slowest mode dominates the observable. "
        "'exact' columns: the same quantities from the exact matrix (tiny graphs only)."
    )
    return table("Chain-estimated gaps", columns, rows, caption)


def records_table(exact: list[dict[str, Any]]) -> dict[str, Any]:
    rows = []
    for r in sorted(exact, key=lambda r: (r["graph"], r["lam"])):
        rows.append(
            [
                cell(r["graph"]),
                cell(_g(r["L"])),
                cell(f"{r['lam_label']} ({_g(r['lam'])})"),
                cell(_g(r["gap_gibbs"], ".4f"), "num"),
                cell(_g(r["gap_poisson_gibbs"], ".4f"), "num"),
                cell(_g(r["ratio_thm1"], ".4f"), "num"),
                cell(_g(r["bound_thm1"], ".4f"), "num"),
                cell(_g(r["gap_mh"], ".4f"), "num"),
                cell(_g(r["gap_poisson_mh"], ".4f"), "num"),
                cell(_g(r["ratio_thm2"], ".4f"), "num"),
                cell(_g(r["bound_thm2"], ".4f"), "num"),
                cell(_g(max(r["truncation_bound_pg"], r["truncation_bound_pmh"]), ".2g"), "num"),
                cell(_g(max(r["gap_error_pg"], r["gap_error_pmh"]), ".2g"), "num"),
                cell(_g(r["wall_s"], ".3g"), "num"),
            ]
        )
    columns = (
        "graph",
        "L",
        "lam",
        "gap Gibbs",
        "gap PG",
        "PG / Gibbs",
        "Thm. 1 bound",
        "gap MH",
        "gap PMH",
        "PMH / MH",
        "Thm. 2 bound",
        "truncation tau",
        "gap error",
        "wall s",
    )
    caption = (
        "Every exact setting. tau: the Poisson mass the exact matrices leave out per (x, i); "
        "gap error: the most that truncation and rounding can move a gap. '-': Thm. 1 does not "
        "apply (lam < 2L)."
    )
    return table("All exact settings", columns, rows, caption)


# ---------------------------------------------------------------- section


def _settings_rows(config: MinibatchGapConfig) -> list[tuple[str, str]]:
    rows = [
        ("level", config.level),
        ("seed", str(config.seed)),
        (
            "lam grid",
            f"L x {{{', '.join(f'{m:g}' for m in config.lam_over_L)}}} and L^2 x "
            f"{{{', '.join(f'{m:g}' for m in config.lam_over_L2)}}}",
        ),
        ("Poisson truncation", f"P(s_phi > K_phi) <= {config.tail:g} per factor"),
        ("grid cap", f"settings with more than {config.max_grid:.3g} s vectors per (x, i) skipped"),
    ]
    for g in config.graphs:
        rows.append(
            (
                f"graph {g.name}",
                f"random pairwise, n = {g.n}, D = {g.D}, L = {g.L:g}, edge prob {g.edge_prob:g}",
            )
        )
    for c in config.chains:
        where = (
            f"Potts grid {c.side} x {c.side}, D = {c.D}, beta = {c.beta:g}"
            if c.graph == "potts"
            else c.graph
        )
        rows.append(
            (
                f"chains {c.name}",
                f"{where}; Gibbs and Poisson-Gibbs at lam / L^2 in "
                f"{{{', '.join(f'{m:g}' for m in c.lam_over_L2)}}}; {c.n_steps:g} steps after "
                f"{c.burn_in} burn-in; lags <= {c.max_lag}",
            )
        )
    return rows


def report(
    config: MinibatchGapConfig, records: list[dict[str, Any]], manifest: dict[str, Any]
) -> dict[str, Any]:
    """This experiment's part of its report section (the framework adds the frame)."""
    exact = [r for r in records if r.get("type") == "exact"]
    chains = [r for r in records if r.get("type") == "chain"]
    tables = []
    if exact:
        tables.append(tightness_table(exact))
    if chains:
        tables.append(chain_table(chains))
    skipped = [
        f"{s.graph} at lam = {s.lam_label} ({s.lam:.4g}): {reason}"
        for s, reason in exact_settings(config)[1]
    ]
    return {
        "title": "Minibatch Gibbs: spectral gaps against Thm. 1 and Thm. 2",
        "notes": list(config.notes),
        "settings": _settings_rows(config),
        "skipped": skipped,
        "figure_groups": figure_groups(exact, chains),
        "tables": tables,
        "records_table": records_table(exact) if exact else None,
    }


# ---------------------------------------------------------------- terminal summary


def summary(records: list[dict[str, Any]]) -> str:
    """Plain text for the terminal: per graph, the worst ratio / bound of each theorem; per
    chain, the fitted gap of each observable beside the exact gap."""
    exact = [r for r in records if r.get("type") == "exact"]
    chains = [r for r in records if r.get("type") == "chain"]
    parts = []
    if exact:
        rows = []
        for name in dict.fromkeys(r["graph"] for r in exact):
            recs = [r for r in exact if r["graph"] == name]
            row = [name, f"{recs[0]['L']:.3g}", str(len(recs))]
            for thm in (1, 2):
                applies = [r for r in recs if r[f"bound_thm{thm}"] is not None]
                if not applies:
                    row += ["-", "-"]
                    continue
                worst = min(r[f"ratio_thm{thm}"] / r[f"bound_thm{thm}"] for r in applies)
                ok = all(r[f"holds_thm{thm}"] for r in applies)
                row += [f"{worst:.4g}", "yes" if ok else "NO"]
            rows.append(row)
        headers = ("graph", "L", "lams", "Thm. 1 min r/b", "holds", "Thm. 2 min r/b", "holds")
        parts.append(text_table(headers, rows, align="lrrrrrr"))
    if chains:
        rows = [
            [
                r["chain"],
                r["algorithm"],
                _g(r["lam_over_L2"]),
                *(_g(r["estimates"][o]["fit_gap"], ".4f") for o in OBSERVABLES),
                _g((r.get("exact") or {}).get("gap"), ".4f"),
            ]
            for r in sorted(chains, key=lambda r: (r["chain"], r["algorithm"], r["lam"] or 0.0))
        ]
        headers = ("chain", "algorithm", "lam/L^2", *(f"gap {o}" for o in OBSERVABLES))
        align = "llr" + "r" * len(OBSERVABLES) + "r"
        parts.append(text_table((*headers, "exact gap"), rows, align=align))
    return "\n\n".join(parts)
