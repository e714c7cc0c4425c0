"""The command line: exit codes 0 / 1 / 2, messages without tracebacks, negative controls."""

import json
import sys

import pytest

from harness.cli.main import main
from tests.conftest import BROKEN, BROKEN_GIBBS, BROKEN_RACING, ROOT, run_command

# The command's main in this process; the installed command itself runs in
# test_the_command_itself_exits_2_with_one_line_and_no_traceback.
from tests.conftest import harness_here as harness

LOOPING = str(ROOT / "tests" / "plugins" / "looping_sampler.py")


def installed_harness(*args, cwd=None):
    return run_command([sys.executable, "-m", "harness.cli", *args], cwd=cwd)


def test_list_table_and_json():
    out = harness("list")
    assert out.returncode == 0 and "gumbel-max" in out.stdout
    data = json.loads(harness("list", "--json", "--problems").stdout)
    names = {a["name"] for a in data["algorithms"]}
    assert {"gumbel-max", "cdf-inversion", "truncated-gumbel", "top-down"} <= names
    assert all(a["implementations"][:2] == ["reference", "numba"] for a in data["algorithms"])
    cuda = {a["name"] for a in data["algorithms"] if "cuda" in a["implementations"]}
    assert cuda == {"gumbel-max", "cdf-inversion", "rwmh"}
    # The test session runs numba-cuda's simulator, which `--impl all` does not count.
    assert data["this_machine"]["runnable"] == ["reference", "numba"]
    assert "this machine runs: reference, numba" in out.stdout
    assert data["problems"]


GUMBEL = ("gumbel-max", "cdf-inversion", "top-down", "truncated-gumbel")


@pytest.mark.slow  # 26 s in a fresh clone, mostly compiling; the default suite verifies all
# four samplers on their cheaper problems through the same runner (tests/harness/verify/
# test_runner.py: small-*, both implementations), and each gate's negative control is below.
def test_the_gumbel_family_verifies(tmp_path):
    """The Numba implementations (reference agreement: the slow test below, the runner tests
    and the contract tests)."""
    out = harness(
        "verify",
        *(arg for name in GUMBEL for arg in ("--algorithm", name)),
        *("--impl", "numba", "--out", str(tmp_path / "run"), "--no-progress", "--verbose"),
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "0 failed" in out.stdout
    for gate in ("chi-square", "ks-gumbel-max", "ks-process", "ks", "pair-independence"):
        assert f" {gate} " in out.stdout


@pytest.mark.slow
def test_the_gumbel_family_verifies_with_both_implementations(tmp_path):
    out = harness(
        "verify",
        *(arg for name in GUMBEL for arg in ("--algorithm", name)),
        *("--impl", "all", "--reference", "full", "--out", str(tmp_path / "run")),
        *("--no-progress", "--verbose"),
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert " agreement " in out.stdout


@pytest.mark.parametrize(
    ("algorithm", "gate"),
    [
        ("broken-exp-noise", "chi-square"),
        ("broken-temperature", "chi-square"),
        ("broken-trunc-sign", "ks"),
        ("broken-gumbel-max-value", "ks-gumbel-max"),
        ("broken-raises", "runs"),
    ],
)
def test_negative_controls_fail_naming_the_gate(tmp_path, algorithm, gate):
    out = harness(
        "verify",
        "--plugin",
        BROKEN,
        "--algorithm",
        algorithm,
        "--out",
        str(tmp_path / "r"),
        "--no-progress",
    )
    assert out.returncode == 1, out.stdout + out.stderr
    assert f"FAILED {gate}: {algorithm}" in out.stdout
    assert "Traceback" not in out.stderr


# Slow set (10-25 s on 2 cores): keeps the default suite under its 10 minutes.
@pytest.mark.slow
def test_the_racing_family_verifies(tmp_path):
    """The issue's command, with the Numba implementations (reference agreement: slow test)."""
    out = harness(
        "verify",
        *("--algorithm", "lil-ucb", "--algorithm", "racing-ebs"),
        *("--algorithm", "racing-normal", "--algorithm", "racing-mh"),
        *("--impl", "numba", "--out", str(tmp_path / "run"), "--no-progress", "--verbose"),
    )
    assert out.returncode == 0, out.stdout + out.stderr
    for gate in ("error-rate", "tv", "pull-bounds", "stationary-bias", "decision-error", "ess"):
        assert f" {gate} " in out.stdout


@pytest.mark.slow
def test_the_racing_family_verifies_with_both_implementations(tmp_path):
    out = harness(
        "verify",
        *("--algorithm", "lil-ucb", "--algorithm", "racing-ebs"),
        *("--algorithm", "racing-normal", "--algorithm", "racing-mh"),
        *("--impl", "all", "--reference", "full", "--out", str(tmp_path / "run")),
        *("--no-progress", "--verbose"),
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert " agreement " in out.stdout


@pytest.mark.parametrize(
    ("algorithm", "gate"),
    [
        # 24 s of a pure-Python race; the error-rate gate's negative control in the default
        # suite is a race without its bound (tests/harness/targets/test_likelihood_terms.py).
        pytest.param("broken-racing-single-look", "error-rate", marks=pytest.mark.slow),
        ("broken-mh-drift", "ks-thinned"),
    ],
)
def test_racing_negative_controls_fail_naming_the_gate(tmp_path, algorithm, gate):
    out = harness(
        "verify",
        *("--plugin", BROKEN_RACING, "--algorithm", algorithm),
        *("--out", str(tmp_path / "r"), "--no-progress"),
    )
    assert out.returncode == 1, out.stdout + out.stderr
    assert f"FAILED {gate}: {algorithm}" in out.stdout


MINIBATCH = ("gibbs", "poisson-gibbs", "poisson-mh", "min-gibbs", "mgpmh", "double-min-gibbs")
FG_GATES = (
    "invariance",
    "spectral-gap",
    "chi-square-thinned",
    "marginal-symmetry",
    "moment-marginals",
    "transition-consistency",
)


# Slow set (10-25 s on 2 cores): keeps the default suite under its 10 minutes.
@pytest.mark.slow
def test_the_discrete_minibatch_gibbs_family_verifies(tmp_path):
    """003 on factor graphs: tiny graphs (exact kernels, Thm. 1/2) and a Potts grid, with the
    Numba implementations (reference agreement: the slow test below and the contract tests)."""
    out = harness(
        "verify",
        *(arg for name in MINIBATCH for arg in ("--algorithm", name)),
        *("--impl", "numba", "--out", str(tmp_path / "run"), "--no-progress", "--verbose"),
    )
    assert out.returncode == 0, out.stdout + out.stderr
    for gate in FG_GATES:
        assert f" {gate} " in out.stdout


@pytest.mark.slow
def test_the_discrete_minibatch_gibbs_family_verifies_with_both_implementations(tmp_path):
    out = harness(
        "verify",
        *(arg for name in MINIBATCH for arg in ("--algorithm", name)),
        *("--impl", "all", "--reference", "full", "--out", str(tmp_path / "run")),
        *("--no-progress", "--verbose"),
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert " agreement " in out.stdout


@pytest.mark.parametrize(
    "names",
    [
        # One sampler of each gate the family meets: the exact Gibbs step's conditional PIT, the
        # Poisson DA chain's thinned chi-square and ESS (29-35 s in a fresh-clone CI run, mostly
        # compiling). The default suite runs these gates on pgits and pgda, with their negative
        # controls, in tests/harness/gates/test_continuous_chain.py.
        pytest.param(("gibbs-rejection", "pgda"), marks=pytest.mark.slow),
        # All six, as `make run`'s verify runs them (57 s there).
        pytest.param(
            ("gibbs-rejection", "pg-rejection", "gibbs-its", "pgits", "gibbs-da", "pgda"),
            marks=pytest.mark.slow,
        ),
    ],
    ids=("two", "all"),
)
def test_the_continuous_minibatch_gibbs_samplers_verify(tmp_path, names):
    """003 Sec. 3: rejection, ITS and DA samplers, plain and Poisson, on continuous graphs."""
    out = harness(
        "verify",
        *(arg for name in names for arg in ("--algorithm", name)),
        *("--impl", "numba", "--out", str(tmp_path / "run"), "--no-progress", "--verbose"),
    )
    assert out.returncode == 0, out.stdout + out.stderr
    for gate in ("chi-square-thinned", "conditional-pit", "ess"):
        assert f" {gate} " in out.stdout


@pytest.mark.slow  # 39 s; chi-square-thinned's negative controls run in test_continuous_chain.py
def test_pgda_without_its_mh_correction_fails(tmp_path):
    out = harness(
        "verify",
        *("--plugin", BROKEN_GIBBS, "--algorithm", "broken-pgda-no-mh"),
        *("--out", str(tmp_path / "r"), "--no-progress"),
    )
    assert out.returncode == 1, out.stdout + out.stderr
    assert "FAILED chi-square-thinned: broken-pgda-no-mh" in out.stdout


@pytest.mark.parametrize("algorithm", ["broken-pg-no-phi-rate", "broken-pg-no-multiplicity"])
def test_planted_poisson_gibbs_bugs_fail_the_invariance_gate(tmp_path, algorithm):
    out = harness(
        "verify",
        *("--plugin", BROKEN_GIBBS, "--algorithm", algorithm),
        *("--out", str(tmp_path / "r"), "--no-progress"),
    )
    assert out.returncode == 1, out.stdout + out.stderr
    assert f"FAILED invariance: {algorithm}" in out.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("draw", "--log-weights", "0,nan,1"), "finite log-weights"),
        (("draw", "--log-weights", "0,inf"), "finite log-weights"),
        (("draw", "--log-weights", ""), "D >= 1"),
        (("draw", "--log-weights", "0,1", "--n", "0"), "'n' = 0 is invalid"),
        (("draw", "--log-weights", "0,x"), "comma-separated numbers"),
        (("verify", "--algorithm", "no-such"), "unknown algorithm 'no-such'"),
        (("verify", "--plugin", "no_such_plugin_module"), "no such module"),
        (("verify", "--plugin", "missing_file.py"), "no such file"),
        (("verify", "--seed", "1.5"), "invalid int value"),
        (("verify", "--seed", "-2"), "'seed' = -2 is invalid; valid: an integer in [0, inf)"),
        (("verify", "--alpha", "0"), "'alpha' = 0.0"),
        (("verify", "--impl", "cython"), "--impl: 'cython' is invalid; valid: 'all' or keys"),
        (("verify", "--scheduler", "yarn"), "--scheduler 'yarn' is invalid; valid: 'process'"),
        (("reproduce", "potts", "--scheduler", "local:0"), "local:K with K an integer >= 1"),
        (
            ("verify", "--algorithm", "gumbel-max", "--scheduler", "tcp://127.0.0.1:1"),
            "--scheduler tcp://127.0.0.1:1: no Dask scheduler answers there",
        ),
        (("verify", "--task-timeout", "0"), "--task-timeout = 0.0 is invalid"),
        (("verify", "--algorithm", "gumbel-max", "--problem", "nope"), "--problem 'nope' is"),
        (("report", "no/such/run"), "does not exist"),
    ],
)
def test_bad_input_exits_2_with_a_message_and_no_traceback(
    tmp_path, monkeypatch, capsys, args, message
):
    # In this process (a subprocess costs seconds of imports a case; the one below checks the
    # installed command itself): argparse's refusals exit, the harness's own return 2.
    monkeypatch.chdir(tmp_path)
    try:
        code = main(list(args))
    except SystemExit as exc:
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2, err
    assert message in err
    # One line (argparse's own refusals put their usage lines before it).
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1].startswith(f"harness {args[0]}: error: ")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("verify", "--seed", "-2"), "'seed' = -2 is invalid; valid: an integer in [0, inf)"),
        (("draw", "--log-weights", "0,x"), "comma-separated numbers"),
    ],
)
def test_the_command_itself_exits_2_with_one_line_and_no_traceback(tmp_path, args, message):
    out = installed_harness(*args, cwd=tmp_path)
    assert out.returncode == 2, out.stdout + out.stderr
    assert message in out.stderr and "Traceback" not in out.stderr
    assert out.stderr.strip().splitlines()[-1].startswith(f"harness {args[0]}: error: ")


def test_a_sampler_that_never_returns_is_stopped_by_its_budget_and_the_run_goes_on(tmp_path):
    out = tmp_path / "loop"
    run = harness(
        "verify",
        "--plugin",
        LOOPING,
        "--algorithm",
        "looping-gumbel",
        "--task-timeout",
        "4",
        "--out",
        str(out),
        "--no-progress",
        "--workers",
        "2",
        "--problem",
        "race-normal-D2-N1000-s0.3",
        "--problem",
        "synthetic-normal-D10-N200",
    )
    assert run.returncode == 1, run.stdout + run.stderr
    assert (
        "FAILED runs: looping-gumbel [reference] on synthetic-normal-D10-N200" in run.stdout
        and "TimeoutError: stopped after its budget of 4 s" in run.stdout
    )
    verdicts = json.loads((out / "summary.json").read_text())["verdicts"]
    by_problem = {v["problem"]: v["verdict"] for v in verdicts}
    assert by_problem == {"race-normal-D2-N1000-s0.3": "pass", "synthetic-normal-D10-N200": "fail"}


def test_problem_picks_the_problems_a_run_verifies(tmp_path):
    run = harness(
        "verify",
        "--algorithm",
        "gumbel-max",
        "--impl",
        "numba",
        "--problem",
        "race-normal-D2-N1000-s0.3",
        "--out",
        str(tmp_path / "one"),
        "--no-progress",
    )
    assert run.returncode == 0, run.stderr
    verdicts = json.loads((tmp_path / "one" / "summary.json").read_text())["verdicts"]
    assert {v["problem"] for v in verdicts} == {"race-normal-D2-N1000-s0.3"}


def test_draw_prints_counts_beside_the_exact_pmf():
    out = harness("draw", "--log-weights", "0,1,2", "--n", "3000", "--impl", "reference")
    assert out.returncode == 0
    assert "exact" in out.stdout and "9000 factor evaluations" in out.stdout


def test_help_teaches():
    out = harness("verify", "--help")
    assert out.returncode == 0
    assert "examples:" in out.stdout and "resume" in out.stdout
    assert "--verbose" in out.stdout and "One line per algorithm and implementation" in out.stdout
    out = harness("list", "--help")
    assert out.returncode == 0 and "examples:" in out.stdout and "--problems" in out.stdout
    assert "List what the harness can verify" in out.stdout


def test_verify_prints_a_line_per_algorithm_then_failures_in_full(
    own_problem_plugin, tmp_path, capsys
):
    """The default output; --verbose adds the table of every verdict (the run resumes)."""
    args = [
        *("verify", "--plugin", own_problem_plugin, "--impl", "reference"),
        *("--algorithm", "five-states-exact", "--algorithm", "five-states-backwards"),
        *("--out", str(tmp_path / "run"), "--scheduler", "inprocess", "--no-progress"),
    ]
    assert main(args) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == [
        "algorithm",
        "impl",
        "gates",
        "passed",
        "worst",
        "adj.",
        "p",
        "wall",
        "s",
    ]
    rows = {tuple(line.split()[:3]): line.split() for line in lines[2:4]}
    # Each passes its output and seed contracts; the backwards one fails its chi-square.
    exact = rows[("five-states-exact", "reference", "4/4")]
    backwards = rows[("five-states-backwards", "reference", "3/4")]
    assert exact[-1] == "PASS" and backwards[-1] == "FAIL"
    assert float(backwards[3]) < 1e-10 and float(exact[4]) >= 0.0
    assert lines[4] == "FAILED chi-square: five-states-backwards [reference] on five-states"
    assert lines[5].startswith("  statistic ") and ", n 4000, detectable " in lines[5]
    assert "Holm-adjusted" in lines[5] and "(Cohen's w)" in lines[5]
    assert lines[6].strip() and lines[-1].startswith("7 passed, 1 failed")
    assert not any(" pair-independence " in line for line in lines)

    assert main([*args, "--verbose"]) == 1
    verbose = capsys.readouterr().out
    table = verbose.split("\n\n", 1)[0]
    assert table.count(" pair-independence ") == 2 and table.count(" chi-square ") == 2
    assert verbose.split("\n\n", 1)[1].splitlines()[:4] == lines[:4]


def test_calibrate_takes_several_problems_in_turn(tmp_path):
    problems = ("race-normal-D2-N1000-s0.3", "synthetic-normal-D10-N200")
    out = tmp_path / "cal.json"
    run = harness(
        *("calibrate", "--algorithm", "gumbel-max", "--seeds", "20", "--n", "200"),
        *("--problem", problems[0], "--problem", problems[1], "--json", str(out)),
    )
    assert run.returncode in (0, 1), run.stderr
    results = json.loads(out.read_text())
    assert [r["problem"] for r in results] == list(problems)
