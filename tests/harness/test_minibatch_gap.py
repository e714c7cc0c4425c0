"""The minibatch-gap experiment: a tiny config runs, resumes, meets 003's Thm. 1-2, renders."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

import harness.experiments.minibatch_gap as mg
from harness.experiments import get_experiment
from harness.experiments.framework import LEVELS, RunSummary, run, section
from harness.experiments.minibatch_gap.chains import OBSERVABLES
from harness.experiments.minibatch_gap.plan import exact_settings
from harness.experiments.minibatch_gap.settings import ChainSpec, GraphSpec, MinibatchGapConfig
from harness.store import RECORDS, load_records

EXPERIMENT = get_experiment("minibatch-gap")


def _tiny(seed: int = 3) -> MinibatchGapConfig:
    graphs = (GraphSpec("a", 3, 2, 1.0), GraphSpec("b", 3, 2, 3.0))
    chains = (
        ChainSpec("tiny", "b", (1.0,), 20_000, 100, 50),
        ChainSpec("potts", "potts", (1.0,), 20_000, 100, 50, side=2, beta=1.0, D=2),
    )
    return MinibatchGapConfig(
        level="quick",
        seed=seed,
        graphs=graphs,
        lam_over_L=(0.5, 2.0, 8.0, 32.0),
        lam_over_L2=(1.0,),
        max_grid=1e5,
        chains=chains,
    )


def _run(out: Path, config: MinibatchGapConfig | None = None, **kw) -> RunSummary:
    """framework.run with ``config`` (the tiny one by default) in place of the level's."""
    config = config or _tiny()
    return run(
        EXPERIMENT,
        "quick",
        config.seed,
        out,
        progress=False,
        scheduler="inprocess",
        log=lambda msg: None,
        config=config,
        **kw,
    )


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("mg") / "run"
    exact = _run(out, part="exact")
    n_exact = len(mg.plan(_tiny(), [], "exact"))
    assert exact.ran == exact.planned == n_exact
    assert {r["type"] for r in load_records(out / RECORDS)} == {"exact"}
    rest = _run(out)  # the chains join the exact records already there
    assert rest.already_done == n_exact and rest.ran == rest.planned - n_exact == 4
    return out


def test_runs_and_resumes_without_duplicates(finished: Path) -> None:
    planned = mg.plan(_tiny(), [], "all")
    first = (finished / RECORDS).read_text().splitlines()
    assert len(first) == len(planned)
    assert [json.loads(x)["key"] for x in first] == [json.loads(x)["task_id"] for x in first]
    again = _run(finished)
    assert again.ran == 0 and again.already_done == len(first)
    assert (finished / RECORDS).read_text().splitlines() == first


def test_resume_after_a_lost_record(tmp_path: Path, finished: Path) -> None:
    # A run killed mid-way: the last record is torn; the resume runs exactly that one.
    out = tmp_path / "run"
    out.mkdir()
    lines = (finished / RECORDS).read_text().splitlines(keepends=True)
    (out / "experiment.json").write_text((finished / "experiment.json").read_text())
    (out / RECORDS).write_text("".join(lines[:-1]) + lines[-1][:10])
    summary = _run(out)
    assert summary.ran == 1
    keys = [json.loads(x)["key"] for x in (out / RECORDS).read_text().splitlines()]
    assert len(keys) == len(set(keys)) == len(lines)


def test_refuses_another_config(finished: Path) -> None:
    with pytest.raises(ValueError, match="seed"):
        _run(finished, _tiny(seed=4))


def test_every_ratio_meets_its_theorem(finished: Path) -> None:
    exact = [r for r in load_records(finished / RECORDS) if r["type"] == "exact"]
    assert exact
    for r in exact:
        if r["lam"] >= 2.0 * r["L"]:
            assert r["bound_thm1"] is not None
            assert r["ratio_thm1"] >= r["bound_thm1"] - r["gap_error_pg"] / r["gap_gibbs"]
            assert r["holds_thm1"]
        else:
            assert r["bound_thm1"] is None and r["holds_thm1"] is None
        assert r["ratio_thm2"] >= r["bound_thm2"] - r["gap_error_pmh"] / r["gap_mh"]
        assert r["holds_thm2"]
        assert 0.0 <= r["truncation_bound_pg"] < 1e-10


def test_chain_estimates_are_close_to_exact(finished: Path) -> None:
    chains = [r for r in load_records(finished / RECORDS) if r["type"] == "chain"]
    tiny = [r for r in chains if r["exact"] is not None]
    assert tiny and len(chains) == 4
    for r in tiny:
        for o in OBSERVABLES:
            got, want = r["estimates"][o]["one_minus_rho1"], r["exact"][o]["one_minus_rho1"]
            assert abs(got - want) < 0.05  # 2e4 steps; the Rayleigh quotient is >= the gap
            assert want >= r["exact"]["gap"] - 1e-12


def test_summary_lists_graphs_and_chains(finished: Path) -> None:
    text = mg.summary(load_records(finished / RECORDS))
    assert "Thm. 1" in text and "NO" not in text
    assert all(name in text for name in ("a ", "b ", "tiny", "potts"))


@pytest.mark.parametrize(
    ("change", "name"),
    [
        ({"level": "medium"}, "level"),
        ({"seed": -1}, "seed"),
        ({"lam_over_L": (1.0, -2.0)}, "lam_over_L"),
        ({"max_grid": 0}, "max_grid"),
        ({"tail": 1e-3}, "tail"),
        ({"graphs": (GraphSpec("a", 9, 3, 1.0),)}, "graphs"),
        ({"graphs": (GraphSpec("a", 3, 2, float("nan")),)}, "graphs.L"),
        ({"graphs": (GraphSpec("a", 3, 2, float("inf")),)}, "graphs.L"),
        ({"chains": (ChainSpec("c", "nope", (1.0,), 1000, 0, 10),)}, "chains.graph"),
        ({"chains": (ChainSpec("c", "a", (1.0,), 1000, 0, 100),)}, "chains.max_lag"),
    ],
)
def test_bad_config_names_the_parameter(change: dict, name: str) -> None:
    with pytest.raises(ValueError, match=f"parameter '{name}'|--{name}"):
        dataclasses.replace(_tiny(), **change)


def test_bad_level_and_part_before_any_work(tmp_path: Path) -> None:
    out = tmp_path / "never"
    with pytest.raises(ValueError, match="level"):
        mg.config_for_level("huge", 0)
    with pytest.raises(ValueError, match="level"):
        run(EXPERIMENT, "huge", 0, out, progress=False)
    with pytest.raises(ValueError, match="part"):
        run(EXPERIMENT, "quick", 0, out, part="speed", progress=False)
    assert not out.exists()
    assert EXPERIMENT.parts() == ("all", "exact", "chains")


def test_settings_over_the_grid_cap_are_skipped_by_rule() -> None:
    capped = dataclasses.replace(_tiny(), max_grid=1000.0)
    run_now, skipped = exact_settings(capped)
    assert skipped and run_now
    keys = {t.key for t in mg.plan(capped, [], "exact")}
    assert keys == {s.key for s in run_now} and not keys & {s.key for s, _ in skipped}
    assert all("Poisson grid" in why for _, why in skipped)


def test_levels_are_valid_and_round_trip() -> None:
    for level in LEVELS:
        config = mg.config_for_level(level, 1)
        again = mg.config_from_manifest(json.loads(json.dumps(config.manifest())))
        assert again == config


def test_section_has_svg_figures(finished: Path) -> None:
    s = section(EXPERIMENT, finished)
    assert s["kind"] == "experiment" and s["name"] == "minibatch-gap"
    assert s["complete"] and s["missing"] == 0 and s["planned"] == 14
    figures = [f for g in s["figure_groups"] for f in g["figures"]]
    assert len(figures) == 2 + 2  # one per graph, one per chain group
    assert all(f["svg"].lstrip().startswith(("<svg", "<?xml")) for f in figures)
    assert all("<svg" in f["svg"] for f in figures)
    titles = [t["title"] for t in s["tables"]]
    assert titles == ["Tightness of the bounds", "Chain-estimated gaps"]
    assert s["tables"][0]["banner"]["cls"] == "pass"
    assert s["records_table"]["rows"] and s["skipped"] == []
