"""The registry: built-in families from explicit tables, plus users' plugins.

Built-in algorithms come from ``implementations.FAMILIES`` (a list of the families' spec lists);
nothing registers itself by import side effect. A plugin is a module or a ``.py`` file that calls
:func:`register` for each of its specs; :func:`load_plugin` imports it while a registry is
collecting, so plugin algorithms land in exactly the same registry as built-in ones.

A plugin may also bring its own problems (a target with its ground truth) with
:func:`register_problem`. The registry resolves a problem name against the catalog
(:mod:`harness.targets.catalog`) and then its own problems, so every place that plans, runs or
calibrates a problem sees plugin problems exactly like built-in ones.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib
import importlib.util
import numbers
import os
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from harness.spec import LEVELS, AlgorithmSpec

if TYPE_CHECKING:
    from harness.targets.catalog import Problem


class Registry:
    """Algorithms and plugin problems by name. Holds state (the tables), so it is a class."""

    def __init__(
        self,
        specs: tuple[AlgorithmSpec, ...] | list[AlgorithmSpec] = (),
        problems: tuple[Problem, ...] | list[Problem] = (),
    ) -> None:
        self._specs: dict[str, AlgorithmSpec] = {}
        self._problems: dict[str, Problem] = {}
        # Plugin problems' targets, built once per registry (registry_for caches the registry
        # per process), as catalog.build_target caches the catalog's.
        self._targets: dict[str, Any] = {}
        self.plugins: list[str] = []
        for spec in specs:
            self.add(spec)
        for prob in problems:
            self.add_problem(prob)

    def add(self, spec: AlgorithmSpec) -> AlgorithmSpec:
        if not isinstance(spec, AlgorithmSpec):
            raise ValueError(f"register() takes an AlgorithmSpec, got {type(spec).__name__}")
        if spec.name in self._specs and self._specs[spec.name] is not spec:
            raise ValueError(f"an algorithm named {spec.name!r} is already registered")
        self._specs[spec.name] = spec
        return spec

    def get(self, name: str) -> AlgorithmSpec:
        try:
            return self._specs[name]
        except KeyError:
            valid = ", ".join(sorted(self._specs))
            raise ValueError(f"unknown algorithm {name!r}; registered: {valid}") from None

    def names(self) -> list[str]:
        return list(self._specs)

    def __iter__(self) -> Iterator[AlgorithmSpec]:
        return iter(list(self._specs.values()))

    def __len__(self) -> int:
        return len(self._specs)

    def __contains__(self, name: object) -> bool:
        return name in self._specs

    def add_problem(self, problem: Problem) -> Problem:
        """Check ``problem``'s fields (:func:`checked_problem`) and its name against the
        catalog and this registry; return the problem as stored."""
        from harness.targets.catalog import Problem

        if not isinstance(problem, Problem):
            raise ValueError(
                f"add_problem() takes a harness.targets.catalog.Problem, got "
                f"{type(problem).__name__}"
            )
        checked = checked_problem(
            problem.name, problem.kind, problem.build, problem.levels, problem.draws
        )
        taken = problem.name in self._problems or problem.name in _catalog_names()
        if taken:
            raise ValueError(
                f"name = {problem.name!r} is invalid (a catalog problem or one already "
                "registered has it); valid: a name not in `harness list --problems`"
            )
        self._problems[checked.name] = checked
        return checked

    def problem(self, name: str) -> Problem:
        """The problem called ``name``: the catalog's, else one a plugin registered."""
        found = self._problems.get(name)
        if found is not None:
            return found
        if name in _catalog_names():
            return _catalog().problem(name)
        known = ", ".join(p.name for p in self.all_problems())
        raise ValueError(f"unknown problem {name!r}; known: {known}")

    def problems(self, kind: str, level: str) -> list[Problem]:
        """The problems of ``kind`` at ``level``: the catalog's first, then the plugins'."""
        own = [p for p in self._problems.values() if p.kind == kind and level in p.levels]
        return _catalog().problems(kind, level) + own

    def all_problems(self) -> list[Problem]:
        return [*_catalog().PROBLEMS, *self._problems.values()]

    def plugin_problems(self) -> list[Problem]:
        return list(self._problems.values())

    def build_target(self, name: str) -> Any:
        """The target of problem ``name``, built once; a plugin problem's target is checked
        against its declared kind and the ground truth its gates read (ValueError if not)."""
        prob = self._problems.get(name)
        if prob is None:
            return _catalog().build_target(name)
        if name not in self._targets:
            self._targets[name] = _built_target(prob)
        return self._targets[name]


_COLLECTING: ContextVar[Registry | None] = ContextVar("harness_collecting_registry", default=None)


def _collecting(caller: str) -> Registry:
    registry = _COLLECTING.get()
    if registry is None:
        raise RuntimeError(
            f"harness.{caller}() was called outside plugin loading; run the module with "
            "`harness verify --plugin MODULE_OR_FILE` or harness.load_plugin(...)"
        )
    return registry


def register(spec: AlgorithmSpec) -> AlgorithmSpec:
    """Add ``spec`` to the registry that is loading this plugin; return ``spec``.

    Call it at the top level of a plugin module, then run ``harness verify --plugin MODULE``
    (or pass the module to :func:`load_plugin`).
    """
    registry = _collecting("register")
    name = getattr(spec, "name", None)
    if isinstance(spec, AlgorithmSpec) and name in registry and registry.get(name) is spec:
        raise ValueError(
            f"register({name!r}): this spec object is already registered (a built-in "
            "algorithm, or one this plugin registered before); valid: a spec of your own, e.g. "
            f"dataclasses.replace(spec, name='my-{name}', implementations={{...}})"
        )
    return registry.add(spec)


def register_problem(
    name: str,
    kind: str,
    build: Callable[[], Any],
    levels: tuple[str, ...] = LEVELS,
    draws: Mapping[str, int] | None = None,
) -> Problem:
    """Add a named problem to the registry that is loading this plugin; return it.

    ``build()`` returns the target (plain data carrying its ground truth, ``.kind == kind``);
    it runs once per process, when a run first needs the target, and the target is then checked
    for what the gates of ``kind`` read. ``levels`` are the verification levels the problem
    runs at; ``draws`` overrides the run size (draws or chain steps) of each of them.
    Every registered algorithm whose target kinds and checks fit runs on it.
    """
    from harness.targets.catalog import Problem

    registry = _collecting("register_problem")
    return registry.add_problem(Problem(name, kind, build, levels, draws))


def _catalog() -> Any:
    from harness.targets import catalog

    return catalog


def _catalog_names() -> frozenset[str]:
    return frozenset(p.name for p in _catalog().PROBLEMS)


def _choices(values: Any) -> str:
    return ", ".join(repr(v) for v in values)


def checked_problem(name: Any, kind: Any, build: Any, levels: Any, draws: Any) -> Problem:
    """A :class:`Problem` from checked fields; ``ValueError`` naming the first bad one."""
    from harness.checks.gate_sets import GATE_SETS  # heavy; only plugins need them
    from harness.targets.catalog import Problem

    # "|" separates the fields of a case key (harness.checks.cases.Case.key).
    if not isinstance(name, str) or not name.strip() or "|" in name:
        raise ValueError(f"name = {name!r} is invalid; valid: a non-empty string without '|'")
    if not isinstance(kind, str) or kind not in GATE_SETS:
        raise ValueError(f"kind = {kind!r} is invalid; valid: one of {_choices(GATE_SETS)}")
    if not callable(build):
        raise ValueError(
            f"build = {build!r} is invalid; valid: a callable with no arguments returning the "
            "target"
        )
    levels = _checked_levels(levels)
    return Problem(name, kind, build, levels, _checked_draws(draws, levels))


def _checked_levels(levels: Any) -> tuple[str, ...]:
    valid = f"valid: a non-empty tuple of {_choices(LEVELS)}"
    if isinstance(levels, str) or not isinstance(levels, tuple | list) or not levels:
        raise ValueError(f"levels = {levels!r} is invalid; {valid}")
    for level in levels:
        if level not in LEVELS:
            raise ValueError(f"levels = {levels!r} is invalid (level {level!r}); {valid}")
    return tuple(dict.fromkeys(levels))


def _checked_draws(draws: Any, levels: tuple[str, ...]) -> Mapping[str, int] | None:
    """None (the standard sizes), or a run size for each of ``levels``."""
    if draws is None:
        return None
    valid = f"valid: None or a mapping of each level in {levels!r} to an integer >= 1"
    if not isinstance(draws, Mapping):
        raise ValueError(f"draws = {draws!r} is invalid; {valid}")
    problems = [f"no entry for {level!r}" for level in levels if level not in draws]
    problems += [f"unknown level {key!r}" for key in draws if key not in LEVELS]
    problems += [
        f"{key!r}: {n!r} is not an integer >= 1"
        for key, n in draws.items()
        if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1
    ]
    if problems:
        raise ValueError(f"draws = {dict(draws)!r} is invalid ({'; '.join(problems)}); {valid}")
    return MappingProxyType({key: int(n) for key, n in draws.items()})


def _built_target(problem: Problem) -> Any:
    """Build a plugin problem's target and check it (the user's code: errors become
    ``ValueError`` naming the problem, reported without a traceback)."""
    from harness.checks.gate_sets import check_target

    try:
        target = problem.build()
    except Exception as exc:
        raise ValueError(
            f"problem {problem.name!r}: build() raised {type(exc).__name__}: {exc}"
        ) from exc
    check_target(problem.name, problem.kind, target)
    return target


@contextlib.contextmanager
def _collecting_into(registry: Registry) -> Iterator[None]:
    token = _COLLECTING.set(registry)
    try:
        yield
    finally:
        _COLLECTING.reset(token)


def builtin_specs() -> list[AlgorithmSpec]:
    from implementations import FAMILIES

    return [spec for family in FAMILIES for spec in family]


def load_plugin(ref: str, registry: Registry) -> list[AlgorithmSpec]:
    """Import a plugin (a module name or a path to a ``.py`` file) into ``registry``.

    Raises ``ValueError`` when the plugin cannot be found or registers nothing.
    """
    before = set(registry.names())
    problems_before = len(registry.plugin_problems())
    try:
        _import_plugin(ref, registry)
    except ValueError:
        raise
    except Exception as exc:  # the plugin's own error, reported without a traceback
        raise ValueError(f"plugin {ref!r} failed to import: {type(exc).__name__}: {exc}") from exc
    added = [registry.get(name) for name in registry.names() if name not in before]
    if not added and len(registry.plugin_problems()) == problems_before:
        raise ValueError(
            f"plugin {ref!r} registered no algorithm and no problem; call "
            "harness.register(spec) or harness.register_problem(...)"
        )
    registry.plugins.append(ref)
    return added


def _import_plugin(ref: str, registry: Registry) -> None:
    path = Path(ref)
    with _collecting_into(registry):
        shipped = _SHIPPED.get(ref)
        if shipped is not None and not _is_local_copy(path, shipped):
            # A Dask worker elsewhere (another machine or folder): the parent's sources.
            _exec_plugin(_materialized(shipped), Path(shipped.path), ref, sent=True)
        elif ref.endswith(".py") or path.exists():
            if not path.is_file():
                raise ValueError(f"plugin {ref!r}: no such file")
            _exec_plugin(path, path.resolve(), ref)
        else:
            try:
                if ref in sys.modules:
                    importlib.reload(sys.modules[ref])
                else:
                    importlib.import_module(ref)
            except ModuleNotFoundError as exc:
                if exc.name and ref.startswith(exc.name):
                    raise ValueError(
                        f"plugin {ref!r}: no such module or file (give a module on the "
                        "Python path or a path to a .py file)"
                    ) from None
                raise


@dataclass(frozen=True)
class PluginSource:
    """A ``.py`` plugin as this process loaded it, for a process its path does not lead to (a
    Dask worker on another machine or in another folder): the file's absolute path here, and
    the sources of the file and of the modules beside it that it imported, by path relative to
    its folder, the plugin's first."""

    path: str
    files: tuple[tuple[str, str], ...]

    @property
    def digest(self) -> str:
        h = hashlib.sha256(self.path.encode())
        for rel, text in self.files:
            h.update(b"\0" + rel.encode() + b"\0" + text.encode())
        return h.hexdigest()[:16]


#: The ``.py`` plugins this process loaded, by reference as given (what the engine sends).
_LOADED: dict[str, PluginSource] = {}
#: The plugins a parent sent to this process (a Dask worker), by reference.
_SHIPPED: dict[str, PluginSource] = {}


def plugin_sources() -> dict[str, PluginSource]:
    """The ``.py`` plugins loaded in this process, for :func:`receive_plugin_sources` in a
    worker that may not reach them by their paths."""
    return dict(_LOADED)


def receive_plugin_sources(sources: Mapping[str, PluginSource]) -> None:
    """Take a parent's plugins (all of them: the table is replaced): this process then imports
    each reference from its sources unless its path leads to the same file here. One this
    process loaded itself, alike (the parent, when a Dask worker is a thread of it), is left
    out, so the parent never imports an old copy of a plugin edited since. A changed table
    drops the cached registries, so a long-lived worker never runs an old copy either."""
    sent = {ref: src for ref, src in sources.items() if _LOADED.get(ref) != src}
    if sent != _SHIPPED:
        _SHIPPED.clear()
        _SHIPPED.update(sent)
        registry_for.cache_clear()


def _is_local_copy(path: Path, shipped: PluginSource) -> bool:
    """``path`` is the parent's file, unchanged (a shared file system): import it in place, so
    the files beside it that were not sent (data, say) are there too."""
    try:
        return (
            path.is_file()
            and str(path.resolve()) == shipped.path
            and path.read_text(encoding="utf-8") == shipped.files[0][1]
        )
    except (OSError, UnicodeDecodeError):
        return False


def _materialized(shipped: PluginSource) -> Path:
    """The sent files written to a folder named by their digest; returns the plugin's path."""
    user = getattr(os, "getuid", lambda: "")()  # a folder per user: another's is not writable
    folder = Path(tempfile.gettempdir()) / f"harness-plugins-{user}" / shipped.digest
    for rel, text in shipped.files:
        target = folder / rel
        if not target.is_file() or target.read_text(encoding="utf-8") != text:
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, target)  # atomic: worker processes on one machine may race here
    return folder / shipped.files[0][0]


def _exec_plugin(file: Path, original: Path, ref: str, sent: bool = False) -> None:
    """Import the plugin at ``file`` with its folder on ``sys.path`` (so it can import the
    modules beside it), under a name derived from ``original`` (its path in the process that
    read it from disk, so that every process derives the same name), and record its sources
    for workers unless it is a copy a parent ``sent``."""
    # A name every process derives alike (str hashes are salted per process), so that what a
    # worker pickles from the plugin unpickles in the parent.
    digest = hashlib.sha256(str(original).encode()).hexdigest()[:16]
    module_name = f"harness_plugin_{digest}"
    loader_spec = importlib.util.spec_from_file_location(module_name, file)
    if loader_spec is None or loader_spec.loader is None:
        raise ValueError(f"plugin {ref!r}: cannot be imported as a Python file")
    module = importlib.util.module_from_spec(loader_spec)
    sys.modules[module_name] = module
    folder = str(file.resolve().parent)
    before = set(sys.modules)
    added = folder not in sys.path
    if added:
        sys.path.insert(0, folder)
        importlib.invalidate_caches()
    try:
        loader_spec.loader.exec_module(module)
    finally:
        if added and folder in sys.path:
            sys.path.remove(folder)
    if not sent:  # a copy a parent sent is not sent on
        _record(ref, file, before)


def _record(ref: str, file: Path, before: set[str]) -> None:
    """Remember the plugin and the modules beside it that it imported now (a package already
    imported, such as harness, is the environment's, not the plugin's) or at an earlier load."""
    folder = file.resolve().parent
    tops = {name.partition(".")[0] for name in before}
    earlier = _LOADED.get(ref)
    same = earlier is not None and earlier.path == str(file.resolve())
    rels = [rel for rel, _ in earlier.files[1:]] if same and earlier else []
    for name in set(sys.modules) - before:
        where = getattr(sys.modules.get(name), "__file__", None)
        if where and name.partition(".")[0] not in tops and where.endswith(".py"):
            with contextlib.suppress(ValueError):
                rels.append(str(Path(where).resolve().relative_to(folder)))
    try:
        files = [(file.name, file.read_text(encoding="utf-8"))]
    except (OSError, UnicodeDecodeError):
        return  # not sent: a worker must reach it by its path, as before
    for rel in sorted(set(rels) - {file.name}):
        with contextlib.suppress(OSError, UnicodeDecodeError):
            files.append((rel, (folder / rel).read_text(encoding="utf-8")))
    _LOADED[ref] = PluginSource(str(file.resolve()), tuple(files))


def build_registry(plugins: tuple[str, ...] | list[str] = ()) -> Registry:
    """A fresh registry: the built-in families, then each plugin in order."""
    registry = Registry(builtin_specs())
    for ref in plugins:
        load_plugin(ref, registry)
    return registry


@functools.lru_cache(maxsize=8)
def registry_for(plugins: tuple[str, ...]) -> Registry:
    """The registry a worker process uses; built once per process and plugin set."""
    return build_registry(plugins)
