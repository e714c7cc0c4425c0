"""The seed contract: a sampler's output is a function of the Generator it is handed.

Every sampler takes ``rng`` and draws from nothing else (DESIGN.md, Contracts). A few small
calls check it on every task's first stage, built-in or plugin, whatever the level:

- two calls with the same seed return identical values, evaluation counts and extras, and
  leave their Generators in the same state (a sampler that draws from its own
  ``np.random.default_rng()`` fails here);
- calls with different seeds return different output (one with a fixed seed inside fails
  here); a tie is tried again on 16 and 256 times the draws before it counts, since a correct
  sampler of a nearly one-point law can repeat itself on a few draws, and on a discrete target
  it counts only where the pmf makes it improbable (:func:`tie_probability`);
- where the spec says its draws split (``splittable``, independent draws only), n/2 then n/2
  draws from one Generator equal n draws: same values and final state. Evaluations are not
  compared: a sampler may pay a fixed cost per call (the README's inverse CDF builds its table
  once a call), so two half-calls may honestly cost more than one.

The gate is ``seed-determinism``: a verdict without a statistic (it is exact, so it spends no
alpha), failing with one line that says which clause broke and where.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from harness.checks.output_contract import output_breach, raised_text
from harness.gates.result import GateResult
from harness.tasks import SeedKey

GATE = "seed-determinism"
#: Draws (or chain steps) of each call: enough that two seeds tie only on a degenerate law.
CALL_DRAWS = 64
#: Before "different seeds give identical output" counts, the calls are tried on this many
#: times the draws (capped at the task's n).
TIE_GROWTH = (1, 16, 256)
#: The spawn word of the contract's streams: apart from the task's own, whose draws are on record.
SEED_WORD = 0x5EED

#: Kinds whose target carries a pmf over its states (what a tie's probability is read from).
PMF_KINDS = ("discrete", "discrete-ragged", "discrete-likelihood")
#: A tie of two seeds' outputs counts only when a correct sampler ties with less probability.
TIE_LEVEL = 1e-12

#: ``call(m, rng)``: the sampler under test, m draws from ``rng``.
Call = Callable[[int, np.random.Generator], Any]


class _Broken(Exception):
    """A clause of the contract broke; its message is the verdict's detail."""


def _equal(a: Any, b: Any) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return False
    nan_ok = np.issubdtype(a.dtype, np.inexact) and np.issubdtype(b.dtype, np.inexact)
    return bool(np.array_equal(a, b, equal_nan=nan_ok))


def differences(a: Any, b: Any) -> list[str]:
    """What differs between two outputs: values (and the first differing draw), evals, extras."""
    found = []
    va, vb = np.asarray(a.values), np.asarray(b.values)
    if not _equal(va, vb):
        if va.shape == vb.shape:
            rows = (va != vb).reshape(va.shape[0], -1).any(axis=1)
            found.append(f"values (first at draw {int(np.argmax(rows))})")
        else:
            found.append(f"values (shapes {va.shape} and {vb.shape})")
    if a.evals != b.evals:
        found.append(f"evals ({a.evals} and {b.evals})")
    for key in sorted(set(a.extras) | set(b.extras)):
        if key not in a.extras or key not in b.extras or not _equal(a.extras[key], b.extras[key]):
            found.append(f"extras[{key}]")
    return found


def tie_probability(target: Any, size: int) -> float:
    """The probability that two independent runs of ``size`` exact draws from ``target`` are
    equal: (sum p_i^2)^size on a discrete target, else 0 (approximate samplers are held to the
    exact law's figure)."""
    if getattr(target, "kind", None) not in PMF_KINDS:  # a factor graph's pmf may be huge
        return 0.0
    p = np.asarray(target.pmf, dtype=np.float64).ravel()
    return float(np.sum(p * p)) ** size


def _state(rng: np.random.Generator) -> Any:
    return rng.bit_generator.state


def _run(call: Call, target: Any, m: int, rng: np.random.Generator) -> Any:
    """One call, its output held to the output contract."""
    try:
        out = call(m, rng)
    except Exception as exc:  # a sampler that raises on fewer draws breaks the contract too
        raise _Broken(f"a call of {m} draws raised {raised_text(exc)}") from None
    breach = output_breach(target, out, m)
    if breach is not None:
        raise _Broken(f"a call of {m} draws: {breach}")
    return out


def _clauses(call: Call, target: Any, key: SeedKey, n: int, splittable: bool) -> list[str]:
    """Check each clause in turn; return what held (raise :class:`_Broken` at the first that
    does not)."""

    def rng(*words: int) -> np.random.Generator:
        return SeedKey(key.entropy, (*key.spawn_key, SEED_WORD, *words)).generator()

    m = min(n, CALL_DRAWS)
    first, again = rng(0), rng(0)
    a, a2 = _run(call, target, m, first), _run(call, target, m, again)
    diff = differences(a, a2)
    if diff or _state(first) != _state(again):
        what = ", ".join(diff) or "the final Generator state"
        raise _Broken(
            f"two calls of {m} draws with the same seed differ in {what}: the output must be a "
            "function of the rng argument alone (no np.random.default_rng() or global state "
            "inside)"
        )
    held = [f"same seed, same output ({m} draws)"]
    for k, growth in enumerate(TIE_GROWTH):
        size = min(n, m * growth)
        x = a if k == 0 else _run(call, target, size, rng(2 * k))
        y = _run(call, target, size, rng(2 * k + 1))
        if differences(x, y):
            held.append(f"another seed, other output ({size} draws)")
            break
        if size >= n or k + 1 == len(TIE_GROWTH):
            if tie_probability(target, size) > TIE_LEVEL:
                held.append(f"another seed: tied over {size} draws, as the concentrated pmf allows")
                break
            raise _Broken(
                f"calls with different seeds returned identical output over {size} draws: the "
                "sampler ignores the Generator it is given (a fixed seed inside?)"
            )
    if splittable and m >= 2:
        halves_rng, half = rng(0), m // 2
        h1 = _run(call, target, half, halves_rng)
        h2 = _run(call, target, m - half, halves_rng)
        values = np.concatenate([np.asarray(h1.values), np.asarray(h2.values)])
        if not _equal(values, a.values):
            raise _Broken(
                f"{half} + {m - half} draws from one Generator differ from {m} draws with the same "
                "seed, though the spec declares them splittable (if a call keeps state across "
                "its draws: splittable=False, or keeps_state=True on the parameter that makes it)"
            )
        if _state(halves_rng) != _state(first):
            raise _Broken(
                f"{half} + {m - half} draws leave the Generator in another state than {m} draws"
            )
        held.append(f"{half} + {m - half} draws = {m}")
    return held


def seed_determinism(
    call: Call, target: Any, key: SeedKey, n: int, splittable: bool, alpha: float
) -> GateResult:
    """The seed contract of ``call`` on ``target`` (``n``: the task's draws, which caps the
    calls'), its streams spawned from ``key``; ``splittable`` adds the n/2 + n/2 clause."""
    try:
        held, broken = _clauses(call, target, key, n, splittable), ""
    except _Broken as exc:
        held, broken = [], str(exc)
    return GateResult.of_bound(
        GATE,
        float(bool(broken)),
        not broken,
        min(n, CALL_DRAWS),
        0.0,
        "any dependence on anything but rng",
        alpha,
        detail=broken or "; ".join(held),
    )
