"""How a reference is verified beside its Numba twin (``harness verify --reference``).

- ``stream`` (the default): the reference runs the task's whole stream of n draws, and its
  samples are compared with the Numba version's draw for draw under the same seed (the
  ``agreement`` gate: block digests, then the first differing draw named); the statistical
  gates run on the Numba output only. A reference's PASS then says it computes what the Numba
  version computes on every draw, and that output passed its gates. A spec whose reference is
  too slow for that declares ``Agreement.reference_draws``: its reference then runs as in
  ``prefix`` mode on that many draws, and the verdict says so and why.
- ``full``: every gate on the reference's own sample too, and the same whole-stream agreement,
  whatever the spec's ``reference_draws``.
- ``prefix``: the reference and the Numba version both run the first :data:`PREFIX_DRAWS`
  draws inside the reference's task and must agree bit for bit there (``prefix-agreement``);
  draws past the prefix go unchecked against the reference.

A reference without a Numba twin, or whose agreement is a two-sample test (``law_only``),
always gets the full gates.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from harness.checks.agreement import agreement
from harness.checks.output_contract import raised_text
from harness.gates.result import GateResult
from harness.spec import AlgorithmSpec, sample

REFERENCE_MODES = ("stream", "full", "prefix")
PREFIX_DRAWS = 256


def reference_mode(reference: str, impls: tuple[str, ...], spec: AlgorithmSpec, impl: str) -> str:
    """The mode this task runs in: ``reference`` for a reference beside a Numba twin the run
    also verifies, where the two must agree exactly; ``"full"`` for every other task."""
    beside = (
        impl == "reference"
        and "numba" in impls
        and "numba" in spec.implementations
        and not spec.agreement.law_only
    )
    return reference if beside else "full"


def reference_run(
    reference: str, impls: tuple[str, ...], spec: AlgorithmSpec, impl: str, n: int
) -> tuple[str, int]:
    """The mode and size of one task: :func:`reference_mode`, with a ``stream`` reference
    whose spec caps it (``Agreement.reference_draws``) run as a prefix of that many draws."""
    mode = reference_mode(reference, impls, spec, impl)
    cap = spec.agreement.reference_draws
    if mode == "prefix":
        return mode, min(n, PREFIX_DRAWS)
    if mode == "stream" and cap is not None and n > cap:
        return "prefix", cap
    return mode, n


def agreement_outputs(draws: Any, rng: np.random.Generator) -> dict[str, Any]:
    """What the agreement gate compares: values, extras, evaluations, final Generator state."""
    return {
        "values": np.asarray(draws.values),
        "extras": {k: np.asarray(v) for k, v in draws.extras.items()},
        "evals": int(draws.evals),
        "rng_state": json.dumps(rng.bit_generator.state, sort_keys=True, default=str),
    }


def prefix_verdict(
    spec: AlgorithmSpec,
    target: Any,
    n: int,
    params: Mapping[str, Any],
    rngs: tuple[np.random.Generator, np.random.Generator],
    alpha: float,
    failed: Callable[[str], GateResult],
) -> tuple[GateResult, int | None, float]:
    """The reference's verdict in prefix mode, its evaluations and wall time: it and the Numba
    version, each on the first ``n`` draws of one stream (``rngs``, seeded alike), must agree
    bit for bit (values, extras, evaluations, final Generator state). ``failed(detail)``: the
    verdict when either raises."""
    start = time.perf_counter()
    rng, fast_rng = rngs
    try:
        ref = sample(spec, "reference", target, n, rng, **params)
        fast = sample(spec, "numba", target, n, fast_rng, **params)
    except Exception as exc:
        return failed(raised_text(exc)), None, time.perf_counter() - start
    result = agreement(
        spec, target.kind, agreement_outputs(ref, rng), agreement_outputs(fast, fast_rng), alpha
    )
    why = ""
    if n == spec.agreement.reference_draws:
        why = f" (its spec caps the reference at {n} draws: {spec.agreement.reference_reason})"
    result = GateResult(
        **{
            **result.to_dict(),
            "gate": "prefix-agreement",
            "n": n,
            "interval": None,
            "detail": f"reference vs numba on the first {n} draws of one stream{why}: "
            f"{result.detail}; the statistical gates ran on the numba output at full n",
        }
    )
    return result, int(ref.evals), time.perf_counter() - start
