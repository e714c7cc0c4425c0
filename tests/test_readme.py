"""The README's promises: the plugin example runs, and the quick start is the two commands."""

import subprocess
import sys

from tests.conftest import ROOT, readme_plugin_path


def test_readme_plugin_example_verifies(tmp_path):
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "harness.cli",
            "verify",
            "--plugin",
            readme_plugin_path(),
            "--algorithm",
            "my-inverse-cdf",
            "--out",
            str(tmp_path / "run"),
            "--no-progress",
        ],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "my-inverse-cdf" in out.stdout and "0 failed" in out.stdout


def test_quick_start_is_make_run_and_make_test():
    text = (ROOT / "README.md").read_text()
    quick = text.split("## Quick start", 1)[1].split("##", 1)[0]
    assert "make run" in quick and "make test" in quick
    assert "make test" in (ROOT / ".ci" / "run").read_text()
