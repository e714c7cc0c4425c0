"""The whole stream agrees (harness/checks/stream_agreement.py): block digests find the first block
that differs, then the first differing draw is named; the default `verify --reference stream`
compares every draw of a reference with its Numba twin, so a slip after draw 10,000 is caught,
which a prefix of 256 draws cannot see; a spec that caps its slow reference says so."""

import dataclasses

import numpy as np
import pytest

from harness.checks.reference_modes import reference_run
from harness.checks.stream_agreement import BLOCK, block_digests, difference_text, first_difference
from harness.registry import build_registry
from harness.spec import Agreement
from harness.verify.config import RunConfig
from tests.conftest import ROOT, harness_here

OUTPUTS = str(ROOT / "tests" / "plugins" / "broken_outputs.py")


@pytest.mark.parametrize("at", [0, 1, BLOCK - 1, BLOCK, 10_777, 19_999])
def test_the_first_differing_draw_is_found_wherever_it_lies(at):
    a = np.random.default_rng(1).integers(0, 10, 20_000)
    b = a.copy()
    b[at] += 1
    b[-1] += 1  # a later difference does not hide the first
    assert first_difference(a, b) == min(at, 19_999)
    assert first_difference(a, a.copy()) is None  # the control: equal streams agree
    assert difference_text(a, b) == f"first difference at draw {min(at, 19_999)} of 20000"


def test_rows_floats_lengths_and_tolerances():
    a = np.random.default_rng(2).random((3000, 2))
    b = a.copy()
    b[2500, 1] = np.nextafter(b[2500, 1], 2.0)
    assert first_difference(a, b) == 2500
    assert first_difference(a, b, rtol=1e-12) is None  # within a spec's stated tolerance
    assert first_difference(a, a[:2999]) == 2999  # one stream stops early
    assert first_difference(a, a.astype(np.float32)) == 0
    nan = a.copy()
    nan[5, 0] = np.nan
    assert first_difference(nan, nan.copy()) is None  # both drew the same NaN
    assert len(block_digests(a)) == 3 and block_digests(a) == block_digests(a.copy())
    assert block_digests(a) != block_digests(b)


def _verify(tmp_path, *extra):
    return harness_here(
        *("verify", "--plugin", OUTPUTS),
        *("--algorithm", "broken-numba-slip", "--out", str(tmp_path / "r"), "--no-progress"),
        *extra,
    )


def test_a_numba_only_slip_after_draw_10000_is_caught_by_the_default_verify(tmp_path):
    out = _verify(tmp_path)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "FAILED agreement: broken-numba-slip [reference-vs-numba]" in out.stdout
    assert "values (first difference at draw 10777 of 20000)" in out.stdout
    # The statistical gates on the twin's output and the reference's contracts all pass: only
    # the whole-stream comparison sees one draw in 20000.
    assert "1 failed" in out.stdout


def test_the_prefix_mode_cannot_see_the_slip(tmp_path):
    out = _verify(tmp_path, "--reference", "prefix")
    assert out.returncode == 0, out.stdout + out.stderr
    assert RunConfig(("gumbel-max",), ("reference", "numba"), reference="stream")


def test_a_capped_reference_runs_its_declared_prefix_and_says_why():
    spec = build_registry().get("gumbel-max")
    capped = dataclasses.replace(
        spec, agreement=Agreement(reference_draws=500, reference_reason="a slow reference")
    )
    impls = ("reference", "numba")
    assert reference_run("stream", impls, spec, "reference", 20_000) == ("stream", 20_000)
    assert reference_run("stream", impls, capped, "reference", 20_000) == ("prefix", 500)
    assert reference_run("stream", impls, capped, "reference", 300) == ("stream", 300)
    assert reference_run("full", impls, capped, "reference", 20_000) == ("full", 20_000)
    assert reference_run("stream", impls, capped, "numba", 20_000) == ("full", 20_000)
    with pytest.raises(ValueError, match="reference_reason"):
        Agreement(reference_draws=500)
