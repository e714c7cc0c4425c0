"""Two implementations of one sampler under the same seed: the agreement gate."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from harness.checks.draws import DISCRETE_KINDS
from harness.checks.stream_agreement import difference_text
from harness.gates import chisquare_2samp, ks_2samp
from harness.gates.result import GateResult
from harness.spec import AlgorithmSpec


def _same(a: np.ndarray, b: np.ndarray, rtol: float) -> bool:
    if a.shape != b.shape:
        return False
    if rtol == 0.0 or not np.issubdtype(a.dtype, np.floating):
        return bool(np.array_equal(a, b))
    return bool(np.allclose(a, b, rtol=rtol, atol=0.0))


def _two_sample(kind: str, a: np.ndarray, b: np.ndarray, alpha: float) -> GateResult:
    if kind in DISCRETE_KINDS:
        size = int(max(np.max(a), np.max(b))) + 1
        return chisquare_2samp(a, b, size, alpha)
    return ks_2samp(a, b, alpha)


def agreement(
    spec: AlgorithmSpec,
    kind: str,
    a: Mapping[str, Any],
    b: Mapping[str, Any],
    alpha: float,
) -> GateResult:
    """Reference vs fast under the same seed: values, extras, evaluation counts, final RNG state,
    over the whole stream; a difference in values names its first draw
    (:mod:`harness.checks.stream_agreement`).

    ``a``/``b`` hold ``values``, ``extras``, ``evals`` and ``rng_state`` of each implementation.
    Where the two differ only because the spec allows a tolerance, it says why; when even that
    fails, a two-sample test reports whether the laws still agree.
    """
    rtol = spec.agreement.rtol
    n = int(np.asarray(a["values"]).size)
    if spec.agreement.law_only:
        law = _two_sample(kind, a["values"], b["values"], alpha)
        return GateResult(
            gate="agreement-law",
            statistic=law.statistic,
            p_value=law.p_value,
            alpha=alpha,
            passed=law.passed,
            n=law.n,
            detectable=law.detectable,
            detectable_measure=law.detectable_measure,
            detail=f"{law.gate}; {spec.agreement.reason}",
        )
    mismatches = []
    if not _same(np.asarray(a["values"]), np.asarray(b["values"]), rtol):
        where = difference_text(np.asarray(a["values"]), np.asarray(b["values"]), rtol)
        mismatches.append(f"values ({where})" if where else "values")
    for key in sorted(set(a["extras"]) | set(b["extras"])):
        if key not in a["extras"] or key not in b["extras"]:
            mismatches.append(f"extras[{key}] missing")
        elif not _same(np.asarray(a["extras"][key]), np.asarray(b["extras"][key]), rtol):
            where = difference_text(
                np.asarray(a["extras"][key]), np.asarray(b["extras"][key]), rtol
            )
            mismatches.append(f"extras[{key}] ({where})" if where else f"extras[{key}]")
    if a["evals"] != b["evals"]:
        mismatches.append(f"evals {a['evals']} vs {b['evals']}")
    if a["rng_state"] != b["rng_state"]:
        mismatches.append("final Generator state")
    how = "bit-for-bit" if rtol == 0.0 else f"within rtol {rtol:g} ({spec.agreement.reason})"
    law_text = ""
    if any(m.startswith("values") for m in mismatches):
        law = _two_sample(kind, a["values"], b["values"], alpha)
        law_text = f"; two-sample {law.gate} p = {law.p_value:.3g}"
    if mismatches:
        detail = f"differ ({how} expected): {', '.join(mismatches)}{law_text}"
    else:
        detail = f"values, extras, evals and Generator state agree {how}"
    count = float(len(mismatches))
    return GateResult.of_bound(
        "agreement", count, not mismatches, n, 0.0, "any difference", alpha, detail=detail
    )
