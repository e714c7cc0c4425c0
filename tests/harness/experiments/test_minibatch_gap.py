"""The minibatch-gap experiment (003, Thm. 1-3) on tiny graphs: records, resume, claims, report."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import pytest

from harness.declare import from_manifest
from harness.experiments.claims import judge
from harness.experiments.framework import run, section
from harness.experiments.minibatch_gap import MinibatchGap, exact_settings
from harness.experiments.minibatch_gap.chebyshev import bound, interpolation_error
from harness.experiments.minibatch_gap.gaps import (
    OBSERVABLES,
    ChainSpec,
    GraphSpec,
    MinibatchGapConfig,
    exact_key,
)
from harness.gates.mcmc import gap_with_error, spectral_gap
from harness.report.page import write_report
from harness.spec import LEVELS
from harness.store import RECORDS, load_records
from harness.tasks import label_words
from tests.harness.experiments.tiny import CLOCK_FIELDS, run_tiny, stable

GAP = MinibatchGap()
CLOCK = CLOCK_FIELDS | {"chain_s"}


def tiny_config(seed: int = 3) -> MinibatchGapConfig:
    chains = (
        ChainSpec("tiny", "b", (1.0,), 20_000, 100, 50),
        ChainSpec("potts", "potts", (1.0,), 20_000, 100, 50, side=2, beta=1.0, D=2),
    )
    return MinibatchGapConfig(
        level="quick",
        seed=seed,
        graphs=(GraphSpec("a", 3, 2, 1.0), GraphSpec("b", 3, 2, 3.0)),
        lam_over_L=(0.5, 2.0, 8.0, 32.0),
        lam_over_L2=(1.0,),
        max_grid=1e5,
        chains=chains,
        notes=("tiny test configuration",),
    )


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("mg") / "run"
    n_exact = len(GAP.plan(tiny_config(), [], "exact"))
    exact = run_tiny(GAP, tiny_config(), out, part="exact")
    assert exact.ran == exact.planned == n_exact
    assert {r["type"] for r in load_records(out / RECORDS)} == {"exact"}
    rest = run_tiny(GAP, tiny_config(), out)  # the chains join the exact records already there
    # the chains and Thm. 3's interpolation task join the exact records already there
    assert rest.already_done == n_exact and rest.ran == rest.planned - n_exact == 5
    return out


def test_runs_and_resumes_without_duplicates(finished: Path, tmp_path: Path) -> None:
    lines = (finished / RECORDS).read_text().splitlines(keepends=True)
    assert len(lines) == len(GAP.plan(tiny_config(), [], "all"))
    assert all(json.loads(x)["key"] == json.loads(x)["task_id"] for x in lines)
    again = run_tiny(GAP, tiny_config(), finished)
    assert again.ran == 0 and again.already_done == len(lines)
    assert "thm1-a" in again.text and "claims:" in again.text
    # A kill: the last record torn; the resume repeats exactly that one.
    out = tmp_path / "run"
    out.mkdir()
    (out / "experiment.json").write_text((finished / "experiment.json").read_text())
    (out / RECORDS).write_text("".join(lines[:-1]) + lines[-1][:10])
    assert run_tiny(GAP, tiny_config(), out).ran == 1
    old = {r["key"]: stable(r, CLOCK) for r in load_records(finished / RECORDS)}
    after = load_records(out / RECORDS)
    assert len(after) == len(lines) and all(stable(r, CLOCK) == old[r["key"]] for r in after)


def test_refuses_another_config(finished: Path) -> None:
    with pytest.raises(ValueError, match="seed"):
        run_tiny(GAP, tiny_config(seed=4), finished)


def test_every_ratio_meets_its_theorem(finished: Path) -> None:
    exact = [r for r in load_records(finished / RECORDS) if r["type"] == "exact"]
    assert exact
    for r in exact:
        if r["lam"] >= 2.0 * r["L"]:
            assert r["ratio_thm1"] >= r["bound_thm1"] - r["gap_error_pg"] / r["gap_gibbs"]
            assert r["holds_thm1"]
        else:
            assert r["bound_thm1"] is None and r["holds_thm1"] is None
        assert r["ratio_thm2"] >= r["bound_thm2"] - r["gap_error_pmh"] / r["gap_mh"]
        assert r["holds_thm2"] and 0.0 <= r["truncation_bound_pg"] < 1e-10


def test_chain_estimates_are_close_to_exact(finished: Path) -> None:
    chains = [r for r in load_records(finished / RECORDS) if r["type"] == "chain"]
    tiny = [r for r in chains if r["exact"] is not None]
    assert tiny and len(chains) == 4
    for r in tiny:
        for o in OBSERVABLES:
            got, want = r["estimates"][o]["one_minus_rho1"], r["exact"][o]["one_minus_rho1"]
            assert abs(got - want) < 0.05  # 2e4 steps; the Rayleigh quotient is >= the gap
            assert want >= r["exact"]["gap"] - 1e-12


@pytest.mark.parametrize(
    ("change", "name"),
    [
        ({"level": "medium"}, "level"),
        ({"seed": -1}, "seed"),
        ({"lam_over_L": (1.0, -2.0)}, "lam_over_L"),
        ({"lam_over_L": (), "lam_over_L2": ()}, "lam_over_L"),
        ({"max_grid": 0}, "max_grid"),
        ({"tail": 1e-3}, "tail"),
        ({"graphs": (GraphSpec("a", 3, 2, 1.0), GraphSpec("a", 3, 2, 2.0))}, "graphs"),
        ({"chains": (ChainSpec("c", "nope", (1.0,), 1000, 0, 10),)}, "chains.graph"),
    ],
)
def test_bad_config_names_the_parameter(change: dict, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        dataclasses.replace(tiny_config(), **change)


@pytest.mark.parametrize(
    ("make", "name"),
    [
        (lambda: GraphSpec("a", 9, 3, 1.0), "graphs"),
        (lambda: GraphSpec("a", 3, 2, math.nan), "L"),
        (lambda: GraphSpec("a", 3, 2, math.inf), "L"),
        (lambda: GraphSpec("a", 3, 2, 1.0, edge_prob=1.5), "edge_prob"),
        (lambda: ChainSpec("c", "a", (1.0,), 1000, 0, 100), "max_lag"),
        (lambda: ChainSpec("c", "a", (0.0,), 1000, 0, 10), "lam_over_L2"),
        (lambda: ChainSpec("c", "potts", (1.0,), 1000, 0, 10), "side"),
    ],
)
def test_a_bad_graph_or_chain_names_the_parameter(make, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        make()


def test_bad_level_and_part_before_any_work(tmp_path: Path) -> None:
    out = tmp_path / "never"
    with pytest.raises(ValueError, match="level"):
        GAP.config("huge")
    with pytest.raises(ValueError, match="part"):
        run(GAP, "quick", 0, out, part="speed", progress=False)
    assert not out.exists()


def test_settings_over_the_grid_cap_are_skipped_by_rule() -> None:
    capped = dataclasses.replace(tiny_config(), max_grid=1000.0)
    run_now, skipped = exact_settings(capped)
    assert skipped and run_now and all("Poisson grid" in why for why in skipped)
    assert {t.key for t in GAP.plan(capped, [], "exact")} == {
        exact_key(g, lam) for g, lam, _ in run_now
    }
    assert GAP.skipped(capped) == skipped


def test_levels_round_trip_and_keys_match_the_old_code() -> None:
    for level in LEVELS:
        config = GAP.config(level, 1)
        assert (
            from_manifest(MinibatchGapConfig, json.loads(json.dumps(config.manifest()))) == config
        )
    # the exact gaps and the chains, and one unseeded task for Thm. 3
    assert len(GAP.plan(GAP.config("quick"), [], "all")) == 31
    assert len(GAP.plan(GAP.config("full"), [], "all")) == 59
    assert [t.seed for t in GAP.plan(GAP.config("quick"), [], "chebyshev")] == [None]
    tasks = {t.key: t for t in GAP.plan(GAP.config("quick", 7), [], "all")}
    # Literal keys of the pre-framework code: exact tasks are unseeded, chains seeded by key.
    assert tasks["exact|g3-D2-L1|lam=0.25"].seed is None
    chain = tasks["chain|potts|poisson-gibbs|lam=4.76696407174|steps=300000"]
    assert chain.seed is not None and chain.seed.entropy == 7
    assert chain.seed.spawn_key == label_words(chain.key)
    assert "chain|tiny|gibbs|lam=-|steps=200000" in tasks


def test_section_opens_with_claims_and_has_svg_figures(finished: Path, tmp_path: Path) -> None:
    s = section(GAP, finished)
    assert s["name"] == "minibatch-gap" and s["complete"] and s["planned"] == 15
    assert s["notes"] == ["tiny test configuration"] and s["skipped"] == []
    figures = [f for g in s["figure_groups"] for f in g["figures"]]
    assert len(figures) == 2  # one per chain group
    assert all("<svg" in f["svg"] for f in figures)
    verdicts = {c["id"]: c["verdict"] for c in s["claims"]}
    # one claim per theorem, each graph's own least ratio under it
    ids = ["thm1", "thm1-a", "thm1-b", "thm2", "thm2-a", "thm2-b", "thm3-chebyshev"]
    assert verdicts == dict.fromkeys(ids, "reproduced")
    assert [c["id"] for c in s["claims"] if not c["reading_of"]] == [
        "thm1",
        "thm2",
        "thm3-chebyshev",
    ]
    assert len(s["records_table"]["rows"]) == 10  # the exact settings
    page = write_report([finished], tmp_path / "report.html").read_text(encoding="utf-8")
    assert page.index("Paper claims</h3>") < page.index("Gaps estimated from chains")


def test_gap_with_error_cleans_rounding_and_bounds_the_move() -> None:
    pi = np.full(3, 1 / 3)
    clean = np.array([[0.0, 0.5, 0.5], [0.5, 0.0, 0.5], [0.5, 0.5, 0.0]])
    rounded = clean + np.array([[-1e-13, 5e-14, 5e-14], [0, 0, 0], [0, 0, 0]])
    gap, err = gap_with_error(rounded, pi, 1e-14)
    assert gap == pytest.approx(spectral_gap(clean, pi), abs=1e-12)
    assert err == pytest.approx(2 * (2e-14 + 2e-13) * 3**0.5)  # Weyl, sqrt(n max/min pi)
    assert rounded[0, 0] < 0  # the caller's matrix is left alone
    far = clean.copy()
    far[0, :2] += (-1e-9, 1e-9)
    with pytest.raises(ValueError, match="beyond rounding"):
        gap_with_error(far, pi, 0.0)


def _exact(graph: str, lam: float, L: float, r1: float, r2: float) -> dict:
    b1 = math.exp(-4 * L * L / lam) if lam >= 2 * L else None
    b2 = 0.5 * math.exp(-L * L / (lam + L))
    return {
        "type": "exact",
        "graph": graph,
        "lam_label": f"{lam:g}",
        "gap_gibbs": 0.3,
        "gap_mh": 0.5,
        "gap_error_pg": 1e-13,
        "gap_error_pmh": 1e-13,
        "bound_thm1": b1,
        "bound_thm2": b2,
        "ratio_thm1": r1 * (b1 or 1.0),
        "ratio_thm2": r2 * b2,
    }


def _chebyshev(*ratios: float) -> dict:
    cases = [
        {"kappa": 1.0, "m": 3, "error": 1e-4, "bound": q * 1e-4, "judged": True} for q in ratios
    ]
    return {"type": "chebyshev", "cases": cases}


def test_claims_decide_both_ways() -> None:
    claims = GAP.claims(tiny_config())
    claims += tuple(r for c in claims for r in c.readings)
    # Made-up ratios at 1.5x each bound (reproduced), then one lam at 0.9x (not reproduced).
    good = [_exact(g, m * L, L, 1.5, 1.5) for g, L in (("a", 1.0), ("b", 3.0)) for m in (1, 4)]
    bad = [*good, *(_exact(g, 4 * L, L, 0.9, 0.9) for g, L in (("a", 1.0), ("b", 3.0)))]
    good.append(_chebyshev(2.0, 30.0))
    bad.append(_chebyshev(30.0, 0.9))
    assert {judge(c, good).verdict for c in claims} == {"reproduced"}
    assert {judge(c, bad).verdict for c in claims} == {"not reproduced"}
    assert judge(claims[0], []).verdict == "inconclusive"


def test_thm3_can_fail_an_interpolant_of_too_low_a_degree() -> None:
    # The bound at m = 10 is far below a degree-3 interpolant's error: a kernel that built a
    # lower degree than it states would fail the claim.
    assert bound(4.0, 10)[0] < interpolation_error(4.0, 3) / 1e3
    assert interpolation_error(4.0, 10) < bound(4.0, 10)[0]
