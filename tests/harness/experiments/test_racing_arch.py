"""The racing-arch experiment (000, Sec. 5.2) on a tiny config: records, resume, the racing
steps' errors and control variates, the report section, and its claims decided both ways. The
primary runs use the last days of the NASDAQ Composite (the arch package's data), the variant
simulated returns."""

from __future__ import annotations

import copy
import dataclasses
import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from harness.declare import from_manifest
from harness.experiments import claims as cl
from harness.experiments import get_experiment
from harness.experiments.claims import judge
from harness.experiments.framework import run, section
from harness.experiments.racing_arch import (
    ArchConfig,
    RacingArch,
    chain,
    chains,
    ess,
    evals,
    sweeps,
)
from harness.experiments.racing_arch.chain import LOG_PI
from harness.experiments.racing_arch.study import (
    READINGS,
    Study,
    findings,
    gaussian_surrogate,
    outcome,
    paired_factor,
)
from harness.gates.rates import error_rate
from harness.report.page import write_report
from harness.store import RECORDS, load_records
from harness.targets import arch
from harness.targets.arch import MODELS
from implementations.racing.reference import race_two_arms
from tests.harness.experiments.tiny import assert_decided, run_tiny, stable

ARCH = RacingArch()


def tiny_config(**overrides: Any) -> ArchConfig:
    tiny = dict(
        N=600,
        variant_N=600,
        pilot_iterations=100,
        adapt_iterations=60,
        iterations=60,
        chains=2,
        chunk=20,
        batch=50,
        notes=("tiny test configuration",),
    )
    return dataclasses.replace(ArchConfig.for_level("quick", 3, **tiny), **overrides)


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("arch") / "run"
    result = run_tiny(ARCH, tiny_config(), out)
    assert result.planned == result.ran == 2 * 19 and "run/sub/1" in result.text
    return out


@pytest.fixture(scope="module")
def tiny_problem() -> chain.Problem:
    """Pilot fits and the problem of the tiny config, without running any chain."""
    cfg = tiny_config()
    fits = tuple(chain.pilot_fit(q, chain.config_data(cfg), cfg) for q in MODELS)
    return chain.Problem.build(cfg, fits)


def test_records_written_and_resumable_without_duplicates(tiny_run: Path, tmp_path: Path) -> None:
    records = load_records(tiny_run / RECORDS)
    for data in ("nasdaq", "simulated"):
        mine = [r for r in records if r["dataset"] == data]
        chunks = [r for r in mine if r["kind"] == "chunk"]
        # 2 adaptations + 2 samplers x 2 chains, 60 sweeps each in chunks of 20
        assert len(chunks) == 6 * 3 and sum(r["kind"] == "pilot" for r in mine) == 1
    assert all(r["task_id"] == r["key"] and "seed" not in r for r in records)
    # A chain's next chunk is planned only once the chunk before it is on disk.
    assert [t.key for t in ARCH.plan(tiny_config(), [], "all")] == ["pilot", "simulated/pilot"]
    assert len(ARCH.plan(tiny_config(), records, "all")) == 2 * 19

    # A kill in the middle of the last line: the rerun drops it and redoes only that chunk.
    copy = tmp_path / "resumed"
    shutil.copytree(tiny_run, copy)
    lines = (copy / RECORDS).read_text().splitlines(keepends=True)
    torn = json.loads(lines[-1])
    (copy / RECORDS).write_text("".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2])
    again = run_tiny(ARCH, tiny_config(), copy)
    assert (again.ran, again.already_done) == (1, 2 * 19 - 1)
    after = load_records(copy / RECORDS)
    assert len({r["key"] for r in after}) == len(after) == len(records)
    # The saved Generator state makes the redone chunk identical to the original one.
    assert stable(next(r for r in after if r["key"] == torn["key"])) == stable(torn)
    before = (copy / RECORDS).read_bytes()
    assert run_tiny(ARCH, tiny_config(), copy).ran == 0
    assert (copy / RECORDS).read_bytes() == before


@pytest.mark.parametrize("data", ["nasdaq", "simulated"])
def test_costs_errors_and_ess_of_both_samplers(tiny_run: Path, data: str) -> None:
    records = load_records(tiny_run / RECORDS)
    for s in ("exact", "sub"):
        runs = chains(records, f"run/{s}/", data)
        assert len(runs) == 2 and all(sweeps(ch) == 60 for ch in runs)
        assert all(ess(ch) >= 0 for ch in runs)
    exact, sub = chains(records, "run/exact/", data), chains(records, "run/sub/", data)
    # Exact: 6 N for the Gibbs draw + N for MALA every sweep; Sub reads fewer terms.
    assert all(evals(ch) == 60 * 7 * 600 for ch in exact)
    assert all(evals(ch) < 60 * 7 * 600 for ch in sub)
    every = [r for r in records if r["kind"] == "chunk" and r["dataset"] == data]
    assert sum(r["gibbs_draws"] for r in every if r["sampler"] == "sub") == 60 * 3
    assert sum(r["gibbs_errors"] + r["mh_errors"] for r in every if r["sampler"] == "exact") == 0


def test_other_settings_in_the_same_folder_are_refused(tiny_run: Path) -> None:
    with pytest.raises(ValueError, match="iterations"):
        run_tiny(ARCH, tiny_config(iterations=61), tiny_run)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("N", 10),
        ("N", 150),  # below 4 m1
        ("delta", 0.0),
        ("delta", 1.5),
        ("m1", 1),
        ("chains", 0),
        ("batch", 10_000),
        ("step", -1.0),
        ("control_variate", "taylor"),
        ("level", "medium"),
        ("true_alpha", (0.2, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5)),
        ("true_alpha", (0.2, 0.1)),
        ("true_alpha", (0.2, -0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1)),
        ("true_q", 7),
        ("true_nu", 2.0),
        ("seed", -1),
        ("iterations", 2.5),
        ("data", "shanghai"),
        ("N", 5001),  # the NASDAQ series has 5000 terms
        ("variant", "simulated-t"),
        ("variant_N", 150),
    ],
)
def test_bad_config_raises_naming_the_parameter(field: str, value: Any) -> None:
    with pytest.raises(ValueError, match=f"'{field}"):
        tiny_config(**{field: value})


def test_levels_and_manifest(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="level"):
        ARCH.config("medium")
    with pytest.raises(ValueError, match="level"):
        run(ARCH, "medium", 0, tmp_path / "x", progress=False)
    assert not (tmp_path / "x").exists()  # refused before any work
    quick, full = ARCH.config("quick"), ARCH.config("full")
    assert (quick.data, quick.N, quick.variant, quick.variant_N) == (
        "nasdaq",
        5000,
        "simulated",
        3000,
    )
    assert (quick.iterations, quick.chains) == (4000, 3)
    assert (full.data, full.N, full.variant, full.variant_N) == ("nasdaq", 5000, "simulated", 13000)
    assert (full.iterations, full.chains, full.delta, full.m1) == (100000, 5, 0.05, 50)
    # The simulated variant is the earlier simulated run: the same config on other data.
    (_, primary), (tag, variant) = full.runs()
    assert primary is full and tag == "simulated/"
    assert (variant.data, variant.N, variant.variant) == ("simulated", 13000, "none")
    with pytest.raises(ValueError, match="'variant'"):
        tiny_config(data="simulated")  # the variant would repeat the primary runs
    assert [t for t, _ in tiny_config(data="simulated", variant="none").runs()] == [""]
    for config in (quick, full, tiny_config()):
        assert from_manifest(ArchConfig, json.loads(json.dumps(config.manifest()))) == config


def test_task_keys_match_the_old_records() -> None:
    """The primary runs' keys are those of the pre-framework code, and tasks are unseeded as
    they were (each chain's Generator comes from the config seed and its part); the simulated
    variant's keys start with "simulated/"."""
    config = tiny_config()
    pilot = ARCH.plan(config, [], "all")[0]
    assert pilot.key == "pilot" and pilot.seed is None
    records = [{"key": "pilot", "models": []}]
    keys = [t.key for t in ARCH.plan(config, records, "all")]
    assert keys == ["pilot", "adapt/exact:0", "adapt/sub:0", "simulated/pilot"]
    done = [{"key": f"adapt/{s}:{i}", "state": {}} for s in ("exact", "sub") for i in (0, 20, 40)]
    tasks = ARCH.plan(config, records + done, "all")
    assert "run/sub/1:0" in [t.key for t in tasks] and all(t.seed is None for t in tasks)


def _reward_matrices(problem: chain.Problem, seed: int) -> tuple[np.ndarray, dict]:
    """Raw and residual rewards at a Carlin & Chib state drawn from the pseudo-priors."""
    rng = np.random.default_rng(seed)
    phis = [f.mean + f.chol @ rng.standard_normal(f.dim) for f in problem.fits]
    st = chain.ChainState(0, phis, LOG_PI.copy(), rng)
    L, sig2 = arch.model_terms(problem.data, st.phis)
    R = {kind: chain.residual_matrix(problem, st, L, sig2, kind) for kind in ("parameter", "data")}
    return L, R


def test_control_variates_keep_the_sums_and_reduce_reward_variance(
    tiny_problem: chain.Problem,
) -> None:
    marginal, pairwise = [], []
    for seed in range(5):
        L, R = _reward_matrices(tiny_problem, seed)
        for kind in ("parameter", "data"):
            # E[h] is exact over the N terms: the target (and the exact answer) is unchanged.
            np.testing.assert_allclose(R[kind].sum(axis=1), L.sum(axis=1), rtol=0, atol=1e-8)
        m, p = chain.variance_factors(L, R["parameter"])
        marginal.append(m)
        pairwise.append(p)
    # log10 of the variance ratio raw / residual: per arm by orders of magnitude, and still
    # clearly per pair of arms (what the pairwise race sees).
    assert min(marginal) > 2.0
    assert np.median(pairwise) > 0.5


def test_racing_gibbs_and_mh_errors_within_delta(tiny_problem: chain.Problem) -> None:
    """Clopper-Pearson upper bound of the error rate <= delta (000, Prop. 1; Eq. 12)."""
    problem = tiny_problem
    # Adjusted priors from the Laplace evidences: every model competes, so races are close.
    log_ev = np.array([f.log_evidence for f in problem.fits])
    rng = np.random.default_rng(11)
    st = chain.ChainState(1, [f.mean.copy() for f in problem.fits], -log_ev, rng)
    tally = chain.Tally()
    for _ in range(1500):
        chain.sgld_mh(problem, st, tally)
        chain.refresh_pseudo(problem, st)
        chain.gibbs_racing(problem, st, tally)
    delta = problem.config.delta
    assert tally.gibbs_early > 100 and tally.mh_early > 100  # races did stop early
    gibbs = error_rate(tally.gibbs_errors, tally.gibbs_draws, delta, alpha=0.01)
    mh = error_rate(tally.mh_errors, tally.mh_tests, delta, alpha=0.01)
    assert gibbs.passed, gibbs.detail
    assert mh.passed, mh.detail


def test_the_two_arm_race_stops_early_on_a_clear_gap_and_errs_at_most_delta_on_a_hard_one() -> None:
    """The race ARCH's MH test uses, on rewards given as an array or through a callback."""
    N, m1, delta = 1000, 50, 0.05
    rng = np.random.default_rng(0)
    noise = rng.standard_normal(N)
    clear = np.vstack([np.zeros(N), 1e-3 * noise + 0.1])
    accept, used = race_two_arms(clear, N, rng.permutation(N), delta, m1)
    assert accept and used == m1
    # Mean gap ~1 standard error of the full sum: many races run to N, where they are exact.
    hard = np.vstack([np.zeros(N), noise - noise.mean() + 0.03])
    runs = [race_two_arms(hard, N, rng.permutation(N), delta, m1) for _ in range(1000)]
    errors = sum(not accept for accept, _ in runs)
    assert any(used == N for _, used in runs) and all(a for a, used in runs if used == N)
    gate = error_rate(errors, len(runs), delta, alpha=0.01)
    assert gate.passed, gate.detail
    seen: list[int] = []

    def rewards(idx: Any) -> np.ndarray:
        seen.extend(idx)
        return hard[:, idx]

    order = rng.permutation(N)
    answer = race_two_arms(rewards, N, order, delta, m1)
    assert answer == race_two_arms(hard, N, order, delta, m1)
    assert seen == order[: answer[1]].tolist()
    with pytest.raises(ValueError, match="'bound'"):
        race_two_arms(hard, N, order, delta, m1, bound="t-test")


def test_section_opens_with_claims_and_has_the_figures(tiny_run: Path) -> None:
    sec = section(get_experiment("racing-arch"), tiny_run)
    assert sec["complete"] and sec["missing"] == 0 and sec["planned"] == 2 * 19
    assert sec["notes"] == ["tiny test configuration"]
    groups = sec["figure_groups"]
    assert ["NASDAQ" in g["title"] for g in groups] == [True, False]
    assert "simulated" in groups[1]["title"]
    figures = [f for g in groups for f in g["figures"]]
    assert len(figures) == 2 * 3 and all(f["svg"].startswith("<svg") for f in figures)
    by_id = {c["id"]: c for c in sec["claims"]}
    primary = {
        "gibbs-error-rate",
        "mh-error-rate",
        "speedup-convergence",
        "ess-per-sweep",
        "no-bias",
        "variance-per-arm",
    }
    other = {
        "speedup-per-sweep",
        "ess-per-evaluation",
        "variance-pairwise",
        "variance-per-arm-parameter",
        "variance-pairwise-parameter",
    }
    variant = {f"{k}-simulated" for k in primary}
    assert set(by_id) == primary | other | variant
    # Other readings, the simulated variant's among them, sit under their claim, not counted.
    assert {k for k, v in by_id.items() if v["reading_of"]} == other | variant
    assert all(by_id[f"{k}-simulated"]["reading_of"] == k for k in primary)
    assert by_id["gibbs-error-rate"]["paper_value"] == "0.0004"
    # Judged on our data, whose difference the quantity states: never "setting differs", and
    # the diagnosis's absence is said, not filled in from elsewhere.
    assert all(v["verdict"] != "setting differs" for v in sec["claims"])
    assert "NASDAQ Composite log returns" in by_id["gibbs-error-rate"]["quantity"]
    assert "simulated ARCH(10) returns" in by_id["gibbs-error-rate-simulated"]["quantity"]
    assert "has not run in this directory" in by_id["gibbs-error-rate"]["how"]
    # One adaptation per sampler: at most a point value, no interval (60 sweeps need not
    # arrive on the index, whose log p(q | r) spans tens of nats).
    assert by_id["speedup-convergence"]["verdict"] == "inconclusive"
    assert "no interval" in by_id["speedup-convergence-simulated"]["reason"]
    assert by_id["no-bias"]["verdict"] == "inconclusive"  # 2 pairs of chains: no bootstrap
    assert len(sec["records_table"]["rows"]) == 2 * 19


def test_section_and_figures_of_a_partial_run(tiny_run: Path, tmp_path: Path) -> None:
    part = tmp_path / "partial"
    part.mkdir()
    shutil.copy(tiny_run / "experiment.json", part / "experiment.json")
    keep = ("pilot", "adapt/exact:0", "adapt/exact:20")
    lines = (tiny_run / RECORDS).read_text().splitlines(keepends=True)
    (part / RECORDS).write_text("".join(x for x in lines if json.loads(x)["key"] in keep))
    sec = section(ARCH, part)
    assert not sec["complete"] and sec["missing"] > 0
    assert len(sec["figure_groups"][0]["figures"]) == 1  # what there is: the adaptation
    assert all(c["verdict"] == "inconclusive" for c in sec["claims"])


def test_the_report_renders_the_section(tiny_run: Path, tmp_path: Path) -> None:
    html = write_report([tiny_run], tmp_path / "arch.html").read_text(encoding="utf-8")
    assert "racing-arch" in html and "Paper claims" in html and html.count("<svg") >= 3
    assert "<script" not in html


def _made_up(good: bool) -> list[dict[str, Any]]:
    """Records with only the fields the claims read: two adaptations per sampler (the plan has
    one, so the convergence speed-up can be decided) and five fixed-pi~ chains per sampler."""
    rng = np.random.default_rng(0)
    flat = np.log(np.full(len(MODELS), 1 / len(MODELS)))
    T, cost = 600, {"exact": 7000.0, "sub": 7000.0 / 3 if good else 7000.0}
    records: list[dict[str, Any]] = []

    def chunk(part: str, **fields: Any) -> None:
        for data in ("nasdaq", "simulated"):
            key = part if data == "nasdaq" else f"simulated/{part}"
            records.append(
                {"kind": "chunk", "part": part, "start": 0, "key": key, "dataset": data, **fields}
            )

    for s in ("exact", "sub"):
        for i, name in enumerate((f"adapt/{s}", f"adapt/{s}/1")):
            hit = 30 + i  # the sweep at which the estimate arrives, in both samplers
            trace = [[k, k * cost[s], *(flat + (10.0 if k < hit else 0.0))] for k in range(1, 61)]
            state = {"log_pi_tilde": (LOG_PI - flat).tolist()}
            chunk(name, stop=60, trace=trace, state=state, gibbs_evals=0, mh_evals=0)
    balanced = [m for m in MODELS for _ in range(T // len(MODELS))]
    for i in range(5):
        sticky = [MODELS[(j // 50 + i) % len(MODELS)] for j in range(T)]  # blocks of 50
        mixing = [int(v) for v in rng.permutation(balanced)]
        stuck = [MODELS[(j // 50 + i) % 2] for j in range(T)]  # sticky, and only q = 5, 10
        q = {"exact": sticky, "sub": mixing} if good else {"exact": mixing, "sub": stuck}
        for s in ("exact", "sub"):
            evals = T * cost[s] * (1 + 0.01 * i if s == "sub" else 1.0)
            cut = (2.5 if good else -1.5) + 0.05 * i
            cv = {
                f"{space}_{k}": {"sum": 100 * cut, "n": 100}
                for space in ("data", "parameter")
                for k in ("marginal", "pairwise")
            }
            errors = (80, 400) if good else (0, 0)
            chunk(
                f"run/{s}/{i}",
                stop=T,
                q=q[s],
                gibbs_evals=evals,
                mh_evals=0,
                gibbs_draws=200_000,
                gibbs_errors=errors[0] if s == "sub" else 0,
                mh_tests=200_000,
                mh_errors=errors[1] if s == "sub" else 0,
                cv_log10=cv,
            )
    return records


@pytest.mark.parametrize("good", [True, False])
def test_claims_decide_both_ways(good: bool) -> None:
    claims = ARCH.claims(tiny_config())
    expected = "reproduced" if good else "not reproduced"
    assert_decided(claims, _made_up(good), expected)
    assert_decided([r for c in claims for r in c.readings], _made_up(good), expected)


TINY_STUDY = Study(
    Ns=(400, 600), adapt=20, sweeps=30, reraces=3, m1_alt=100, block=10, pseudo_scales=(2.0,)
)


@pytest.fixture(scope="module")
def study_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("arch-study") / "run"
    result = run_tiny(ARCH, tiny_config(study=TINY_STUDY), out, part="study")
    assert result.planned == result.ran == 3  # N = 400 and 600, and wider pseudo-priors at 400
    return out


def test_the_study_runs_by_part_and_stays_in_the_report(study_run: Path) -> None:
    config = tiny_config(study=TINY_STUDY)
    records = load_records(study_run / RECORDS)
    assert [(r["N"], r["pseudo_scale"]) for r in records] == [(400, 1.0), (600, 1.0), (400, 2.0)]
    assert all(r["kind"] == "study" for r in records)
    for r in records:
        assert r["replay_mismatch"] == 0  # the replayed Gumbel noise is the draw's own
        assert r["gibbs_draws"] == r["mh_tests"] == 30 and sum(r["visits"]) == 30
        for step in ("gibbs", "mh"):
            assert r[step]["states"] == 30 and len(r[step]["z_hist"]) == 24
            for reading in READINGS:
                rerun = r[step]["reruns"][reading]
                assert sum(rerun["races"]) == 90 and len(rerun["races"]) == 3  # blocks of 10
                assert 0 <= sum(rerun["errors"]) <= 90 and rerun["evals"] > 0
    # Not run by `make run` (part all) unless on disk; then kept, and shown in three tables.
    keys = [t.key for t in ARCH.plan(config, [], "all")]
    assert keys == ["pilot", "simulated/pilot"]
    kept = [t.key for t in ARCH.plan(config, records, "all")]
    assert kept[-3:] == [TINY_STUDY.key(400), TINY_STUDY.key(600), TINY_STUDY.key(400, 2.0)]
    assert TINY_STUDY.key(400, 2.0).endswith("|pseudo=x2")
    tables = ARCH.tables(config, records)
    # 3 chains x 2 steps: 6 rates each, 4 paired factors each, one line of gaps each; and per
    # step the data size (400 / 600) and the pseudo-prior reading (ours / x2).
    assert [len(t["rows"]) for t in tables] == [3 * 2 * 6, 3 * 2 * 4 + 2 * 2, 3 * 2]
    assert all(row[-1]["text"] for row in tables[1]["rows"])


def test_the_gaussian_surrogate_keeps_means_and_covariance_exactly() -> None:
    rng = np.random.default_rng(0)
    R = rng.standard_t(3, size=(4, 500)) * np.array([[1.0], [2.0], [0.1], [5.0]])
    R[1] += 0.5 * R[0]
    G = gaussian_surrogate(R, rng)
    np.testing.assert_allclose(G.mean(axis=1), R.mean(axis=1), atol=1e-12)
    np.testing.assert_allclose(np.cov(G, bias=True), np.cov(R, bias=True), rtol=1e-9, atol=1e-12)
    kurt = ((G - G.mean(axis=1, keepdims=True)) ** 4).mean(axis=1) / G.var(axis=1) ** 2
    assert np.all(np.abs(kurt - 3.0) < 1.0)  # normal, whatever R's tails


def test_the_fixed_rule_names_each_outcome() -> None:
    def est(low: float, high: float) -> cl.Estimate:
        return cl.Estimate((low + high) / 2, low, high, 10)

    assert outcome(est(25.0, 60.0)) == "accounts for the gap"
    assert outcome(est(1.5, 60.0)) == "contributes"
    assert outcome(est(0.3, 0.9)) == "ruled out"
    assert outcome(est(0.5, 2.0)) == "no effect shown"
    assert outcome(None) == "undecided"
    rec = {
        "gibbs": {"reruns": {"a": {"errors": [4, 6, 2, 4, 4]}, "b": {"errors": [2, 3, 1, 2, 2]}}}
    }
    assert paired_factor(rec, "gibbs", "a", "b").value == pytest.approx(2.0)


def test_the_error_rates_read_the_diagnosis_of_their_own_directory(study_run: Path) -> None:
    records = load_records(study_run / RECORDS)
    assert findings([], "gibbs") == "the diagnosis (--part study) has not run in this directory"
    assert findings(records, "mh").startswith(
        "the diagnosis in this directory (--part study, simulated returns; chains at N = 400; "
        "600; 400, pseudo-prior"
    )
    # A made-up chain whose own reading errs 50x every other: the premise accounts for the gap.
    made = copy.deepcopy(records[0])
    for reading in READINGS:
        made["gibbs"]["reruns"][reading] = {"errors": [1] * 6, "races": [100] * 6, "evals": 1}
    made["gibbs"]["reruns"]["ours"]["errors"] = [50] * 6
    said = "(e) normal premise at N = 400: 50 (accounts for the gap)"
    assert said in findings([made], "gibbs")
    [rate] = [c for c in ARCH.claims(tiny_config()) if c.id == "gibbs-error-rate"]
    assert said in judge(rate, [*_made_up(True), made]).how
    assert "has not run in this directory" in judge(rate, _made_up(True)).how
