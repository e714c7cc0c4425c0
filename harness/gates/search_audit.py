"""Gates for searches with an exact stop and samplers with bounds (001_78ff986a3d316097.txt,
Alg. 2 and Sec. 4-5; 004_b270422b62f00607.txt, Alg. 1 and 3), run on a rerun of the sampler:

- **run-to-completion**: the sampler's ``audit=True`` continues each draw past its stop with the
  target's bound until nothing left can beat the result, and reports per draw whether the answer
  changed (``extras["audit_changed"]``). An exact stop changes none, deterministically, so one
  changed draw fails the gate (a definite verdict, outside the Holm family). The subset is sized
  so that a search wrong in 1% of its draws is caught with probability 1 - 0.99^1000 > 0.9999 at
  the quick level.
- **own-bound**: the sampler's ``report_bounds=True`` reports every bound it computed (box and
  value) and, per draw, the largest excess of o over the bound it held at the points it
  evaluated. The gate fails on an evaluated point above its bound and re-checks the reported
  bounds at random points of their boxes (``harness.targets.box_probes``): it catches a sampler
  whose own bound falls short where the target's bound (``bound-validity``) is valid.

A sampler opts in by declaring a boolean parameter ``audit`` and/or ``report_bounds`` and
returning those extras (``implementations/astar/audit.py`` documents them and holds a
continuation a plugin's search can call); both gates come from one rerun.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from harness.gates.power import FalsePass
from harness.gates.rates import clopper_pearson
from harness.gates.result import GateResult, Supplement
from harness.targets.box_probes import bound_violations

AUDIT, REPORT = "audit", "report_bounds"
#: Draws the rerun audits: at least AUDIT_DRAWS (a 1% error rate escapes with probability
#: 0.99^1000 = 4e-5), a twentieth of the case's draws where that is more (full level).
AUDIT_DRAWS, AUDIT_SHARE = 1000, 20
#: Reported bounds re-checked at random points (spread over the rerun), and points per box:
#: 6400 evaluations of o, as many as bound-validity spends (the reruns' own cost is smaller).
BOX_LIMIT, BOX_POINTS = 200, 32
#: Relative slack of a point above its bound for rounding (as harness.targets.box_probes).
SLACK = 1e-9
POWER = 0.8
#: The named bugs of false_pass (harness.gates.power): a search wrong in 1% of its draws, a
#: bound short of o on 5% of a box it bounded.
CHANGED_EFFECT, BOX_EFFECT = 0.01, 0.05


def audit_draws(n: int) -> int:
    """The rerun's size for a case of ``n`` draws (never more than n)."""
    return min(n, max(AUDIT_DRAWS, n // AUDIT_SHARE))


def _declares(spec: Any, name: str) -> bool:
    return any(p.name == name and p.kind is bool for p in spec.params)


def _applies(spec: Any, target: Any, params: Mapping[str, Any]) -> bool:
    """Independent draws of a spec that declares ``audit``, or ``report_bounds`` on a box
    density (the random points of a reported box are drawn from the target)."""
    if spec.entry != "draw":
        return False
    box = getattr(target, "kind", None) == "box-density"
    return _declares(spec, AUDIT) or (_declares(spec, REPORT) and box)


def _missing(gate: str, param: str, key: str, n: int, alpha: float) -> GateResult:
    return GateResult.of_bound(
        gate,
        math.nan,
        False,
        n,
        None,
        "",
        alpha,
        detail=f"the sampler declares {param!r} but returned no extras[{key!r}] with it",
    )


def run_to_completion(extras: Mapping[str, np.ndarray], alpha: float) -> GateResult:
    """Fail on any draw whose answer changed when continued to completion; the count comes
    with its one-sided Clopper-Pearson upper bound at 1 - alpha. A continuation that hit its
    expansion cap without a change is not counted as audited."""
    changed = np.asarray(extras["audit_changed"], dtype=bool)
    capped = np.asarray(extras.get("audit_capped", np.zeros_like(changed)), dtype=bool)
    n_changed = int(changed.sum())
    audited = int(changed.size - np.sum(capped & ~changed))
    high = 1.0
    if audited:
        _, high = clopper_pearson(n_changed, audited, 2 * alpha)
    gain = 0.0
    if n_changed and "audit_gumbel" in extras and "gumbel_max" in extras:
        gain = float(np.max(extras["audit_gumbel"] - extras["gumbel_max"]))
    cost = ""
    if "audit_evals" in extras:
        cost = (
            f"; the continuation cost {float(np.mean(extras['audit_evals'])):.3g} likelihood "
            f"and {float(np.mean(extras.get('audit_bound_evals', 0))):.3g} bound evaluations "
            "a draw"
        )
    changed_at = np.flatnonzero(changed)[:5].tolist()
    return GateResult.of_bound(
        "run-to-completion",
        n_changed / audited if audited else math.nan,
        bool(audited and n_changed == 0),
        audited,
        1.0 - (1.0 - POWER) ** (1.0 / audited) if audited else None,
        "share of draws whose answer changes",
        alpha,
        power=POWER,
        interval=(0.0, float(high)),
        # Each audited draw of a search wrong in a share r of its draws changes with
        # probability r, independently: it escapes all of them with probability (1 - r)^n.
        false_pass=FalsePass(
            (1.0 - CHANGED_EFFECT) ** audited, CHANGED_EFFECT, "share of draws changed", True
        ),
        detail=f"{n_changed} of {audited} draws changed their answer when continued past the "
        f"stop with the target's bound (Clopper-Pearson upper bound {high:.3g})"
        + (f"; first at draws {changed_at}, best value up by {gain:.3g}" if n_changed else "")
        + f"; {int(capped.sum())} continuations capped{cost}",
    )


def _boxes(extras: Mapping[str, np.ndarray]) -> list[tuple[np.ndarray, np.ndarray, float]]:
    """Up to BOX_LIMIT reported bounds (box, value) spread over the rerun, each once (PM-A*
    reports the one bound of the whole box with every draw)."""
    lo, hi, m = extras["bound_lo"], extras["bound_hi"], extras["bound_m"]
    picks = np.unique(np.linspace(0, m.size - 1, min(m.size, BOX_LIMIT)).astype(int))
    seen: dict[bytes, tuple[np.ndarray, np.ndarray, float]] = {}
    for i in picks:
        key = lo[i].tobytes() + hi[i].tobytes() + m[i].tobytes()
        seen.setdefault(key, (lo[i].copy(), hi[i].copy(), float(m[i])))
    return list(seen.values())


def own_bound(
    target: Any, extras: Mapping[str, np.ndarray], alpha: float, rng: np.random.Generator
) -> GateResult:
    """The bounds the sampler used hold where it used them: at every point it evaluated
    (``bound_gap`` <= SLACK) and at BOX_POINTS random points of up to BOX_LIMIT of the boxes it
    bounded. One point above fails it; per box the probe finds, with probability 0.8, a
    violation on a share 1 - 0.2^(1/BOX_POINTS) of the box (``n``: the points probed)."""
    gaps = np.asarray(extras["bound_gap"], dtype=np.float64)
    over = np.flatnonzero(gaps > SLACK)
    boxes = _boxes(extras)
    checked, found = bound_violations(target, boxes, BOX_POINTS, rng)
    worst = max(float(np.max(gaps, initial=-math.inf)), 0.0)
    if found:
        worst = max(worst, max((v.o - v.bound) / (1.0 + abs(v.bound)) for v in found))
    parts = [
        f"{over.size} of {gaps.size} draws evaluated a point above the bound they held"
        + (
            f" (draws {over[:5].tolist()}, excess up to {float(gaps[over].max()):.3g})"
            if over.size
            else ""
        ),
        f"{len(found)} of {checked} random points of {len(boxes)} of the "
        f"{len(extras['bound_m'])} bounds it computed lie above the bound",
    ]
    if found:
        parts.append(f"worst: {found[0].describe()}")
    return GateResult.of_bound(
        "own-bound",
        worst,
        not over.size and not found,
        checked,
        1.0 - math.pow(1.0 - POWER, 1.0 / BOX_POINTS),
        "share of a bounded box where o > M (per box)",
        alpha,
        power=POWER,
        false_pass=FalsePass(
            (1.0 - BOX_EFFECT) ** BOX_POINTS, BOX_EFFECT, "share of a box where o > M", True
        ),
        detail="; ".join(parts),
    )


def _run(
    spec: Any,
    target: Any,
    output: Any,
    alpha: float,
    params: Mapping[str, Any],
    context: Any,
) -> list[GateResult]:
    """One rerun of :func:`audit_draws` draws with the declared switches on, then each gate."""
    n = audit_draws(len(np.asarray(output.values)))
    audit = _declares(spec, AUDIT)
    report = _declares(spec, REPORT) and getattr(target, "kind", None) == "box-density"
    switches = {name: True for name, on in ((AUDIT, audit), (REPORT, report)) if on}
    extras = context.rerun(target, n, context.rng, **switches).extras
    out = []
    if audit:
        ok = "audit_changed" in extras
        out.append(
            run_to_completion(extras, alpha)
            if ok
            else _missing("run-to-completion", AUDIT, "audit_changed", n, alpha)
        )
    if report:
        keys = ("bound_gap", "bound_lo", "bound_hi", "bound_m")
        lacking = [k for k in keys if k not in extras]
        out.append(
            own_bound(target, extras, alpha, context.rng)
            if not lacking
            else _missing("own-bound", REPORT, lacking[0], n, alpha)
        )
    return out


SUPPLEMENTS: tuple[Supplement, ...] = (Supplement("search-audit", _applies, _run),)
