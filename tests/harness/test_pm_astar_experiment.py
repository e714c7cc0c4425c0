"""The PM-A* reproductions (004_b270422b62f00607.txt, Sec. 5) on small settings: records,
resume, the report section, bad settings."""

from __future__ import annotations

import dataclasses
import itertools
from pathlib import Path

import pytest

from harness.experiments import get_experiment
from harness.experiments.framework import run, section
from harness.experiments.pm_astar.settings import PMConfig
from harness.store import RECORDS, load_records

NAME = "pm-astar"


def _small() -> PMConfig:
    config = get_experiment(NAME).module().config_for_level("quick", 0)
    return dataclasses.replace(
        config,
        mixture_draws=500,
        counter_runs=3,
        counter_horizon=40,
        clutter_dims=(5,),
        clutter_runs=2,
        clutter_horizon=30,
        logistic_sets=("titanic",),
        logistic_runs=2,
        logistic_horizon=20,
    )


def _run(out: Path, config: PMConfig):
    return run(
        get_experiment(NAME),
        "quick",
        0,
        out,
        progress=False,
        scheduler="inprocess",
        log=lambda msg: None,
        config=config,
    )


# Slow set (about 15-30 s on 2 cores): keeps the default suite under its 10 minutes.
@pytest.mark.slow
def test_every_part_records_resumes_and_reports(tmp_path):
    out = tmp_path / "out"
    first = _run(out, _small())
    assert first.ran == 4  # mixture, counter, one clutter dimension, one data set
    records = load_records(out / RECORDS)
    kinds = {(r["type"], r.get("problem")) for r in records}
    assert {("mixture", None), ("trace", "counter"), ("trace", "clutter")} <= kinds
    assert ("mh", "logistic") in kinds
    for r in records:
        if r["type"] == "trace":
            trace = r["mean_trace"]
            assert len(trace) == r["horizon"]
            # The best value found never falls.
            assert all(b >= a - 1e-9 for a, b in itertools.pairwise(trace))
    again = _run(out, _small())
    assert again.ran == 0 and again.already_done == 4
    body = section(get_experiment(NAME), out)
    text = str(body)
    for title in ("Fig. 2a", "Fig. 2b", "Fig. 3", "Fig. 4a", "Fig. 4b"):
        assert title in text
    assert "<svg" in text


def test_bad_settings_are_refused():
    config = _small()
    with pytest.raises(ValueError, match="runs"):
        dataclasses.replace(config, counter_runs=0)
    with pytest.raises(ValueError, match="logistic_sets"):
        dataclasses.replace(config, logistic_sets=("mnist",))
