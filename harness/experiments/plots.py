"""The figures experiments draw: lines (with error bars) on shared axes, as inline SVG."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Line:
    """One curve: ``y`` against ``x``, optional +-``err`` bars; ``style`` "-" (ours), "--"
    (an exact expectation or a guide) or "o" (points only, e.g. the paper's)."""

    label: str
    x: Sequence[float]
    y: Sequence[float]
    err: Sequence[float] | None = None
    color: str | None = None
    style: str = "-"


def line_figure(
    lines: Sequence[Line],
    xlabel: str,
    ylabel: str,
    *,
    logx: bool = True,
    logy: bool = True,
    size: tuple[float, float] = (5.6, 3.8),
) -> str:
    """The lines on one pair of axes, as an SVG string; points <= 0 are dropped on log axes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from harness.figures import inline_svg

    fig, ax = plt.subplots(figsize=size)
    for ln in lines:
        x, y = np.asarray(ln.x, dtype=float), np.asarray(ln.y, dtype=float)
        keep = np.isfinite(x) & np.isfinite(y)
        keep &= (x > 0) if logx else True
        keep &= (y > 0) if logy else True
        kw: dict[str, Any] = {"label": ln.label, "color": ln.color}
        if ln.style == "o":
            ax.plot(x[keep], y[keep], ls="none", marker="s", mfc="none", ms=7, mew=1.4, **kw)
        elif ln.err is not None:
            err = np.asarray(ln.err, dtype=float)[keep]
            ax.errorbar(x[keep], y[keep], yerr=err, marker="o", ms=3, lw=1.3, capsize=2, **kw)
        else:
            ax.plot(x[keep], y[keep], ls=ln.style, lw=1.3 if ln.style == "-" else 1.0, **kw)
    ax.set(xscale="log" if logx else "linear", yscale="log" if logy else "linear")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=7, frameon=False)
    return inline_svg(fig)


def group(title: str, caption: str, *figures: tuple[str, str]) -> dict[str, Any]:
    """A figure group for the report: a title, a caption and (title, svg) figures."""
    return {
        "title": title,
        "caption": caption,
        "figures": [{"title": t, "svg": svg} for t, svg in figures],
    }
