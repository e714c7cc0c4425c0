"""The continuous-spin experiment (003, Sec. 4.2), tiny grid: records, resume, claims, report."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from harness.declare import from_manifest
from harness.experiments.claims import judge, primary
from harness.experiments.continuous_spin import ContinuousSpin
from harness.experiments.continuous_spin.run import (
    ContinuousSpinConfig,
    bin_counts,
    kl_floor,
    sym_kl,
)
from harness.experiments.framework import run, section
from harness.report.page import write_report
from harness.store import RECORDS, load_records
from harness.tasks import label_words
from tests.harness.experiments.tiny import run_tiny, stable

SPIN = ContinuousSpin()


def tiny_config(seed: int = 0, n_steps: int = 500) -> ContinuousSpinConfig:
    # 3 x 3 grid, short chains: every path in a few seconds.
    return ContinuousSpinConfig(
        level="quick",
        seed=seed,
        side=3,
        n_bins=5,
        reference_steps=4_000,
        reference_burn_in=200,
        n_steps=n_steps,
        replicates=2,
        checkpoints=5,
        notes=("tiny test configuration",),
    )


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("cs") / "run"
    first = run_tiny(SPIN, tiny_config(), out)
    assert (first.planned, first.ran, first.already_done) == (7, 7, 0)
    assert "pgda" in first.text and "reference" in first.text and "claims:" in first.text
    return out


def test_tiny_run_writes_records_and_resumes_without_duplicates(
    tiny_run: Path, tmp_path: Path
) -> None:
    records = load_records(tiny_run / RECORDS)
    assert [r["type"] for r in records] == ["reference"] + ["chain"] * 6  # chains wait for it
    ref = records[0]
    assert np.asarray(ref["counts"]).sum(axis=1).tolist() == [4_000 - 200] * 9
    for r in records[1:]:
        assert r["reference_key"] == ref["key"] and r["task_id"] == r["key"]
        assert len(r["sym_kl"]) == len(r["iterations"]) == len(r["sampler_s"])
        assert all(v >= 0 for v in r["sym_kl"])
    again = run_tiny(SPIN, tiny_config(), tiny_run)
    assert (again.ran, again.already_done) == (0, 7)
    # A kill: the reference and 2 chains kept, a torn fourth line; the lost chains repeat.
    out = tmp_path / "cs"
    out.mkdir()
    (out / "experiment.json").write_text((tiny_run / "experiment.json").read_text())
    lines = (tiny_run / RECORDS).read_text().splitlines(keepends=True)
    (out / RECORDS).write_text("".join(lines[:3]) + lines[3][:40])
    assert run_tiny(SPIN, tiny_config(), out).ran == 4
    old = {r["key"]: stable(r) for r in records}
    after = load_records(out / RECORDS)
    assert len({r["key"] for r in after}) == len(after) == 7
    assert all(stable(r) == old[r["key"]] for r in after)
    # A lost reference is rerun before any chain, to the same records.
    (out / RECORDS).write_text("")
    assert run_tiny(SPIN, tiny_config(), out).ran == 7
    assert {r["key"]: stable(r) for r in load_records(out / RECORDS)} == old


def test_other_settings_in_same_dir_are_refused(tiny_run: Path) -> None:
    with pytest.raises(ValueError, match="n_steps"):
        run_tiny(SPIN, tiny_config(n_steps=600), tiny_run)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("side", 1),
        ("lam_l2", 0.0),
        ("beta", float("nan")),
        ("m", 0),
        ("k", 1.5),
        ("n_bins", 1),
        ("reference_burn_in", 3_000),
        ("n_steps", 0),
        ("replicates", True),
        ("seed", -1),
        ("algorithms", ("gibbs-its", "pg-rejection")),
        ("algorithms", ("pgits", "pgits")),
        ("level", "huge"),
    ],
)
def test_bad_config_names_the_parameter(field: str, value: object) -> None:
    with pytest.raises(ValueError, match=field):
        dataclasses.replace(tiny_config(), **{field: value})


def test_bad_level_part_and_workers_fail_before_any_work(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="level"):
        SPIN.config("medium")
    with pytest.raises(ValueError, match="workers"):
        run(SPIN, "quick", 0, tmp_path / "b", progress=False, workers=0)
    with pytest.raises(ValueError, match="part"):
        run(SPIN, "quick", 0, tmp_path / "c", progress=False, part="half")
    assert not any(tmp_path.iterdir())


def test_levels_round_trip_and_keys_match_the_old_code() -> None:
    full = SPIN.config("full")
    assert (full.side, full.m, full.k, full.lam_l2, full.reference_steps) == (20, 3, 10, 1.0, 1e7)
    for level in ("quick", "full"):
        config = SPIN.config(level)
        assert from_manifest(ContinuousSpinConfig, json.loads(json.dumps(config.manifest()))) == (
            config
        )
    # Before the reference exists only it is planned; then the 9 chains join it.
    (ref,) = SPIN.plan(full, [], "all")
    tasks = SPIN.plan(full, [{"key": ref.key, "counts": [[1]]}], "all")
    assert len({t.key for t in tasks}) == 10 and all(
        t.inputs[1]["key"] == ref.key for t in tasks[1:]
    )
    # Literal keys of the pre-framework code; each task seeded by its key.
    (ref,) = SPIN.plan(SPIN.config("quick", 3), [], "all")
    assert ref.key == (
        "reference|gibbs-its|steps=2000000|burn=100000|side=20|beta=1|scale=0.4|lam=1L2|m=3|"
        "k=10|bins=20|cp=25|rep=-1"
    )
    assert ref.seed is not None and ref.seed.entropy == 3
    assert ref.seed.spawn_key == label_words(ref.key)
    keys = [t.key for t in SPIN.plan(SPIN.config("quick"), [{"key": ref.key}], "all")]
    assert keys[2] == (
        "chain|pgits|steps=300000|burn=0|side=20|beta=1|scale=0.4|lam=1L2|m=3|k=10|bins=20|"
        "cp=25|rep=0"
    )


def test_sym_kl_and_floor() -> None:
    values = np.array([[0.0, 0.99], [0.5, 1.0], [0.26, 0.74]])
    assert bin_counts(values, 4).tolist() == [[1, 1, 1, 0], [0, 0, 1, 2]]
    c = np.array([[10, 0], [3, 7]])
    assert sym_kl(c, c) == 0.0 and sym_kl(c, c[::-1]) > 0.0
    assert kl_floor(5, 9, 100, 100) == pytest.approx(2 * 4 * 9 * 0.02)


def test_section_opens_with_claims_and_has_svg_figures(tiny_run: Path, tmp_path: Path) -> None:
    sec = section(SPIN, tiny_run)
    assert sec["complete"] and sec["missing"] == 0 and sec["planned"] == 7
    figures = [f for g in sec["figure_groups"] for f in g["figures"]]
    assert len(figures) == 2 and all("<svg" in f["svg"] for f in figures)
    rows = sec["records_table"]["rows"]
    assert [row[0]["text"] for row in rows] == ["reference"] + ["gibbs-its"] * 2 + ["pgits"] * 2 + [
        "pgda"
    ] * 2
    ids = [c["id"] for c in sec["claims"]]
    # 5 claims, each factor-count reading and sampler row and rejection's other envelope under
    # them; L and the "fraction of factors" are givens
    assert len(ids) == len(set(ids)) == 10 and {"factors", "factors-pgda", "factors-kept"} <= set(
        ids
    )
    assert "L" not in ids and len(sec["claims"]) - len(primary(sec["claims"])) == 5
    rejection = [r for r in load_records(tiny_run / RECORDS) if r.get("label") == "gibbs-its"]
    assert all(len(r["rejection_proposals"]["constant"]) > 0 for r in rejection)
    page = write_report([tiny_run], tmp_path / "report.html").read_text(encoding="utf-8")
    assert page.index("Paper claims</h3>") < page.index("Symmetric KL divergence")
    # A partial run: the reference and 2 chains.
    out = tmp_path / "partial"
    out.mkdir()
    (out / "experiment.json").write_text((tiny_run / "experiment.json").read_text())
    (out / RECORDS).write_text("".join((tiny_run / RECORDS).read_text().splitlines(True)[:3]))
    sec = section(SPIN, out)
    assert not sec["complete"] and sec["missing"] == 4 and len(sec["records_table"]["rows"]) == 3


def _chains(
    label: str, level: float, s_per_iter: float, factors: float, proposals: float = 0.0
) -> list[dict]:
    """Three made-up runs: sym KL = level x 1e3 / iterations, timed at s_per_iter; a rejection
    step's cost ``proposals`` at Gibbs-ITS's states."""
    its = np.array([400, 1_000, 10_000, 100_000])
    cost = {"constant": [proposals] * 4, "per_site": [proposals] * 4}
    return [
        {
            "type": "chain",
            "label": label,
            "n_steps": 100_000,
            "n_vars": 400,
            "iterations": its,
            "sym_kl": level * f * 1e3 / its,
            "sampler_s": its * s_per_iter * f,
            "factors_per_iter": factors * f,
            "draws_per_iter": factors * f,
            "kept_per_iter": factors * f,
            "rejection_proposals": {k: [v * f for v in vs] for k, vs in cost.items()},
        }
        for f in (0.999, 1.0, 1.001)
    ]


def test_claims_decide_both_ways() -> None:
    claims = SPIN.claims(tiny_config())
    claims += tuple(r for c in claims for r in c.readings)
    # PGITS and PGDA: 190 factors, close to Gibbs per iteration (PGDA ahead), half its time;
    # rejection at 500 proposals per acceptance.
    good = [{"type": "reference", "L": 13.708}, *_chains("gibbs-its", 1.0, 2e-5, 399.0, 500.0)]
    good += _chains("pgits", 1.3, 1e-5, 190.0) + _chains("pgda", 0.9, 1e-5, 190.0)
    # Twice the factors, far worse per iteration (PGITS ahead), twice Gibbs's time; rejection
    # at 50 proposals.
    bad = [{"type": "reference", "L": 12.0}, *_chains("gibbs-its", 1.0, 2e-5, 399.0, 50.0)]
    bad += _chains("pgits", 5.0, 4e-5, 400.0) + _chains("pgda", 8.0, 4e-5, 400.0)
    assert {judge(c, []).verdict for c in claims} == {"inconclusive"}
    assert {c.id: judge(c, good).verdict for c in claims} == {c.id: "reproduced" for c in claims}
    assert {c.id: judge(c, bad).verdict for c in claims} == {c.id: "not reproduced" for c in claims}
