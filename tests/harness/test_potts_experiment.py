"""The potts experiment (003, Sec. 4.1) on a tiny grid: records, resume, errors, report section."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from harness import experiments
from harness.experiments import Experiment, experiment_names, potts_report
from harness.experiments.potts import (
    PAPER,
    PottsConfig,
    SamplerSetting,
    checkpoints,
    config_for_level,
    format_speed,
    paper_samplers,
    plan,
    run,
)
from harness.experiments.store import RECORDS_FILE, load_records
from harness.report import write_report

# Fields that depend on the clock or the source tree, not on the seed.
TIMING_FIELDS = {"sampler_s", "setup_s", "wall_s", "code"}


def tiny_config(seed: int = 0) -> PottsConfig:
    # 3 x 3 grid; the paper's six samplers at a few hundred steps (DoubleMIN-1e4 at 20).
    return PottsConfig(
        level="quick",
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


def _silent(msg: str) -> None:
    del msg


def _strip(record: dict) -> dict:
    return {k: v for k, v in record.items() if k not in TIMING_FIELDS}


def test_tiny_run_writes_records_and_resumes_without_duplicates(tmp_path: Path) -> None:
    config = tiny_config()
    out = tmp_path / "potts"
    first = run(config, out, progress=False, log=_silent)
    assert (first.planned, first.ran, first.already_done) == (12, 12, 0)
    records = load_records(out / RECORDS_FILE)
    assert len(records) == 12
    for r in records:
        assert r["iterations"][-1] == r["n_steps"]
        assert len(r["error"]) == len(r["iterations"]) == len(r["sampler_s"])
        assert all(e >= 0 for e in r["error"])
    assert "gibbs" in format_speed(first.speed)

    again = run(config, out, progress=False, log=_silent)
    assert (again.ran, again.already_done) == (0, 12)
    assert len((out / RECORDS_FILE).read_text().splitlines()) == 12

    # A kill: keep 5 lines and a torn sixth; the resumed chains repeat the lost ones exactly.
    lines = (out / RECORDS_FILE).read_text().splitlines(keepends=True)
    (out / RECORDS_FILE).write_text("".join(lines[:5]) + lines[5][:40])
    resumed = run(config, out, progress=False, log=_silent)
    assert (resumed.ran, resumed.already_done) == (7, 5)
    after = load_records(out / RECORDS_FILE)
    keys = [r["key"] for r in after]
    assert len(keys) == len(set(keys)) == 12
    old = {r["key"]: _strip(r) for r in records}
    assert all(_strip(r) == old[r["key"]] for r in after)


def test_other_settings_are_refused(tmp_path: Path) -> None:
    out = tmp_path / "potts"
    run(tiny_config(), out, progress=False, log=_silent)
    with pytest.raises(ValueError, match="seed"):
        run(tiny_config(seed=1), out, progress=False, log=_silent)


@pytest.mark.parametrize(
    ("change", "name"),
    [
        ({"beta": -1.0}, "beta"),
        ({"side": 1}, "side"),
        ({"D": 1.5}, "D"),
        ({"replicates": 0}, "replicates"),
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


def test_bad_level_and_run_arguments(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="level"):
        config_for_level("medium")
    with pytest.raises(ValueError, match="workers"):
        run(tiny_config(), tmp_path / "w", workers=0, log=_silent)


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
        back = PottsConfig.from_manifest(json.loads(json.dumps(config.manifest())))
        assert back == config
    assert len(plan(config_for_level("full"))) == 18
    assert checkpoints(1000, 4) == (10, 46, 215, 1000)


def test_section_has_svg_figures_and_the_paper_numbers(tmp_path: Path) -> None:
    out = tmp_path / "potts"
    run(tiny_config(), out, progress=False, log=_silent)
    sec = potts_report.section(out)
    assert sec["kind"] == "experiment" and sec["name"] == "potts"
    assert sec["complete"] and sec["missing"] == 0 and sec["planned"] == 12
    figures = [f for g in sec["figure_groups"] for f in g["figures"]]
    assert len(figures) == 2
    assert all(f["svg"].startswith("<svg") for f in figures)
    factors = sec["tables"][0]
    paper_col = factors["columns"].index("paper (003 Sec. 4.1)")
    paper = {row[0]["text"]: row[paper_col]["text"] for row in factors["rows"]}
    assert paper["gibbs"] == "399"
    assert (paper["pg-0.1"], paper["pg-1"], paper["pg-5"]) == ("7", "28", "132")
    assert sec["records_table"] is not None and len(sec["records_table"]["rows"]) == 12


def test_section_of_a_partial_run_says_what_is_missing(tmp_path: Path) -> None:
    out = tmp_path / "potts"
    run(tiny_config(), out, progress=False, log=_silent)
    lines = (out / RECORDS_FILE).read_text().splitlines(keepends=True)
    (out / RECORDS_FILE).write_text("".join(lines[:3]))
    sec = potts_report.section(out)
    assert not sec["complete"] and sec["missing"] == 9


def test_write_report_renders_the_section(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if "potts" not in experiment_names():
        # Until the registry lists potts, add its entry for this test only.
        entry = Experiment(
            "potts", PAPER, "potts", "harness.experiments.potts", "harness.experiments.potts_report"
        )
        monkeypatch.setattr(experiments, "EXPERIMENTS", (*experiments.EXPERIMENTS, entry))
    out = tmp_path / "potts"
    run(tiny_config(), out, progress=False, log=_silent)
    page = write_report([out], tmp_path / "report.html").read_text(encoding="utf-8")
    assert "Factors per iteration" in page and "<svg" in page
