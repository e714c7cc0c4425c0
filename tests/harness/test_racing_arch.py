"""The ARCH model-selection experiment (000_26bed7cc1ef3ab92.txt, Sec. 5.2) on a tiny config."""

from __future__ import annotations

import dataclasses
import json
import math
import shutil

import numpy as np
import pytest
from matplotlib.figure import Figure

from harness.experiments import racing_arch as arch
from harness.experiments.store import RECORDS_FILE, load_records
from harness.gates.rates import error_rate

TINY = dict(
    N=600,
    pilot_iterations=100,
    adapt_iterations=60,
    iterations=60,
    chains=2,
    chunk=20,
    batch=50,
)


def tiny_config(**overrides) -> arch.ArchConfig:
    return dataclasses.replace(arch.ArchConfig.from_level("quick", seed=3), **{**TINY, **overrides})


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("arch") / "run"
    summary = arch.run_arch(tiny_config(), out, progress=False)
    return out, summary


@pytest.fixture(scope="module")
def tiny_problem():
    """Pilot fits and the problem of the tiny config, without running any chain."""
    cfg = tiny_config()
    data = arch.arch_data(arch.simulate_returns(cfg.N, cfg.true_alpha, cfg.true_nu, cfg.seed))
    fits = tuple(arch.pilot_fit(q, data, cfg) for q in arch.MODELS)
    return arch.build_problem(cfg, fits)


def _chunk_lines(out) -> list[str]:
    return (out / RECORDS_FILE).read_text().splitlines(keepends=True)


def _comparable(rec: dict) -> dict:
    return {k: v for k, v in rec.items() if k != "seconds"}


def test_records_written_and_resumable_without_duplicates(tiny_run, tmp_path):
    out, _ = tiny_run
    records = load_records(out / RECORDS_FILE)
    chunks = [r for r in records if r["kind"] == "chunk"]
    # 2 adaptation parts + 2 samplers x 2 chains, 60 sweeps each in chunks of 20
    assert len(chunks) == 6 * 3
    assert sum(r["kind"] == "pilot" for r in records) == 1
    assert (out / "experiment.json").is_file()

    # A kill in the middle of the last line: the rerun repairs it and redoes only that chunk.
    copy = tmp_path / "resumed"
    shutil.copytree(out, copy)
    lines = _chunk_lines(copy)
    torn = json.loads(lines[-1])
    (copy / RECORDS_FILE).write_text("".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2])
    arch.run_arch(tiny_config(), copy, progress=False)
    again = load_records(copy / RECORDS_FILE)
    keys = [r["key"] for r in again]
    assert len(keys) == len(set(keys)) == len(records)
    redone = next(r for r in again if r["key"] == torn["key"])
    # The saved Generator state makes the redone chunk identical to the original one.
    assert _comparable(redone) == _comparable(torn)

    # A finished run is not run again.
    before = (copy / RECORDS_FILE).read_bytes()
    arch.run_arch(tiny_config(), copy, progress=False)
    assert (copy / RECORDS_FILE).read_bytes() == before


def test_other_settings_in_the_same_folder_are_refused(tiny_run):
    out, _ = tiny_run
    with pytest.raises(ValueError, match="iterations"):
        arch.run_arch(tiny_config(iterations=61), out, progress=False)


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
        ("seed", -1),
        ("iterations", 2.5),
    ],
)
def test_bad_config_raises_naming_the_parameter(field, value):
    with pytest.raises(ValueError, match=field):
        tiny_config(**{field: value})


def test_unknown_level_is_refused():
    with pytest.raises(ValueError, match="level"):
        arch.ArchConfig.from_level("medium")
    assert arch.ArchConfig.from_level("full").N == arch.PAPER_ARCH["n_data"]


def _reward_matrices(problem, seed: int):
    """Raw and residual rewards at a Carlin & Chib state drawn from the pseudo-priors."""
    rng = np.random.default_rng(seed)
    phis = [f.mean + f.chol @ rng.standard_normal(f.dim) for f in problem.fits]
    st = arch.ChainState(0, phis, problem.log_pi.copy(), rng)
    L, sig2 = arch._reward_rows(problem, st)
    R = {kind: arch._residual_matrix(problem, st, L, sig2, kind) for kind in ("parameter", "data")}
    return L, R


def test_control_variates_keep_the_sums_and_reduce_reward_variance(tiny_problem):
    marginal, pairwise = [], []
    for seed in range(5):
        L, R = _reward_matrices(tiny_problem, seed)
        for kind in ("parameter", "data"):
            # E[h] is exact over the N terms: the target (and the exact answer) is unchanged.
            np.testing.assert_allclose(R[kind].sum(axis=1), L.sum(axis=1), rtol=0, atol=1e-8)
        m, p = arch.variance_factors(L, R["parameter"])
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
    st = arch.ChainState(1, [f.mean.copy() for f in problem.fits], -log_ev, rng)
    tally = arch.Tally()
    for _ in range(1500):
        arch._sgld_mh(problem, st, tally)
        arch._refresh_pseudo(problem, st)
        arch._gibbs_racing(problem, st, tally)
    delta = problem.config.delta
    assert tally.gibbs_early > 100 and tally.mh_early > 100  # races did stop early
    gibbs = error_rate(tally.gibbs_errors, tally.gibbs_draws, delta, alpha=0.01)
    mh = error_rate(tally.mh_errors, tally.mh_tests, delta, alpha=0.01)
    assert gibbs.passed, gibbs.detail
    assert mh.passed, mh.detail


def test_race_mh_stops_early_on_a_clear_gap_and_errs_at_most_delta_on_a_hard_one():
    N, m1, delta = 1000, 50, 0.05
    schedule = arch.doubling_schedule(N, m1)
    B = arch.b_normal(delta, N, m1)
    rng = np.random.default_rng(0)
    noise = rng.standard_normal(N)
    accept, used = arch.race_mh(lambda idx: 1e-3 * noise[idx], 0.1, N, schedule, B, rng)
    assert accept and used == m1
    # Mean gap ~1 standard error of the full sum: many races run to N, where they are exact.
    d = noise - noise.mean() + 0.03
    runs = [arch.race_mh(lambda idx: d[idx], 0.0, N, schedule, B, rng) for _ in range(1000)]
    errors = sum(not accept for accept, _ in runs)
    assert any(used == N for _, used in runs) and all(a for a, used in runs if used == N)
    gate = error_rate(errors, len(runs), delta, alpha=0.01)
    assert gate.passed, gate.detail


def test_summary_has_costs_ess_and_autocorrelation_of_both_samplers(tiny_run):
    _, summary = tiny_run
    assert summary["complete"] and summary["missing"] == []
    assert summary["data"]["simulated"] is True
    for name in arch.SAMPLERS:
        s = summary["samplers"][name]
        run = s["run"]
        assert s["evals_total"] > 0 and run["evals_per_sweep"] > 0
        assert len(run["ess"]) == 2 and len(run["ess_per_eval"]) == 2
        assert all(len(a) == arch.ACF_LAGS + 1 for a in run["autocorr"] if a is not None)
        assert math.isclose(sum(run["adjusted_posterior_pooled"]), 1.0)
        assert len(s["adapt"]["trace"]) > 0
    exact, sub = summary["samplers"]["exact"], summary["samplers"]["sub"]
    # Exact: 6 N for the Gibbs draw + N for MALA every sweep.
    assert exact["run"]["evals_per_sweep"] == 7 * summary["config"]["N"]
    assert sub["run"]["evals_per_sweep"] < exact["run"]["evals_per_sweep"]
    assert sub["gibbs"]["n"] == 60 * 3 and exact["gibbs"]["errors"] == 0
    assert {row["quantity"] for row in summary["paper_vs_ours"]} >= {"Racing Gibbs error rate"}
    json.dumps(summary)  # plain data, ready for a report
    figures = arch.arch_figures(summary)
    assert set(figures) == {"log_posterior_vs_evals", "adjusted_posterior", "autocorrelation"}
    assert all(isinstance(f, Figure) for f in figures.values())


def test_summary_of_partial_results_lists_what_is_missing(tiny_run, tmp_path):
    out, _ = tiny_run
    part = tmp_path / "partial"
    part.mkdir()
    shutil.copy(out / "experiment.json", part / "experiment.json")
    lines = _chunk_lines(out)
    (part / RECORDS_FILE).write_text("".join(lines[:3]))  # pilot + first two chunks
    summary = arch.arch_summary(part)
    assert not summary["complete"]
    assert any(m.startswith("adapt/exact (40/60") for m in summary["missing"])
    assert any(m.startswith("run/sub/1 (0/60") for m in summary["missing"])
    assert summary["samplers"]["sub"]["run"] is None
    assert summary["comparison"]["ess_ratio"] is None
    arch.arch_figures(summary)  # draws what there is


def test_paper_numbers_are_data():
    paper = arch.paper_arch()
    assert paper["gibbs_error_rate"] == 4e-4 and paper["mh_error_rate"] == 2e-3
    assert paper["models"] == [5, 10, 15, 20, 25, 30] and paper["delta"] == 0.05
    paper["models"].append(35)
    assert arch.PAPER_ARCH["models"] == [5, 10, 15, 20, 25, 30]


def test_the_report_renders_the_arch_section_beside_the_paper(tiny_run, tmp_path):
    from harness.report import write_report

    out, _ = tiny_run
    html = write_report([out], tmp_path / "arch.html").read_text()
    assert "racing-arch" in html and "not available" in html
    assert "Racing Gibbs error rate" in html and html.count("<svg") >= 3
    assert "http" not in html and "<script" not in html
