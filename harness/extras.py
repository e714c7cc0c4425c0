"""The fields a sampler may return in ``Draws.extras`` / ``Chain.extras``, each declared once.

Gates and experiments read these fields by name. A sampler that returns a field declared
nowhere (a misspelt ``draw_eval``, say) would otherwise be noticed only as a gate that found
nothing to test, at the end of a run. :func:`check_extras` runs on every call through
``harness.sample`` and rejects it at once, naming the field and the valid ones; a field declared
``per="item"`` must also hold one entry per draw or chain step.

A sampler with fields of its own declares them on its spec (``AlgorithmSpec.extra_fields``);
docs/extending.md lists the shared ones.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any, Literal, NamedTuple

import numpy as np

Per = Literal["item", "call", "free"]


class ExtraField(NamedTuple):
    """One field of ``extras``: ``per="item"``, an array whose first axis has one entry per draw
    (or per chain step, thinned or not); ``"call"``, one number for the whole call (a 0-d array);
    ``"free"``, a shape of its own that ``doc`` describes."""

    name: str
    per: Per
    doc: str


#: name | per | meaning; grouped as docs/extending.md lists them.
_TABLE = """
draw_evals         | item | likelihood (factor) evaluations of each draw or step
bound_evals        | item | bound evaluations of each draw (A* family)
step_evals         | item | likelihood terms each racing-MH step read
factors_per_step   | item | factors evaluated at each step (|S| of a minibatch)
evals_per_step     | item | factor evaluations of each step (continuous samplers)
draws_per_step     | item | Poisson draws B of each step
kept_per_step      | item | sum of the minibatch counts s_phi of each step
exact_per_step     | item | |A[i]| where a step fell back to the exact conditional, else 0
second_per_step    | item | size of the second (MH correction) minibatch of each step
proposals_per_step | item | rejection proposals of each step
gumbel_max         | item | the Gumbel maximum of each draw: log Z + Gumbel(0, 1) if exact
accepted           | item | whether each step accepted (1) or kept its state (0)
stopped_early      | item | whether each race stopped before reading every term
max_pulls          | item | largest number of terms any arm of each race read
exact              | item | the exact answer under the same noise, per draw (exact_answer)
exact_accept       | item | the exact MH decision of each step (exact_answer)
exact_evals        | call | evaluations the exact answers cost (not in evals)
bright             | item | bright data points after each step (FlyMC)
bright_steps       | free | per datum, the steps it spent bright (FlyMC, theta fixed)
darkenings         | free | per datum, how often it turned dark (FlyMC, theta fixed)
expanded           | item | regions each search expanded
exact_stop         | item | whether each search reached its exact stop (not its horizon)
trace              | free | (n, horizon): the best Gumbel value after each expansion
process_values     | free | (n, k): the Gumbel process values of each draw
process_locations  | free | (n, k): where those values were drawn
audit_changed      | item | whether the audit's continuation found a better value
audit_capped       | item | whether the continuation hit its expansion cap
audit_gumbel       | item | the continuation's best Gumbel value
audit_evals        | item | likelihood evaluations of the continuation (not in evals)
audit_bound_evals  | item | bound evaluations of the continuation (not in evals)
bound_gap          | item | largest (o(x) - M) / (1 + |M|) over the points each draw evaluated
bound_draw         | free | per bound computed: the draw it belonged to
bound_lo           | free | per bound computed: its box's lower corner
bound_hi           | free | per bound computed: its box's upper corner
bound_m            | free | per bound computed: its value M(B)
margin             | item | distance of each decision from its threshold (CUDA builds)
tolerance          | item | rounding bound on that distance (CUDA builds)
"""

FIELDS: tuple[ExtraField, ...] = tuple(
    ExtraField(*(cell.strip() for cell in row.split("|", 2))) for row in _TABLE.strip().splitlines()
)
EXTRA_FIELDS: Mapping[str, ExtraField] = MappingProxyType({f.name: f for f in FIELDS})


def check_field(field: Any) -> ExtraField:
    """``field`` as a spec's own :class:`ExtraField`, or ``ValueError`` naming what is wrong."""
    if not isinstance(field, ExtraField):
        raise ValueError(f"extra field {field!r} is invalid; valid: an ExtraField")
    if field.per not in ("item", "call", "free"):
        raise ValueError(
            f"extra field {field.name!r}: per = {field.per!r}; valid: 'item', 'call' or 'free'"
        )
    if field.name in EXTRA_FIELDS:
        raise ValueError(
            f"extra field {field.name!r} is already declared in harness/extras.py; valid: a new "
            "name (a spec declares only the fields of its own)"
        )
    return field


def check_extras(
    extras: Mapping[str, Any], n: int, who: str, own: Iterable[ExtraField] = ()
) -> None:
    """Every field of ``extras`` is declared (shared or ``own``) and has its declared shape for
    a call of ``n`` draws or steps; ``who`` names the sampler in the error."""
    mine = {f.name: f for f in own}
    for name, value in extras.items():
        field = EXTRA_FIELDS.get(name) or mine.get(name)
        if field is None:
            raise ValueError(
                f"{who} returned extras[{name!r}], a field declared nowhere; valid: "
                f"{', '.join(sorted({*EXTRA_FIELDS, *mine}))} (declare a sampler's own fields in "
                "its spec's extra_fields)"
            )
        shape = np.shape(value)
        if field.per == "item" and (len(shape) == 0 or shape[0] != n):
            raise ValueError(
                f"{who} returned extras[{name!r}] of shape {shape}; valid: one entry per draw or "
                f"step, a first axis of {n}"
            )
        if field.per == "call" and shape != ():
            raise ValueError(
                f"{who} returned extras[{name!r}] of shape {shape}; valid: one number for the "
                "call (shape ())"
            )
