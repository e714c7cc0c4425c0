"""Building blocks every experiment's report section uses: table cells, tables, number text."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any


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
