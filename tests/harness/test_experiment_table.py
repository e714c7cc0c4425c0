"""The EXPERIMENTS table is the one list: the CLI's help, make run and the README follow it."""

import json
import re
import sys
from pathlib import Path

from harness.cli.parser import build_parser as _parser
from harness.declare import from_manifest
from harness.experiments import EXPERIMENTS, experiment_names
from harness.experiments.framework import Experiment
from tests.conftest import harness_here

ROOT = Path(__file__).resolve().parents[2]


def test_every_table_entry_is_a_declared_experiment_in_its_own_package():
    names = experiment_names()
    assert len(set(names)) == len(names)
    for e in EXPERIMENTS:
        assert isinstance(e, Experiment) and "all" in e.parts
        module = sys.modules[type(e).__module__]
        assert Path(module.__file__).name == "__init__.py", f"{e.name} is not a folder"
        assert e.config_type.experiment == e.name
        for level in ("quick", "full"):
            config = e.config(level, 0)
            back = from_manifest(e.config_type, json.loads(json.dumps(config.manifest())))
            assert back == config, f"{e.name} {level}: the manifest does not round-trip"
        ids = [c.id for c in e.claims(e.config("quick", 0))]
        assert ids and len(ids) == len(set(ids)), f"{e.name}: no claims, or repeated ids"


def test_no_experiment_imports_another_and_none_hand_writes_its_settings_plumbing():
    packages = {type(e).__module__ for e in EXPERIMENTS}
    banned = ("config_from_manifest", "lists_to_tuples", "check_seed", "check_level", "Param(")
    for path in (ROOT / "harness" / "experiments").rglob("*.py"):
        text = path.read_text()
        own = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        if own == "harness.experiments.__init__":
            continue  # the table
        for other in packages:
            if not own.startswith(other):
                assert f"from {other} " not in text and f"from {other}." not in text, (
                    f"{path.relative_to(ROOT)} imports the experiment {other}"
                )
        if path.name not in ("framework.py", "declare.py"):
            for word in banned:
                assert word not in text, f"{path.relative_to(ROOT)} hand-writes {word}"


def test_the_readme_table_lists_the_table():
    text = (ROOT / "README.md").read_text()
    block = text.split("<!-- experiments-table")[1].split("\n\n")[0]
    rows = re.findall(r"^\| `([a-z0-9-]+)` \| ([^|]+) \| ([^|]+) \|$", block, re.M)
    assert [(n, p.strip(), s.strip()) for n, p, s in rows] == [
        (e.name, e.paper, e.summary) for e in EXPERIMENTS
    ]


def test_make_run_and_the_cli_follow_the_table():
    assert "harness list --experiments" in (ROOT / "Makefile").read_text()
    done = harness_here("list", "--experiments")
    assert done.returncode == 0, done.stderr
    out = done.stdout.split()
    assert out == experiment_names()
    reproduce = _parser()._subparsers._group_actions[0].choices["reproduce"]
    epilog = reproduce.epilog
    for e in EXPERIMENTS:
        assert f"{e.name} ({e.paper})" in epilog


def test_no_experiment_carries_its_own_pool_resume_or_progress_bar():
    banned = ("ProcessPoolExecutor", "tqdm", "append_task", "fsync", "as_completed", "Pool(")
    for path in (ROOT / "harness" / "experiments").rglob("*.py"):
        if path.name == "framework.py":
            continue
        text = path.read_text()
        for word in banned:
            assert word not in text, f"{path.relative_to(ROOT)} uses {word}"


def test_a_config_of_another_experiment_is_refused_before_any_work(tmp_path):
    import pytest

    from harness.experiments import get_experiment
    from harness.experiments.framework import run

    potts = get_experiment("potts").config("quick", 0)
    with pytest.raises(ValueError, match="config = PottsConfig is invalid for minibatch-gap"):
        run(get_experiment("minibatch-gap"), "quick", 0, tmp_path / "x", config=potts)
    assert not (tmp_path / "x").exists()
