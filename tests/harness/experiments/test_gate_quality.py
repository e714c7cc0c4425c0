"""gate-quality: false-failure rates from seeds of a correct sampler, catches of planted bugs,
on a tiny configuration (one algorithm, ten seeds, the two planted bugs of planted_pair.py)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import harness.experiments.gate_quality as gq
from harness.checks.cases import plan_cases
from harness.declare import from_manifest
from harness.experiments import get_experiment
from harness.experiments.framework import section
from harness.experiments.gate_quality import (
    GateQuality,
    GateQualityConfig,
    escape_reason,
    false_failures,
    planted_bugs,
    rates,
)
from harness.registry import build_registry
from harness.store import RECORDS, load_records
from harness.tasks import label_words
from tests.harness.experiments.tiny import assert_decided, run_tiny, stable

GATES = GateQuality()
PAIR = str(Path(__file__).resolve().parents[1] / "data" / "planted_pair.py")


def tiny_config(**change: Any) -> GateQualityConfig:
    config = GateQualityConfig(
        level="quick",
        seed=0,
        seeds=10,
        n=1000,
        chunk=5,
        catch_levels=("quick",),
        planted=(PAIR,),
        notes=("tiny test configuration",),
    )
    return dataclasses.replace(config, **change)


@pytest.fixture(scope="module", autouse=True)
def one_algorithm() -> Any:
    """The false failures of gumbel-max only, not of the whole registry."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(gq, "correct_algorithms", lambda: [("gumbel", "gumbel-max")])
        yield


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("gates") / "run"
    summary = run_tiny(GATES, tiny_config(), out)
    assert (summary.planned, summary.ran) == (4, 4)
    assert "escaped" in summary.text and "claims:" in summary.text
    assert run_tiny(GATES, tiny_config(), out).ran == 0
    return out


def test_seeds_of_a_correct_sampler_give_rates_per_gate() -> None:
    records = false_failures("gumbel-max", 0, 12, 2000, 0.05, "numba", np.random.default_rng(1))
    rows = records[0]["rows"]
    cases = plan_cases([build_registry().get("gumbel-max")], "quick")
    # Round-robin over verify's cases: seed s runs case s mod len(cases).
    assert [r["problem"] for r in rows if r["gate"] == "chi-square"] == [
        cases[s % len(cases)].problem for s in range(12)
    ]
    by_gate = {key[-1]: g for key, g in rates(records, 0.05, ("family", "gate"))}
    assert {"chi-square", "pair-independence", "ks-gumbel-max"} <= set(by_gate)
    assert by_gate["chi-square"].trials == 12 and by_gate["chi-square"].kind == "test"


def test_planted_bugs_are_read_from_their_docstrings() -> None:
    bugs = {b["name"]: b for b in planted_bugs((PAIR,))}
    assert bugs["planted-test-sharpened"]["family"] == "gumbel"
    assert bugs["planted-test-sharpened"]["bug"] == (
        "log-weights scaled by 1.1 (a temperature typo)."
    )
    assert bugs["planted-test-sharpened"]["expected"] == "chi-square"


def test_catch_runs_verify_and_names_each_escape(tiny_run: Path) -> None:
    records = load_records(tiny_run / RECORDS)
    caught = {r["name"]: r for r in records if r["type"] == "catch"}
    assert caught["planted-test-sharpened"]["caught"]
    assert caught["planted-test-sharpened"]["failed_gates"] == ["chi-square"]
    assert not caught["planted-test-correct"]["caught"]
    reason = escape_reason(caught["planted-test-correct"])
    assert "chi-square on synthetic-normal-D10-N200" in reason and "detectable" in reason
    [ffr] = [r for r in records if r.get("task_id") == "ffr|gumbel-max|5"]
    assert (ffr["first"], ffr["count"], ffr["n"]) == (5, 5, 1000)
    assert [r["seed"] for r in ffr["rows"] if r["gate"] == "chi-square"] == [5, 6, 7, 8, 9]


def test_section_opens_with_claims_and_lists_every_bug(tiny_run: Path) -> None:
    sec = section(get_experiment("gate-quality"), tiny_run)
    assert sec["complete"] and sec["planned"] == 4
    by_id = {c["id"]: c for c in sec["claims"]}
    assert set(by_id) == {"ffr-tests", "ffr-conservative", "ffr-every-gate", "catch-quick"}
    assert by_id["catch-quick"]["value"] == 0.5  # the correct sampler under a bug's name escapes
    # Ten seeds give no interval worth the name (a bootstrap needs five, Bonferroni is wide).
    assert by_id["ffr-every-gate"]["verdict"] == "inconclusive"
    titles = [t["title"] for t in sec["tables"]]
    assert titles == ["False failures by family and gate", "False failures by algorithm and gate"]
    rows = sec["records_table"]["rows"]
    assert len(rows) == 2 and any("escaped" in c["text"] for r in rows for c in r)


def test_a_kill_resumes_with_the_same_records(tiny_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "copy"
    out.mkdir()
    for name in ("experiment.json", RECORDS):
        (out / name).write_bytes((tiny_run / name).read_bytes())
    before = {r["task_id"]: stable(r) for r in load_records(out / RECORDS)}
    lines = (out / RECORDS).read_text().splitlines(keepends=True)
    (out / RECORDS).write_text("".join(lines[:1]))
    assert run_tiny(GATES, tiny_config(), out).ran == 3
    assert {r["task_id"]: stable(r) for r in load_records(out / RECORDS)} == before


def test_task_keys_and_seeds_match_the_old_records() -> None:
    config = GATES.config("quick", 3)
    tasks = {t.key: t for t in GATES.plan(config, [], "all")}
    first = tasks["ffr|gumbel-max|0"]
    assert first.inputs == ("gumbel-max", 0, 5, 5_000, 0.05, "numba")
    assert first.seed is not None and first.seed.entropy == 3
    assert first.seed.spawn_key == label_words("ffr|gumbel-max|0")
    assert "ffr|gumbel-max|5" not in tasks
    catch = tasks["catch|quick|planted-gumbel-max-clipped-uniform"]
    assert catch.inputs[1:] == ("quick", 3) and catch.inputs[0]["file"].startswith("tests/")
    full = GATES.config("full")
    assert (full.seeds, full.chunk, full.n) == (500, 25, 20_000)
    assert full.catch_levels == ("quick", "full")


def test_the_manifest_gives_back_the_config() -> None:
    for level in ("quick", "full"):
        config = GATES.config(level, 7)
        back = from_manifest(GateQualityConfig, json.loads(json.dumps(config.manifest())))
        assert back == config and config.planted  # the planted files, found from the root


@pytest.mark.parametrize(
    ("change", "name"),
    [
        ({"seeds": 4}, "seeds"),
        ({"n": 10}, "n"),
        ({"alpha": 1.0}, "alpha"),
        ({"alpha": 0.0}, "alpha"),
        ({"chunk": 0}, "chunk"),
        ({"catch_levels": ("huge",)}, "catch_levels"),
        ({"catch_levels": ()}, "catch_levels"),
        ({"seed": -1}, "seed"),
        ({"level": "medium"}, "level"),
    ],
)
def test_bad_config_names_the_parameter(change: dict, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        tiny_config(**change)


def _made_up(good: bool) -> list[dict[str, Any]]:
    """Two algorithms x 1000 seeds of a test gate (chi-square), a Holm combination (sbc) and a
    bound gate (error-rate), and 40 planted bugs. good: the test gate rejects 1 seed in 20,
    the others never fail, every bug is caught; bad: each gate fails 1 seed in 5 and half the
    bugs escape."""
    records: list[dict[str, Any]] = []
    for algorithm in ("a1", "a2"):
        rows = []
        for s in range(1000):
            p = (s % 20 + 0.5) / 20 if good else (0.01 if s % 5 == 0 else 0.5)
            fail = not good and s % 5 == 0
            rows += [
                {"gate": "chi-square", "p_value": p, "passed": p >= 0.05, "multiple_testing": True},
                {
                    "gate": "sbc",
                    "p_value": p if not good else 0.5,
                    "passed": True,
                    "multiple_testing": True,
                },
                {
                    "gate": "error-rate",
                    "p_value": None,
                    "passed": not fail,
                    "multiple_testing": False,
                },
            ]
            rows[-3:] = [{**r, "seed": s} for r in rows[-3:]]
        records.append({"type": "ffr", "family": "f", "algorithm": algorithm, "rows": rows})
    for b in range(40):
        records.append({"type": "catch", "level": "quick", "caught": good or b % 2 == 0})
    return records


@pytest.mark.parametrize("good", [True, False])
def test_claims_decide_both_ways(good: bool) -> None:
    expected = "reproduced" if good else "not reproduced"
    records = _made_up(good)
    claims = GATES.claims(GATES.config("quick"))
    assert len(claims) == 4
    assert_decided(claims, records, expected)
