"""The task engine and the record store: backends, resume, torn and repeated tasks, Dask."""

import json
import os
import signal
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest

from harness.engine import InProcess, ProcessPool, backend_for, run_tasks
from harness.store import RECORDS, RecordsRepaired, append_task, load_records, open_run, repair
from harness.tasks import SeedKey, Task
from harness.verify.config import RunConfig
from harness.verify.runner import verify
from harness.workers import next_task
from tests.conftest import run_command


def draw_task(n, rng):
    """A module-level task: importable by worker processes and Dask workers."""
    return [{"n": n, "draws": rng.integers(0, 1000, n).tolist()}]


def failing_task():
    raise ArithmeticError("planted")


def _tasks(k=6):
    return [Task(f"t{i}", draw_task, (3,), SeedKey.from_label(7, f"t{i}")) for i in range(k)]


def _by_key(path):
    return {r["task_id"]: r["draws"] for r in load_records(path) if "draws" in r}


@pytest.mark.parametrize(
    "backend", [InProcess(), ProcessPool(2)], ids=lambda b: getattr(b, "name", "?")
)
def test_every_backend_gives_the_same_records(tmp_path, backend):
    ref = tmp_path / "ref.jsonl"
    run_tasks(_tasks(), ref, InProcess(), progress=False)
    got = tmp_path / "got.jsonl"
    assert run_tasks(_tasks(), got, backend, progress=False) == 6
    assert _by_key(got) == _by_key(ref)


def _with_affinity(keys):
    return [
        Task(f"t{i}", draw_task, (3,), SeedKey.from_label(7, f"t{i}"), affinity=key)
        for i, key in enumerate(keys)
    ]


def test_a_free_worker_takes_what_it_holds_then_what_no_other_holds_then_the_first():
    queue = _with_affinity(["a", "b", "c", "b", ""])
    assert next_task(queue, held={"b"}, others={"a"}) == 1
    assert next_task(queue, held={"c"}, others={"a", "b"}) == 2
    assert next_task(queue, held=set(), others={"a", "b"}) == 2
    assert next_task(queue[:2], held=set(), others={"a", "b"}) == 0
    assert next_task(queue[4:], held={"a"}, others=set()) == 0


def test_affinity_moves_tasks_between_workers_but_changes_no_record(tmp_path):
    ref = tmp_path / "ref.jsonl"
    run_tasks(_with_affinity("ab" * 4), ref, InProcess(), progress=False)
    got = tmp_path / "got.jsonl"
    pool = ProcessPool(2, budget_s=60.0)
    assert run_tasks(_with_affinity("ab" * 4), got, pool, progress=False) == 8
    assert _by_key(got) == _by_key(ref)


def pid_task():
    return [{"pid": os.getpid()}]


def test_a_pool_keeps_its_workers_between_runs_and_stops_them_when_collected(tmp_path):
    pool = ProcessPool(2, budget_s=60.0)
    ran, kept = set(), []
    for stage in range(2):
        path = tmp_path / f"stage{stage}.jsonl"
        run_tasks([Task(f"p{k}", pid_task) for k in range(4)], path, pool, progress=False)
        ran |= {r["pid"] for r in load_records(path)}
        kept.append({w.process.pid for w in pool.idle})
    # the second run used the first run's two workers (one still warming up when the first run's
    # tasks were gone is kept too, having run none), and nothing ran in this process
    assert kept[0] == kept[1] and len(kept[0]) == 2
    assert ran <= kept[0] and os.getpid() not in ran
    processes = [w.process for w in pool.idle]
    assert len(processes) == 2 and all(p.is_alive() for p in processes)
    del pool
    assert not any(p.is_alive() for p in processes)


def test_a_task_that_raises_is_named_at_the_end_and_the_others_run(tmp_path):
    path = tmp_path / RECORDS
    tasks = [*_tasks(2), Task("bad", failing_task, label="the bad one"), *_tasks(4)[2:]]
    with pytest.raises(RuntimeError, match=r"1 task\(s\) failed: 'the bad one'.*ArithmeticError"):
        run_tasks(tasks, path, InProcess(), progress=False)
    assert set(_by_key(path)) == {"t0", "t1", "t2", "t3"}


def spin_task(seconds):
    """Compiled code that does not return for ``seconds`` (forever when negative)."""
    from numba import njit

    @njit
    def spin(until):  # pragma: no cover - compiled
        k = 0
        while until < 0 or k < until * 10**9:
            k += 1
        return k

    spin(1e-9)
    return [{"spun": int(spin(seconds))}]


@pytest.mark.parametrize("workers", [1, 2])
def test_a_task_past_its_budget_is_stopped_and_the_run_goes_on(tmp_path, workers):
    path = tmp_path / RECORDS
    stuck = Task("stuck", spin_task, (-1,), label="stuck", on_error=lambda t, e: [{"error": e}])
    tasks = [*_tasks(2), stuck, *_tasks(4)[2:]]
    start = time.monotonic()
    assert run_tasks(tasks, path, ProcessPool(workers, budget_s=3.0), progress=False) == 5
    assert time.monotonic() - start < 60
    records = {r["task_id"]: r for r in load_records(path)}
    assert records["stuck"]["error"] == "TimeoutError: stopped after its budget of 3 s"
    ref = tmp_path / "ref.jsonl"
    run_tasks(_tasks(4), ref, InProcess(), progress=False)
    assert _by_key(path) == _by_key(ref)


def test_a_budget_must_be_a_positive_number():
    for bad in (0, -1.0, True, "10"):
        with pytest.raises(ValueError, match="--task-timeout"):
            backend_for("process", 1, budget_s=bad)


def test_an_unreachable_scheduler_is_refused_at_once():
    start = time.monotonic()
    with pytest.raises(RuntimeError, match=r"tcp://127.0.0.1:1: no Dask scheduler answers"):
        backend_for("tcp://127.0.0.1:1")
    assert time.monotonic() - start < 10


@pytest.mark.timeout(120)
def test_a_cluster_without_workers_says_so_after_its_wait(tmp_path, monkeypatch):
    from distributed import LocalCluster

    import harness.engine as engine

    monkeypatch.setattr(engine, "WORKER_WAIT_S", 2.0)
    with LocalCluster(n_workers=0, dashboard_address=None, processes=True) as cluster:
        backend = backend_for(cluster.scheduler_address)
        with pytest.raises(RuntimeError, match="no Dask worker for 2 s; start one with"):
            run_tasks(_tasks(2), tmp_path / RECORDS, backend, progress=False)


def test_on_error_turns_a_raise_into_records(tmp_path):
    path = tmp_path / RECORDS
    task = Task("bad", failing_task, on_error=lambda t, err: [{"failed": err.splitlines()[0]}])
    run_tasks([task], path, ProcessPool(1), progress=False)
    assert load_records(path)[0]["failed"] == "ArithmeticError: planted"


def test_torn_and_repeated_tasks_are_dropped_on_load_and_repair_with_a_warning(tmp_path):
    path = tmp_path / RECORDS
    append_task(path, "a", [{"x": 1}, {"x": 2}])
    append_task(path, "b", [{"x": 3}])
    append_task(path, "a", [{"x": 9}, {"x": 9}])  # a repeat never counts twice
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines) + lines[0] + lines[1][:20])  # a task torn by a kill
    with pytest.warns(RecordsRepaired, match=r"4 torn, unreadable or repeated line\(s\) not used"):
        assert [r["x"] for r in load_records(path)] == [1, 2, 3]
    with pytest.warns(RecordsRepaired, match=r"4 torn, unreadable or repeated line\(s\) dropped"):
        repair(path)
    assert len(path.read_text().splitlines()) == 3
    with pytest.raises(ValueError, match="no records"):
        append_task(path, "c", [])


def test_open_run_refuses_a_foreign_directory_and_other_settings(tmp_path):
    (tmp_path / "foreign").mkdir()
    (tmp_path / "foreign" / "x.txt").write_text("keep me")
    with pytest.raises(ValueError, match="non-empty directory"):
        open_run(tmp_path / "foreign", "run.json", {"a": 1})
    open_run(tmp_path / "run", "run.json", {"a": 1})
    with pytest.raises(ValueError, match="first difference: 'a'"):
        open_run(tmp_path / "run", "run.json", {"a": 2})
    open_run(tmp_path / "run", "run.json", {"a": 2}, move_stale=True)
    assert len([p for p in tmp_path.iterdir() if p.name.startswith("run.")]) == 1


@pytest.mark.parametrize(
    "scheduler, workers, needle",
    [
        ("yarn", None, "--scheduler 'yarn' is invalid"),
        ("local:0", None, "local:K with K an integer >= 1"),
        ("local:two", None, "local:K with K an integer >= 1"),
        ("tcp://nohost", None, "--scheduler 'tcp://nohost' is invalid"),
        ("process", 0, "--workers = 0 is invalid"),
        ("local:2", 3, "does not apply"),
    ],
)
def test_bad_backends_name_the_value_and_the_valid_forms(scheduler, workers, needle):
    with pytest.raises(ValueError, match=needle.replace("(", r"\(")):
        backend_for(scheduler, workers)


#: Built-in samplers on a few cheap problems each (see the plugin's docstring).
SMALL = str(Path(__file__).resolve().parent / "data" / "small_runs.py")
CONFIG = RunConfig(
    algorithms=("small-gumbel-max", "small-truncated-gumbel"),
    impls=("reference", "numba"),
    plugins=(SMALL,),
)


def _verdicts(summary):
    return sorted(
        (v["algorithm"], v["impl"], v["problem"], v["gate"], v["verdict"], v["statistic"])
        for v in summary["verdicts"]
    )


#: What a task computed; provenance (host, wall time, commit) may differ between runs.
COMPUTED = (
    "task_id",
    "gate",
    "statistic",
    "p_value",
    "passed",
    "n",
    "evals",
    "values_digest",
    "rng_digest",
    "detail",
)


def _comparable(path):
    return sorted(
        json.dumps({k: r.get(k) for k in COMPUTED}, sort_keys=True) for r in load_records(path)
    )


#: Both implementations of one sampler on its three problems: the records Dask's workers write
#: are compared with the pool's, which needs tasks of each kind, not the whole CONFIG.
DASK_CONFIG = RunConfig(
    algorithms=("small-gumbel-max",), impls=("reference", "numba"), plugins=(SMALL,)
)


@pytest.mark.timeout(600)
def test_verify_on_a_dask_local_cluster_matches_one_process(tmp_path):
    # In-process, not the pool: tests/harness/verify/test_runner.py holds the pool to it.
    here = verify(DASK_CONFIG, tmp_path / "here", scheduler="inprocess", progress=False)
    dask = verify(DASK_CONFIG, tmp_path / "dask", scheduler="local:2", progress=False)
    assert here["passed"] and _verdicts(dask) == _verdicts(here)
    assert _comparable(tmp_path / "dask" / RECORDS) == _comparable(tmp_path / "here" / RECORDS)


@pytest.mark.slow  # 36 s; the Dask backend's records are held to one process's by the tests above
@pytest.mark.timeout(600)
def test_a_dask_client_killed_midway_loses_and_duplicates_nothing(tmp_path):
    out = tmp_path / "killed"
    cmd = [
        sys.executable,
        "-m",
        "harness.cli",
        "verify",
        "--plugin",
        SMALL,
        "--algorithm",
        "small-gumbel-max",
        "--algorithm",
        "small-cdf-inversion",
        "--algorithm",
        "small-top-down",
        "--out",
        str(out),
        "--scheduler",
        "local:2",
        "--no-progress",
    ]
    # Its own process group, so the kill takes the client and the cluster it started.
    proc = subprocess.Popen(
        cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    deadline = time.time() + 180
    while time.time() < deadline and proc.poll() is None:
        if (out / RECORDS).exists() and len(load_records(out / RECORDS)) >= 3:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the run ended before it could be killed midway"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    before = {r["task_id"]: r for r in load_records(out / RECORDS)}
    assert before
    rc = run_command(cmd, timeout=300)
    assert rc.returncode == 0, rc.stderr
    after = load_records(out / RECORDS)
    keys = [(r["task_id"], r["gate"]) for r in after]
    assert len(keys) == len(set(keys)), "a record was written twice"
    assert set(before) <= {r["task_id"] for r in after}, "a finished record was lost"
    clean = tmp_path / "clean"
    run_command([*cmd[:-5], "--out", str(clean), "--workers", "2", "--no-progress"], check=True)
    assert _comparable(out / RECORDS) == _comparable(clean / RECORDS)


def _experiment_records(path):
    skip = {"wall_s", "code", "task_lines"}
    return sorted(
        json.dumps({k: v for k, v in r.items() if k not in skip}, sort_keys=True)
        for r in load_records(path)
    )


@pytest.mark.timeout(600)
def test_a_reproduction_on_a_dask_local_cluster_matches_in_process(tmp_path):
    from harness.experiments import get_experiment
    from harness.experiments.framework import run

    gap = get_experiment("minibatch-gap")
    local = run(
        gap, "quick", 0, tmp_path / "a", part="exact", scheduler="inprocess", progress=False
    )
    dask = run(gap, "quick", 0, tmp_path / "b", part="exact", scheduler="local:2", progress=False)
    assert local.ran == dask.ran > 0
    assert _experiment_records(tmp_path / "b" / RECORDS) == _experiment_records(
        tmp_path / "a" / RECORDS
    )


def test_verification_keys_stay_the_crc32_words_their_records_were_drawn_with():
    key = SeedKey.from_crc32(7, "gumbel-max|synthetic-normal-D10-N200|{}", 2)
    assert key.spawn_key == (zlib.crc32(b"gumbel-max|synthetic-normal-D10-N200|{}"), 2)
    assert key.entropy == 7
    assert SeedKey.from_label(7, "x").spawn_key != SeedKey.from_crc32(7, "x").spawn_key
