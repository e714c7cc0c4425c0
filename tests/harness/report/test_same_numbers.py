"""`harness compare`: the same numbers, timing and provenance aside, or each field that differs."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli.main import main
from harness.report.same_numbers import compare_runs
from harness.store import append_task, provenance


def _run(folder: Path, tasks: dict[str, list[dict]]) -> Path:
    folder.mkdir(parents=True)
    for task_id, records in tasks.items():
        append_task(folder / "records.jsonl", task_id, records)
    return folder


def _record(p_value: float, wall: float, **more) -> dict:
    return {"p_value": p_value, "wall_time": wall, "stats": {"setup_s": wall}, **more}


def test_timing_and_provenance_aside_two_runs_are_the_same(tmp_path, capsys):
    here = provenance()
    old = _run(tmp_path / "old" / "exp", {"t1": [_record(0.5, 1.0, **here)]})
    elsewhere = {**here, "commit": "0" * 40, "machine": "another"}
    new = _run(tmp_path / "new" / "exp", {"t1": [_record(0.5, 9.0, **elsewhere)]})
    assert main(["compare", str(old.parent), str(new.parent)]) == 0
    out = capsys.readouterr().out
    assert "exp/records.jsonl: 1 of 1 records the same" in out
    assert "1 of 1 runs identical" in out


def test_a_changed_number_is_named_with_its_values(tmp_path, capsys):
    old = _run(tmp_path / "old", {"t1": [_record(0.5, 1.0)], "t2": [_record(0.1, 1.0, ratio=2)]})
    new = _run(tmp_path / "new", {"t1": [_record(0.25, 1.0)], "t2": [_record(0.1, 3.0, ratio=3)]})
    assert main(["compare", str(old), str(new)]) == 1
    out = capsys.readouterr().out
    assert "0 of 2 records the same" in out
    assert "p_value: differs in 1; first in t1: 0.5 -> 0.25" in out
    assert "ratio: differs in 1; first in t2: 2 -> 3" in out
    # a value computed from timings, once read, can be left out by name
    assert main(["compare", str(old), str(new), "--ignore", "ratio"]) == 1
    assert "ratio" not in capsys.readouterr().out


def test_records_only_on_one_side_are_counted(tmp_path):
    old = _run(tmp_path / "old", {"t1": [_record(0.5, 1.0)], "t2": [_record(0.1, 1.0)]})
    new = _run(tmp_path / "new", {"t1": [_record(0.5, 1.0)]})
    (c,) = compare_runs(old, new)
    assert (c.same, c.only_old, c.only_new, c.identical) == (1, 1, 0, False)


def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys):
    assert main(["compare", str(tmp_path / "missing"), str(tmp_path)]) == 2
    assert "OLD = " in capsys.readouterr().err
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 2
    assert "no records.jsonl" in capsys.readouterr().err


@pytest.mark.parametrize("key", ["wall_time", "run_wall_s", "exact_s_per_draw", "load_avg"])
def test_timing_fields_are_left_out_at_any_depth(tmp_path, key):
    old = _run(tmp_path / "old", {"t": [{"x": 1, "nested": [{key: 1.0}], key: 1.0}]})
    new = _run(tmp_path / "new", {"t": [{"x": 1, "nested": [{key: 2.0}], key: 5.0}]})
    assert compare_runs(old, new)[0].identical
