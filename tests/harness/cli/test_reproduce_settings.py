"""An experiment's declared parameters from the command line: ``--set PARAM=VALUE``,
``--config FILE.toml`` and ``--help-params``. Names are checked before any work, values by the
declaration (one line naming the parameter, the value and the valid range, exit 2), and what
is set lands in the run's manifest."""

from __future__ import annotations

import json

import pytest

from harness.cli.main import main
from harness.declare import overrides, params_rows, settable_names
from harness.experiments import get_experiment

CLUTTER = get_experiment("astar-clutter").config_type


def test_set_and_config_read_values_by_their_declared_types(tmp_path):
    toml = tmp_path / "c.toml"
    toml.write_text("data_sets = 7\nper_set = 4\ndims = [1, 2]\n")
    got = overrides(CLUTTER, ["per_set=2", "costs=liks,total"], toml)
    assert got == {"data_sets": 7, "per_set": 2, "dims": (1, 2), "costs": ("liks", "total")}


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--set", "n_data_sets=3"], ["'n_data_sets' is invalid for astar-clutter", "data_sets"]),
        (["--set", "data_sets=0"], ["'data_sets' = 0", "[1, inf)"]),
        (["--set", "data_sets=many"], ["'data_sets' = 'many'", "an integer"]),
        (["--set", "data_sets"], ["PARAM=VALUE"]),
        (["--set", "seed=2"], ["the --seed option"]),
        (["--set", "level=full"], ["the --level option"]),
        (["--set", "costs=liks,cpu"], ["'costs[1]' = 'cpu'"]),
    ],
)
def test_a_bad_setting_is_one_line_and_exit_2_before_any_work(tmp_path, capsys, args, words):
    out = tmp_path / "never"
    assert main(["reproduce", "astar-clutter", "--out", str(out), *args]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and all(w in err for w in words), err
    assert not out.exists()


def test_a_bad_config_file_is_named(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text("data_sets = = 3\n")
    assert main(["reproduce", "astar-clutter", "--config", str(bad)]) == 2
    assert "--config" in capsys.readouterr().err


def test_help_params_lists_types_ranges_and_level_values(capsys):
    assert main(["reproduce", "astar-clutter", "--help-params"]) == 0
    text = capsys.readouterr().out
    (line,) = [ln for ln in text.splitlines() if ln.startswith("data_sets ")]
    assert "int" in line and "[1, inf]" in line and " 10 " in line and " 100 " in line
    assert "replicates: data_sets" in text
    assert [r[0] for r in params_rows(CLUTTER)][:2] == ["level", "seed"]
    assert "data_sets" in settable_names(CLUTTER) and "level" not in settable_names(CLUTTER)


def test_a_set_parameter_runs_and_is_recorded(tmp_path):
    out = tmp_path / "gap"
    args = ["--part", "exact", "--set", "max_grid=1000", "--set", "lam_over_L=0.5,2"]
    code = main(
        ["reproduce", "minibatch-gap", *args, "--out", str(out), "--no-progress",
         "--scheduler", "inprocess"]
    )  # fmt: skip
    assert code == 0
    settings = json.loads((out / "experiment.json").read_text())["settings"]
    assert (settings["max_grid"], settings["lam_over_L"]) == (1000.0, [0.5, 2.0])
