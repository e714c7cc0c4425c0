"""harness/ in layers: every import runs down, and no modules import each other in a loop.

A room is a top-level module of ``harness/`` or one of its folders (its wing). Rooms stand in
the layers of :data:`LAYERS`, ground first; a room imports only rooms of lower layers, and
modules inside a room import each other without a loop. Every import counts: lazy ones inside
functions and those under ``TYPE_CHECKING`` too. Each rule has a negative control.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.harness.test_dependencies import imported_modules

HARNESS = ROOT / "harness"

#: Ground first. A room imports only rooms of lower layers.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("extras", "store", "display", "numba_cache"),
    ("spec",),
    ("tasks", "devices", "targets", "declare"),
    ("gates", "workers"),
    ("figures", "checks"),
    ("registry", "testing"),
    ("__init__", "engine", "pytest_plugin", "speed"),
    ("verify",),
    ("experiments",),
    ("report",),
    ("cli",),
)


def room_of(module: str) -> str | None:
    """The room of ``harness.x.y`` (``x``); None outside the harness."""
    parts = module.split(".")
    if parts[0] != "harness":
        return None
    return parts[1] if len(parts) > 1 else "__init__"


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def harness_graph() -> dict[str, set[str]]:
    """Module -> the harness modules it imports (a ``from m import name`` counts as ``m``
    unless ``m.name`` is a module of the tree)."""
    sources = {module_name(p): p for p in HARNESS.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in sources.items():
        found = [(line, m) for line, m in imported_modules(path) if m in sources]
        submodules = {(line, m.rpartition(".")[0]) for line, m in found}
        graph[name] = {m for line, m in found if (line, m) not in submodules} - {name}
    return graph


def upward(graph: dict[str, set[str]], layers: tuple[tuple[str, ...], ...]) -> list[str]:
    """Imports that do not run down: to a room of the same or a higher layer."""
    level = {room: i for i, rooms in enumerate(layers) for room in rooms}
    bad = []
    for a, targets in sorted(graph.items()):
        ra = room_of(a)
        for b in sorted(targets):
            rb = room_of(b)
            if ra == rb or ra is None or rb is None:
                continue
            if ra not in level or rb not in level:
                bad.append(f"{a} -> {b}: room {ra if ra not in level else rb} is in no layer")
            elif level[rb] >= level[ra]:
                bad.append(f"{a} -> {b}: {ra} (layer {level[ra]}) imports {rb} (layer {level[rb]})")
    return bad


def loops(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_every_import_runs_down_the_layers():
    bad = upward(harness_graph(), LAYERS)
    assert not bad, "imports that run up or sideways:\n" + "\n".join(bad)


#: Loops between an experiment package's ``__init__`` and its own modules, which take names
#: from the package that imports them. Listed so that no other loop can appear and so that
#: this list must shrink when one is split (the test fails on a listed loop that is gone).
PACKAGE_LOOPS = (
    ("harness.experiments.pm_astar", "harness.experiments.pm_astar.paper_claims"),
    (
        "harness.experiments.racing_arch",
        "harness.experiments.racing_arch.chain",
        "harness.experiments.racing_arch.measures",
        "harness.experiments.racing_arch.study",
    ),
)


def test_no_modules_import_each_other_in_a_loop():
    assert [tuple(group) for group in loops(harness_graph())] == list(PACKAGE_LOOPS)


def test_every_room_is_in_a_layer_and_the_top_floor_is_small():
    rooms = {p.stem if p.is_file() else p.name for p in HARNESS.iterdir()}
    rooms = {
        r for r in rooms if (HARNESS / f"{r}.py").exists() or (HARNESS / r / "__init__.py").exists()
    }
    assert rooms <= {room for layer in LAYERS for room in layer}
    assert len(list(HARNESS.glob("*.py"))) <= 15


def test_the_rules_catch_an_import_up_and_a_loop():
    graph = {
        "harness.spec": {"harness.cli.main"},  # the ground imports the top
        "harness.cli.main": {"harness.spec"},
        "harness.checks.a": {"harness.checks.b"},
        "harness.checks.b": {"harness.checks.a"},  # a loop inside one room
        "harness.report.page": {"harness.newroom"},
    }
    bad = upward(graph, LAYERS)
    assert any(b.startswith("harness.spec -> harness.cli.main") for b in bad)
    assert any("newroom is in no layer" in b for b in bad)
    assert loops(graph) == [
        ["harness.checks.a", "harness.checks.b"],
        ["harness.cli.main", "harness.spec"],
    ]


@pytest.mark.parametrize(
    "source",
    [
        "if TYPE_CHECKING:\n    from harness.cli import main\n",
        "def f():\n    from harness.cli import main\n",
    ],
)
def test_lazy_and_type_checking_imports_count(tmp_path, source):
    path = tmp_path / "m.py"
    path.write_text("from typing import TYPE_CHECKING\n" + source)
    assert "harness.cli.main" in {name for _, name in imported_modules(path)}
