"""Tables and numbers as text, for the terminal and for the HTML report: the one place
columns are padded and aligned, and the cells and tables every report section (the report's
own and each experiment's) is built from."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

ALIGNMENTS = {"l": str.ljust, "r": str.rjust}


def text_table(
    headers: Sequence[str],
    rows: Iterable[Sequence[str]],
    align: str | None = None,
    sep: str = "  ",
) -> str:
    """A table of already formatted cells: the header, a dash rule under it, one line per row.

    ``align`` has one letter per column, ``"l"`` (left) or ``"r"`` (right); left everywhere when
    None. Each column is as wide as its widest cell or header; columns are joined by ``sep`` and
    lines carry no trailing spaces.
    """
    headers = list(headers)
    align = "l" * len(headers) if align is None else align
    if len(align) != len(headers) or set(align) - set(ALIGNMENTS):
        raise ValueError(
            f"align = {align!r} is invalid; valid: one of 'l', 'r' per column ({len(headers)})"
        )
    body = [list(row) for row in rows]
    for i, row in enumerate(body):
        if len(row) != len(headers):
            raise ValueError(f"row {i} has {len(row)} cells; valid: {len(headers)}, one per column")
        if not all(isinstance(cell, str) for cell in row):
            raise ValueError(f"row {i} = {row!r} is invalid; valid: cells formatted as strings")
    widths = [max([len(h), *(len(row[j]) for row in body)]) for j, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        padded = (ALIGNMENTS[a](c, w) for c, w, a in zip(cells, widths, align, strict=True))
        return sep.join(padded).rstrip()

    rule = sep.join("-" * w for w in widths)
    return "\n".join([line(headers), rule, *(line(row) for row in body)])


#: A column of :func:`record_table`: header, alignment ("l" or "r") and the cell of a record.
Column = tuple[str, str, Callable[[Any], str]]


def record_table(records: Iterable[Any], columns: Sequence[Column]) -> str:
    """:func:`text_table` with one row per record, each cell formatted by its column."""
    return text_table(
        [header for header, _, _ in columns],
        ([cell(r) for _, _, cell in columns] for r in records),
        align="".join(a for _, a, _ in columns),
    )


def microseconds(x: float | None) -> str:
    """Seconds as a table's microseconds cell, "-" where nothing was measured."""
    return "-" if x is None else f"{1e6 * x:.4g}"


def yes_no(within: bool) -> str:
    """A limit check's cell: "NO" in capitals, to stand out in a column of yeses."""
    return "yes" if within else "NO"


def cell(text: object, cls: str = "") -> dict[str, str]:
    return {"text": str(text), "cls": cls}


def table(
    title: str,
    columns: Sequence[str],
    rows: list[list[dict[str, str]]],
    caption: str = "",
    banner: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A table for the template; ``banner`` = {"cls": "pass"|"fail", "lines": [...]} under it."""
    return {
        "title": title,
        "columns": list(columns),
        "rows": rows,
        "caption": caption,
        "banner": banner,
    }


def fmt(x: float | None, spec: str = ".3g") -> str:
    """A number as text, '-' for a missing one (None or NaN)."""
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, spec)
