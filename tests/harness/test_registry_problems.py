"""Plugins bring their own problems: harness.register_problem, and every place that resolves a
problem name (plan, runner, calibration, report, `harness list`) sees them."""

import json
import textwrap

import numpy as np
import pytest

import harness
from harness import registry as registry_module
from harness.checks.cases import plan_cases
from harness.checks.gate_sets import GATE_SETS, GROUND_TRUTH, check_target
from harness.cli.main import main
from harness.registry import build_registry
from harness.report.page import write_report
from harness.targets import catalog
from harness.verify.calibration import calibrate

HEADER = (
    "import numpy as np\nimport harness\nfrom harness.targets.discrete import "
    "DiscreteFactorTarget\n"
)


def plugin(tmp_path, body: str) -> str:
    path = tmp_path / "plugin.py"
    path.write_text(HEADER + textwrap.dedent(body))
    return str(path)


def verify(plugin_path, out, *args):
    return main(
        [
            *("verify", "--plugin", plugin_path, "--impl", "reference"),
            *("--out", str(out), "--scheduler", "inprocess", "--no-progress", *args),
        ]
    )


def test_the_plugin_problem_joins_the_plan_of_every_algorithm_that_fits(own_problem_plugin):
    reg = build_registry([own_problem_plugin])
    assert reg.problem("five-states").kind == "discrete"
    assert [p.name for p in reg.problems("discrete", "quick")][-1] == "five-states"
    gumbel = plan_cases([reg.get("gumbel-max")], "quick", reg.problems)
    assert ("five-states", 4000) in {(c.problem, c.n) for c in gumbel}
    # A check naming problems (a racing delta grid) does not spread to plugin problems.
    racing = plan_cases([reg.get("lil-ucb")], "quick", reg.problems)
    assert "five-states" not in {c.problem for c in racing}
    # Built-in plans are unchanged: the catalog's cases in order, plus the plugin's one.
    builtin = plan_cases([reg.get("gumbel-max")], "quick")
    assert [c for c in gumbel if c.problem != "five-states"] == builtin
    assert len(gumbel) == len(builtin) + 1
    assert np.allclose(reg.build_target("five-states").pmf, [0.1, 0.2, 0.3, 0.25, 0.15])
    assert reg.build_target("five-states") is reg.build_target("five-states")


def test_an_exact_sampler_passes_on_the_plugin_problem_and_a_planted_bug_fails(
    own_problem_plugin, tmp_path, capsys
):
    assert verify(own_problem_plugin, tmp_path / "ok", "--algorithm", "five-states-exact") == 0
    summary = json.loads((tmp_path / "ok" / "summary.json").read_text())
    assert {(v["problem"], v["gate"], v["n"]) for v in summary["verdicts"]} == {
        ("five-states", "contract", 4000),
        ("five-states", "seed-determinism", 64),
        ("five-states", "chi-square", 4000),
        ("five-states", "pair-independence", 4000),
    }
    capsys.readouterr()
    bad = tmp_path / "bad"
    assert verify(own_problem_plugin, bad, "--algorithm", "five-states-backwards") == 1
    assert "FAILED chi-square: five-states-backwards [reference] on five-states" in (
        capsys.readouterr().out
    )
    # The report draws the plugin problem's pmf, and still renders once the plugin is gone.
    assert "five-states-backwards on five-states" in write_report([bad], bad / "a.html").read_text()
    (tmp_path / "own_problem.py").unlink()
    registry_module.registry_for.cache_clear()  # as in a fresh process
    assert (
        "five-states-backwards on five-states"
        not in write_report([bad], bad / "b.html").read_text()
    )


def test_list_and_calibrate_see_the_plugin_problem(own_problem_plugin, capsys):
    assert main(["list", "--problems", "--plugin", own_problem_plugin]) == 0
    table = capsys.readouterr().out
    assert any(line.split()[:2] == ["five-states", "discrete"] for line in table.splitlines())
    assert main(["list", "--problems", "--json", "--plugin", own_problem_plugin]) == 0
    problems = json.loads(capsys.readouterr().out)["problems"]
    assert problems[-1] == {"name": "five-states", "kind": "discrete", "levels": ["quick", "full"]}
    result = calibrate(
        "five-states-exact",
        problem="five-states",
        impl="reference",
        seeds=10,
        n=500,
        plugins=(own_problem_plugin,),
    )
    assert result["problem"] == "five-states" and "chi-square" in result["gates"]


GOOD_BUILD = "lambda: DiscreteFactorTarget(np.zeros((3, 1)))"


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            f"harness.register_problem('synthetic-normal-D10-N200', 'discrete', {GOOD_BUILD})",
            "name = 'synthetic-normal-D10-N200' is invalid (a catalog problem",
        ),
        (
            f"harness.register_problem('mine', 'discrete', {GOOD_BUILD})\n"
            f"harness.register_problem('mine', 'discrete', {GOOD_BUILD})",
            "name = 'mine' is invalid (a catalog problem or one already registered",
        ),
        (
            f"harness.register_problem('', 'discrete', {GOOD_BUILD})",
            "name = '' is invalid; valid: a non-empty string",
        ),
        (
            f"harness.register_problem('mine', 'discreet', {GOOD_BUILD})",
            "kind = 'discreet' is invalid; valid: one of 'discrete', 'discrete-ragged'",
        ),
        (
            "harness.register_problem('mine', 'discrete', 42)",
            "build = 42 is invalid; valid: a callable",
        ),
        (
            f"harness.register_problem('mine', 'discrete', {GOOD_BUILD}, levels=('ci',))",
            "levels = ('ci',) is invalid (level 'ci'); valid: a non-empty tuple of 'quick'",
        ),
        (
            f"harness.register_problem('mine', 'discrete', {GOOD_BUILD}, levels='quick')",
            "levels = 'quick' is invalid",
        ),
        (
            f"harness.register_problem('mine', 'discrete', {GOOD_BUILD}, draws={{'quick': 0}})",
            "draws = {'quick': 0} is invalid (no entry for 'full'; 'quick': 0 is not an integer",
        ),
    ],
)
def test_bad_registrations_fail_when_the_plugin_loads(tmp_path, call, message):
    with pytest.raises(ValueError) as err:
        build_registry([plugin(tmp_path, call)])
    assert message in str(err.value)


class Pmf:
    """A target object with a declared kind and whatever pmf/D/cdf the test gives it."""

    def __init__(self, kind, **fields):
        self.kind = kind
        self.__dict__.update(fields)


@pytest.mark.parametrize(
    ("kind", "target", "message"),
    [
        ("discrete", Pmf("continuous-1d", cdf=abs), "build() returned a target of kind"),
        ("discrete", Pmf("discrete", D=2), "lacks the ground truth the 'discrete' gates read: pmf"),
        ("discrete", Pmf("discrete", pmf=np.array([0.5, 0.4]), D=2), "sums to 0.9"),
        ("discrete", Pmf("discrete", pmf=np.array([1.5, -0.5]), D=2), "negative or non-finite"),
        ("discrete", Pmf("discrete", pmf=np.ones((2, 2)) / 4, D=4), "shape (2, 2)"),
        ("discrete", Pmf("discrete", pmf=np.array([0.5, 0.5]), D=3), "D = 3 but pmf has 2"),
        ("continuous-1d", Pmf("continuous-1d", cdf=0.5), "read: cdf (callable)"),
        ("posterior-1d", Pmf("posterior-1d", cdf=abs), "read: mean, sd"),
    ],
)
def test_a_built_target_must_have_its_kind_and_ground_truth(kind, target, message):
    with pytest.raises(ValueError, match="problem 'mine'") as err:
        check_target("mine", kind, target)
    assert message in str(err.value)


def test_a_bad_target_stops_verify_before_any_work(tmp_path, capsys):
    path = plugin(
        tmp_path,
        """
        harness.register_problem("flat", "discrete", lambda: {"kind": "discrete"})
        harness.register(harness.AlgorithmSpec(
            "any", "x", "p", "exact", ("discrete",), {"reference": print},
            checks=(harness.Check(problems=("flat",)),)))
        """,
    )
    assert verify(path, tmp_path / "run", "--algorithm", "any") == 2
    err = capsys.readouterr().err
    assert "problem 'flat': build() returned a target of kind None (dict)" in err
    assert "Traceback" not in err and not (tmp_path / "run").exists()


def test_a_plugin_may_register_only_problems_and_only_while_loading(tmp_path):
    reg = build_registry(
        [plugin(tmp_path, f"harness.register_problem('mine', 'discrete', {GOOD_BUILD})")]
    )
    assert [p.name for p in reg.plugin_problems()] == ["mine"]
    with pytest.raises(
        RuntimeError, match=r"register_problem\(\) was called outside plugin loading"
    ):
        harness.register_problem("mine", "discrete", print)


def test_every_gate_set_states_its_ground_truth_and_catalog_targets_carry_it():
    assert set(GROUND_TRUTH) == set(GATE_SETS)
    assert registry_module.LEVELS == catalog.LEVELS
    for prob in catalog.PROBLEMS:
        if prob.kind in ("discrete", "continuous-1d", "factor-graph") and "quick" in prob.levels:
            check_target(prob.name, prob.kind, catalog.build_target(prob.name))
