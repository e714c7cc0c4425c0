"""The README's promises: the plugin example runs, and the quick start is the two commands."""

import sys

from tests.conftest import ROOT, readme_plugin_path, run_command


def test_readme_plugin_example_verifies(tmp_path):
    out = run_command(
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
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "my-inverse-cdf" in out.stdout and "0 failed" in out.stdout


def test_quick_start_is_make_run_and_make_test():
    text = (ROOT / "README.md").read_text()
    quick = text.split("## Quick start", 1)[1].split("##", 1)[0]
    assert "make run" in quick and "make test" in quick
    assert "make test" in (ROOT / ".ci" / "run").read_text()


def test_readme_astar_example_draws_exactly(capsys):
    import numpy as np
    from scipy import stats

    text = (ROOT / "README.md").read_text()
    block = text.split("<!-- astar-example -->", 1)[1].split("<!-- /astar-example -->", 1)[0]
    namespace: dict = {}
    exec(block.split("```python", 1)[1].split("```", 1)[0], namespace)
    assert len(capsys.readouterr().out.split()) == 3
    target, draws = namespace["target"], namespace["draws"]
    assert stats.kstest(draws.values, target.cdf).pvalue > 1e-3
    gumbel = stats.gumbel_r(loc=target.truth.log_z).cdf
    assert stats.kstest(draws.extras["gumbel_max"], gumbel).pvalue > 1e-3
    assert np.all(draws.extras["bound_evals"] >= 1)
