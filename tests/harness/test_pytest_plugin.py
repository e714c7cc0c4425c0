"""The pytest plugin from outside the project: docs/testing-your-sampler.md's package, written
to a temporary directory and tested by a pytest that finds the plugin through its entry point."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from statsmodels.stats.proportion import proportion_confint

from harness.report.page import write_report

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "testing-your-sampler.md"

#: Three slips a sampler's author could make, one line each, and the gate that must catch it.
BUGS = (
    (  # exponential noise where Gumbel-max needs Gumbel noise
        "gumbels = -np.log(-np.log(rng.random((n, w.size))))",
        "gumbels = -np.log(rng.random((n, w.size)))",
        "test_categorical_is_exact",
        "gate 'chi-square' rejected the sampler",
    ),
    (  # a proposal with drift and no Hastings correction
        "proposals = rng.normal(0.0, step, n)",
        "proposals = rng.normal(0.2, step, n)",
        "test_mh_chain_targets_the_normal",
        "gate 'ks-thinned' rejected the sampler",
    ),
    (  # the posterior variance used as its standard deviation
        "1.0 / np.sqrt(precision)",
        "1.0 / precision",
        "test_posterior_is_calibrated",
        "gate 'sbc' rejected the sampler",
    ),
)


def write_example(where: Path) -> None:
    """The files of the worked example, as the page shows them."""
    text = DOC.read_text()
    found = re.findall(r"<!-- file: (\S+) -->\n```\w*\n(.*?)```", text, re.S)
    assert {name for name, _ in found} == {
        "tinysampler/__init__.py",
        "tests/test_tinysampler.py",
        "pyproject.toml",
    }
    for name, body in found:
        path = where / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body)


def run_pytest(where: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=where,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def test_the_worked_example_passes_and_its_records_make_a_report(tmp_path):
    write_example(tmp_path)
    records = tmp_path / "runs"
    got = run_pytest(tmp_path, "-q", "--harness-records", str(records))
    assert got.returncode == 0, got.stdout + got.stderr
    assert "harness verdicts" in got.stdout
    assert "5 checks, 0 failed; session alpha 0.001 over 5 declared checks" in got.stdout
    lines = (records / "records.jsonl").read_text().splitlines()
    assert len(lines) == 5 and all(json.loads(line)["verdict"] == "pass" for line in lines)
    summary = json.loads((records / "summary.json").read_text())
    assert summary["passed"] and len(summary["verdicts"]) == 5
    html = write_report([records], tmp_path / "report.html")
    assert "test_posterior_is_calibrated" in Path(html).read_text()


def test_three_broken_samplers_fail_with_readable_messages(tmp_path):
    write_example(tmp_path)
    source = tmp_path / "tinysampler" / "__init__.py"
    text = source.read_text()
    for old, new, _, _ in BUGS:
        assert text.count(old) == 1
        text = text.replace(old, new)
    source.write_text(text)
    got = run_pytest(tmp_path, "-q")
    out = got.stdout
    assert got.returncode == 1, out + got.stderr
    assert "3 failed, 1 passed" in out
    for _, _, test, message in BUGS:
        assert f"FAILED tests/test_tinysampler.py::{test}" in out
        assert message in out
    # The message carries the verdict's numbers, and the user's line rather than the harness's.
    assert "this check's false-failure budget 0.0002" in out
    assert "smallest discrepancy it could detect" in out
    assert "harness/testing.py" not in out


def test_pytest_help_lists_the_options_and_bad_values_are_usage_errors(tmp_path):
    write_example(tmp_path)
    helped = run_pytest(tmp_path, "--help")
    assert "--harness-alpha" in helped.stdout and "--harness-seed" in helped.stdout
    bad = run_pytest(tmp_path, "--harness-alpha", "1.5")
    assert bad.returncode == 4
    assert "--harness-alpha 1.5 is invalid; valid: a number in (0.0, 1.0)" in bad.stderr


def test_records_where_nothing_can_be_written_are_a_usage_error(tmp_path):
    write_example(tmp_path)
    (tmp_path / "a-file").write_text("")
    bad = run_pytest(tmp_path, "--harness-records", str(tmp_path / "a-file" / "records"))
    assert bad.returncode == 4, bad.stdout + bad.stderr
    assert "--harness-records" in bad.stderr and "cannot be written" in bad.stderr
    assert "INTERNALERROR" not in bad.stdout + bad.stderr


def test_a_test_making_more_checks_than_it_declared_fails_clearly(tmp_path):
    write_example(tmp_path)
    (tmp_path / "tests" / "test_more.py").write_text(
        "import numpy as np\n"
        "def test_two(harness_check):\n"
        "    for _ in range(2):\n"
        "        harness_check.exact(lambda n, rng: rng.integers(0, 2, n), pmf=[0.5, 0.5])\n"
    )
    got = run_pytest(tmp_path, "-q", "tests/test_more.py")
    assert got.returncode == 1
    assert "declare @pytest.mark.harness(checks=2)" in got.stdout


def session_failure_rate(tmp_path: Path, seeds: int, alpha: float) -> tuple[int, int]:
    """(sessions with a failed check, sessions) over ``seeds`` in-process pytest sessions of the
    worked example, which is correct: the session budget's false-failure rate."""
    write_example(tmp_path)
    failed = 0
    cwd = Path.cwd()
    os.chdir(tmp_path)
    try:
        for seed in range(seeds):
            args = ["-q", "-p", "no:cacheprovider", f"--harness-seed={seed}"]
            with contextlib.redirect_stdout(io.StringIO()):
                code = pytest.main([*args, f"--harness-alpha={alpha}", "tests"])
            assert code in (0, 1)
            failed += code == 1
    finally:
        os.chdir(cwd)
    return failed, seeds


@pytest.mark.slow
def test_the_session_false_failure_rate_is_its_alpha(tmp_path):
    # Five checks on correct samplers at a session alpha of 0.05: each check fails with
    # probability 0.01 by construction, the session with 1 - 0.99^5 = 0.049.
    failed, seeds = session_failure_rate(tmp_path, 500, 0.05)
    low, high = proportion_confint(failed, seeds, alpha=0.001, method="beta")
    print(f"session false-failure rate {failed}/{seeds}, 99.9% interval [{low:.4f}, {high:.4f}]")
    assert low <= 0.05 and high >= 1 - 0.99**5
