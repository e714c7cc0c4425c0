"""Matplotlib figures as inline SVG for the self-contained HTML report."""

from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

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
