"""reproduce --decide (harness/experiments/decide.py): the pilot sizes a second stage under
another seed, whose verdicts alone are final, so the 95% of one look holds; a claim on its edge
spends no budget; a sequential design that re-looks at pooled data is the negative control."""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path

import numpy as np
import pytest

from harness.experiments import decide as dc
from harness.experiments.claims import Claim, Verdict, above, judge, mean_interval, ratio_of_means
from harness.experiments.framework import run, section
from harness.report.page import claims_summary
from tests.docs.test_template_experiment import EXPERIMENT, T


def _verdict(cid: str, verdict: str, n: int | None, need: int | None, low=0.0, **kw) -> Verdict:
    return Verdict(
        id=cid, paper="000", text="t", paper_value="1", quantity="q", rule="r",
        verdict=verdict, ours="-", value=1.0, low=low, high=None if low is None else 2.0,
        n=n, unit="runs", how="", reason=kw.pop("reason", ""), runs_to_decide=need, **kw,
    )  # fmt: skip


def test_budgets_parse_and_bad_ones_are_refused():
    assert dc.parse_budget("90s") == 90 and dc.parse_budget("45m") == 2700
    assert dc.parse_budget("2.5h") == 9000 and dc.parse_budget("30") == 30
    for bad in ("", "0", "-5m", "2d", "soon"):
        with pytest.raises(ValueError, match="--budget"):
            dc.parse_budget(bad)


def test_the_plan_takes_the_largest_ask_and_the_budget_caps_it():
    verdicts = [
        _verdict("a", "inconclusive", 10, 40),  # asks 4x
        _verdict("b", "inconclusive", 10, 25),  # asks 2.5x
        _verdict("c", "inconclusive", None, None, low=None, reason="1 run: no interval"),
        _verdict("d", "inconclusive", 10, None, reason="...; undecidable at any size near"),
        _verdict("e", "reproduced", 10, None),
        _verdict("f", "inconclusive", 10, 10_000, reading_of="a"),  # a reading: not asked
    ]
    plan = dc.stage_plan(verdicts, {"reps": 3, "sets": 2}, pilot_wall_s=60, budget_s=3600)
    assert [a.claim for a in plan.asks] == ["a", "b", "c", "d"]
    assert [a.factor for a in plan.asks] == [4.0, 2.5, dc.FLOOR, None]
    assert plan.wanted == 4.0 and plan.factor == 4.0 and not plan.capped
    assert plan.replicates == {"reps": 12, "sets": 8}
    capped = dc.stage_plan(verdicts, {"reps": 3}, pilot_wall_s=60, budget_s=150)
    assert capped.factor == 2.5 and capped.replicates == {"reps": 8} and "2.5x" in capped.capped
    short = dc.stage_plan(verdicts, {"reps": 3}, pilot_wall_s=60, budget_s=30)
    assert short.factor == 0 and "no second stage fits" in short.capped


def test_claims_on_their_edge_ask_for_nothing_and_a_decided_pilot_is_replicated_once():
    """Stage 2 runs whatever the pilot found, at the pilot's size when nothing asks for more:
    the final verdicts never depend on whether the pilot decided."""
    edge = [_verdict("d", "inconclusive", 10, None, reason="x; undecidable at any size near")]
    far = [_verdict("g", "inconclusive", 10, 10 * int(dc.MAX_FACTOR) + 10)]
    for verdicts in (edge, far, [_verdict("e", "reproduced", 10, None)]):
        plan = dc.stage_plan(verdicts, {"reps": 3}, pilot_wall_s=60, budget_s=3600)
        assert plan.factor == 1.0 and plan.replicates == {"reps": 3}


def _two_stage_errors(mu: float, trials: int, design: str, rng: np.random.Generator) -> float:
    """Share of trials whose final verdict is "not reproduced" for a claim "mean > 0" that
    holds (mu > 0): the two-stage design (a fresh second stage, judged once), or one of two
    negative controls: a pilot that decided stands ("pilot stands"), or pooling the data and
    re-looking at 95% after each doubling ("pooled")."""
    claim = Claim("m", "000", "mean > 0", "mean", above(0.0), lambda rs: mean_interval(rs),
                  fails_if="f")  # fmt: skip
    wrong = 0
    for _ in range(trials):
        pilot = list(rng.normal(mu, 1.0, 5))
        verdict = judge(claim, pilot)
        if design == "pilot stands" and verdict.verdict != "inconclusive":
            pass
        elif design == "pooled":
            data = pilot
            for _ in range(6):  # six more looks, each on all the data so far
                if verdict.verdict != "inconclusive":
                    break
                data = data + list(rng.normal(mu, 1.0, len(data)))
                verdict = judge(claim, data)
        else:
            plan = dc.stage_plan([verdict], {"n": 5}, pilot_wall_s=1, budget_s=64)
            if plan.factor > 0:
                verdict = judge(claim, list(rng.normal(mu, 1.0, plan.replicates["n"])))
        wrong += verdict.verdict == "not reproduced"
    return wrong / trials


DESIGNS = ("two-stage", "pilot stands", "pooled")


def test_the_two_stage_design_holds_its_error_where_re_looking_does_not():
    """A true mean 0.02 above the edge: the one-sided error of a 95% interval is at most
    2.5% per look. Over 4000 trials each, the two-stage design stays within 0.025 + 3
    standard errors, while letting a decided pilot stand, or pooling and re-looking seven
    times, crosses the edge more often than that."""
    rng = np.random.default_rng(11)
    trials = 4000
    errors = {d: _two_stage_errors(0.02, trials, d, rng) for d in DESIGNS}
    se = math.sqrt(0.025 * 0.975 / trials)
    assert errors["two-stage"] <= 0.025 + 3 * se, errors
    assert errors["pilot stands"] > 0.025 + 3 * se, errors
    assert errors["pooled"] > 0.025 + 3 * se, errors


@pytest.mark.timeout(300)
def test_decide_runs_the_template_in_two_stages_and_records_it(tmp_path: Path, monkeypatch):
    logs: list[str] = []
    decided = dc.decide(
        EXPERIMENT, "quick", 0, tmp_path / "d", budget_s=600, run=run, log=logs.append,
        scheduler="inprocess", progress=False,
    )  # fmt: skip
    assert decided["final_from"] == "decide"  # stage 2 runs whatever the pilot found
    pilot = json.loads((tmp_path / "d" / "pilot" / "experiment.json").read_text())
    assert pilot["settings"]["replicates"] == 3
    second = json.loads((tmp_path / "d" / "decide" / "experiment.json").read_text())
    assert second["settings"]["seed"] == 1
    assert second["settings"]["replicates"] == decided["plan"]["replicates"]["replicates"] >= 3
    assert any("decide: stage 2 with replicates = " in message for message in logs)
    path = dc.write_record(decided, tmp_path / "d", "harness reproduce ...", tmp_path / "rec")
    bundle = dc.read_record(path)
    assert bundle["records"] and bundle["command"] and "commit" in bundle
    recorded = dc.recorded_verdicts(EXPERIMENT, tmp_path / "rec")
    assert recorded is not None and recorded["stale"] is False
    assert [v["id"] for v in recorded["final"]] == ["top-frequency"]

    # The report shows the recorded verdict beside a fresh run's and counts decided claims
    # from both; a record made by other code of the experiment is marked stale.
    monkeypatch.setattr(dc, "RECORDED", tmp_path / "rec")
    table = section(EXPERIMENT, tmp_path / "d" / "pilot")["claims_table"]
    assert "recorded deciding run" in table["columns"]
    assert "The recorded deciding run (harness reproduce ..." in table["caption"]
    summary = claims_summary([section(EXPERIMENT, tmp_path / "d" / "pilot")])
    final = recorded["final"][0]["verdict"]
    assert summary["decided"]["total"] == 1
    assert summary["decided"]["recorded"] == int(final in ("reproduced", "not reproduced"))
    bundle["experiment_digest"] = "0" * 16
    with gzip.open(path, "wt", encoding="utf-8") as f:
        json.dump(bundle, f)
    assert dc.recorded_verdicts(EXPERIMENT)["stale"] is True
    assert "stale" in section(EXPERIMENT, tmp_path / "d" / "pilot")["claims_table"]["caption"]


def test_an_experiment_without_replicates_is_refused():
    class NoReps:
        name = "fixed"
        replicates: tuple[str, ...] = ()

    with pytest.raises(ValueError, match="declares no replicate parameter"):
        dc.replicate_values(NoReps(), T.GumbelMaxConfig.for_level("quick"))


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["minibatch-gap", "--decide"], "declares no replicate parameter"),
        (["potts", "--decide", "--budget", "2d"], "--budget '2d' is invalid"),
        (["potts", "--record"], "--record is invalid without --decide"),
        (["racing-synthetic", "--decide", "--part", "speed"], "--part 'speed' is invalid"),
    ],
)
def test_decide_refuses_bad_input_in_one_line_before_work(argv, message, capsys, tmp_path):
    from harness.cli.main import main

    assert main(["reproduce", *argv, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()


def test_the_code_digest_sees_statements_not_imports_comments_or_layout():
    # A recorded run goes stale when the experiment computes something else, not when a
    # helper it imports moves to another module.
    base = "import os\n# why\ndef f(x):\n    from m import g\n    return g(x)\n"
    moved = "import sys\n\n\ndef f(x):  # other words\n    from n.m import g\n    return g(x)\n"
    changed = "import os\ndef f(x):\n    from m import g\n    return g(x) + 1\n"
    assert dc.code_digest(base) == dc.code_digest(moved)
    assert dc.code_digest(base) != dc.code_digest(changed)
    assert dc.code_digest("def f():\n    import os\n") == dc.code_digest("def f():\n    pass\n")


def test_a_claim_short_of_replicates_the_design_fixes_asks_for_none():
    # One adaptation run a sampler (racing-arch): more chains add none, so --decide must not
    # spend its budget on it; a claim short of chains asks for the floor factor.
    def verdict_of(unit: str) -> Verdict:
        claim = Claim(
            id="x",
            paper="p",
            text="t",
            quantity="q",
            rule=above(1.0),
            measure=lambda rs: ratio_of_means([1.0], [2.0, 3.0], unit),
        )
        return judge(claim, [])

    fixed, more = verdict_of("adaptation runs"), verdict_of("chains")
    assert fixed.verdict == more.verdict == "inconclusive" and fixed.unit == "adaptation runs"
    assert dc.ask(fixed).factor is None and "design fixes its adaptation runs" in dc.ask(fixed).why
    assert dc.ask(more).factor == dc.FLOOR
