"""The potts experiment (003, Sec. 4.1) on a tiny grid: records, resume, errors, report section."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

import harness.experiments.potts as potts
from harness.engine import label_words
from harness.experiments import get_experiment
from harness.experiments.common import checkpoints
from harness.experiments.framework import RunSummary, run, section
from harness.experiments.potts.settings import (
    PottsConfig,
    SamplerSetting,
    config_for_level,
    config_from_manifest,
    paper_samplers,
)
from harness.report import write_report
from harness.store import RECORDS, load_records

# Fields that depend on the clock or the source tree, or that the store adds, not on the seed.
TIMING_FIELDS = {"sampler_s", "setup_s", "wall_s", "code", "task_lines"}


def tiny_config(level: str = "quick", seed: int = 0) -> PottsConfig:
    # 3 x 3 grid; the paper's six samplers at a few hundred steps (DoubleMIN-1e4 at 20).
    return PottsConfig(
        level=level,
        seed=seed,
        side=3,
        beta=4.6,
        D=3,
        scale=1.5,
        replicates=2,
        checkpoints=5,
        samplers=paper_samplers(300, 20),
        notes=("tiny test configuration",),
    )


@pytest.fixture
def tiny(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every level of the potts package the tiny configuration."""
    monkeypatch.setattr(potts, "config_for_level", tiny_config)


def _run(out: Path, seed: int = 0, **kw) -> RunSummary:
    return run(
        get_experiment("potts"),
        "quick",
        seed,
        out,
        progress=False,
        scheduler="inprocess",
        log=lambda msg: None,
        **kw,
    )


def _strip(record: dict) -> dict:
    return {k: v for k, v in record.items() if k not in TIMING_FIELDS}


@pytest.mark.usefixtures("tiny")
def test_tiny_run_writes_records_and_resumes_without_duplicates(tmp_path: Path) -> None:
    out = tmp_path / "potts"
    first = _run(out)
    assert (first.planned, first.ran, first.already_done) == (12, 12, 0)
    records = load_records(out / RECORDS)
    assert len(records) == 12
    for r in records:
        assert r["iterations"][-1] == r["n_steps"]
        assert len(r["error"]) == len(r["iterations"]) == len(r["sampler_s"])
        assert all(e >= 0 for e in r["error"])
        assert r["task_id"] == r["key"] and r["type"] == "chain"
    assert "gibbs" in first.text and "final error" in first.text

    again = _run(out)
    assert (again.ran, again.already_done) == (0, 12)
    assert len((out / RECORDS).read_text().splitlines()) == 12

    # A kill: keep 5 lines and a torn sixth; the resumed chains repeat the lost ones exactly.
    lines = (out / RECORDS).read_text().splitlines(keepends=True)
    (out / RECORDS).write_text("".join(lines[:5]) + lines[5][:40])
    resumed = _run(out)
    assert (resumed.ran, resumed.already_done) == (7, 5)
    after = load_records(out / RECORDS)
    keys = [r["key"] for r in after]
    assert len(keys) == len(set(keys)) == 12
    old = {r["key"]: _strip(r) for r in records}
    assert all(_strip(r) == old[r["key"]] for r in after)


@pytest.mark.usefixtures("tiny")
def test_other_settings_are_refused(tmp_path: Path) -> None:
    out = tmp_path / "potts"
    _run(out)
    with pytest.raises(ValueError, match="seed"):
        _run(out, seed=1)


@pytest.mark.parametrize(
    ("change", "name"),
    [
        ({"beta": -1.0}, "beta"),
        ({"beta": float("inf")}, "beta"),
        ({"side": 1}, "side"),
        ({"D": 1.5}, "D"),
        ({"replicates": 0}, "replicates"),
        ({"checkpoints": True}, "checkpoints"),
        ({"seed": -1}, "seed"),
        ({"level": "huge"}, "level"),
        ({"samplers": ()}, "samplers"),
        ({"samplers": (SamplerSetting("pg", "poisson-gibbs", 10),)}, "lam_l2"),
        ({"samplers": (SamplerSetting("g", "gibbs", 10, lam_l2=1.0),)}, "lam_l2"),
        ({"samplers": (SamplerSetting("d", "double-min-gibbs", 10, 1.0),)}, "lam2_l2"),
        ({"samplers": (SamplerSetting("x", "metropolis", 10),)}, "algorithm"),
        ({"samplers": (SamplerSetting("g", "gibbs", 0),)}, "n_steps"),
    ],
)
def test_bad_config_names_the_parameter(change: dict, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        dataclasses.replace(tiny_config(), **change)


def test_integer_valued_numbers_are_coerced_so_keys_do_not_change() -> None:
    config = dataclasses.replace(tiny_config(), side=3.0, beta=5)
    assert config.side == 3 and isinstance(config.side, int)
    assert config.beta == 5.0 and isinstance(config.beta, float)
    assert "|side=3|" in potts.plan(config, [], "all")[0].key


def test_bad_level_part_and_workers_fail_before_any_work(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="level"):
        config_for_level("medium")
    experiment = get_experiment("potts")
    with pytest.raises(ValueError, match="level"):
        run(experiment, "medium", 0, tmp_path / "a", progress=False)
    with pytest.raises(ValueError, match="part"):
        run(experiment, "quick", 0, tmp_path / "b", part="speed", progress=False)
    with pytest.raises(ValueError, match="workers"):
        run(experiment, "quick", 0, tmp_path / "c", workers=0, progress=False)
    assert not any(tmp_path.iterdir())


def test_levels_hold_the_paper_settings() -> None:
    for level in ("quick", "full"):
        config = config_for_level(level)
        assert (config.side, config.D, config.beta, config.scale) == (20, 10, 4.6, 1.5)
        lams = {s.label: (s.lam_l2, s.lam2_l2) for s in config.samplers}
        assert lams == {
            "gibbs": (None, None),
            "pg-0.1": (0.1, None),
            "pg-1": (1.0, None),
            "pg-5": (5.0, None),
            "dmin-1": (1.0, 1.0),
            "dmin-1e4": (1.0, 1e4),
        }
        # The manifest round-trips through JSON.
        back = config_from_manifest(json.loads(json.dumps(config.manifest())))
        assert back == config
    tasks = potts.plan(config_for_level("full"), [], "all")
    assert len(tasks) == len({t.key for t in tasks}) == 18
    assert checkpoints(1000, 4) == (10, 46, 215, 1000)


def test_task_keys_and_seeds_match_the_old_records() -> None:
    """Keys and streams are those of the pre-framework code, so old directories still resume."""
    task = potts.plan(config_for_level("quick", 7), [], "all")[1]
    assert task.key == (
        "chain|pg-0.1|poisson-gibbs|lam=0.1|lam2=None|steps=200000|side=20|D=10|beta=4.6|"
        "scale=1.5|cp=30|rep=0"
    )
    assert task.seed is not None and task.seed.entropy == 7
    # The old setting_rng(seed, key): SeedSequence(seed, spawn_key=SHA-256(key)'s two words).
    assert task.seed.spawn_key == label_words(task.key)


@pytest.mark.usefixtures("tiny")
def test_section_has_svg_figures_and_the_paper_numbers(tmp_path: Path) -> None:
    out = tmp_path / "potts"
    _run(out)
    sec = section(get_experiment("potts"), out)
    assert sec["kind"] == "experiment" and sec["name"] == "potts"
    assert sec["complete"] and sec["missing"] == 0 and sec["planned"] == 12
    assert sec["notes"] == ["tiny test configuration"]
    figures = [f for g in sec["figure_groups"] for f in g["figures"]]
    assert len(figures) == 2
    assert all(f["svg"].startswith("<svg") for f in figures)
    factors = sec["tables"][0]
    paper_col = factors["columns"].index("paper (003 Sec. 4.1)")
    paper = {row[0]["text"]: row[paper_col]["text"] for row in factors["rows"]}
    assert paper["gibbs"] == "399"
    assert (paper["pg-0.1"], paper["pg-1"], paper["pg-5"]) == ("7", "28", "132")
    assert sec["records_table"] is not None and len(sec["records_table"]["rows"]) == 12


@pytest.mark.usefixtures("tiny")
def test_section_of_a_partial_run_says_what_is_missing(tmp_path: Path) -> None:
    out = tmp_path / "potts"
    _run(out)
    lines = (out / RECORDS).read_text().splitlines(keepends=True)
    (out / RECORDS).write_text("".join(lines[:3]))
    sec = section(get_experiment("potts"), out)
    assert not sec["complete"] and sec["missing"] == 9
    assert len(sec["records_table"]["rows"]) == 3


@pytest.mark.usefixtures("tiny")
def test_write_report_renders_the_section(tmp_path: Path) -> None:
    out = tmp_path / "potts"
    _run(out)
    page = write_report([out], tmp_path / "report.html").read_text(encoding="utf-8")
    assert "Factors per iteration" in page and "<svg" in page
