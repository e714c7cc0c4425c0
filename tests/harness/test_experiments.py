"""Paper experiments: resumable records, clear errors, an honest report, sound numbers.

Everything runs on a tiny configuration (D = 4, N = 400, a few hundred draws) that stands in for
the quick level, never on a real CLI level, so the file finishes in seconds.
"""

import dataclasses
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import harness.experiments.racing_synthetic as racing
from harness.engine import SeedKey
from harness.experiments import experiment_names, get_experiment
from harness.experiments.framework import RunSummary, run, section
from harness.experiments.racing_synthetic.run import run_error_setting
from harness.experiments.racing_synthetic.settings import (
    ErrorSetting,
    RacingSyntheticConfig,
    Skip,
    SpeedPlan,
    Variant,
    config_for_level,
    config_from_manifest,
    error_settings,
    skipped_settings,
)
from harness.report import write_report
from harness.runner import RunConfig, verify
from harness.store import EXPERIMENT_MANIFEST, RECORDS, load_records

EVIL = "<script>alert(1)</script>"
TIMING_FIELDS = {"wall_s", "code"}
SPEED_TIMING_FIELDS = {"racing_times", "exact_times", "racing_s_per_draw", "exact_s_per_draw"}
SPEED_TIMING_FIELDS |= {"speedup", "speedup_range", "ratio", "goal_met", "load_avg"} | TIMING_FIELDS


def tiny_config(seed: int = 0, notes: tuple[str, ...] = ("tiny test configuration",)):
    return RacingSyntheticConfig(
        level="quick",
        seed=seed,
        n=300,
        deltas=(0.01, 0.1),
        distributions=("normal", "lognormal"),
        variants=(Variant("main", 4, 400, (1e-3, 3e-2), title="tiny"),),
        skips=(Skip("lil-ucb", 3e-2, "too slow for a test"),),
        speed=SpeedPlan(4, 400, (1e-3,), draws=20, repeat=3),
        notes=notes,
    )


def quiet(msg: str) -> None:
    pass


def _run(out: Path, seed: int = 0, notes: tuple[str, ...] = (EVIL,), **kw) -> RunSummary:
    """``harness reproduce racing-synthetic`` with the tiny configuration as its level."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(racing, "config_for_level", lambda level, seed: tiny_config(seed, notes))
        experiment = get_experiment("racing-synthetic")
        return run(experiment, "quick", seed, out, progress=False, log=quiet, **kw)


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("exp") / "tiny"
    return out, _run(out)


def _copy(src, tmp_path):
    dst = tmp_path / "copy"
    shutil.copytree(src, dst)
    return dst


def _stable(record: dict) -> dict:
    drop = SPEED_TIMING_FIELDS if record["type"] == "speed" else TIMING_FIELDS
    return {k: v for k, v in record.items() if k not in drop}


def test_every_planned_setting_is_one_record(tiny_run):
    out, summary = tiny_run
    config = tiny_config()
    records = load_records(out / RECORDS)
    keys = [r["key"] for r in records]
    assert len(keys) == len(set(keys)) == len(error_settings(config)) + 1 == summary.planned
    assert [r["key"] for r in records] == [r["task_id"] for r in records]
    assert len(skipped_settings(config)) == 4  # lil-ucb at sigma 3e-2
    frame = section(get_experiment("racing-synthetic"), out)
    assert frame["complete"] and frame["planned"] == len(keys)
    assert frame["skipped"] == [
        "lil-ucb in variant main at sigma 0.03 (4 settings): too slow for a test"
    ]
    assert json.loads((out / EXPERIMENT_MANIFEST).read_text())["settings"]["n"] == 300
    error = next(r for r in records if r["type"] == "error")
    for field in (
        "experiment",
        "algorithm",
        "distribution",
        "sigma",
        "D",
        "N",
        "delta",
        "variance",
        "n",
        "errors",
        "error_rate",
        "ci_low",
        "ci_high",
        "reward_proportion",
        "stopped_early",
        "wall_s",
        "seed",
        "spawn_key",
        "code",
    ):
        assert field in error


def test_the_manifest_gives_back_the_config():
    for level in ("quick", "full"):
        config = config_for_level(level, 7)
        settings = json.loads(json.dumps(config.manifest()))
        assert config_from_manifest(settings) == config


def test_the_summary_names_the_levels_skipped_settings():
    config = config_for_level("quick", 0)
    tasks = racing.plan(config, [], "errors")
    text = racing.summary([{"key": t.key, "seed": 0, "type": "error"} for t in tasks])
    assert (
        "skipped by the level's rule: lil-ucb in variant main at sigma 0.01 (15 settings)" in text
    )
    # A hand-made configuration is no level: its skips are in the report only.
    assert "skipped" not in racing.summary([{"key": "error|x", "seed": 0, "type": "error"}])


def test_the_benchmark_runs_alone_after_the_errors_one_task_at_a_time():
    speed = SpeedPlan(4, 400, (1e-3, 1e-2, 3e-2), draws=20, repeat=3)
    config = dataclasses.replace(tiny_config(), speed=speed)
    errors = {t.key for t in racing.plan(config, [], "errors")}

    def speed_keys(records: list[dict], part: str = "all") -> list[str]:
        tasks = racing.plan(config, records, part)
        return [t.key for t in tasks if t.key.startswith("speed|")]

    some = [{"key": k} for k in sorted(errors)[1:]]
    everything = [{"key": k} for k in errors]
    assert speed_keys([]) == speed_keys(some) == []  # errors still to run: not beside them
    assert len(speed_keys([], "speed")) == 1  # --part speed: nothing else is planned
    first = speed_keys(everything)
    assert len(first) == 1
    second = speed_keys([*everything, {"key": first[0]}])
    assert len(second) == 2 and second[0] == first[0]
    # A recorded benchmark task stays planned (and in the report) while errors are missing.
    assert speed_keys([{"key": second[1]}]) == [second[1]]


def test_an_interrupted_run_resumes_without_duplicates_or_changes(tiny_run, tmp_path):
    out = _copy(tiny_run[0], tmp_path)
    path = out / RECORDS
    before = {r["key"]: _stable(r) for r in load_records(path)}
    lines = path.read_text().splitlines(keepends=True)
    # A kill mid-write: the last line gone, the one before cut in half (no newline).
    path.write_text("".join(lines[:-2]) + lines[-2][: len(lines[-2]) // 2])
    summary = _run(out)
    assert summary.ran == 2 and summary.already_done == len(lines) - 2
    raw_keys = [json.loads(line)["key"] for line in path.read_text().splitlines()]
    assert len(raw_keys) == len(set(raw_keys)) == len(before)
    after = {r["key"]: _stable(r) for r in load_records(path)}
    assert after == before  # each setting has its own seed: same numbers whatever the order
    again = _run(out)
    assert again.ran == 0


def test_a_directory_with_other_settings_is_refused(tiny_run, tmp_path):
    out = _copy(tiny_run[0], tmp_path)
    size = (out / RECORDS).stat().st_size
    with pytest.raises(ValueError, match=r"other settings.*'seed'"):
        _run(out, seed=1)
    assert (out / RECORDS).stat().st_size == size
    stranger = tmp_path / "stranger"
    stranger.mkdir()
    (stranger / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match="non-empty directory"):
        _run(stranger)


def test_unknown_experiment_names_itself_and_the_valid_ones():
    with pytest.raises(ValueError) as info:
        get_experiment("fig-99")
    assert "'fig-99'" in str(info.value) and "racing-synthetic" in str(info.value)
    assert "racing-synthetic" in experiment_names()


@pytest.mark.parametrize(
    ("level", "seed", "part", "workers", "match"),
    [
        ("medium", 0, "all", 1, "--level 'medium'.*quick, full"),
        ("quick", -1, "all", 1, "seed' = -1"),
        ("quick", 0, "most", 1, "--part 'most'.*all, errors, speed"),
        ("quick", 0, "all", 0, "--workers = 0"),
    ],
)
def test_bad_arguments_raise_before_any_work(tmp_path, level, seed, part, workers, match):
    experiment = get_experiment("racing-synthetic")
    with pytest.raises(ValueError, match=match):
        run(experiment, level, seed, tmp_path / "x", part=part, workers=workers, log=quiet)
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"n": 0}, "parameter 'n' = 0 is invalid; valid: an integer in"),
        ({"deltas": (0.01, 1.5)}, "parameter 'delta' = 1.5"),
        ({"deltas": ()}, "parameter 'delta' = ()"),
        ({"distributions": ("cauchy",)}, "parameter 'distribution' = 'cauchy'"),
        ({"level": "huge"}, "parameter 'level' = 'huge'"),
        ({"variants": ()}, "parameter 'variants'"),
    ],
)
def test_bad_settings_name_the_parameter(change, match):
    with pytest.raises(ValueError, match=match):
        dataclasses.replace(tiny_config(), **change)


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: Variant("v", 1, 400, (1e-3,)), "parameter 'D' = 1"),
        (lambda: Variant("v", 4, 400, (0.0,)), "parameter 'sigma' = 0.0"),
        (lambda: Variant("v", 4, 400, (1e-3,), variance="joint"), "parameter 'variance'"),
        (lambda: Variant("v", 4, 400, (1e-3,), algorithms=("ucb",)), "parameter 'algorithm'"),
        (lambda: Skip("gibbs", 1e-2, "why"), "parameter 'algorithm' = 'gibbs'"),
        (lambda: SpeedPlan(4, 400, (1e-3,), repeat=0), "parameter 'repeat' = 0"),
        (lambda: SpeedPlan(4, 400, (1e-3,), draws=2.5), "parameter 'draws' = 2.5"),
    ],
)
def test_bad_parts_of_the_settings_name_the_parameter(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def harness(*args):
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", *args], capture_output=True, text=True
    )


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("fig-99",), "unknown experiment 'fig-99'; valid: "),
        (("racing-synthetic", "--level", "huge"), "--level 'huge'"),
    ],
)
def test_cli_bad_input_exits_2_with_one_line(tmp_path, args, needle):
    out = harness("reproduce", *args, "--out", str(tmp_path / "o"), "--no-progress")
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and needle in out.stderr
    if "unknown" in needle:
        assert "racing-synthetic" in out.stderr
    assert "Traceback" not in out.stderr and not (tmp_path / "o").exists()


def test_report_is_inline_svg_without_urls_and_escaped(tiny_run, tmp_path):
    out = tiny_run[0]
    html = write_report([out], tmp_path / "r.html").read_text()
    assert html.count("<svg") == 2  # one figure per sigma
    assert "<img" not in html and "<script" not in html and "http" not in html
    assert EVIL not in html and "&lt;script&gt;" in html
    assert "too slow for a test" in html  # the skipped cells are named
    assert "The paper&#39;s claims next to ours" in html and "B_Normal table" in html
    assert "notes-racing-appendix.md" in html and "incomplete" not in html


def test_report_flags_an_incomplete_experiment_beside_a_verification_run(tiny_run, tmp_path):
    out = _copy(tiny_run[0], tmp_path)
    lines = (out / RECORDS).read_text().splitlines(keepends=True)
    assert json.loads(lines[-1])["type"] == "speed"  # the benchmark runs last
    # Three error cells lost; the benchmark's record stays and still counts as planned.
    (out / RECORDS).write_text("".join(lines[:-4] + lines[-1:]))
    verified = tmp_path / "run"
    verify(RunConfig(("truncated-gumbel",), ("numba",)), verified, workers=1, progress=False)
    html = write_report([verified, out], tmp_path / "both.html").read_text()
    assert "truncated-gumbel" in html and "racing-synthetic" in html
    assert f"This experiment is incomplete: 3 of {len(lines)}" in html
    assert "Benchmark: evaluation saving" in html


def test_cli_report_renders_an_experiment_directory(tiny_run, tmp_path):
    result = harness("report", str(tiny_run[0]), "--output", str(tmp_path / "r.html"))
    assert result.returncode == 0, result.stderr
    assert "racing-synthetic" in (tmp_path / "r.html").read_text()


def test_racing_normal_error_rate_lies_within_its_interval_and_delta():
    # Large noise (sigma * N = 12): races often go deep and the error nears delta.
    setting = ErrorSetting("main", "racing-normal", "normal", 3e-2, 4, 400, 0.1, "pairwise", 2000)
    rng = SeedKey.from_label(3, setting.key).generator()
    [r] = run_error_setting(setting, 3, rng=rng)
    assert r["errors"] > 0  # not vacuous: the sampler does err here
    assert r["ci_low"] <= r["error_rate"] <= r["ci_high"]
    assert r["ci_low"] <= setting.delta  # consistent with its promise P(error) <= delta
    assert 0.0 < r["reward_proportion"] <= 1.0


def test_speed_records_hold_saving_speedup_and_their_ratio(tiny_run):
    speed = [r for r in load_records(tiny_run[0] / RECORDS) if r["type"] == "speed"]
    assert len(speed) == 1 and "goal (speedup >= 0.7 x saving)" in tiny_run[1].text
    r = speed[0]
    assert r["saving"] == pytest.approx(r["N"] * r["D"] / r["mean_evals_per_draw"])
    assert r["speedup"] == pytest.approx(r["exact_s_per_draw"] / r["racing_s_per_draw"])
    assert r["ratio"] == pytest.approx(r["speedup"] / r["saving"])
    assert r["goal_met"] == (r["ratio"] >= r["goal"]) and r["goal"] == 0.7
    assert len(r["racing_times"]) == len(r["exact_times"]) == 3


def test_worker_processes_give_the_same_records(tiny_run, tmp_path):
    out = tmp_path / "pool"
    _run(out, part="errors", workers=2)
    pooled = {r["key"]: _stable(r) for r in load_records(out / RECORDS)}
    serial = {
        r["key"]: _stable(r) for r in load_records(tiny_run[0] / RECORDS) if r["type"] == "error"
    }
    assert pooled == serial
