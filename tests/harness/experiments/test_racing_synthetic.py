"""racing-synthetic (000, Sec. 5.1, Fig. 1) on a tiny configuration (D = 4, N = 400, a few
hundred draws): records, resume, errors named before any work, the report, the claims."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from harness.declare import from_manifest
from harness.experiments import experiment_names, get_experiment
from harness.experiments.claims import judge
from harness.experiments.framework import run, section
from harness.experiments.racing_synthetic import RacingSynthetic
from harness.experiments.racing_synthetic.run import (
    PREMISE_PROBLEMS,
    CorefPlan,
    ErrorSetting,
    PremisePlan,
    RacingSyntheticConfig,
    SpeedPlan,
    Variant,
    error_settings,
    run_coref,
    run_error_setting,
    run_premise,
)
from harness.report.page import write_report
from harness.store import EXPERIMENT_MANIFEST, RECORDS, load_records
from harness.tasks import SeedKey, label_words
from harness.verify.config import RunConfig
from harness.verify.runner import verify
from tests.conftest import harness_here as harness
from tests.harness.experiments.tiny import CLOCK_FIELDS, assert_decided, run_tiny, stable

RACING = RacingSynthetic()
EVIL = "<script>alert(1)</script>"
SPEED_CLOCK = CLOCK_FIELDS | {"racing_times", "exact_times", "racing_s_per_draw", "speedup"}
SPEED_CLOCK |= {"exact_s_per_draw", "speedup_range", "ratio", "goal_met", "load_avg"}
SKIPPED = (
    "lil-ucb at sigma >= 0.03 in variant main (4 settings): it pulls one reward per step, "
    "hours per cell at this noise"
)


def tiny_config(seed: int = 0, **change: Any) -> RacingSyntheticConfig:
    config = RacingSyntheticConfig(
        level="quick",
        seed=seed,
        n=300,
        deltas=(0.01, 0.1),
        distributions=("normal", "lognormal"),
        variants=(Variant("main", 4, 400, (1e-3, 3e-2), lil_ucb_below=3e-2),),
        speed=SpeedPlan(4, 400, (1e-3,), draws=20, repeat=3),
        notes=(EVIL,),
    )
    return dataclasses.replace(config, **change)


def _stable(r: dict[str, Any]) -> dict[str, Any]:
    return stable(r, SPEED_CLOCK if r["type"] == "speed" else CLOCK_FIELDS)


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("racing") / "run"
    run_tiny(RACING, tiny_config(), out)
    return out


def _copy(src: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(src, tmp_path / "copy"))


def test_every_planned_setting_is_one_record(tiny_run: Path) -> None:
    records = load_records(tiny_run / RECORDS)
    keys = [r["key"] for r in records]
    assert len(keys) == len(set(keys)) == len(error_settings(tiny_config())) + 1 == 21
    assert keys == [r["task_id"] for r in records]
    assert RACING.skipped(tiny_config()) == [SKIPPED]
    assert json.loads((tiny_run / EXPERIMENT_MANIFEST).read_text())["settings"]["n"] == 300
    error = next(r for r in records if r["type"] == "error")
    fields = {"experiment", "variant", "algorithm", "distribution", "sigma", "D", "N", "delta"}
    fields |= {"variance", "n", "errors", "error_rate", "ci_low", "ci_high", "reward_proportion"}
    assert fields | {"stopped_early", "wall_s", "seed", "spawn_key", "code"} <= set(error)


def test_the_manifest_gives_back_the_config() -> None:
    for level in ("quick", "full"):
        config = RACING.config(level, 7)
        back = from_manifest(RacingSyntheticConfig, json.loads(json.dumps(config.manifest())))
        assert back == config
    for level, line in (
        ("quick", "0.01 in variant main (15"),
        ("full", "0.0001 in variant D100 (30"),
    ):
        [skipped] = RACING.skipped(RACING.config(level))
        assert skipped.startswith(f"lil-ucb at sigma >= {line} settings)")


def test_task_keys_and_seeds_match_the_old_records() -> None:
    config = RACING.config("quick", 7)
    first = RACING.plan(config, [], "all")[0]
    assert first.key == "error|main|lil-ucb|normal|sigma=1e-05|D=10|N=10000|delta=0.001|None|n=2000"
    assert first.seed == SeedKey(7, (1887526161, 2405199320))
    [speed] = RACING.plan(config, [], "speed")
    assert speed.key == "speed|normal|sigma=1e-05|D=10|N=10000|delta=0.05|draws=500|repeat=5"
    assert speed.seed is None  # its calls spawn their own streams from the key
    assert len(RACING.plan(config, [], "errors")) == 120
    assert len(RACING.plan(RACING.config("full"), [], "errors")) == 585
    premise = RACING.plan(config, [], "premise")
    assert [t.key for t in premise][:2] == [
        "premise|race-normal-D10-N1000-s0.3|delta=0.001|m1=50|n=150000",
        "premise|race-normal-D10-N1000-s0.3|delta=0.001|m1=100|n=150000",
    ]
    assert len(premise) == 6 and all(t.seed is not None for t in premise)
    [coref] = RACING.plan(config, [], "coref")
    assert coref.key == "coref|ragged-normal-D8-s1e-3|delta=0.05|n=20000"
    assert len(RACING.plan(config, [], "all")) == 127  # the benchmark waits for all three


def test_the_benchmark_runs_alone_after_the_errors_one_task_at_a_time() -> None:
    config = tiny_config(speed=SpeedPlan(4, 400, (1e-3, 1e-2, 3e-2), draws=20, repeat=3))
    errors = {t.key for t in RACING.plan(config, [], "errors")}

    def speed_keys(records: list[dict], part: str = "all") -> list[str]:
        return [t.key for t in RACING.plan(config, records, part) if t.key.startswith("speed|")]

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


def test_an_interrupted_run_resumes_without_duplicates_or_changes(
    tiny_run: Path, tmp_path: Path
) -> None:
    out = _copy(tiny_run, tmp_path)
    path = out / RECORDS
    before = {r["key"]: _stable(r) for r in load_records(path)}
    lines = path.read_text().splitlines(keepends=True)
    # A kill mid-write: the last line gone, the one before cut in half (no newline).
    path.write_text("".join(lines[:-2]) + lines[-2][: len(lines[-2]) // 2])
    summary = run_tiny(RACING, tiny_config(), out)
    assert summary.ran == 2 and summary.already_done == len(lines) - 2
    raw_keys = [json.loads(line)["key"] for line in path.read_text().splitlines()]
    assert len(raw_keys) == len(set(raw_keys)) == len(before)
    assert {r["key"]: _stable(r) for r in load_records(path)} == before
    assert run_tiny(RACING, tiny_config(), out).ran == 0


def test_a_directory_with_other_settings_is_refused(tiny_run: Path, tmp_path: Path) -> None:
    out = _copy(tiny_run, tmp_path)
    size = (out / RECORDS).stat().st_size
    with pytest.raises(ValueError, match=r"other settings.*'seed'"):
        run_tiny(RACING, tiny_config(seed=1), out)
    assert (out / RECORDS).stat().st_size == size
    stranger = tmp_path / "stranger"
    stranger.mkdir()
    (stranger / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match="non-empty directory"):
        run_tiny(RACING, tiny_config(), stranger)


def test_unknown_experiment_names_itself_and_the_valid_ones() -> None:
    with pytest.raises(ValueError) as info:
        get_experiment("fig-99")
    assert "'fig-99'" in str(info.value) and "racing-synthetic" in str(info.value)
    assert "racing-synthetic" in experiment_names()
    assert isinstance(get_experiment("racing-synthetic"), RacingSynthetic)


@pytest.mark.parametrize(
    ("level", "seed", "part", "workers", "match"),
    [
        ("medium", 0, "all", 1, "--level 'medium'.*quick, full"),
        ("quick", -1, "all", 1, "seed' = -1"),
        ("quick", 0, "most", 1, "--part 'most'.*all, errors, speed, premise, coref"),
        ("quick", 0, "all", 0, "--workers = 0"),
    ],
)
def test_bad_arguments_raise_before_any_work(
    tmp_path: Path, level: str, seed: int, part: str, workers: int, match: str
) -> None:
    with pytest.raises(ValueError, match=match):
        run(RACING, level, seed, tmp_path / "x", part=part, workers=workers, log=lambda m: None)
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"n": 0}, "parameter 'n' = 0 is invalid; valid: an integer in"),
        ({"deltas": (0.01, 1.5)}, r"parameter 'deltas\[1\]' = 1.5"),
        ({"deltas": ()}, "parameter 'deltas' = ()"),
        ({"distributions": ("cauchy",)}, r"parameter 'distributions\[0\]' = 'cauchy'"),
        ({"level": "huge"}, "parameter 'level' = 'huge'"),
        ({"variants": ()}, "parameter 'variants'"),
    ],
)
def test_bad_settings_name_the_parameter(change: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        tiny_config(**change)


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: Variant("v", 1, 400, (1e-3,)), "parameter 'D' = 1"),
        (lambda: Variant("v", 4, 400, (0.0,)), r"parameter 'sigmas\[0\]' = 0.0"),
        (lambda: Variant("v", 4, 400, (float("inf"),)), r"parameter 'sigmas\[0\]' = inf"),
        (lambda: Variant("v", 4, 400, (1e-3,), variance="joint"), "parameter 'variance'"),
        (lambda: Variant("v", 4, 400, (1e-3,), algorithms=("ucb",)), "parameter 'algorithms"),
        (lambda: Variant("v", 4, 400, (1e-3,), lil_ucb_below=-1.0), "parameter 'lil_ucb_below'"),
        (lambda: SpeedPlan(4, 400, (1e-3,), repeat=0), "parameter 'repeat' = 0"),
        (lambda: SpeedPlan(4, 400, (1e-3,), draws=2.5), "parameter 'draws' = 2.5"),
        (lambda: SpeedPlan(4, 400, (1e-3,), delta=1.0), "parameter 'delta' = 1.0"),
    ],
)
def test_bad_parts_of_the_settings_name_the_parameter(make: Any, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        make()


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("fig-99",), "unknown experiment 'fig-99'; valid: "),
        (("racing-synthetic", "--level", "huge"), "--level 'huge'"),
    ],
)
def test_cli_bad_input_exits_2_with_one_line(tmp_path: Path, args: tuple, needle: str) -> None:
    out = harness("reproduce", *args, "--out", str(tmp_path / "o"), "--no-progress")
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and needle in out.stderr
    if "unknown" in needle:
        assert "racing-synthetic" in out.stderr
    assert "Traceback" not in out.stderr and not (tmp_path / "o").exists()


def test_section_opens_with_claims_and_has_svg_figures(tiny_run: Path) -> None:
    sec = section(RACING, tiny_run)
    assert sec["complete"] and sec["planned"] == 21
    assert sec["skipped"] == [SKIPPED]
    figures = [f for g in sec["figure_groups"] for f in g["figures"]]
    assert len(figures) == 4 and all(f["svg"].startswith("<svg") for f in figures)
    ids = [c["id"] for c in sec["claims"]]
    assert "error-bound-racing-normal" in ids and "rewards-vs-racing-ebs-sigma0.03" in ids
    assert len(ids) == len(set(ids))
    by_id = {c["id"]: c for c in sec["claims"]}
    # One sentence, one claim: the per-sigma comparisons are other readings under it.
    assert by_id["rewards-vs-racing-ebs-sigma0.03"]["reading_of"] == "rewards-fewer"
    # N = 400, not the paper's 1e5: judged on our rewards, the difference stated beside it.
    assert all(c["verdict"] != "setting differs" for c in sec["claims"])
    assert "N = 400 rewards per state (paper: 100000)" in by_id["sharp-racing-normal"]["quantity"]
    assert len(sec["records_table"]["rows"]) == 20  # the error cells
    assert [t["title"] for t in sec["tables"]] == [
        "Benchmark: evaluation saving against wall-clock speedup"
    ]


def test_report_is_inline_svg_without_urls_and_escaped(tiny_run: Path, tmp_path: Path) -> None:
    html = write_report([tiny_run], tmp_path / "r.html").read_text()
    assert html.count("<svg") == 4  # error rate and rewards per sigma
    assert "<img" not in html and "<script" not in html and "http" not in html
    assert EVIL not in html and "&lt;script&gt;" in html
    assert "hours per cell at this noise" in html  # the skipped cells are named
    assert "Paper claims" in html and "incomplete" not in html


def test_report_flags_an_incomplete_experiment_beside_a_verification_run(
    tiny_run: Path, tmp_path: Path
) -> None:
    out = _copy(tiny_run, tmp_path)
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


def test_cli_report_renders_an_experiment_directory(tiny_run: Path, tmp_path: Path) -> None:
    result = harness("report", str(tiny_run), "--output", str(tmp_path / "r.html"))
    assert result.returncode == 0, result.stderr
    assert "racing-synthetic" in (tmp_path / "r.html").read_text()


def test_racing_normal_error_rate_lies_within_its_interval_and_delta() -> None:
    # Large noise (sigma * N = 12): races often go deep and the error nears delta.
    setting = ErrorSetting("main", "racing-normal", "normal", 3e-2, 4, 400, 0.1, "pairwise", 2000)
    [r] = run_error_setting(setting, 3, rng=SeedKey.from_label(3, setting.key).generator())
    assert r["errors"] > 0  # not vacuous: the sampler does err here
    assert r["ci_low"] <= r["error_rate"] <= r["ci_high"]
    assert r["ci_low"] <= setting.delta  # consistent with its promise P(error) <= delta
    assert 0.0 < r["reward_proportion"] <= 1.0


def test_speed_records_hold_saving_speedup_and_their_ratio(tiny_run: Path) -> None:
    [r] = [r for r in load_records(tiny_run / RECORDS) if r["type"] == "speed"]
    assert r["saving"] == pytest.approx(r["N"] * r["D"] / r["mean_evals_per_draw"])
    assert r["speedup"] == pytest.approx(r["exact_s_per_draw"] / r["racing_s_per_draw"])
    assert r["ratio"] == pytest.approx(r["speedup"] / r["saving"])
    assert r["goal_met"] == (r["ratio"] >= r["goal"]) and r["goal"] == 0.7
    assert len(r["racing_times"]) == len(r["exact_times"]) == 3
    assert r["spawn_key"] == list(label_words(r["key"]))


def test_worker_processes_give_the_same_records(tiny_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "pool"
    run_tiny(RACING, tiny_config(), out, part="errors", scheduler="process", workers=2)
    pooled = {r["key"]: _stable(r) for r in load_records(out / RECORDS)}
    serial = load_records(tiny_run / RECORDS)
    assert pooled == {r["key"]: _stable(r) for r in serial if r["type"] == "error"}


def _made_up(good: bool) -> list[dict[str, Any]]:
    """Error records of the quick level's cells (n = 1e6 draws each, so intervals are tight).

    good: lil'UCB and Racing-EBS never err; Racing-Normal errs at 0.7 delta at the largest
    sigma and 0.3 delta below it; it samples 0.4 of the rewards at sigma = 1e-5 and 0.05 above
    whatever the distribution, the others 0.9 (gains of 1.1x, marginal), except at sigma = 1e-5
    with Uniform rewards where they sample 0.7 (1.75x Racing-Normal's: fewer, not much). bad:
    every algorithm errs at 3 delta with LogNormal rewards at sigma = 1e-5, elsewhere 0.8 delta
    (Racing-Normal 0.1 delta); Racing-Normal samples what the others do (twice that with
    LogNormal rewards), except a tenth of it in the exception."""
    n, out = 1_000_000, []
    for s in error_settings(RACING.config("quick")):
        rn, exception = (
            s.algorithm == "racing-normal",
            (s.sigma, s.distribution) == (1e-5, "uniform"),
        )
        if good:
            rate = (0.7 if s.sigma == 1e-2 else 0.3) * rn
            prop = (0.4 if s.sigma == 1e-5 else 0.05) if rn else 0.7 if exception else 0.9
        else:
            rate = 3.0 if (s.distribution, s.sigma) == ("lognormal", 1e-5) else 0.1 if rn else 0.8
            prop = (
                0.05 if rn and exception else 1.0 if rn and s.distribution == "lognormal" else 0.5
            )
        errors = round(rate * s.delta * n)
        out.append({**dataclasses.asdict(s), "type": "error", "n": n, "errors": errors})
        out[-1] |= {"reward_proportion": prop, "evals_sd": 0.01 * s.N * s.D}
    # Racing-Normal's premise: 0.6 delta (good) or 1.5 delta (bad) at m1 = 50; m1 = 100 apart.
    p = RACING.config("quick").premise
    assert p is not None
    for problem in p.problems:
        for m1 in p.m1s:
            rate = 0.6 if good or m1 != 50 else 1.5
            errors = round(rate * p.delta * n)
            out.append({"type": "premise", "problem": problem, "m1": m1, "n": n})
            out[-1] |= {"errors": errors, "delta": p.delta}
    # Sec. 5.3 on a ragged population: 0.046 errors and 5x fewer factors (good), or neither.
    rate, saving = (0.046, 5.0) if good else (0.001, 20.0)
    out.append({"type": "coref", "n": n, "errors": round(rate * n), "exact_evals_per_draw": 3000})
    out[-1] |= {"mean_evals_per_draw": 3000 / saving, "evals_sd": 100.0}
    return out


@pytest.mark.parametrize("good", [True, False])
def test_claims_decide_both_ways(good: bool) -> None:
    expected = "reproduced" if good else "not reproduced"
    records = _made_up(good)
    claims = RACING.claims(RACING.config("quick"))
    assert [c.id for c in claims] == [
        "error-bound-lil-ucb",
        "error-bound-racing-ebs",
        "error-bound-racing-normal",
        "loose",
        "sharp-racing-normal",
        "rewards-fewer",
        "rewards-exception",
        "rn-overlap",
        "highest-speedup",
        "others-marginal",
        "premise-racing-normal",
        "coref-error-rate",
        "coref-speedup",
    ]
    assert_decided(claims, records, expected)
    readings = [r for c in claims for r in c.readings]
    assert len(readings) == 13
    assert_decided(readings, records, expected)  # other readings decide too, uncounted


def test_records_without_a_draws_spread_leave_the_reward_claims_undecided() -> None:
    old = [{k: v for k, v in r.items() if k != "evals_sd"} for r in _made_up(True)]
    [fewer] = [c for c in RACING.claims(RACING.config("quick")) if c.id == "rewards-fewer"]
    v = judge(fewer, old)
    assert v.verdict == "inconclusive" and "rerun them" in v.reason


def test_claims_without_records_are_inconclusive() -> None:
    for claim in RACING.claims(RACING.config("full")):
        v = judge(claim, [])
        assert v.verdict == "inconclusive"
        assert any(f"no {kind} record" in v.reason for kind in ("error", "premise", "coref"))


def test_premise_records_its_errors_and_shows_them_in_a_table() -> None:
    """Racing-Normal at a small delta on a premise problem: a record per (problem, m1)."""
    p = PremisePlan(2000, (50, 100), problems=PREMISE_PROBLEMS[1:2], delta=0.05)
    recs = [
        r
        for m1 in p.m1s
        for r in run_premise(p, p.problems[0], m1, rng=SeedKey.from_label(0, str(m1)).generator())
    ]
    assert [(r["m1"], r["n"], r["D"], r["N"]) for r in recs] == [
        (50, 2000, 10, 200),
        (100, 2000, 10, 200),
    ]
    assert all(0 < r["errors"] < 0.05 * 2000 for r in recs)  # errs, and keeps its promise here
    assert all(0.0 < r["reward_proportion"] <= 1.0 for r in recs)
    [table] = RACING.tables(RACING.config("quick"), recs)
    assert table["title"].startswith("Racing-Normal's normal premise") and len(table["rows"]) == 2
    with pytest.raises(ValueError, match="parameter 'delta'"):
        PremisePlan(10, delta=0.0)


def test_coref_races_a_ragged_population_against_its_exact_answer() -> None:
    """Racing-Normal at Sec. 5.3's delta on the catalog's ragged population: one record with
    its errors and the factors an exact draw would evaluate."""
    plan = CorefPlan(3000)
    [r] = run_coref(plan, plan.problems[0], rng=SeedKey.from_label(0, "coref").generator())
    assert (r["n"], r["D"], r["delta"]) == (3000, 8, 0.05)
    assert r["exact_evals_per_draw"] == sum(r["sizes"]) and min(r["sizes"]) >= 2
    assert 0 <= r["errors"] < 0.05 * 3000  # within the promise P(error) <= delta
    assert 0 < r["mean_evals_per_draw"] < r["exact_evals_per_draw"] and r["evals_sd"] > 0
    claims = [c for c in RACING.claims(RACING.config("quick")) if c.id.startswith("coref")]
    for v in (judge(c, [r]) for c in claims):
        assert v.verdict != "setting differs" and v.unit == "draws" and v.n == 3000
    with pytest.raises(ValueError, match="parameter 'delta'"):
        CorefPlan(10, delta=1.0)
