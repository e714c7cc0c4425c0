"""Dependencies run one way (DESIGN.md, Layout), checked on the source with ``ast``.

- ``harness.targets`` and ``harness.gates`` import no implementation, not even lazily;
- no implementation imports the harness's orchestration (experiments, runner, CLI).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import ROOT

HARNESS_CORE = sorted((ROOT / "harness" / "targets").glob("*.py")) + sorted(
    (ROOT / "harness" / "gates").glob("*.py")
)
IMPLEMENTATIONS = sorted((ROOT / "implementations").rglob("*.py"))
ORCHESTRATION = ("harness.experiments", "harness.runner", "harness.cli")


def _package(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).parts[:-1])


def imported_modules(path: Path) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import in ``path``, at any depth (lazy ones too).

    ``from x import y`` yields both ``x`` and ``x.y`` (y may be a submodule); relative imports
    are resolved against the file's package.
    """
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = _package(path).split(".")
                package = package[: len(package) - (node.level - 1)]
                base = ".".join([*package, base] if base else package)
            found.append((node.lineno, base))
            found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
    return found


def _is_within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_the_walk_sees_every_kind_of_import(tmp_path):
    source = tmp_path / "m.py"
    source.write_text(
        "import implementations.racing\n"
        "def f():\n"
        "    from implementations import gumbel\n"
        "from harness import cli\n"
    )
    names = {name for _, name in imported_modules(source)}
    assert {"implementations.racing", "implementations", "harness.cli"} <= names


@pytest.mark.parametrize("path", HARNESS_CORE, ids=lambda p: str(p.relative_to(ROOT)))
def test_targets_and_gates_import_no_implementation(path):
    bad = [
        f"line {line}: {name}"
        for line, name in imported_modules(path)
        if _is_within(name, "implementations")
    ]
    assert not bad, f"{path.relative_to(ROOT)} imports implementations: {bad}"


@pytest.mark.parametrize("path", IMPLEMENTATIONS, ids=lambda p: str(p.relative_to(ROOT)))
def test_implementations_import_no_orchestration(path):
    bad = [
        f"line {line}: {name}"
        for line, name in imported_modules(path)
        if any(_is_within(name, pkg) for pkg in ORCHESTRATION)
    ]
    assert not bad, f"{path.relative_to(ROOT)} imports {', '.join(ORCHESTRATION)}: {bad}"


def test_the_walk_found_the_sources():
    assert len(HARNESS_CORE) > 5 and len(IMPLEMENTATIONS) > 5
