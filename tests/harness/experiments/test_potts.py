"""The potts experiment (003, Sec. 4.1) on a tiny grid: records, resume, errors, report section."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from harness.declare import from_manifest
from harness.experiments import get_experiment
from harness.experiments.claims import judge
from harness.experiments.common import checkpoints
from harness.experiments.framework import run, section
from harness.experiments.potts import Potts
from harness.experiments.potts.settings import PottsConfig, SamplerSetting, paper_samplers
from harness.report.page import write_report
from harness.store import RECORDS, load_records
from harness.tasks import label_words
from tests.harness.experiments.tiny import assert_decided, run_tiny, stable

POTTS = Potts()


def tiny_config(seed: int = 0) -> PottsConfig:
    # 3 x 3 grid; the paper's six samplers at a few hundred steps (DoubleMIN-1e4 at 20).
    return PottsConfig(
        level="quick",
        seed=seed,
        side=3,
        D=3,
        replicates=2,
        checkpoints=5,
        samplers=paper_samplers(300, 20),
        notes=("tiny test configuration",),
    )


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("potts") / "run"
    run_tiny(POTTS, tiny_config(), out)
    return out


def test_tiny_run_writes_records_and_resumes_without_duplicates(tmp_path: Path) -> None:
    out = tmp_path / "potts"
    first = run_tiny(POTTS, tiny_config(), out)
    assert (first.planned, first.ran, first.already_done) == (12, 12, 0)
    records = load_records(out / RECORDS)
    assert len(records) == 12
    for r in records:
        assert r["iterations"][-1] == r["n_steps"]
        assert len(r["error"]) == len(r["iterations"]) == len(r["sampler_s"])
        assert all(e >= 0 for e in r["error"])
        assert r["task_id"] == r["key"] and r["type"] == "chain"
    assert "gibbs" in first.text and "final error" in first.text and "claims:" in first.text
    assert json.loads((out / "claims.json").read_text())[0]["id"] == "factors"

    again = run_tiny(POTTS, tiny_config(), out)
    assert (again.ran, again.already_done) == (0, 12)

    # A kill: keep 5 lines and a torn sixth; the resumed chains repeat the lost ones exactly.
    lines = (out / RECORDS).read_text().splitlines(keepends=True)
    (out / RECORDS).write_text("".join(lines[:5]) + lines[5][:40])
    resumed = run_tiny(POTTS, tiny_config(), out)
    assert (resumed.ran, resumed.already_done) == (7, 5)
    after = load_records(out / RECORDS)
    assert len({r["key"] for r in after}) == len(after) == 12
    old = {r["key"]: stable(r) for r in records}
    assert all(stable(r) == old[r["key"]] for r in after)


def test_other_settings_are_refused(tiny_run: Path) -> None:
    with pytest.raises(ValueError, match="seed"):
        run_tiny(POTTS, tiny_config(seed=1), tiny_run)


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
    ],
)
def test_bad_config_names_the_parameter(change: dict, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        dataclasses.replace(tiny_config(), **change)


@pytest.mark.parametrize(
    ("args", "kw", "name"),
    [
        (("pg", "poisson-gibbs", 10), {}, "lam_l2"),
        (("g", "gibbs", 10), {"lam_l2": 1.0}, "lam_l2"),
        (("d", "double-min-gibbs", 10, 1.0), {}, "lam2_l2"),
        (("x", "metropolis", 10), {}, "algorithm"),
        (("g", "gibbs", 0), {}, "n_steps"),
    ],
)
def test_a_bad_sampler_line_names_the_parameter(args: tuple, kw: dict, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        SamplerSetting(*args, **kw)


def test_integer_valued_numbers_are_coerced_so_keys_do_not_change() -> None:
    config = dataclasses.replace(tiny_config(), side=3.0, beta=5)
    assert config.side == 3 and isinstance(config.side, int)
    assert config.beta == 5.0 and isinstance(config.beta, float)
    assert "|side=3|" in POTTS.plan(config, [], "all")[0].key


def test_bad_level_part_and_workers_fail_before_any_work(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="level"):
        POTTS.config("medium")
    with pytest.raises(ValueError, match="level"):
        run(POTTS, "medium", 0, tmp_path / "a", progress=False)
    with pytest.raises(ValueError, match="part"):
        run(POTTS, "quick", 0, tmp_path / "b", part="speed", progress=False)
    with pytest.raises(ValueError, match="workers"):
        run(POTTS, "quick", 0, tmp_path / "c", workers=0, progress=False)
    assert not any(tmp_path.iterdir())


def test_levels_hold_the_paper_settings() -> None:
    for level in ("quick", "full"):
        config = POTTS.config(level)
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
        back = from_manifest(PottsConfig, json.loads(json.dumps(config.manifest())))
        assert back == config
    assert len({t.key for t in POTTS.plan(POTTS.config("full"), [], "all")}) == 18
    assert checkpoints(1000, 4) == (10, 46, 215, 1000)


def test_task_keys_and_seeds_match_the_old_records() -> None:
    """Keys and streams are those of the pre-framework code, so old directories still resume."""
    task = POTTS.plan(POTTS.config("quick", 7), [], "all")[1]
    assert task.key == (
        "chain|pg-0.1|poisson-gibbs|lam=0.1|lam2=None|steps=200000|side=20|D=10|beta=4.6|"
        "scale=1.5|cp=30|rep=0"
    )
    assert task.seed is not None and task.seed.entropy == 7
    assert task.seed.spawn_key == label_words(task.key)


def test_section_opens_with_claims_and_has_svg_figures(tiny_run: Path) -> None:
    sec = section(get_experiment("potts"), tiny_run)
    assert sec["kind"] == "experiment" and sec["name"] == "potts"
    assert sec["complete"] and sec["missing"] == 0 and sec["planned"] == 12
    assert sec["notes"] == ["tiny test configuration"]
    figures = [f for g in sec["figure_groups"] for f in g["figures"]]
    assert len(figures) == 2 and all(f["svg"].startswith("<svg") for f in figures)
    ids = [c["id"] for c in sec["claims"]]
    assert {"factors", "factors-draws", "factors-pg-1", "L"} <= set(ids)
    assert len(ids) == len(set(ids))
    # Two runs per sampler: every ratio claim has an interval, so none is left undecided
    # for want of runs.
    by_id = {c["id"]: c for c in sec["claims"]}
    assert by_id["pg-faster-than-gibbs"]["n"] == 2
    assert by_id["L"]["verdict"] == "not reproduced"  # a 3 x 3 grid's L is not 5.09
    assert len(sec["records_table"]["rows"]) == 12


def test_section_of_a_partial_run_says_what_is_missing(tiny_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "copy"
    out.mkdir()
    for name in ("experiment.json", RECORDS):
        (out / name).write_bytes((tiny_run / name).read_bytes())
    lines = (out / RECORDS).read_text().splitlines(keepends=True)
    (out / RECORDS).write_text("".join(lines[:3]))
    sec = section(get_experiment("potts"), out)
    assert not sec["complete"] and sec["missing"] == 9
    assert len(sec["records_table"]["rows"]) == 3


def test_write_report_renders_the_claims_first(tiny_run: Path, tmp_path: Path) -> None:
    page = write_report([tiny_run], tmp_path / "report.html").read_text(encoding="utf-8")
    assert "Marginal error" in page and "<svg" in page
    assert 'id="claims-count"' in page and "Paper claims:" in page
    assert page.index("Paper claims</h3>") < page.index("Marginal error")


def _made_up(good: bool) -> list[dict]:
    """Three runs per sampler of only the fields the claims read: the paper's story (good) or
    its reverse on every count."""
    error = {"gibbs": 0.1, "pg-0.1": 0.3, "pg-1": 0.12, "pg-5": 0.1, "dmin-1": 0.5, "dmin-1e4": 0.2}
    us = {"gibbs": 2.0, "pg-0.1": 0.2, "pg-1": 0.5, "pg-5": 1.0, "dmin-1": 3.0, "dmin-1e4": 90.0}
    if not good:
        error |= {"pg-1": 0.6, "dmin-1": 0.05, "pg-0.1": 0.05}
        us |= {"gibbs": 0.1, "dmin-1e4": 0.1}
    paper = {"pg-0.1": 7.0, "pg-1": 28.0, "pg-5": 132.0}
    out = []
    for label in error:
        for k in range(3):
            jitter = 1 + 1e-4 * k
            count = paper.get(label, 399.0) * (1.0 if good else 3.0) * jitter
            out.append(
                {
                    "type": "chain",
                    "label": label,
                    "n_steps": 100_000,
                    "L": 5.09 if good else 3.0,
                    "draws_per_iter": count,
                    "kept_per_iter": count,
                    "factors_per_iter": count,
                    "iterations": [1, 100_000],
                    "error": [1.0, error[label] * jitter],
                    "sampler_s": [0.0, us[label] * 0.1 * jitter],
                }
            )
    return out


def test_claims_decide_both_ways() -> None:
    claims = POTTS.claims(POTTS.config("quick"))
    readings = tuple(r for c in claims for r in c.readings)
    assert_decided(claims + readings, _made_up(True), "reproduced")
    assert_decided(claims + readings, _made_up(False), "not reproduced")


def test_the_factor_count_is_one_claim_with_its_other_readings_under_it() -> None:
    claims = POTTS.claims(POTTS.config("quick"))
    counts = [c for c in claims if c.id.startswith("factors")]
    assert [c.id for c in counts] == ["factors"]  # one sentence, one counted claim
    assert [r.id for r in counts[0].readings] == [
        "factors-draws",
        "factors-kept",
        "factors-pg-0.1",
        "factors-pg-1",
        "factors-pg-5",
    ]
    # the farthest setting decides: one count off by 3x fails the claim alone
    records = _made_up(True)
    for r in records:
        if r["label"] == "pg-5":
            r["factors_per_iter"] *= 3.0
    v = judge(counts[0], records)
    assert v.verdict == "not reproduced" and "pg-5" in v.how
