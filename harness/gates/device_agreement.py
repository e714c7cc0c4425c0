"""Numba against a device build (the ``cuda`` key) under the same seed.

A device cannot sum in the Numba kernels' lane order at memory speed, so its log p~ can differ
from Numba's by summation-order rounding; its noise comes from the same host Generator. Each
device draw reports a ``margin`` (how far it was from choosing otherwise) and a ``tolerance``
(the bound on what summation order can change). The two builds agree when the evaluation
counts and the final Generator states are equal, every draw is equal except where the device's
margin is within its tolerance, and the extras both report agree within the tolerance where the
draws are equal. Every exception is listed, never only counted.

A Markov chain carries a difference forward: once an acceptance decision of the device chain
falls on the other side of its threshold, every later state may differ. For chains
(``chain=True``) the rule is therefore on the first step that differs: the chains must be equal
before it, its margin must be within its tolerance, and the steps after it are not compared
(their number is reported).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from harness.gates.result import GateResult

#: Exceptions named in the detail text; the count is always given.
LISTED = 20


def device_agreement(
    a: Mapping[str, Any], b: Mapping[str, Any], alpha: float, chain: bool = False
) -> GateResult:
    """``a``: the Numba outputs, ``b``: the device's (values, extras with ``margin`` and
    ``tolerance``, evals, rng_state), as :func:`harness.checks.agreement.agreement`
    takes them; ``chain``: the values are a Markov chain's states, one row a step."""
    va, vb = np.asarray(a["values"]), np.asarray(b["values"])
    n = n_rows(va)
    problems: list[str] = []
    if a["evals"] != b["evals"]:
        problems.append(f"evals {a['evals']} vs {b['evals']}")
    if a["rng_state"] != b["rng_state"]:
        problems.append("final Generator state")
    extras = b["extras"]
    if "margin" not in extras or "tolerance" not in extras:
        problems.append("the device build reports no margin/tolerance")
        margin = tol = np.zeros(n)
    else:
        margin, tol = np.asarray(extras["margin"]), np.asarray(extras["tolerance"])
    if va.shape != vb.shape:
        problems.append(f"shapes {va.shape} vs {vb.shape}")
        differ = np.zeros(0, dtype=np.int64)
    else:
        differ = np.flatnonzero((va != vb).reshape(n, -1).any(axis=1))
    parted = ""
    if chain and differ.size and margin[differ[0]] <= tol[differ[0]]:
        # The chains parted within tolerance at this step; later steps follow another path.
        later = n - 1 - int(differ[0])
        parted = (
            f"; the chains part at step #{int(differ[0])}, within tolerance "
            f"({later} later steps not compared)"
        )
        differ = differ[:1]
    near = [int(k) for k in differ if margin[k] <= tol[k]]
    far = [int(k) for k in differ if margin[k] > tol[k]]
    if far:
        shown = ", ".join(
            f"#{k}: {va[k]} vs {vb[k]} (margin {margin[k]:.3g})" for k in far[:LISTED]
        )
        problems.append(f"{len(far)} draws differ beyond their tolerance: {shown}")
    same = np.ones(n, dtype=bool)
    same[differ] = False
    if parted:
        same[int(differ[0]) :] = False
    for key in sorted(set(a["extras"]) & set(extras)):
        xa, xb = np.asarray(a["extras"][key], float), np.asarray(extras[key], float)
        if xa.shape != xb.shape:
            problems.append(f"extras[{key}] shapes {xa.shape} vs {xb.shape}")
            continue
        bad = np.flatnonzero(same & ~(np.abs(xa - xb) <= tol))
        if bad.size:
            k = int(bad[0])
            problems.append(
                f"extras[{key}] differ beyond tolerance on {bad.size} draws "
                f"(#{k}: {xa[k]!r} vs {xb[k]!r}, tolerance {tol[k]:.3g})"
            )
    ties = (
        f"; {len(near)} draws differ within summation-order tolerance: "
        + ", ".join(f"#{k} (margin {margin[k]:.3g} <= {tol[k]:.3g})" for k in near[:LISTED])
        if near
        else "; no draw differs"
    ) + parted
    return GateResult.of_bound(
        "device-agreement",
        float(len(problems)),
        not problems,
        n,
        0.0,
        "any difference beyond the summation-order tolerance",
        alpha,
        detail=("agree: evals, Generator state, draws" if not problems else "; ".join(problems))
        + ties,
    )


def n_rows(values: np.ndarray) -> int:
    """Draws (or chain steps): the first axis of a 2-D array, every element of a 1-D one."""
    return int(values.shape[0]) if values.ndim > 1 else int(values.size)
