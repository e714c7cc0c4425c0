"""The report's ECDF bands: beside a failure, a few passing ones, calibrate's p-values, and the
false-pass rate of every verdict."""

from __future__ import annotations

import json
import re

import pytest

from harness.report.page import build_context, classify_inputs, write_report
from tests.harness.band_inputs import FAILING, band_run, calibration_json

FIGURE = re.compile(
    r'<figure class="ecdf-band (pass|fail)" data-exits="(\d+)">(.*?)</figure>', re.S
)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> list:
    tmp = tmp_path_factory.mktemp("bands")
    return [band_run(tmp), calibration_json(tmp)]


@pytest.fixture(scope="module")
def html(inputs: list, tmp_path_factory: pytest.TempPathFactory) -> str:
    return write_report(inputs, tmp_path_factory.mktemp("r") / "r.html").read_text()


def test_the_failed_gate_is_plotted_beside_its_failure_with_its_exits_marked(html: str) -> None:
    figures = FIGURE.findall(html)
    failed = [f for f in figures if f[0] == "fail" and FAILING in f[2]]
    assert len(failed) == 1
    _, exits, body = failed[0]
    assert int(exits) > 10 and "<svg" in body and 'id="ecdf-exits-' in body
    # Where a reader looks: under the FAILED banner, before the table of all verdicts.
    at = html.index(failed[0][2])
    assert html.index(f"FAILED ks: {FAILING}") < at < html.index("verdicts of this run</summary>")


def test_passing_gates_get_a_small_set_of_plots_without_marks(html: str) -> None:
    run = html[: html.index('id="calibration"')]
    passing = [f for f in FIGURE.findall(run) if f[0] == "pass"]
    assert 1 <= len(passing) <= 4
    assert all(f[1] == "0" and "<svg" in f[2] and "ecdf-exits" not in f[2] for f in passing)


def test_every_ks_verdict_states_its_false_pass_rate(html: str, inputs: list) -> None:
    (section,) = build_context(inputs)["verification"]
    ks = [v for v in section["verdicts"] if v["gate"] == "ks"]
    assert ks and all(v["false_pass_text"].startswith("<= ") for v in ks)
    assert all(v["false_pass_text"].endswith(" at 0.05") for v in ks)
    assert "P(pass | bug)" in html


def test_a_calibration_file_is_an_input_with_its_p_value_bands(html: str, inputs: list) -> None:
    assert classify_inputs(inputs[1:]).calibrations == (inputs[1],)
    part = html[html.index('id="calibration"') : html.index('id="families"')]
    assert "gumbel-max [numba] on synthetic-normal-D10-N200: 20 seeds" in part
    figures = FIGURE.findall(part)
    bad = [f for f in figures if f[0] == "fail"]
    assert len(bad) == 1 and int(bad[0][1]) > 0 and "ecdf-exits" in bad[0][2]
    assert any(f[0] == "pass" and f[1] == "0" for f in figures)
    assert "a bug of Cohen&#39;s w = 0.1 passes" in part and "undecided after 20 seeds" in part


def test_the_first_screen_gives_the_failure_p_value_against_its_level(
    html: str, inputs: list
) -> None:
    """Above the table of contents: the counts, and the failure's Holm-adjusted p-value beside
    the level it was judged at and the effect its gate could detect."""
    from harness.report.glance import stage_level

    summary = json.loads((inputs[0] / "summary.json").read_text())
    (failed,) = [v for v in summary["verdicts"] if v["verdict"] == "fail"]
    first = html[: html.index("<nav>")]
    passed = len(summary["verdicts"]) - 1
    assert f"Verification: {passed} of {len(summary['verdicts'])} verdicts pass, 1 fail." in first
    row = re.search(r'<tr class="failure">(.*?)</tr>', first, re.S)
    assert row and FAILING in row.group(1)
    assert f"{failed['adjusted_p']:.2g} (Holm)" in row.group(1)
    assert f"&lt; {stage_level(summary['config']):.2g}" in row.group(1)
    assert f"sup |F - F0| &gt;= {failed['detectable']:.2g}" in row.group(1)
