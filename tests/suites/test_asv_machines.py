"""Results from several machines merge into one asv results folder and one comparison.

Each `asv machine --machine NAME` writes results under results/NAME/; `asv compare` and
`asv publish` then read every machine from the same folder. HOME points at a temporary folder
so the user's ~/.asv-machine.json is never touched.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, run_command

BENCH = r"Continuous1d\.(time|track)"


def _asv(args: list[str], conf: Path, home: Path) -> str:
    env = dict(os.environ, HOME=str(home))
    out = run_command(
        [sys.executable, "-m", "asv", *args, "--config", str(conf)], 600, cwd=ROOT, env=env
    )
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout


def _git(*args: str) -> str:
    return run_command(["git", *args], 60, cwd=ROOT, check=True).stdout.strip()


# Slow set (10-25 s on 2 cores): keeps the default suite under its 10 minutes.
@pytest.mark.slow
def test_two_machines_share_one_results_folder(tmp_path: Path) -> None:
    conf = json.loads((ROOT / "asv.conf.json").read_text())
    conf.update(
        repo=str(ROOT),
        benchmark_dir=str(ROOT / "suites"),
        env_dir=str(tmp_path / "env"),
        results_dir=str(tmp_path / "results"),
        html_dir=str(tmp_path / "html"),
    )
    conf_path = tmp_path / "asv.conf.json"
    conf_path.write_text(json.dumps(conf))
    old, new = _git("rev-parse", "HEAD~1"), _git("rev-parse", "HEAD")

    # m1 records two commits (the same code, labelled as each: enough for compare); m2 one.
    for machine, commits in (("m1", (old, new)), ("m2", (new,))):
        _asv(["machine", "--machine", machine, "--yes"], conf_path, tmp_path)
        for commit in commits:
            run = ["run", "--python=same", "--quick", "--set-commit-hash", commit]
            _asv([*run, "--machine", machine, "--bench", BENCH], conf_path, tmp_path)

    results = tmp_path / "results"
    assert {p.name for p in results.iterdir() if p.is_dir()} == {"m1", "m2"}
    files = sorted(results.glob("m*/*-*.json"))
    assert len(files) == 3
    data = json.loads(files[-1].read_text())
    assert data["version"] == 2 and data["params"]["machine"] in {"m1", "m2"}
    name = "bench_samplers.TimeContinuous1d.time_sample"
    assert name in data["results"]
    columns = data["result_columns"]
    row = dict(zip(columns, data["results"][name], strict=False))
    assert row["params"] == [["'truncated-gumbel'"], ["'reference'", "'numba'"], ["'phi0-b1'"]]
    assert all(v is not None for v in row["result"])

    compared = _asv(["compare", old, new, "--machine", "m1"], conf_path, tmp_path)
    assert "TimeContinuous1d.time_sample" in compared

    _asv(["publish"], conf_path, tmp_path)
    index = json.loads((tmp_path / "html" / "index.json").read_text())
    assert set(index["params"]["machine"]) == {"m1", "m2"}
