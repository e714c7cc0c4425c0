"""The ARCH model-selection experiment (000_26bed7cc1ef3ab92.txt, Sec. 5.2) on a tiny config."""

from __future__ import annotations

import dataclasses
import json
import math
import shutil

import numpy as np
import pytest
from matplotlib.figure import Figure

import harness.experiments.racing_arch as pkg
from harness.experiments import get_experiment
from harness.experiments.framework import run, section
from harness.experiments.racing_arch import chain, settings
from harness.experiments.racing_arch.control_variates import variance_factors
from harness.experiments.racing_arch.model import config_data
from harness.experiments.racing_arch.report import arch_figures
from harness.experiments.racing_arch.summary import arch_summary
from harness.gates.rates import error_rate
from harness.store import RECORDS, load_records
from implementations.racing.reference import race_two_arms

TINY = dict(
    N=600,
    pilot_iterations=100,
    adapt_iterations=60,
    iterations=60,
    chains=2,
    chunk=20,
    batch=50,
)
ARCH = get_experiment("racing-arch")


def tiny_config(**overrides) -> settings.ArchConfig:
    return dataclasses.replace(settings.config_for_level("quick", 3), **{**TINY, **overrides})


def run_tiny(out, config: settings.ArchConfig):
    """``harness reproduce racing-arch`` with ``config`` in place of the quick level."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(pkg, "config_for_level", lambda level, seed: config)
        return run(ARCH, "quick", config.seed, out, progress=False, scheduler="inprocess")


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("arch") / "run"
    result = run_tiny(out, tiny_config())
    return out, arch_summary(tiny_config(), load_records(out / RECORDS)), result


@pytest.fixture(scope="module")
def tiny_problem():
    """Pilot fits and the problem of the tiny config, without running any chain."""
    cfg = tiny_config()
    fits = tuple(chain.pilot_fit(q, config_data(cfg), cfg) for q in settings.MODELS)
    return chain.build_problem(cfg, fits)


def _lines(out) -> list[str]:
    return (out / RECORDS).read_text().splitlines(keepends=True)


def _comparable(rec: dict) -> dict:
    return {k: v for k, v in rec.items() if k != "wall_s"}


def test_records_written_and_resumable_without_duplicates(tiny_run, tmp_path):
    out, _, result = tiny_run
    records = load_records(out / RECORDS)
    chunks = [r for r in records if r["kind"] == "chunk"]
    # 2 adaptation parts + 2 samplers x 2 chains, 60 sweeps each in chunks of 20
    assert len(chunks) == 6 * 3
    assert sum(r["kind"] == "pilot" for r in records) == 1
    assert (out / "experiment.json").is_file()
    assert result.planned == result.ran == 19 and "run/sub/1" in result.text
    # A chain's next chunk is planned only once the chunk before it is on disk.
    assert [t.key for t in pkg.plan(tiny_config(), [], "all")] == ["pilot"]
    assert len(pkg.plan(tiny_config(), records, "all")) == 19

    # A kill in the middle of the last line: the rerun drops it and redoes only that chunk.
    copy = tmp_path / "resumed"
    shutil.copytree(out, copy)
    lines = _lines(copy)
    torn = json.loads(lines[-1])
    (copy / RECORDS).write_text("".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2])
    again_run = run_tiny(copy, tiny_config())
    assert again_run.ran == 1 and again_run.already_done == 18
    again = load_records(copy / RECORDS)
    keys = [r["key"] for r in again]
    assert len(keys) == len(set(keys)) == len(records)
    redone = next(r for r in again if r["key"] == torn["key"])
    # The saved Generator state makes the redone chunk identical to the original one.
    assert _comparable(redone) == _comparable(torn)

    # A finished run is not run again.
    before = (copy / RECORDS).read_bytes()
    assert run_tiny(copy, tiny_config()).ran == 0
    assert (copy / RECORDS).read_bytes() == before


def test_other_settings_in_the_same_folder_are_refused(tiny_run):
    out, _, _ = tiny_run
    with pytest.raises(ValueError, match="iterations"):
        run_tiny(out, tiny_config(iterations=61))


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("N", 10),
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
        ("true_q", 7),
        ("seed", -1),
        ("iterations", 2.5),
    ],
)
def test_bad_config_raises_naming_the_parameter(field, value):
    with pytest.raises(ValueError, match=f"parameter '{field}'"):
        tiny_config(**{field: value})


def test_levels_and_manifest(tmp_path):
    with pytest.raises(ValueError, match="level"):
        settings.config_for_level("medium", 0)
    with pytest.raises(ValueError, match="level"):
        run(ARCH, "medium", 0, tmp_path / "x", progress=False)
    assert not (tmp_path / "x").exists()  # refused before any work
    assert settings.config_for_level("full", 0).N == settings.PAPER_ARCH["n_data"]
    cfg = tiny_config()
    manifest = json.loads(json.dumps(cfg.manifest()))
    assert manifest["experiment"] == "racing-arch" and manifest["level"] == "quick"
    assert settings.config_from_manifest(manifest) == cfg


def _reward_matrices(problem, seed: int):
    """Raw and residual rewards at a Carlin & Chib state drawn from the pseudo-priors."""
    rng = np.random.default_rng(seed)
    phis = [f.mean + f.chol @ rng.standard_normal(f.dim) for f in problem.fits]
    st = chain.ChainState(0, phis, problem.log_pi.copy(), rng)
    L, sig2 = chain.reward_rows(problem, st)
    R = {kind: chain.residual_matrix(problem, st, L, sig2, kind) for kind in ("parameter", "data")}
    return L, R


def test_control_variates_keep_the_sums_and_reduce_reward_variance(tiny_problem):
    marginal, pairwise = [], []
    for seed in range(5):
        L, R = _reward_matrices(tiny_problem, seed)
        for kind in ("parameter", "data"):
            # E[h] is exact over the N terms: the target (and the exact answer) is unchanged.
            np.testing.assert_allclose(R[kind].sum(axis=1), L.sum(axis=1), rtol=0, atol=1e-8)
        m, p = variance_factors(L, R["parameter"])
        marginal.append(m)
        pairwise.append(p)
    # log10 of the variance ratio raw / residual: per arm by orders of magnitude, and still
    # clearly per pair of arms (what the pairwise race sees).
    assert min(marginal) > 2.0
    assert np.median(pairwise) > 0.5


def test_racing_gibbs_and_mh_errors_within_delta(tiny_problem):
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


def test_the_two_arm_race_stops_early_on_a_clear_gap_and_errs_at_most_delta_on_a_hard_one():
    """The race ARCH's MH test uses (the registered racing-mh's too), on rewards given as an
    array or through a callback."""
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
    # A callback sees only the indices the race reads, and gives the array's answer.
    seen = []

    def rewards(idx):
        seen.extend(idx)
        return hard[:, idx]

    order = rng.permutation(N)
    answer = race_two_arms(rewards, N, order, delta, m1)
    assert answer == race_two_arms(hard, N, order, delta, m1)
    assert seen == order[: answer[1]].tolist()
    with pytest.raises(ValueError, match="'bound'"):
        race_two_arms(hard, N, order, delta, m1, bound="t-test")


def test_summary_has_costs_ess_and_autocorrelation_of_both_samplers(tiny_run):
    _, summary, _ = tiny_run
    assert summary["complete"] and summary["missing"] == []
    assert summary["data"]["simulated"] is True
    for name in settings.SAMPLERS:
        s = summary["samplers"][name]
        run_ = s["run"]
        assert s["evals_total"] > 0 and run_["evals_per_sweep"] > 0
        assert len(run_["ess"]) == 2 and len(run_["ess_per_eval"]) == 2
        assert all(len(a) == settings.ACF_LAGS + 1 for a in run_["autocorr"] if a is not None)
        assert math.isclose(sum(run_["adjusted_posterior_pooled"]), 1.0)
        assert len(s["adapt"]["trace"]) > 0
    exact, sub = summary["samplers"]["exact"], summary["samplers"]["sub"]
    # Exact: 6 N for the Gibbs draw + N for MALA every sweep.
    assert exact["run"]["evals_per_sweep"] == 7 * summary["config"]["N"]
    assert sub["run"]["evals_per_sweep"] < exact["run"]["evals_per_sweep"]
    assert sub["gibbs"]["n"] == 60 * 3 and exact["gibbs"]["errors"] == 0
    assert {row["quantity"] for row in summary["paper_vs_ours"]} >= {"Racing Gibbs error rate"}
    json.dumps(summary)  # plain data, ready for a report
    figures = arch_figures(summary)
    assert set(figures) == {"log_posterior_vs_evals", "adjusted_posterior", "autocorrelation"}
    assert all(isinstance(f, Figure) for f in figures.values())


def test_summary_of_partial_results_lists_what_is_missing(tiny_run, tmp_path):
    out, _, _ = tiny_run
    records = load_records(out / RECORDS)
    first = [r for r in records if r["key"] in ("pilot", "adapt/exact:0", "adapt/exact:20")]
    summary = arch_summary(tiny_config(), first)
    assert not summary["complete"]
    assert any(m.startswith("adapt/exact (40/60") for m in summary["missing"])
    assert any(m.startswith("run/sub/1 (0/60") for m in summary["missing"])
    assert summary["samplers"]["sub"]["run"] is None
    assert summary["comparison"]["ess_ratio"] is None
    arch_figures(summary)  # draws what there is
    part = tmp_path / "partial"
    part.mkdir()
    shutil.copy(out / "experiment.json", part / "experiment.json")
    (part / RECORDS).write_text(
        "".join(
            r
            for r in _lines(out)
            if json.loads(r)["key"] in ("pilot", "adapt/exact:0", "adapt/exact:20")
        )
    )
    sec = section(ARCH, part)
    assert not sec["complete"] and sec["missing"] > 0
    assert any(n.startswith("Missing: adapt/exact (40/60") for n in sec["notes"])


def test_paper_numbers_are_data():
    paper = settings.paper_arch()
    assert paper["gibbs_error_rate"] == 4e-4 and paper["mh_error_rate"] == 2e-3
    assert paper["models"] == [5, 10, 15, 20, 25, 30] and paper["delta"] == 0.05
    paper["models"].append(35)
    assert settings.PAPER_ARCH["models"] == [5, 10, 15, 20, 25, 30]


def test_the_report_renders_the_arch_section_beside_the_paper(tiny_run, tmp_path):
    from harness.report import write_report

    out, _, _ = tiny_run
    html = write_report([out], tmp_path / "arch.html").read_text()
    assert "racing-arch" in html and "not available" in html
    assert "Racing Gibbs error rate" in html and html.count("<svg") >= 3
    assert "http" not in html and "<script" not in html
