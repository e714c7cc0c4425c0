"""Small helpers several experiments share."""

from __future__ import annotations

import numpy as np


def checkpoints(n_steps: int, count: int) -> tuple[int, ...]:
    """About ``count`` geometric iteration counts from 10 (or 1) up to ``n_steps``, inclusive."""
    start = min(10, n_steps)
    grid = np.geomspace(start, n_steps, count)
    return tuple(sorted(set(np.rint(grid).astype(int).tolist()) | {n_steps}))
