"""Verifying a reference by bit-for-bit agreement with its Numba twin on a prefix of the draws
(``harness verify --reference prefix``, and a capped reference in the default stream mode):
the statistical gates run at full n on the Numba output only, and a reference that strays from
its twin fails."""

from pathlib import Path

import numpy as np
import pytest

from harness.checks.reference_modes import PREFIX_DRAWS
from harness.verify.config import RunConfig
from harness.verify.runner import verify

PLUGIN = '''
import dataclasses
import numpy as np
import harness
from implementations.gumbel import fast, reference


def numba_off_by_one(target, n, rng, **params):
    """The compiled twin, except that draw 3 comes out one state higher."""
    draws = fast.gumbel_max(target, n, rng, **params)
    values = np.array(draws.values)
    if n > 3:
        values[3] = (values[3] + 1) % target.D
    return dataclasses.replace(draws, values=values)


spec = harness.build_registry().get("gumbel-max")
harness.register(
    dataclasses.replace(
        spec,
        name="twin-off-by-one",
        family="plugin",
        implementations={"reference": reference.gumbel_max, "numba": numba_off_by_one},
        checks=spec.checks[:1],
    )
)
'''


def _verify(tmp_path: Path, algorithms, reference="prefix", plugins=(), problems=()):
    config = RunConfig(
        algorithms=tuple(algorithms),
        impls=("reference", "numba"),
        plugins=tuple(plugins),
        reference=reference,
        problems=tuple(problems),
    )
    return verify(config, tmp_path / "run", workers=1, progress=False, scheduler="inprocess")


#: Both samplers' kinds of problem, among them one with two checks and a long sum (of 18
#: problems: the mode treats every problem alike, and the runtime was spent on the others).
PROBLEMS = (
    "synthetic-normal-D10-N200",
    "cv-studentt-D10-N4000",
    "truncgumbel-phi0-b1",
    "truncgumbel-phi30-b0",
)


def test_prefix_mode_gates_numba_at_full_n_and_the_reference_by_equality(tmp_path):
    summary = _verify(tmp_path, ("gumbel-max", "truncated-gumbel"), problems=PROBLEMS)
    assert summary["passed"]
    by_impl = {}
    for v in summary["verdicts"]:
        by_impl.setdefault(v["impl"], set()).add(v["gate"])
    assert by_impl["reference"] == {"prefix-agreement"}
    assert {"chi-square", "ks-gumbel-max"} <= by_impl["numba"]
    ref = [v for v in summary["verdicts"] if v["impl"] == "reference"]
    assert all(v["n"] <= PREFIX_DRAWS for v in ref)
    assert all("bit-for-bit" in v["detail"] for v in ref)


def test_a_reference_that_strays_from_its_twin_fails(tmp_path):
    plugin = tmp_path / "twin.py"
    plugin.write_text(PLUGIN)
    summary = _verify(tmp_path, ("twin-off-by-one",), plugins=(str(plugin),), problems=PROBLEMS[:1])
    ref = [v for v in summary["verdicts"] if v["impl"] == "reference"]
    assert ref and all(v["verdict"] == "fail" for v in ref)
    assert all(v["gate"] == "prefix-agreement" and "values" in v["detail"] for v in ref)


def test_full_mode_keeps_every_gate_on_the_reference(tmp_path):
    summary = _verify(tmp_path, ("truncated-gumbel",), reference="full")
    ref_gates = {v["gate"] for v in summary["verdicts"] if v["impl"] == "reference"}
    numba_gates = {v["gate"] for v in summary["verdicts"] if v["impl"] == "numba"}
    assert ref_gates == numba_gates and "prefix-agreement" not in ref_gates
    assert any(v["gate"] == "agreement" for v in summary["verdicts"])


def test_a_bad_reference_mode_is_refused():
    with pytest.raises(ValueError, match="reference"):
        RunConfig(algorithms=("gumbel-max",), impls=("numba",), reference="half")
    assert np.isfinite(PREFIX_DRAWS)
