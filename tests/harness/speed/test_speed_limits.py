"""The report's panel of every speed figure against its limit (harness.speed.limits)."""

import json
import re

import pytest

from harness.report.page import write_report
from harness.speed.limits import KEY, _row, format_limits, is_speed_limits, load_speed_limits
from tests.harness.report_inputs import PYTEST_BENCHMARK


def _limits_file(path, rows):
    path.write_text(json.dumps({KEY: rows, "machine": "box-a", "commit": "abc1234"}))
    return path


ROWS = [
    _row("exact draw / numpy.sum", "gumbel-max, D = 10", 0.9, 1.5, True, "harness speed --memory"),
    _row("racing speedup / evaluation saving", "logistic", 0.93, 0.7, False, "--racing"),
    _row("Poisson-Gibbs step, largest / smallest degree", "1000 / 20", 2.4, 1.5, True, "--deg"),
]


def test_rows_know_which_side_of_the_limit_passes():
    assert [r["within"] for r in ROWS] == [True, True, False]
    assert _row("x", "y", 0.6, 0.7, False, "c")["within"] is False
    text = format_limits({KEY: ROWS})
    assert "2 of 3 within their limits" in text and "at least 0.7" in text


def test_the_report_shows_each_ratio_against_its_limit(tmp_path):
    path = _limits_file(tmp_path / "speed-limits.json", ROWS)
    assert is_speed_limits(path) and not is_speed_limits(tmp_path / "none.json")
    html = write_report([path], tmp_path / "r.html").read_text()
    text = re.sub(r"<[^>]+>", " ", html)
    assert (
        "Speed against its limits" in text and "Measured on machine box-a, commit abc1234" in text
    )
    assert "at most 1.5" in text and "at least 0.7" in text
    # One bar per row, coloured by its verdict; the Poisson-Gibbs row fails.
    assert html.count('class="fail">NO') == 1 and html.count('class="pass">yes') == 2
    assert "Value over limit" in text and "<svg" in html


def test_without_the_file_the_report_says_how_to_make_it(tmp_path):
    html = write_report([PYTEST_BENCHMARK], tmp_path / "a.html").read_text()
    assert "No speed-limits JSON" in html and "harness speed --limits" in html


def test_a_malformed_limits_file_is_refused_naming_what_is_valid(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({KEY: [{"measure": "x"}]}))
    with pytest.raises(ValueError, match=r"speed-limits file .* is invalid"):
        load_speed_limits(bad)
