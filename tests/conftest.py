import atexit
import contextlib
import io
import json
import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The pytest-xdist workers share one Numba cache (and the subprocesses their tests start use it
# too), so each kernel compiles once per run, not once per worker. Two processes saving one
# function's cache at once could leave an index pointing at another signature's machine code
# (numba/numba#4807); importing ``harness`` installs the file lock that prevents it
# (harness/numba_cache.py), and every kernel is defined under a module that imports it. Set
# before any kernel is decorated; the plugin's own imports decorate none.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ["NUMBA_CACHE_DIR"] = str(ROOT / ".numba-cache" / "tests")
# CI has no GPU: the ``cuda`` key's kernels run in numba-cuda's simulator on tiny problems
# (tests/implementations/test_cuda_contracts.py). HARNESS_REAL_CUDA=1 runs them on a device.
if os.environ.get("HARNESS_REAL_CUDA") != "1":
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
import numba.core.config  # noqa: E402

numba.core.config.reload_config()

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from harness.registry import build_registry  # noqa: E402
from harness.targets.box_density import peaky_exponential  # noqa: E402
from harness.targets.continuous import TruncatedGumbelTarget  # noqa: E402
from harness.targets.continuous_factor_graph import tiny_continuous_graph  # noqa: E402
from harness.targets.discrete import synthetic_rewards  # noqa: E402
from harness.targets.factor_graph import random_factor_graph  # noqa: E402
from harness.targets.posterior import studentt_posterior  # noqa: E402


def run_command(
    cmd: list[str], timeout: float = 1500, cwd: Path | str | None = None, env=None, check=False
) -> subprocess.CompletedProcess:
    """``cmd`` in a session of its own, its output in files, stopped after ``timeout`` seconds;
    when it ends, whatever it started and left behind (a Dask worker, say) is killed too. A
    stray child that keeps a pipe open is what makes ``subprocess.run(capture_output=True)``
    wait forever: files and the session kill rule that out."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(
            cmd, stdout=out, stderr=err, cwd=cwd, env=env, text=True, start_new_session=True
        )
        try:
            proc.wait(timeout=timeout)
        finally:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
        out.seek(0)
        err.seek(0)
        done = subprocess.CompletedProcess(cmd, proc.returncode, out.read(), err.read())
    if check:
        done.check_returncode()
    return done


def harness_here(*args: str, cwd: Path | str | None = None) -> subprocess.CompletedProcess:
    """``harness ARGS`` run by the command's own ``main`` in this process, its output and exit
    code returned as ``run_command`` returns a subprocess's. A new interpreter costs 2-3 s of
    imports and kernel loads a call (and a verify forks its pool from it, loading the kernels
    again), where this process has them already. ``test_cli.py`` still runs the installed
    command itself for its exit codes and one-line errors."""
    from harness.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    here = os.getcwd()
    try:
        if cwd is not None:
            os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(list(args))
            except SystemExit as exc:  # argparse: --help and usage errors
                code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    finally:
        os.chdir(here)
    return subprocess.CompletedProcess(["harness", *args], code, out.getvalue(), err.getvalue())


def distinct_settings(spec, checks) -> list:
    """``checks`` (a spec's Check objects), one for each distinct setting: checks differ by
    problem too, and with the spec's defaults filled in several declare one setting
    (racing-normal: 25 checks, 8 settings)."""
    settings = {}
    for check in checks:
        full = json.dumps(spec.validate(dict(check.params)), sort_keys=True, default=str)
        settings.setdefault(full, check)
    return list(settings.values())


BROKEN = str(ROOT / "tests" / "plugins" / "broken_samplers.py")
BROKEN_RACING = str(ROOT / "tests" / "plugins" / "broken_racing.py")
BROKEN_GIBBS = str(ROOT / "tests" / "plugins" / "broken_gibbs.py")


@pytest.fixture(scope="session")
def registry():
    return build_registry()


@pytest.fixture(scope="session")
def small_discrete():
    return synthetic_rewards(6, 128, "normal", 0.05, np.random.default_rng(11))


@pytest.fixture(scope="session")
def small_trunc():
    return TruncatedGumbelTarget(0.5, 1.0)


@pytest.fixture(scope="session")
def small_posterior():
    return studentt_posterior(300, 1.0, 4.0, np.random.default_rng(12))


@pytest.fixture(scope="session")
def small_factor_graph():
    return random_factor_graph(4, 2, np.random.default_rng(13))


@pytest.fixture(scope="session")
def small_continuous_graph():
    return tiny_continuous_graph()


@pytest.fixture(scope="session")
def small_box():
    return peaky_exponential(5.0)


@pytest.fixture(scope="session")
def small_glm():
    from harness.targets.glm import from_data
    from harness.targets.glm_data import synthetic_logistic

    return from_data(synthetic_logistic(60, 2, seed=31), "map")


def target_for(
    kind,
    small_discrete,
    small_trunc,
    small_posterior=None,
    small_factor_graph=None,
    small_continuous_graph=None,
    small_box=None,
    small_glm=None,
):
    targets = {"discrete": small_discrete, "continuous-1d": small_trunc}
    if small_glm is not None:
        targets["glm-posterior"] = small_glm
    if small_box is not None:
        targets["box-density"] = small_box
    if small_continuous_graph is not None:
        targets["factor-graph-continuous"] = small_continuous_graph
    if small_posterior is not None:
        targets["posterior-1d"] = small_posterior
    if small_factor_graph is not None:
        targets["factor-graph"] = small_factor_graph
    return targets[kind]


def readme_plugin_source() -> str:
    """The plugin example of README.md, exactly as a user would copy it."""
    text = (ROOT / "README.md").read_text()
    block = text.split("<!-- plugin-example -->", 1)[1].split("<!-- /plugin-example -->", 1)[0]
    return block.split("```python", 1)[1].split("```", 1)[0]


def readme_plugin_path() -> str:
    """The README's plugin written to a temporary file, removed when the process exits (a
    module-level call cannot use pytest's tmp_path)."""
    folder = tempfile.mkdtemp(prefix="readme-plugin-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    path = Path(folder) / "my_sampler.py"
    path.write_text(readme_plugin_source())
    return str(path)


def readme_problem_source() -> str:
    """The register_problem example of README.md (a discrete problem, "five-states")."""
    text = (ROOT / "README.md").read_text()
    block = text.split("<!-- problem-example -->", 1)[1].split("<!-- /problem-example -->", 1)[0]
    return block.split("```python", 1)[1].split("```", 1)[0]


#: Samplers appended to the README's problem example: an exact one and a planted bug (the pmf
#: read backwards), each checked only on the plugin's own problem.
OWN_PROBLEM_SAMPLERS = """

def inverse_cdf(target, n, rng):
    cdf = np.cumsum(np.exp(target.log_factors.sum(axis=1) + target.log_f0))
    values = np.searchsorted(cdf, rng.random(n) * cdf[-1], side="right")
    return harness.Draws(values, evals=target.log_factors.size)


def backwards(target, n, rng):
    return harness.Draws(target.D - 1 - inverse_cdf(target, n, rng).values, 0)


for name, fn in (("five-states-exact", inverse_cdf), ("five-states-backwards", backwards)):
    harness.register(
        harness.AlgorithmSpec(
            name, "mine", "000, Sec. 2.1", "exact", ("discrete",), {"reference": fn},
            checks=(harness.Check(problems=("five-states",)),),
        )
    )
"""


@pytest.fixture
def own_problem_plugin(tmp_path) -> str:
    """A plugin file: the README's five-states problem and two samplers checked on it."""
    path = tmp_path / "own_problem.py"
    path.write_text(readme_problem_source() + OWN_PROBLEM_SAMPLERS)
    return str(path)
