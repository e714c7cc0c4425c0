"""The registry: built-in families from explicit tables, plus users' plugins.

Built-in algorithms come from ``implementations.FAMILIES`` (a list of the families' spec lists);
nothing registers itself by import side effect. A plugin is a module or a ``.py`` file that calls
:func:`register` for each of its specs; :func:`load_plugin` imports it while a registry is
collecting, so plugin algorithms land in exactly the same registry as built-in ones.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import importlib.util
import sys
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path

from harness.spec import AlgorithmSpec


class Registry:
    """Algorithms by name. Holds state (the table), so it is a class."""

    def __init__(self, specs: tuple[AlgorithmSpec, ...] | list[AlgorithmSpec] = ()) -> None:
        self._specs: dict[str, AlgorithmSpec] = {}
        self.plugins: list[str] = []
        for spec in specs:
            self.add(spec)

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


_COLLECTING: ContextVar[Registry | None] = ContextVar("harness_collecting_registry", default=None)


def register(spec: AlgorithmSpec) -> AlgorithmSpec:
    """Add ``spec`` to the registry that is loading this plugin; return ``spec``.

    Call it at the top level of a plugin module, then run ``harness verify --plugin MODULE``
    (or pass the module to :func:`load_plugin`).
    """
    registry = _COLLECTING.get()
    if registry is None:
        raise RuntimeError(
            "harness.register() was called outside plugin loading; run the module with "
            "`harness verify --plugin MODULE_OR_FILE` or harness.load_plugin(...)"
        )
    return registry.add(spec)


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
    try:
        _import_plugin(ref, registry)
    except ValueError:
        raise
    except Exception as exc:  # the plugin's own error, reported without a traceback
        raise ValueError(f"plugin {ref!r} failed to import: {type(exc).__name__}: {exc}") from exc
    added = [registry.get(name) for name in registry.names() if name not in before]
    if not added:
        raise ValueError(f"plugin {ref!r} registered no algorithm; call harness.register(spec)")
    registry.plugins.append(ref)
    return added


def _import_plugin(ref: str, registry: Registry) -> None:
    path = Path(ref)
    with _collecting_into(registry):
        if ref.endswith(".py") or path.exists():
            if not path.is_file():
                raise ValueError(f"plugin {ref!r}: no such file")
            module_name = f"harness_plugin_{abs(hash(str(path.resolve())))}"
            loader_spec = importlib.util.spec_from_file_location(module_name, path)
            if loader_spec is None or loader_spec.loader is None:
                raise ValueError(f"plugin {ref!r}: cannot be imported as a Python file")
            module = importlib.util.module_from_spec(loader_spec)
            sys.modules[module_name] = module
            loader_spec.loader.exec_module(module)
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
