"""Dependencies run one way (DESIGN.md, Layout), checked on the source with ``ast``.

- ``harness.targets`` and ``harness.gates`` import no implementation, not even lazily;
- a family (``implementations/<family>/``) imports no other family: only itself and the shared
  primitives, ``implementations.shared`` (which imports no family);
- no implementation and no harness module reaches a private name (``_x``) of another module
  of the project, by import or as an attribute of an imported module: a name two modules use
  is public;
- implementations import from the harness only ``harness.spec``, ``harness.targets`` and
  ``harness.gates`` (never the orchestration: experiments, runner, CLI).

Each rule has a negative control: a source file that breaks it, which the rule must catch.
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
EXPERIMENTS = sorted((ROOT / "harness" / "experiments").rglob("*.py"))
HARNESS = sorted((ROOT / "harness").rglob("*.py"))
#: Every module of a family or of the shared package: all but implementations/__init__.py, the
#: FAMILIES table, which imports each family on purpose.
FAMILY_MODULES = [p for p in IMPLEMENTATIONS if p.parent != ROOT / "implementations"]
SHARED = "implementations.shared"
HARNESS_FOR_IMPLEMENTATIONS = ("harness.spec", "harness.targets", "harness.gates")
#: The cuda builds ask the harness's device probe why they cannot run (shared/cuda.py's
#: require() refuses with that line). The probe is the harness's: it decides which keys
#: `harness list`, verify and the runner offer, and runs once per process in a child (CUDA
#: does not survive the process engine's fork); a copy here could give another answer than the
#: one the harness acts on.
HARNESS_EXCEPTIONS = {"implementations/shared/cuda.py": ("harness.devices",)}


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


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def other_families(path: Path, family: str) -> list[str]:
    """Imports of ``path`` (a module of ``family``) that reach a family other than its own and
    the shared package."""
    mine = (f"implementations.{family}", SHARED)
    return [
        f"line {line}: {name}"
        for line, name in imported_modules(path)
        if _is_within(name, "implementations")
        and name != "implementations"  # the base of ``from implementations import x``
        and not any(_is_within(name, pkg) for pkg in mine)
    ]


#: The project's own packages: a private name of theirs is private to its module. (A private
#: name of the standard library or a dependency, argparse._SubParsersAction say, is theirs.)
OWN_PACKAGES = ("harness", "implementations")


def _own(module: str) -> bool:
    return any(_is_within(module, pkg) for pkg in OWN_PACKAGES)


def private_names(path: Path) -> list[str]:
    """Private names ``path`` takes from other modules of the project: imported (``from m
    import _x``, at any depth) or read as an attribute of an imported module (``m._x``)."""
    found = [
        f"line {line}: {name}"
        for line, name in imported_modules(path)
        if _own(name) and _is_private(name.rpartition(".")[2])
    ]
    tree = ast.parse(path.read_text(), filename=str(path))
    modules = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _own(alias.name):
                    modules.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and (node.level or _own(node.module or "")):
            for alias in node.names:
                modules.add(alias.asname or alias.name)
    found += [
        f"line {node.lineno}: {node.value.id}.{node.attr}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id in modules
        and _is_private(node.attr)
    ]
    return found


def harness_imports(path: Path, allowed: tuple[str, ...]) -> list[str]:
    """Imports of ``path`` from the harness outside the ``allowed`` packages."""
    return [
        f"line {line}: {name}"
        for line, name in imported_modules(path)
        if _is_within(name, "harness")
        and name != "harness"  # the base of ``from harness import x``
        and not any(_is_within(name, pkg) for pkg in allowed)
    ]


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


def implementation_imports(path: Path) -> list[str]:
    """Imports of ``path`` from ``implementations``, at any depth."""
    return [
        f"line {line}: {name}"
        for line, name in imported_modules(path)
        if _is_within(name, "implementations")
    ]


@pytest.mark.parametrize("path", HARNESS_CORE + EXPERIMENTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_targets_gates_and_experiments_import_no_implementation(path):
    """Targets and gates know no sampler. Experiments reach samplers through the registry
    (``sample(spec, impl, ...)`` or a spec's declared ``parts``), so what an experiment times is
    what ``harness verify`` gates."""
    bad = implementation_imports(path)
    assert not bad, f"{path.relative_to(ROOT)} imports implementations: {bad}"


def test_the_experiment_rule_catches_a_kernel_imported_inside_a_function(tmp_path):
    source = tmp_path / "study.py"
    source.write_text(
        "from harness.registry import registry_for\n"
        "def warm():\n"
        "    from implementations.racing import fast\n"
        "    return fast\n"
    )
    found = implementation_imports(source)
    assert found == ["line 3: implementations.racing", "line 3: implementations.racing.fast"]


def _ids(path: Path) -> str:
    return str(path.relative_to(ROOT))


@pytest.mark.parametrize("path", FAMILY_MODULES, ids=_ids)
def test_a_family_imports_only_itself_and_the_shared_primitives(path):
    family = path.relative_to(ROOT).parts[1]
    bad = other_families(path, family)
    assert not bad, f"{_ids(path)} imports another family (use {SHARED}): {bad}"


def test_the_family_rule_catches_another_family(tmp_path):
    source = tmp_path / "m.py"
    source.write_text(
        "from implementations.shared.fast import heap_pop\n"
        "from implementations.racing import bounds\n"
        "def f():\n"
        "    from implementations.gumbel.fast import gumbel_max_kernel\n"
        "from implementations import minibatch_gibbs\n"
    )
    bad = other_families(source, "racing")
    assert {b.split(": ")[1] for b in bad} == {
        "implementations.gumbel.fast",
        "implementations.gumbel.fast.gumbel_max_kernel",
        "implementations.minibatch_gibbs",
    }
    assert other_families(source, "shared") != []  # nor may the shared package import one


@pytest.mark.parametrize("path", IMPLEMENTATIONS, ids=_ids)
def test_no_implementation_reaches_a_private_name_of_another_module(path):
    bad = private_names(path)
    assert not bad, f"{_ids(path)} uses private names of other modules (make them public): {bad}"


@pytest.mark.parametrize("path", HARNESS, ids=_ids)
def test_no_harness_module_reaches_a_private_name_of_another_module(path):
    bad = private_names(path)
    assert not bad, f"{_ids(path)} uses private names of other modules (make them public): {bad}"


def test_the_private_rule_catches_imports_and_attributes(tmp_path):
    source = tmp_path / "m.py"
    source.write_text(
        "from __future__ import annotations\n"
        "from implementations.astar import reference\n"
        "from implementations.astar.audit import split as _split\n"
        "def f():\n"
        "    from implementations.gumbel.fast import _cdf_block\n"
        "    return reference._share, reference.share, reference.__name__\n"
        "def _own():\n"
        "    return _own\n"
    )
    assert sorted(private_names(source)) == [
        "line 5: implementations.gumbel.fast._cdf_block",
        "line 6: reference._share",
    ]


def test_the_private_rule_catches_a_harness_module_and_spares_other_packages(tmp_path):
    source = tmp_path / "m.py"
    source.write_text(
        "import argparse, os\n"
        "import harness.engine as engine\n"
        "from harness.gates import exactness\n"
        "def f(sub: argparse._SubParsersAction):\n"
        "    from harness.workers import _spawn\n"
        "    os._exit(engine._error_text(exactness._detectable(_spawn)))\n"
    )
    assert sorted(private_names(source)) == [
        "line 5: harness.workers._spawn",
        "line 6: engine._error_text",
        "line 6: exactness._detectable",
    ]


@pytest.mark.parametrize("path", IMPLEMENTATIONS, ids=_ids)
def test_implementations_import_only_spec_targets_and_gates_from_the_harness(path):
    allowed = HARNESS_FOR_IMPLEMENTATIONS + HARNESS_EXCEPTIONS.get(_ids(path), ())
    bad = harness_imports(path, allowed)
    assert not bad, f"{_ids(path)} imports from the harness beyond {', '.join(allowed)}: {bad}"


def test_the_harness_rule_catches_orchestration_and_the_device_probe(tmp_path):
    source = tmp_path / "m.py"
    source.write_text(
        "from harness.spec import Draws\n"
        "from harness.targets.factor_graph import alias_table\n"
        "import harness.devices\n"
        "def f():\n"
        "    from harness import runner\n"
    )
    bad = harness_imports(source, HARNESS_FOR_IMPLEMENTATIONS)
    assert {b.split(": ")[1] for b in bad} == {"harness.devices", "harness.runner"}
    assert harness_imports(source, (*HARNESS_FOR_IMPLEMENTATIONS, "harness.devices")) == [
        "line 5: harness.runner"
    ]


def test_the_walk_found_the_sources():
    assert len(HARNESS_CORE) > 5 and len(IMPLEMENTATIONS) > 5 and len(EXPERIMENTS) > 20
