"""The minibatch-gap experiment: a tiny config runs, resumes, meets 003's Thm. 1-2, renders."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from harness.experiments import minibatch_gap as mg
from harness.experiments import minibatch_gap_report as report
from harness.experiments.store import RECORDS_FILE, load_records


def _tiny() -> mg.MinibatchGapConfig:
    graphs = (mg.GraphSpec("a", 3, 2, 1.0), mg.GraphSpec("b", 3, 2, 3.0))
    chains = (
        mg.ChainSpec("tiny", "b", (1.0,), 20_000, 100, 50),
        mg.ChainSpec("potts", "potts", (1.0,), 20_000, 100, 50, side=2, beta=1.0, D=2),
    )
    return mg.MinibatchGapConfig(
        level="quick",
        seed=3,
        graphs=graphs,
        lam_over_L=(0.5, 2.0, 8.0, 32.0),
        lam_over_L2=(1.0,),
        max_grid=1e5,
        chains=chains,
    )


def _quiet(msg: str) -> None:
    pass


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("mg") / "run"
    mg.run(_tiny(), out, progress=False, log=_quiet)
    return out


def test_runs_and_resumes_without_duplicates(finished: Path) -> None:
    config = _tiny()
    planned = mg.plan(config)
    first = (finished / RECORDS_FILE).read_text().splitlines()
    assert len(first) == len(planned.exact) + len(planned.chains)
    again = mg.run(config, finished, progress=False, log=_quiet)
    assert again.ran == 0 and again.already_done == len(first)
    assert (finished / RECORDS_FILE).read_text().splitlines() == first


def test_resume_after_a_lost_record(tmp_path: Path, finished: Path) -> None:
    # A run killed mid-way: the last record is gone; the resume runs exactly that one.
    out = tmp_path / "run"
    out.mkdir()
    lines = (finished / RECORDS_FILE).read_text().splitlines(keepends=True)
    (out / "experiment.json").write_text((finished / "experiment.json").read_text())
    (out / RECORDS_FILE).write_text("".join(lines[:-1]) + lines[-1][:10])  # torn last line
    summary = mg.run(_tiny(), out, progress=False, log=_quiet)
    assert summary.ran == 1
    keys = [json.loads(x)["key"] for x in (out / RECORDS_FILE).read_text().splitlines()]
    assert len(keys) == len(set(keys)) == len(lines)


def test_refuses_another_config(finished: Path) -> None:
    other = dataclasses.replace(_tiny(), seed=4)
    with pytest.raises(ValueError, match="seed"):
        mg.run(other, finished, progress=False, log=_quiet)


def test_every_ratio_meets_its_theorem(finished: Path) -> None:
    exact = [r for r in load_records(finished / RECORDS_FILE) if r["type"] == "exact"]
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
    chains = [r for r in load_records(finished / RECORDS_FILE) if r["type"] == "chain"]
    tiny = [r for r in chains if r["exact"] is not None]
    assert tiny and len(chains) == 4
    for r in tiny:
        for o in mg.OBSERVABLES:
            got, want = r["estimates"][o]["one_minus_rho1"], r["exact"][o]["one_minus_rho1"]
            assert abs(got - want) < 0.05  # 2e4 steps; the Rayleigh quotient is >= the gap
            assert want >= r["exact"]["gap"] - 1e-12


@pytest.mark.parametrize(
    ("change", "name"),
    [
        ({"level": "medium"}, "level"),
        ({"seed": -1}, "seed"),
        ({"lam_over_L": (1.0, -2.0)}, "lam_over_L"),
        ({"max_grid": 0}, "max_grid"),
        ({"graphs": (mg.GraphSpec("a", 9, 3, 1.0),)}, "graphs"),
        ({"graphs": (mg.GraphSpec("a", 3, 2, float("nan")),)}, "graphs.L"),
        ({"chains": (mg.ChainSpec("c", "nope", (1.0,), 1000, 0, 10),)}, "chains.graph"),
    ],
)
def test_bad_config_names_the_parameter(change: dict, name: str) -> None:
    bad = dataclasses.replace(_tiny(), **change)
    with pytest.raises(ValueError, match=name):
        mg.check_config(bad)


def test_bad_level_and_part() -> None:
    with pytest.raises(ValueError, match="level"):
        mg.config_for_level("huge")
    with pytest.raises(ValueError, match="part"):
        mg.run(_tiny(), Path("unused"), part="speed")


def test_levels_are_valid_and_round_trip() -> None:
    for level in mg.LEVELS:
        config = mg.config_for_level(level, seed=1)
        again = mg.MinibatchGapConfig.from_manifest(json.loads(json.dumps(config.manifest())))
        assert again == config


def test_section_has_svg_figures(finished: Path) -> None:
    s = report.section(finished)
    assert s["kind"] == "experiment" and s["name"] == mg.NAME
    assert s["complete"] and s["missing"] == 0
    figures = [f for g in s["figure_groups"] for f in g["figures"]]
    assert len(figures) == 2 + 2  # one per graph, one per chain group
    assert all(f["svg"].lstrip().startswith(("<svg", "<?xml")) for f in figures)
    assert all("<svg" in f["svg"] for f in figures)
    titles = [t["title"] for t in s["tables"]]
    assert "Tightness of the bounds" in titles
    assert s["tables"][0]["banner"]["cls"] == "pass"
