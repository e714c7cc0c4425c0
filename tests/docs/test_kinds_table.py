"""docs/running.md's target-kinds table says what the gates read and what a draw is, kind by
kind, as the code does; its A* problem recipe registers a problem that verify runs and passes."""

import re
from pathlib import Path

import pytest

from harness.checks.gate_sets import GROUND_TRUTH
from tests.conftest import harness_here

ROOT = Path(__file__).resolve().parents[2]
PAGE = (ROOT / "docs" / "running.md").read_text()


def _between(tag: str) -> str:
    return PAGE.split(f"<!-- {tag} -->", 1)[1].split(f"<!-- /{tag} -->", 1)[0]


def _rows() -> dict[str, list[str]]:
    rows = {}
    for line in _between("kinds-table").splitlines()[3:]:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4:
            rows[cells[0].strip("`")] = cells
    return rows


def test_the_table_has_one_row_per_kind_with_every_field_the_gates_read():
    rows = _rows()
    assert set(rows) == set(GROUND_TRUTH)
    for kind, truth in GROUND_TRUTH.items():
        named = set(re.findall(r"`(\w+)`", rows[kind][1]))
        fields = {*truth.attributes, *truth.callables, *(name for name, _ in truth.small)}
        assert named == fields, kind


def test_the_draw_column_says_integers_exactly_for_the_integer_kinds():
    from harness.checks.output_contract import STATE_KINDS

    for kind, cells in _rows().items():
        assert ("integer" in cells[2]) == (kind in STATE_KINDS), kind


@pytest.mark.timeout(300)
def test_the_astar_problem_recipe_registers_a_problem_verify_passes(tmp_path):
    code = _between("astar-problem").split("```python", 1)[1].split("```", 1)[0]
    plugin = tmp_path / "my_box_problem.py"
    plugin.write_text(code)
    out = harness_here(
        *("verify", "--plugin", str(plugin)),
        *("--problem", "cauchy-three", "--algorithm", "astar", "--impl", "reference"),
        *("--out", str(tmp_path / "run"), "--no-progress", "--verbose"),
    )
    assert out.returncode == 0, out.stdout + out.stderr
    for gate in ("ks", "ks-gumbel-max", "bound-validity", "run-to-completion", "own-bound"):
        assert f" {gate} " in out.stdout or f" {gate}:" in out.stdout, gate
