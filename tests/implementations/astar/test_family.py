"""The A* family through the harness: verify passes the registered samplers and fails the
planted bugs (negative controls) on the gates the bugs name."""

from pathlib import Path

import pytest

from harness.verify.config import RunConfig
from harness.verify.runner import verify
from tests.conftest import ROOT

PLANTED = str(ROOT / "tests" / "plugins" / "planted_astar.py")
PLANTED_PM = str(ROOT / "tests" / "plugins" / "planted_pm_astar.py")


def _verify(tmp_path: Path, algorithms, impls, plugins=()):
    config = RunConfig(algorithms=tuple(algorithms), impls=tuple(impls), plugins=tuple(plugins))
    return verify(config, tmp_path / "run", workers=1, progress=False, scheduler="inprocess")


# Slow set (about 15-30 s on 2 cores): keeps the default suite under its 10 minutes.
@pytest.mark.slow
def test_the_astar_family_verifies_with_numba(tmp_path):
    summary = _verify(tmp_path, ("astar", "astar-drill-down", "os-star", "rejection"), ("numba",))
    assert summary["passed"]
    gates = {(v["algorithm"], v["gate"]) for v in summary["verdicts"]}
    assert {("astar", "ks"), ("astar", "ks-gumbel-max"), ("rejection", "ks")} <= gates
    assert ("astar-drill-down", "ks-gumbel-max") in gates and ("os-star", "ks") in gates


@pytest.mark.slow
def test_the_astar_family_verifies_with_both_implementations(tmp_path):
    names = ("astar", "astar-drill-down", "os-star", "rejection")
    summary = _verify(tmp_path, names, ("reference", "numba"))
    assert summary["passed"]
    assert any(v["gate"] == "agreement" for v in summary["verdicts"])


@pytest.mark.parametrize(
    "bug",
    [
        "planted-astar-untruncated-children",
        "planted-astar-stop-on-popped",
        "planted-astar-bound-at-centre",
        "planted-os-star-stale-bound",
    ],
)
def test_planted_astar_bugs_fail_ks_and_the_gumbel_maxima(tmp_path, bug):
    summary = _verify(tmp_path, (bug,), ("reference",), (PLANTED,))
    failed = {v["gate"] for v in summary["verdicts"] if v["verdict"] == "fail"}
    assert not summary["passed"] and {"ks", "ks-gumbel-max"} <= failed


# Slow set (10-25 s on 2 cores): keeps the default suite under its 10 minutes.
@pytest.mark.slow
def test_pm_astar_and_astar_without_a_bound_verify_with_numba(tmp_path):
    summary = _verify(tmp_path, ("pm-astar", "astar-nobound"), ("numba",))
    assert summary["passed"]
    problems = {(v["algorithm"], v["problem"]) for v in summary["verdicts"]}
    assert {("pm-astar", "pm-mixture"), ("pm-astar", "clutter-D2")} <= problems
    assert ("astar-nobound", "pm-mixture") in problems


@pytest.mark.parametrize(
    "bug", ["planted-pm-astar-estimate-as-bound", "planted-pm-astar-untruncated-child"]
)
def test_planted_pm_astar_bugs_fail_ks_and_the_gumbel_maxima(tmp_path, bug):
    summary = _verify(tmp_path, (bug,), ("reference",), (PLANTED_PM,))
    failed = {v["gate"] for v in summary["verdicts"] if v["verdict"] == "fail"}
    assert not summary["passed"] and {"ks", "ks-gumbel-max"} <= failed
