"""User mistakes the CLI refuses up front (one line, exit 2, nothing run), and what must work
where a mistake used to be easy: plugins on Dask workers elsewhere, plugins beside their
helpers, and the wall time of a killed ``harness reproduce`` call."""

from __future__ import annotations

import http.server
import json
import os
import pickle
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import harness.engine as engine
from harness.cli.main import main
from harness.registry import build_registry
from tests.conftest import ROOT, run_command

pytestmark = pytest.mark.timeout(120)


def one_line_refusal(capsys: pytest.CaptureFixture[str], argv: list[str], command: str) -> str:
    """Run ``harness ARGV`` here; it must exit 2 with one line on stderr; return that line."""
    rc = main(argv)
    err = capsys.readouterr().err
    assert rc == 2, err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"harness {command}: error: ")
    return lines[0].removeprefix(f"harness {command}: error: ")


# --- 1. --out and --output are checked writable before any work --------------------------


@pytest.fixture
def a_file(tmp_path: Path) -> Path:
    path = tmp_path / "a-file"
    path.write_text("not a directory")
    return path


VERIFY = ["verify", "--algorithm", "gumbel-max", "--no-progress"]


def test_verify_out_under_a_regular_file_names_out(capsys, a_file):
    out = a_file / "run"
    said = one_line_refusal(capsys, [*VERIFY, "--out", str(out)], "verify")
    assert said == f"--out {out}: cannot create a run directory there (Not a directory)"


def test_verify_out_in_proc_names_out(capsys):
    said = one_line_refusal(capsys, [*VERIFY, "--out", "/proc/x"], "verify")
    assert said == "--out /proc/x: cannot create a run directory there (No such file or directory)"


def test_reproduce_out_under_a_regular_file_names_out(capsys, a_file):
    out = a_file / "potts"
    said = one_line_refusal(capsys, ["reproduce", "potts", "--out", str(out)], "reproduce")
    assert said == f"--out {out}: cannot create a run directory there (Not a directory)"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only directory")
def test_out_in_a_directory_without_write_permission_names_out(capsys, tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    try:
        said = one_line_refusal(capsys, [*VERIFY, "--out", str(locked / "run")], "verify")
    finally:
        locked.chmod(0o700)
    assert (
        said == f"--out {locked / 'run'}: cannot create a run directory there (Permission denied)"
    )


@pytest.mark.parametrize("where", ["under-a-file", "proc"])
def test_report_output_that_cannot_be_written_names_output(capsys, tmp_path, a_file, where):
    output = a_file / "r.html" if where == "under-a-file" else Path("/proc/x/r.html")
    why = "Not a directory" if where == "under-a-file" else "No such file or directory"
    run = tmp_path / "run"  # what the report reads as a verification run
    run.mkdir()
    (run / "summary.json").write_text("{}")
    said = one_line_refusal(capsys, ["report", str(run), "--output", str(output)], "report")
    assert said == f"--output {output}: cannot write the report there ({why})"


# --- 2. --scheduler tcp:// is probed with Dask's own handshake ------------------------------


def _serve(handle) -> Iterator[int]:
    """A TCP server on a free local port that calls ``handle(conn)`` per connection."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    stop = threading.Event()

    def loop() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            with conn:
                handle(conn)

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join(5)
    server.close()


@pytest.fixture
def garbage_port() -> Iterator[int]:
    def handle(conn: socket.socket) -> None:
        conn.sendall(b"garbage!garbage!garbage!")
        time.sleep(0.2)

    yield from _serve(handle)


@pytest.fixture
def http_port() -> Iterator[int]:
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


#: The probe's wait for a Dask handshake in the two tests where an HTTP server stays silent
#: (3 s in use, which each of them would sit out): a scheduler in this process greets in ms.
QUICK_GREETING_S = 1.0


def _verify_on(address: str, out: Path) -> list[str]:
    return [*VERIFY, "--scheduler", address, "--out", str(out)]


def test_a_scheduler_address_where_nothing_listens_is_one_line(capsys, tmp_path):
    address = f"tcp://127.0.0.1:{_free_port()}"
    said = one_line_refusal(capsys, _verify_on(address, tmp_path / "o"), "verify")
    assert said.startswith(f"--scheduler {address}: no Dask scheduler answers there (")
    assert not (tmp_path / "o").exists()


def test_a_scheduler_address_where_something_else_answers_is_one_line(
    capsys, tmp_path, garbage_port
):
    address = f"tcp://127.0.0.1:{garbage_port}"
    start = time.monotonic()
    said = one_line_refusal(capsys, _verify_on(address, tmp_path / "o"), "verify")
    assert time.monotonic() - start < 30
    assert said == (
        f"--scheduler {address}: something other than a Dask scheduler answers there (it sent "
        "b'garbage!', not a Dask handshake); give the tcp:// address `dask scheduler` prints "
        "(port 8786 by default)"
    )
    assert not (tmp_path / "o").exists()


def test_an_http_server_is_not_taken_for_a_scheduler(capsys, tmp_path, http_port, monkeypatch):
    monkeypatch.setattr(engine, "GREETING_S", QUICK_GREETING_S)
    address = f"tcp://127.0.0.1:{http_port}"
    said = one_line_refusal(capsys, _verify_on(address, tmp_path / "o"), "verify")
    assert said.startswith(f"--scheduler {address}: an HTTP server answers there, not a Dask")


@pytest.mark.timeout(180)
def test_a_real_scheduler_passes_the_probe_and_its_dashboard_port_is_named(
    capsys, tmp_path, monkeypatch
):
    from distributed import LocalCluster

    from harness.engine import Dask, backend_for

    monkeypatch.setattr(engine, "GREETING_S", QUICK_GREETING_S)
    with LocalCluster(
        n_workers=1, processes=False, protocol="tcp://", dashboard_address="127.0.0.1:0"
    ) as cluster:
        assert isinstance(backend_for(cluster.scheduler_address), Dask)
        (worker,) = cluster.workers.values()
        with pytest.raises(RuntimeError, match="a Dask worker answers there, not the scheduler"):
            backend_for(worker.address)
        port = cluster.dashboard_link.split("://", 1)[1].split("/")[0].rpartition(":")[2]
        address = f"tcp://127.0.0.1:{port}"
        said = one_line_refusal(capsys, _verify_on(address, tmp_path / "o"), "verify")
    assert said == (
        f"--scheduler {address}: this is Dask's dashboard port, not the scheduler's; give the "
        "tcp:// address `dask scheduler` prints (port 8786 by default)"
    )


# --- 3 and 4. plugins travel to workers, and import the modules beside them -----------------

HELPER = '''
import numpy as np

import harness


def gumbel_argmax(target, n, rng):
    """Gumbel-max: argmax(log p~ + Gumbel(0, 1)), exact."""
    D, N = target.log_factors.shape
    logp = np.cumsum(target.log_factors, axis=1)[:, -1] + target.log_f0
    noise = -np.log(rng.standard_exponential((n, D)))
    return harness.Draws(np.argmax(logp + noise, axis=1), n * N * D)
'''

PLUGIN = """
import harness
from {helper} import gumbel_argmax

harness.register(
    harness.AlgorithmSpec(
        name="{name}",
        family="control",
        paper="none (a test plugin)",
        guarantee="exact",
        target_kinds=("discrete",),
        implementations={{"reference": gumbel_argmax}},
        summary="Gumbel-max from a module beside the plugin",
    )
)
"""


def _plugin_dir(root: Path, name: str) -> Path:
    """``root/plugins/NAME.py`` importing ``NAME_helper`` beside it (unique module names: the
    helper stays in sys.modules for the rest of the session)."""
    folder = root / "plugins"
    folder.mkdir(parents=True)
    helper = name.replace("-", "_") + "_helper"
    (folder / f"{helper}.py").write_text(HELPER)
    (folder / f"{name}.py").write_text(PLUGIN.format(helper=helper, name=name))
    return folder


def test_a_plugin_imports_the_modules_beside_it(tmp_path):
    folder = _plugin_dir(tmp_path, "beside")
    before = list(sys.path)
    registry = build_registry([str(folder / "beside.py")])
    assert "beside" in registry
    assert sys.path == before  # its folder is on the path only while it is imported


WORKER = """
import pickle
import sys

from harness.registry import build_registry, receive_plugin_sources

ref = sys.argv[2]
try:
    build_registry([ref])
except ValueError as exc:
    print("without the sources:", exc)
with open(sys.argv[1], "rb") as fh:
    receive_plugin_sources(pickle.load(fh))
print("with them:", "sent" in build_registry([ref]))
"""


def test_a_worker_that_cannot_reach_a_relative_plugin_imports_the_sent_source(
    tmp_path, monkeypatch
):
    from harness.registry import plugin_sources

    _plugin_dir(tmp_path / "here", "sent")
    monkeypatch.chdir(tmp_path / "here")
    build_registry(["plugins/sent.py"])
    sources = plugin_sources()
    assert [rel for rel, _ in sources["plugins/sent.py"].files] == ["sent.py", "sent_helper.py"]
    # A worker process in another folder: the relative path leads nowhere from there.
    (tmp_path / "sources.pickle").write_bytes(pickle.dumps(sources))
    (tmp_path / "worker.py").write_text(WORKER)
    (tmp_path / "elsewhere").mkdir()
    done = run_command(
        [
            sys.executable,
            str(tmp_path / "worker.py"),
            str(tmp_path / "sources.pickle"),
            "plugins/sent.py",
        ],
        timeout=90,
        cwd=tmp_path / "elsewhere",
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "without the sources: plugin 'plugins/sent.py': no such file",
        "with them: True",
    ]


@pytest.mark.timeout(300)
def test_a_relative_plugin_verifies_on_dask_workers_started_in_another_folder(
    tmp_path, monkeypatch, capsys
):
    from distributed import LocalCluster

    _plugin_dir(tmp_path / "user", "travelling")
    (tmp_path / "workers").mkdir()
    monkeypatch.chdir(tmp_path / "workers")  # the worker processes start here
    with LocalCluster(
        n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        monkeypatch.chdir(tmp_path / "user")
        rc = main(
            [
                "verify",
                "--plugin",
                "plugins/travelling.py",
                "--algorithm",
                "travelling",
                "--impl",
                "reference",
                "--problem",
                "synthetic-normal-D10-N200",
                "--out",
                str(tmp_path / "run"),
                "--no-progress",
                "--scheduler",
                cluster.scheduler_address,
            ]
        )
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "FAILED" not in out and "0 failed" in out


# --- 5. a killed reproduce call keeps its entry in wall.json -------------------------------

KILLED_EXPERIMENT = '''
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from harness.declare import Config
from harness.experiments.framework import Experiment, run, task


@dataclass(frozen=True, kw_only=True)
class SlowConfig(Config):
    experiment = "slow-second-task"


def quick(rng):
    return [{"x": 1}]


def forever(rng):
    time.sleep(600)
    return [{"x": 2}]


class Slow(Experiment[SlowConfig]):
    """Two tasks: one returns at once, one never does."""

    paper = "none"
    summary = "a test"
    title = "slow"

    def plan(self, config, records, part):
        return [task(config, "quick", quick), task(config, "forever", forever)]

    def claims(self, config):
        return ()


run(Slow(), "quick", 0, Path(sys.argv[1]), scheduler="inprocess", progress=False)
'''


def test_a_killed_reproduce_call_leaves_its_entry_in_wall_json(tmp_path):
    script = tmp_path / "slow.py"
    script.write_text(KILLED_EXPERIMENT)
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [sys.executable, str(script), str(out)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},  # this tree's harness, not the installed one
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 90
        records = out / "records.jsonl"
        while not (records.is_file() and records.read_text().strip()):
            assert proc.poll() is None and time.monotonic() < deadline, "no task finished"
            time.sleep(0.1)
        time.sleep(0.5)  # well inside the task that never returns
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)
    (call,) = json.loads((out / "wall.json").read_text())
    assert call["tasks"] == 1 and call["wall_s"] > 0 and call["ended"] is False
