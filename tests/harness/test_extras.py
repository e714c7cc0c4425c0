"""The declared fields of ``extras``: a sampler returning an undeclared or misshapen field fails
at the call, naming it (harness/extras.py)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from harness.extras import EXTRA_FIELDS, ExtraField
from harness.spec import AlgorithmSpec, Draws, sample
from harness.targets.discrete import DiscreteFactorTarget
from tests.conftest import ROOT

TARGET = DiscreteFactorTarget(np.zeros((3, 4)), np.zeros(3))


def _spec(extras, **fields) -> AlgorithmSpec:
    """A sampler of uniform draws that returns ``extras(n)``."""

    def draw(target, n, rng):
        return Draws(rng.integers(0, target.D, n), n, extras(n))

    return AlgorithmSpec(
        name="extras-probe",
        family="test",
        paper="none",
        guarantee="exact",
        target_kinds=("discrete",),
        implementations={"reference": draw},
        **fields,
    )


def _call(spec: AlgorithmSpec, n: int = 5) -> Draws:
    return sample(spec, "reference", TARGET, n, np.random.default_rng(0))


def test_declared_fields_of_the_right_shape_pass():
    out = _call(
        _spec(lambda n: {"draw_evals": np.ones(n), "exact_evals": np.array(3), "trace": [[1.0]]})
    )
    assert set(out.extras) == {"draw_evals", "exact_evals", "trace"}


def test_a_misspelt_field_fails_at_the_call_naming_it():
    with pytest.raises(
        ValueError, match=r"'extras-probe' \(reference\) returned extras\['draw_eval'\]"
    ):
        _call(_spec(lambda n: {"draw_eval": np.ones(n)}))


@pytest.mark.parametrize(
    "extras, why",
    [
        (lambda n: {"draw_evals": np.ones(n + 1)}, "a first axis of 5"),
        (lambda n: {"gumbel_max": np.float64(1.0)}, "a first axis of 5"),
        (lambda n: {"exact_evals": np.ones(n)}, r"shape \(\)"),
    ],
)
def test_a_field_of_the_wrong_shape_fails(extras, why):
    with pytest.raises(ValueError, match=why):
        _call(_spec(extras))


def test_a_spec_declares_its_own_fields_and_cannot_redeclare_a_shared_one():
    own = ExtraField("probe_depth", "item", "how deep each draw looked")
    out = _call(_spec(lambda n: {"probe_depth": np.arange(n)}, extra_fields=(own,)))
    assert out.extras["probe_depth"].tolist() == [0, 1, 2, 3, 4]
    with pytest.raises(ValueError, match="'draw_evals' is already declared"):
        _spec(dict, extra_fields=(ExtraField("draw_evals", "item", "again"),))
    with pytest.raises(ValueError, match="per = 'row'"):
        _spec(dict, extra_fields=(ExtraField("probe_depth", "row", "bad"),))


def test_the_docs_list_exactly_the_shared_fields():
    text = (ROOT / "docs" / "extending.md").read_text()
    section = text.split("### The fields of `extras`")[1].split("A sampler with a field")[0]
    listed = set()
    for row in section.splitlines():
        if row.startswith("| ") and not row.startswith("| group"):
            listed |= set(re.findall(r"`([a-z_]+)`", row.split("|")[2]))
    assert listed == set(EXTRA_FIELDS)
