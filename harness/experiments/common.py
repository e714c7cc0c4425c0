"""Small helpers several experiments share (their settings and records, not their running)."""

from __future__ import annotations

from typing import Any

import numpy as np


def checkpoints(n_steps: int, count: int) -> tuple[int, ...]:
    """About ``count`` geometric iteration counts from 10 (or 1) up to ``n_steps``, inclusive."""
    start = min(10, n_steps)
    grid = np.geomspace(start, n_steps, count)
    return tuple(sorted(set(np.rint(grid).astype(int).tolist()) | {n_steps}))


def lists_to_tuples(d: dict[str, Any]) -> dict[str, Any]:
    """A manifest entry read back from JSON: its lists become the tuples the frozen config holds."""
    return {k: tuple(v) if isinstance(v, list) else v for k, v in d.items()}
