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


#: How the legend names the floor zeros are drawn at on a log y axis (:func:`line_figure`).
ZERO_LABEL = "0 (drawn at floor)"
#: The floor lies this factor below the smallest positive y of the figure.
FLOOR_BELOW = 3.0


def zero_floor(lines: Sequence[Line]) -> float | None:
    """Where zeros go on a log y axis: a factor below the smallest positive y of ``lines``,
    None when no line has a zero (a log axis has no place for one)."""
    ys = [np.asarray(ln.y, dtype=float) for ln in lines]
    if not any(np.any(y == 0.0) for y in ys):
        return None
    positive = [float(y[y > 0].min()) for y in ys if np.any(y > 0)]
    return (min(positive) if positive else 1.0) / FLOOR_BELOW


def line_figure(
    lines: Sequence[Line],
    xlabel: str,
    ylabel: str,
    *,
    logx: bool = True,
    logy: bool = True,
    size: tuple[float, float] = (5.6, 3.8),
    zero_label: str = ZERO_LABEL,
) -> str:
    """The lines on one pair of axes, as an SVG string. On a log y axis zeros are drawn at a
    floor below the data, marked by a dashed line named ``zero_label`` (a zero error rate is a
    result, and dropped it would read as a missing setting); other points <= 0 on a log axis
    are dropped. The legend sits under the axes, off the data."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from harness.figures import inline_svg, legend_below

    fig, ax = plt.subplots(figsize=size)
    floor = zero_floor(lines) if logy else None
    for ln in lines:
        x, y = np.asarray(ln.x, dtype=float), np.asarray(ln.y, dtype=float)
        zero = y == 0.0
        if floor is not None:
            y = np.where(zero, floor, y)
        keep = np.isfinite(x) & np.isfinite(y)
        keep &= (x > 0) if logx else True
        keep &= (y > 0) if logy else True
        kw: dict[str, Any] = {"label": ln.label, "color": ln.color}
        if ln.style == "o":
            ax.plot(x[keep], y[keep], ls="none", marker="s", mfc="none", ms=7, mew=1.4, **kw)
        elif ln.err is not None:
            err = np.asarray(ln.err, dtype=float)
            # A symmetric bar about the floor would mean nothing: a zero point gets none.
            err = np.where(zero, 0.0, err) if floor is not None else err
            ax.errorbar(x[keep], y[keep], yerr=err[keep], marker="o", ms=3, lw=1.3, capsize=2, **kw)
        else:
            ax.plot(x[keep], y[keep], ls=ln.style, lw=1.3 if ln.style == "-" else 1.0, **kw)
    if floor is not None:
        ax.axhline(floor, color="#777", lw=0.8, ls=(0, (4, 3)), label=zero_label, zorder=0)
    ax.set(xscale="log" if logx else "linear", yscale="log" if logy else "linear")
    if floor is not None:
        ax.set_ylim(bottom=floor / 1.5)  # the floor's line stays inside the axes
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, which="major", alpha=0.3)
    legend_below(ax)
    return inline_svg(fig)


def group(title: str, caption: str, *figures: tuple[str, str]) -> dict[str, Any]:
    """A figure group for the report: a title, a caption and (title, svg) figures."""
    return {
        "title": title,
        "caption": caption,
        "figures": [{"title": t, "svg": svg} for t, svg in figures],
    }
