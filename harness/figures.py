"""Matplotlib figures as inline SVG for the self-contained HTML report."""

from __future__ import annotations

import hashlib
import io
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.legend import Legend

from harness.gates.ecdf_bands import EcdfBand, Side

_SVG_NAMESPACES = (
    ' xmlns="http://www.w3.org/2000/svg"',
    ' xmlns:xlink="http://www.w3.org/1999/xlink"',
)


def inline_svg(fig: plt.Figure) -> str:
    buf = io.StringIO()
    # No metadata: it carries a date (irreproducible) and RDF namespace URLs.
    fig.savefig(
        buf,
        format="svg",
        bbox_inches="tight",
        metadata={"Creator": None, "Date": None, "Format": None, "Type": None},
    )
    plt.close(fig)
    text = buf.getvalue()
    text = text[text.index("<svg") :]
    # Inline SVG in HTML needs no namespace declarations (the HTML parser supplies them, also
    # for xlink:href); dropping them leaves no URL at all in the page, not even unfetched ones.
    for decl in _SVG_NAMESPACES:
        text = text.replace(decl, "", 1)
    return text


def legend_below(ax: Axes, fontsize: float = 7, ncol: int | None = None) -> Legend | None:
    """The axes' legend under them, below the tick labels and the x label: inside the axes a
    legend covers data somewhere, whatever corner it takes. None when nothing is labelled."""
    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return None
    fig = ax.get_figure(root=True)
    assert fig is not None
    # Where the x label ends is known only from a renderer; the tight bbox of the saved
    # figure then takes in the legend hanging below.
    box = ax.get_tightbbox(fig.canvas.get_renderer()).transformed(fig.transFigure.inverted())
    centre = ax.get_position().x0 + ax.get_position().width / 2
    return ax.legend(
        handles,
        labels,
        loc="upper center",
        bbox_to_anchor=(centre, box.y0),
        bbox_transform=fig.transFigure,
        ncol=ncol or (1 if len(handles) < 3 else 2),
        fontsize=fontsize,
        frameon=False,
    )


#: The colour of the marks where an ECDF difference leaves its band (the report's fail colour).
EXIT_COLOUR = "#b00020"


def ecdf_band_svg(
    band: EcdfBand | dict[str, Any],
    title: str = "",
    xlabel: str = "u",
    side: Side = "two-sided",
) -> str:
    """The ECDF difference with its simultaneous band (Säilynoja et al. 2022), as inline SVG.

    Grid points where the difference leaves the band are marked in red (their SVG group's id
    starts with ``ecdf-exits-``); the largest |F_n - u| over all values (the KS statistic) is
    an x. With ``side="above"`` only exits above the band count (a conservative gate's p-values
    sit below the diagonal by design).
    """
    b = EcdfBand.from_dict(band)
    u, d = b.grid, np.asarray(b.diff)
    fig, ax = plt.subplots(figsize=(3.6, 2.5))
    ax.fill_between(u, b.lower, b.upper, color="#d0d7e2", lw=0, label=f"{b.level:.1%} band")
    ax.axhline(0.0, color="#888", lw=0.6)
    ax.plot(u, d, color="#1f4e96", lw=1.2, label=f"ECDF - u (n={b.n})")
    ax.plot([b.peak_at], [b.peak], "x", color="#222", ms=5, label=f"KS {abs(b.peak):.3g}")
    exits = b.exits(side)
    if exits.size:
        (marks,) = ax.plot(u[exits], d[exits], "o", color=EXIT_COLOUR, ms=3.5, label="outside")
        # An id per band (of its content: the page stays reproducible), prefixed for lookups.
        digest = hashlib.sha256(repr(b.diff).encode()).hexdigest()[:10]
        marks.set_gid(f"ecdf-exits-{digest}")
    ax.set_xlim(0.0, 1.0)
    ax.set_xlabel(xlabel, fontsize=8)
    ax.set_ylabel("ECDF - u", fontsize=8)
    ax.tick_params(labelsize=7)
    # Below the axes: inside, it would hide the curve where it matters most.
    ax.legend(fontsize=6, frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.3), ncol=2)
    if title:
        ax.set_title(title, fontsize=8)
    # Text as text, not glyph paths: a third of the size, and selectable in the page.
    with plt.rc_context({"svg.fonttype": "none"}):
        return inline_svg(fig)
