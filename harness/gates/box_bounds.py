"""Gates for box densities (001, Sec. 4): the marginals of draws in d >= 2, and the validity of
the bound M(B) >= max o over B that A*'s exactness rests on."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from harness.gates.exactness import ks_1samp
from harness.gates.multiple import holm
from harness.gates.result import GateResult
from harness.targets.box_probes import bound_violations, split_tree_boxes


def ks_marginals(
    values: np.ndarray, marginal_cdf: Callable[[int, np.ndarray], np.ndarray], alpha: float
) -> GateResult:
    """KS of each coordinate's draws against its marginal CDF, Holm across the coordinates
    (the family is rejected when its smallest Holm-adjusted p is below alpha)."""
    values = np.asarray(values, dtype=np.float64)
    d = values.shape[1]
    per = [ks_1samp(values[:, j], lambda x, j=j: marginal_cdf(j, x), alpha / d) for j in range(d)]
    _, adjusted = holm([r.p_value for r in per], alpha)
    worst = int(np.argmin(adjusted))
    return GateResult(
        gate="ks-marginals",
        statistic=max(r.statistic for r in per),
        p_value=float(adjusted[worst]),
        alpha=alpha,
        passed=bool(adjusted[worst] >= alpha),
        n=int(values.shape[0]),
        detectable=per[0].detectable,
        detectable_measure="sup |F - F0| of a marginal",
        detail=f"{d} marginals, Holm; adjusted p "
        + ", ".join(f"x{j}: {p:.3g}" for j, p in enumerate(adjusted)),
        false_pass=per[0].false_pass,
        # Each coordinate's PIT band, named by its coordinate (the report plots them).
        ecdf=tuple(
            dataclasses.replace(b, label=f"x[{j}]") for j, r in enumerate(per) for b in r.ecdf
        ),
    )


def visited_boxes(
    run: Callable[..., Any] | None,
    target: Any,
    params: dict[str, Any],
    draws: int,
    rng: np.random.Generator,
    limit: int = 400,
) -> list[tuple[np.ndarray, np.ndarray, float]]:
    """The boxes (lo, hi, M) on which ``run`` (a Python implementation with the reference's
    signature) evaluates the bound during ``draws`` draws, up to ``limit`` of them spread over
    the run, plus boxes split as A* splits them (so a sampler that never refines, like
    rejection, still has its bound checked below the whole box)."""
    seen: list[tuple[np.ndarray, np.ndarray, float]] = []
    bound = target.bound

    def recording(lo: np.ndarray, hi: np.ndarray, data: np.ndarray) -> float:
        m = bound(lo, hi, data)
        seen.append((np.array(lo, dtype=np.float64), np.array(hi, dtype=np.float64), float(m)))
        return m

    if run is not None:
        run(dataclasses.replace(target, bound=recording), draws, rng, **params)
    if len(seen) > limit:
        seen = [seen[i] for i in np.linspace(0, len(seen) - 1, limit).astype(int)]
    tree = [(lo, hi, target.M(lo, hi)) for lo, hi in split_tree_boxes(target, rng)]
    return seen + tree


def bound_validity(
    target: Any,
    boxes: list[tuple[np.ndarray, np.ndarray, float]],
    alpha: float,
    rng: np.random.Generator,
    points: int = 32,
    source: str = "",
) -> GateResult:
    """o at ``points`` random points of every box against the box's bound M (001, Sec. 4: a
    bound below o somewhere in a box makes A* inexact). Not a rejection test: one point above
    the bound fails it, and the message names the box. Per box it finds, with probability 0.8,
    a violation on a share 1 - 0.2^(1/points) of the box (half the points from the proposal
    restricted to the box, half uniform on its finite sides)."""
    checked, found = bound_violations(target, boxes, points, rng)
    detail = f"{len(boxes)} boxes ({source}), {points} points each"
    if found:
        detail = f"{len(found)} points above the bound; worst: {found[0].describe()}; {detail}"
    return GateResult.of_bound(
        "bound-validity",
        max((v.o - v.bound for v in found), default=0.0),
        not found,
        checked,
        1.0 - math.pow(0.2, 1.0 / points),
        "share of a visited box where o > M (per box)",
        alpha,
        detail=detail,
    )
