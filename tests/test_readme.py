"""The README's promises: the plugin example runs, the quick start is the two commands, and the
algorithm tables (README.md and docs/algorithms.md) list exactly the registered algorithms."""

import re
import sys
from collections.abc import Iterable
from typing import NamedTuple

import pytest

from harness.registry import build_registry
from harness.spec import AlgorithmSpec
from tests.conftest import ROOT, readme_plugin_path, run_command

TABLE_MARK = "<!-- algorithms-table"


class TableRow(NamedTuple):
    """One row of an algorithm table; ``kinds`` is None where the table has no such column."""

    family: str
    names: tuple[str, ...]
    paper: str
    guarantee: str
    kinds: tuple[str, ...] | None


def table_rows(text: str) -> list[TableRow]:
    """The rows of the algorithm table that follows the marker (the table ends at a blank line)."""
    block = text.split(TABLE_MARK, 1)[1].split("\n\n", 1)[0]
    rows = []
    for line in block.splitlines()[1:]:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[0] == "family" or not cells[0].strip("-: "):
            continue  # the header and the rule under it
        names = tuple(re.findall(r"`([^`]+)`", cells[1]))
        assert ", ".join(f"`{n}`" for n in names) == cells[1], f"bad algorithm cell: {line}"
        kinds = tuple(k.strip() for k in cells[4].split(",")) if len(cells) > 4 else None
        rows.append(TableRow(cells[0], names, cells[2], cells[3], kinds))
    return rows


def _expected_paper(spec: AlgorithmSpec, full: bool) -> str:
    return spec.paper if full else spec.paper.split(",")[0].strip()


def table_problems(rows: list[TableRow], specs: Iterable[AlgorithmSpec], full: bool) -> list[str]:
    """What is wrong with ``rows`` against the registry, one line each (empty when nothing is).

    ``full``: the paper cell holds the spec's whole citation (docs/algorithms.md); otherwise
    only the paper's file name (the README's compact table)."""
    by_name = {s.name: s for s in specs}
    seen: set[str] = set()
    problems = []
    for row in rows:
        for name in row.names:
            if name in seen:
                problems.append(f"{name}: in two rows")
            seen.add(name)
            spec = by_name.get(name)
            if spec is None:
                problems.append(f"{name}: in the table, but no such algorithm is registered")
                continue
            paper = _expected_paper(spec, full)
            for what, have, want in (
                ("family", row.family, spec.family),
                ("guarantee", row.guarantee, spec.guarantee),
                ("paper", row.paper, paper),
                ("target kinds", row.kinds, None if row.kinds is None else spec.target_kinds),
            ):
                if have != want:
                    problems.append(f"{name}: {what} {have!r} in the table, {want!r} registered")
    for name, spec in by_name.items():
        if name not in seen:
            row = f"| {spec.family} | `{name}` | {_expected_paper(spec, full)} | {spec.guarantee} |"
            problems.append(f"{name}: registered but in no row; add {row}")
    return problems


def _text(path: str) -> str:
    return (ROOT / path).read_text()


@pytest.mark.parametrize(("path", "full"), [("README.md", False), ("docs/algorithms.md", True)])
def test_the_algorithm_table_lists_exactly_the_registry(path, full):
    rows = table_rows(_text(path))
    assert rows
    assert table_problems(rows, build_registry(), full) == []


@pytest.mark.parametrize(("path", "full"), [("README.md", False), ("docs/algorithms.md", True)])
def test_the_table_check_fails_on_a_missing_row(path, full):
    rows = table_rows(_text(path))
    dropped = rows[len(rows) // 2]
    problems = table_problems(
        rows[: len(rows) // 2] + rows[len(rows) // 2 + 1 :], build_registry(), full
    )
    assert problems and len(problems) == len(dropped.names)
    for name, line in zip(dropped.names, problems, strict=True):
        assert line.startswith(f"{name}: registered but in no row")


def test_the_table_check_fails_on_a_wrong_or_unknown_row_and_a_new_family():
    rows = table_rows(_text("README.md"))
    registry = list(build_registry())
    first = rows[0]
    wrong = first._replace(guarantee="mcmc", family="racing")
    assert table_problems([wrong, *rows[1:]], registry, False) == [
        f"{name}: {what} {have!r} in the table, {want!r} registered"
        for name in first.names
        for what, have, want in (
            ("family", "racing", first.family),
            ("guarantee", "mcmc", first.guarantee),
        )
    ]
    stray = TableRow("mine", ("no-such-sampler",), "000_26bed7cc1ef3ab92.txt", "exact", None)
    assert table_problems([*rows, stray], registry, False) == [
        "no-such-sampler: in the table, but no such algorithm is registered"
    ]
    twice = table_problems([*rows, rows[0]], registry, False)
    assert twice == [f"{name}: in two rows" for name in rows[0].names]
    toy = AlgorithmSpec(
        name="toy-sampler",
        family="toy",
        paper="000_26bed7cc1ef3ab92.txt, Sec. 2.1",
        guarantee="exact",
        target_kinds=("discrete",),
        implementations={"reference": lambda target, n, rng: None},
    )
    assert table_problems(rows, [*registry, toy], False) == [
        "toy-sampler: registered but in no row; add "
        "| toy | `toy-sampler` | 000_26bed7cc1ef3ab92.txt | exact |"
    ]


def test_readme_plugin_example_verifies(tmp_path):
    out = run_command(
        [
            sys.executable,
            "-m",
            "harness.cli",
            "verify",
            "--plugin",
            readme_plugin_path(),
            "--algorithm",
            "my-inverse-cdf",
            "--out",
            str(tmp_path / "run"),
            "--no-progress",
        ],
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "my-inverse-cdf" in out.stdout and "0 failed" in out.stdout


def test_quick_start_is_make_run_and_make_test():
    text = _text("README.md")
    quick = text.split("## Quick start", 1)[1].split("##", 1)[0]
    assert "make run" in quick and "make test" in quick
    assert "make test" in (ROOT / ".ci" / "run").read_text()
