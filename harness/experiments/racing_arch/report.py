"""The report section of the ARCH experiment (000_26bed7cc1ef3ab92.txt, Sec. 5.2): figures of
Fig. 2(b)-(d) on simulated data and the paper's numbers beside ours."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from harness.experiments.racing_arch.settings import MODELS, ArchConfig
from harness.experiments.racing_arch.summary import arch_summary
from harness.experiments.report_parts import cell, table
from harness.figures import inline_svg

_STYLE = {"exact": "-", "sub": "--"}


def arch_figures(summary: dict[str, Any]) -> dict[str, Any]:
    """Figures of 000, Fig. 2(b)-(d) from a summary: log p(q|r) vs likelihood evaluations during
    adaptation, the adjusted posterior of q, and the autocorrelation of q (solid: exact,
    dashed: Sub). Parts not yet run are simply absent from the plots."""
    return {
        "log_posterior_vs_evals": _fig_convergence(summary),
        "adjusted_posterior": _fig_adjusted(summary),
        "autocorrelation": _fig_acf(summary),
    }


def _new_figure(title: str) -> tuple[Any, Any]:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.0, 4.0), layout="constrained")
    ax = fig.add_subplot()
    ax.set_title(title, fontsize=10)
    return fig, ax


def _legend(ax: Any, **kwargs: Any) -> None:
    # Partial results may have nothing labelled yet; matplotlib would warn about an empty legend.
    if ax.get_legend_handles_labels()[0]:
        ax.legend(**kwargs)


def _fig_convergence(summary: dict[str, Any]) -> Any:
    fig, ax = _new_figure("Estimated log p(q | r) during adaptation (simulated data)")
    colours = [f"C{i}" for i in range(len(MODELS))]
    for name, s in summary["samplers"].items():
        trace = (s.get("adapt") or {}).get("trace") or []
        if not trace:
            continue
        T = np.asarray(trace)
        for i, q in enumerate(MODELS):
            label = f"q={q}" if name == "exact" else None
            ax.plot(T[:, 1], T[:, 2 + i], _STYLE[name], color=colours[i], lw=1, label=label)
    reference = summary.get("comparison", {}).get("convergence_reference") or []
    for i, v in enumerate(reference):
        if v is not None:
            ax.axhline(v, color=colours[i], lw=0.6, ls=":")
    ax.set_xscale("log")
    ax.set_xlabel("likelihood evaluations")
    ax.set_ylabel("log p(q | r), normalised pi_q / pi~_q")
    _legend(ax, fontsize=7, ncol=2, title="solid exact, dashed Sub", title_fontsize=7)
    return fig


def _fig_adjusted(summary: dict[str, Any]) -> Any:
    fig, ax = _new_figure("Adjusted posterior p~(q | r), fixed pi~")
    x = np.arange(len(MODELS))
    for shift, (name, s) in zip((-0.2, 0.2), summary["samplers"].items(), strict=False):
        run = s.get("run")
        if not run:
            continue
        ax.bar(x + shift, run["adjusted_posterior_pooled"], width=0.4, alpha=0.6, label=name)
        for chain in run["adjusted_posterior"]:
            ax.plot(x + shift, chain, "k.", ms=3)
    ax.axhline(1.0 / len(MODELS), color="grey", lw=0.8, ls=":")
    ax.set_xticks(x, [str(q) for q in MODELS])
    ax.set_xlabel("q")
    ax.set_ylabel("frequency (dots: single chains)")
    _legend(ax, fontsize=8)
    return fig


def _fig_acf(summary: dict[str, Any]) -> Any:
    fig, ax = _new_figure("Autocorrelation of q")
    for name, s in summary["samplers"].items():
        acf = (s.get("run") or {}).get("autocorr_mean")
        if acf:
            ax.plot(np.arange(len(acf)), acf, _STYLE[name], color="k", label=name)
    ax.axhline(0.0, color="grey", lw=0.8)
    ax.set_xlabel("lag")
    ax.set_ylabel("autocorrelation (mean over chains)")
    _legend(ax, fontsize=8)
    return fig


def _fmt(x: Any) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:.3g}"
    return str(x)


def report(
    config: ArchConfig, records: Sequence[Mapping[str, Any]], manifest: Mapping[str, Any]
) -> dict[str, Any]:
    """The section's own content: notes, settings, the figures and the paper-vs-ours table."""
    summary = arch_summary(config, records)
    figures = [
        {"title": name.replace("_", " "), "svg": inline_svg(fig)}
        for name, fig in arch_figures(summary).items()
        if fig is not None
    ]
    rows = [
        [cell(r["quantity"]), cell(_fmt(r["paper"]), "num"), cell(_fmt(r["ours"]), "num")]
        for r in summary["paper_vs_ours"]
    ]
    paper_table = table(
        "The paper's numbers next to ours",
        ("quantity", "paper (000, Sec. 5.2)", "ours"),
        rows,
        "Paper: ~13,000 5-minute index returns, Q = {5, ..., 30}, m1 = 50, delta = 0.05, 1e5 "
        "iterations. Ours: simulated data and the settings listed above.",
    )
    missing = list(summary["missing"])
    return {
        "title": "Bayesian ARCH model selection: Racing-Normal Gibbs and racing MH vs exact",
        "notes": list(summary["notes"]) + [f"Missing: {m}" for m in missing],
        "settings": [(k, _fmt(v)) for k, v in summary["config"].items()],
        "skipped": [],
        "figure_groups": [
            {
                "title": "000, Fig. 2(b)-(d) on simulated data",
                "caption": "Solid: exact sampler; dashed: Sub (Racing-Normal Gibbs for q, SGLD "
                "corrected by racing MH). Left: estimated log p(q | r) against likelihood "
                "evaluations during adaptation; middle: adjusted posterior of q; right: "
                "autocorrelation of q.",
                "figures": figures,
            }
        ],
        "tables": [paper_table],
        "records_table": None,
    }
