"""The template experiment of docs/extending.md runs through the framework as documented."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from harness.declare import from_manifest
from harness.experiments.claims import judge
from harness.experiments.framework import section
from harness.store import RECORDS, load_records
from tests.harness.experiments.tiny import run_tiny

ROOT = Path(__file__).resolve().parents[2]


def _template():
    path = ROOT / "docs" / "examples" / "template_experiment.py"
    spec = importlib.util.spec_from_file_location("template_experiment", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["template_experiment"] = module  # the process pool pickles its task function
    spec.loader.exec_module(module)
    return module


T = _template()
EXPERIMENT = T.TemplateGumbelMax()


def test_the_template_runs_resumes_and_judges_its_claim(tmp_path: Path) -> None:
    config = T.GumbelMaxConfig.for_level("quick", seed=3)
    out = tmp_path / "run"
    first = run_tiny(EXPERIMENT, config, out)
    assert (first.planned, first.ran) == (3, 3)
    assert "top-frequency" in first.text and "claims:" in first.text
    verdicts = json.loads((out / "claims.json").read_text())
    assert [v["id"] for v in verdicts] == ["top-frequency"]
    assert verdicts[0]["verdict"] in ("reproduced", "inconclusive")  # exact: never "not"
    assert run_tiny(EXPERIMENT, config, out).ran == 0
    manifest = json.loads((out / "experiment.json").read_text())["settings"]
    assert from_manifest(T.GumbelMaxConfig, manifest) == config
    sec = section(EXPERIMENT, out)
    assert sec["complete"] and sec["claims"][0]["id"] == "top-frequency"
    assert ("draws per replicate", "2000") in sec["settings"]
    assert len(sec["records_table"]["rows"]) == 3
    assert all(r["task_id"].startswith("rep|D=5|n=2000|") for r in load_records(out / RECORDS))


def test_the_template_config_refuses_bad_values() -> None:
    with pytest.raises(ValueError, match="'draws' = 0 is invalid; valid: an integer in"):
        T.GumbelMaxConfig.for_level("quick", draws=0)
    with pytest.raises(ValueError, match="level"):
        T.GumbelMaxConfig.for_level("medium")


def test_the_template_claim_decides_both_ways() -> None:
    (claim,) = EXPERIMENT.claims(T.GumbelMaxConfig.for_level("quick"))

    def records(hits: int) -> list[dict]:
        return [{"type": "replicate", "hits": hits, "draws": 100_000, "p_top": 0.5}]

    assert judge(claim, records(50_000)).verdict == "reproduced"
    assert judge(claim, records(40_000)).verdict == "not reproduced"
    assert judge(claim, records(50_900)).verdict == "inconclusive"
    assert judge(claim, []).verdict == "inconclusive"
