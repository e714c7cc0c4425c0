"""The gate-quality measurement: false-failure rates from seeds, catches of planted bugs."""

from pathlib import Path

import numpy as np

from harness.experiments import get_experiment
from harness.experiments.framework import run, section
from harness.experiments.gate_quality.report import catch_rates, escape_reason, rates
from harness.experiments.gate_quality.run import false_failures, ffr_cases, planted_bugs
from harness.experiments.gate_quality.settings import GateQualityConfig

PAIR = str(Path(__file__).resolve().parent / "data" / "planted_pair.py")


def test_seeds_of_a_correct_sampler_give_rates_per_gate():
    records = false_failures("gumbel-max", 0, 12, 2000, 0.05, "numba", np.random.default_rng(1))
    rows = records[0]["rows"]
    cases = ffr_cases("gumbel-max")
    # Round-robin over verify's cases: seed s runs case s mod len(cases).
    assert [r["problem"] for r in rows if r["gate"] == "chi-square"] == [
        cases[s % len(cases)][0] for s in range(12)
    ]
    by_gate = {key[-1]: g for key, g in rates(records, 0.05, ("family", "gate"))}
    assert {"chi-square", "pair-independence", "ks-gumbel-max"} <= set(by_gate)
    assert by_gate["chi-square"].trials == 12 and by_gate["chi-square"].kind == "test"


def test_planted_bugs_are_read_from_their_docstrings():
    bugs = {b["name"]: b for b in planted_bugs((PAIR,))}
    assert bugs["planted-test-sharpened"]["family"] == "gumbel"
    assert (
        bugs["planted-test-sharpened"]["bug"] == "log-weights scaled by 1.1 (a temperature typo)."
    )
    assert bugs["planted-test-sharpened"]["expected"] == "chi-square"


def test_catch_runs_verify_and_names_each_escape(tmp_path):
    config = GateQualityConfig(
        level="quick",
        seed=0,
        seeds=10,
        n=1000,
        alpha=0.05,
        chunk=10,
        catch_levels=("quick",),
        planted=(PAIR,),
    )
    out = tmp_path / "gq"
    result = run(
        get_experiment("gate-quality"),
        "quick",
        0,
        out,
        part="catch",
        config=config,
        progress=False,
        scheduler="inprocess",
    )
    assert result.ran == 2
    records = [r for r in map(__import__("json").loads, (out / "records.jsonl").open())]
    caught = {r["name"]: r for r in records if r.get("type") == "catch"}
    assert caught["planted-test-sharpened"]["caught"]
    assert caught["planted-test-sharpened"]["failed_gates"] == ["chi-square"]
    assert not caught["planted-test-correct"]["caught"]
    assert catch_rates(records)["quick"]["all"] == (1, 2)
    reason = escape_reason(caught["planted-test-correct"])
    assert "chi-square on synthetic-normal-D10-N200" in reason and "detectable" in reason
    assert "escaped: planted-test-correct" in result.text
    html_parts = section(get_experiment("gate-quality"), out)
    titles = [t["title"] for t in html_parts["tables"]]
    assert "Planted bugs caught by harness verify" in titles and "Every planted bug" in titles
