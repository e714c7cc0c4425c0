"""Verification runs: seeds, resumption after a kill, refusal to mix runs."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.store import RECORDS, load_records
from harness.verify.config import RunConfig
from harness.verify.runner import verify
from tests.conftest import harness_here

#: Built-in samplers on a few cheap problems each (see the plugin's docstring).
SMALL = str(Path(__file__).resolve().parents[1] / "data" / "small_runs.py")
CONFIG = RunConfig(
    algorithms=("small-truncated-gumbel", "small-gumbel-max"),
    impls=("reference", "numba"),
    plugins=(SMALL,),
)


def verdict_set(summary):
    return sorted(
        (v["algorithm"], v["impl"], v["problem"], v["gate"], v["verdict"], v["statistic"])
        for v in summary["verdicts"]
    )


@pytest.fixture(scope="module")
def first_run(tmp_path_factory):
    """One finished run of CONFIG (its directory and summary), which the tests below copy
    where they need a finished run rather than run CONFIG again (about 4 s a run)."""
    out = tmp_path_factory.mktemp("first") / "run"
    return out, verify(CONFIG, out, workers=1, progress=False)


def copy_of(run, to):
    shutil.copytree(run[0], to)
    return to


def test_same_seed_same_records_and_reference_shares_numba_seed(tmp_path, first_run):
    a = first_run[1]
    b = verify(CONFIG, tmp_path / "b", workers=1, progress=False)
    assert a["passed"] and verdict_set(a) == verdict_set(b)
    recs = load_records(first_run[0] / RECORDS)
    seeds = {(r["case"], r["impl"]): tuple(r["seed"]["spawn_key"]) for r in recs}
    for (case, impl), key in seeds.items():
        if impl == "reference":
            assert seeds[(case, "numba")] == key
    for r in recs:
        assert r["commit"] and r["machine"] and r["packages"]["numpy"]
        assert r["wall_time"] >= 0 and "evals" in r


def test_resume_after_a_torn_write_loses_and_duplicates_nothing(tmp_path, first_run):
    full = first_run[1]
    out = copy_of(first_run, tmp_path / "cut")
    path = out / RECORDS
    lines = path.read_text().splitlines(keepends=True)
    keep = lines[: len(lines) // 2]
    path.write_text("".join(keep) + lines[len(lines) // 2][:40])  # a kill mid-line
    (out / "summary.json").unlink()
    resumed = verify(CONFIG, out, workers=1, progress=False)
    assert verdict_set(resumed) == verdict_set(full)
    recs = load_records(path)
    ids = [(r["task_id"], r["gate"]) for r in recs]
    assert len(ids) == len(set(ids)) == len(load_records(first_run[0] / RECORDS))


def _processes_naming(text: str) -> list[int]:
    """Pids whose command line contains ``text`` (Linux /proc)."""
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and text in (entry / "cmdline").read_text():
                pids.append(int(entry.name))
        except OSError:
            continue
    return pids


def test_resume_after_sigkill(tmp_path):
    out = tmp_path / "killed"
    args = [
        "verify",
        "--plugin",
        SMALL,
        "--algorithm",
        "small-gumbel-max",
        "--algorithm",
        "small-cdf-inversion",
        "--algorithm",
        "small-top-down",
        *("--impl", "numba"),
        "--out",
        str(out),
        "--workers",
        "1",
        "--no-progress",
    ]
    cmd = [sys.executable, "-m", "harness.cli", *args]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while time.time() < deadline:
        if (out / RECORDS).exists() and (out / RECORDS).stat().st_size > 0:
            break
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    # Its workers cannot be told; they must notice and exit, not wait on their pipes forever.
    deadline = time.time() + 30
    while (left := _processes_naming(str(out))) and time.time() < deadline:
        time.sleep(0.2)
    assert not left, f"workers outlived the killed run: {left}"
    before = {r["task_id"] for r in load_records(out / RECORDS)}
    assert before, "the run should have finished at least one task before the kill"
    rc = harness_here(*args)  # the resume: the command's main, in this process
    assert rc.returncode == 0, rc.stderr
    after = load_records(out / RECORDS)
    assert before <= {r["task_id"] for r in after}
    keys = [(r["task_id"], r["gate"]) for r in after]
    assert len(keys) == len(set(keys))
    assert json.loads((out / "summary.json").read_text())["passed"]


def test_a_directory_of_another_run_is_left_alone(tmp_path, first_run):
    out = copy_of(first_run, tmp_path / "run")
    before = (out / RECORDS).read_text()
    other = RunConfig(
        algorithms=CONFIG.algorithms, impls=CONFIG.impls, plugins=CONFIG.plugins, seed=5
    )
    with pytest.raises(ValueError, match="other settings"):
        verify(other, out, workers=1, progress=False)
    assert (out / RECORDS).read_text() == before


def test_bad_configuration_fails_before_any_file_is_written(tmp_path):
    for bad in (
        RunConfig(algorithms=("nope",), impls=("numba",)),
        RunConfig(algorithms=(), impls=("cython",)),
    ):
        with pytest.raises(ValueError):
            verify(bad, tmp_path / "x", workers=1, progress=False)
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize(
    ("change", "name"),
    [({"seed": -1}, "seed"), ({"alpha": 2.0}, "alpha"), ({"level": "huge"}, "level"),
     ({"reference": "half"}, "reference"), ({"impls": ()}, "impls")],
)  # fmt: skip
def test_the_declared_settings_refuse_a_bad_value_when_the_config_is_made(change, name):
    with pytest.raises(ValueError, match=f"parameter '{name}' = "):
        RunConfig(**{"algorithms": (), "impls": ("numba",), **change})


def test_the_run_manifest_round_trips_through_the_declaration():
    config = RunConfig(("gumbel-max",), ("reference", "numba"), "full", 3, problems=("p",))
    assert RunConfig.from_manifest(json.loads(json.dumps(config.manifest()))) == config
    assert "problems" not in RunConfig((), ("numba",)).manifest()


def test_process_pool_gives_the_same_verdicts(tmp_path, first_run):
    serial = first_run[1]
    pooled = verify(CONFIG, tmp_path / "p", workers=2, progress=False)
    assert verdict_set(serial) == verdict_set(pooled)


def test_changed_code_is_not_resumed_but_moved_aside_on_request(tmp_path, monkeypatch, first_run):
    import harness.store as store

    out = copy_of(first_run, tmp_path / "run")
    real = store.provenance()
    monkeypatch.setattr(store, "provenance", lambda: {**real, "source_digest": "edited"})
    with pytest.raises(ValueError, match="other code"):
        verify(CONFIG, out, workers=1, progress=False)
    verify(CONFIG, out, workers=1, progress=False, move_stale=True)
    aside = [p for p in tmp_path.iterdir() if p.name.startswith("run.")]
    assert len(aside) == 1 and (aside[0] / RECORDS).exists()


def test_an_algorithm_no_gate_covers_yet_fails_loudly(tmp_path):
    plugin = tmp_path / "chain.py"
    plugin.write_text(
        "import numpy as np\nimport harness\n"
        "def walk(target, n_steps, rng, x0=None):\n"
        "    return harness.Chain(rng.integers(0, target.D, n_steps), 0)\n"
        "harness.register(harness.AlgorithmSpec('my-chain', 'x', 'p', 'mcmc', ('discrete',),\n"
        "    {'reference': walk}, entry='run_chain'))\n"
    )
    config = RunConfig(algorithms=("my-chain",), impls=("reference",), plugins=(str(plugin),))
    summary = verify(config, tmp_path / "run", workers=1, progress=False)
    assert not summary["passed"]
    failed = {v["gate"] for v in summary["verdicts"] if v["verdict"] == "fail"}
    # Its contracts are checked (and kept); no statistical gate covers it, and that fails.
    assert failed == {"coverage"}
    assert {v["gate"] for v in summary["verdicts"]} == {"coverage", "contract", "seed-determinism"}


LEAKY = RunConfig(
    algorithms=("leaky-borderline", "leaky-broken"),
    impls=("reference",),
    plugins=(str(Path(__file__).resolve().parents[1] / "data" / "leaky_runs.py"),),
)


def test_until_failure_runs_no_stage_after_a_statistical_failure(tmp_path):
    def stages(summary):
        return {
            (v["algorithm"], v["gate"]): (v["stage"], v["decision"]) for v in summary["verdicts"]
        }

    full = stages(verify(LEAKY, tmp_path / "full", 1, False, scheduler="inprocess"))
    # The control: without the option the borderline sampler escalates and fails at stage 1.
    assert full["leaky-broken", "chi-square"] == (0, "fail")
    assert full["leaky-borderline", "chi-square"] == (1, "fail")
    fast = verify(LEAKY, tmp_path / "fast", 1, False, scheduler="inprocess", until_failure=True)
    assert not fast["passed"]
    quick = stages(fast)
    assert quick["leaky-broken", "chi-square"] == (0, "fail")
    assert quick["leaky-borderline", "chi-square"] == (0, "escalate")  # left inconclusive
    assert {r["stage"] for r in load_records(tmp_path / "fast" / RECORDS)} == {0}
