"""TEMPORARY: an old-style experiment module behind the new contract, while experiments move."""

from __future__ import annotations

import importlib
from typing import Any

from harness.experiments.framework import Experiment


class Legacy(Experiment[Any]):
    def __init__(self, package: str, name: str, paper: str, summary: str, help: str) -> None:
        self.package, self.name, self.paper, self.summary, self.help = (
            package,
            name,
            paper,
            summary,
            help,
        )
        self.title = name

    @property
    def module(self) -> Any:
        return importlib.import_module(self.package)

    @property
    def parts(self) -> tuple[str, ...]:  # type: ignore[override]
        return tuple(getattr(self.module, "PARTS", ("all",)))

    @property
    def timed(self) -> bool:  # type: ignore[override]
        return getattr(self.module, "TIMED", True)

    @property
    def config_type(self) -> Any:  # type: ignore[override]
        return type(self.module.config_for_level("quick", 0))

    def config(self, level: str, seed: int = 0) -> Any:
        return self.module.config_for_level(level, seed)

    def config_from_manifest(self, settings: dict[str, Any]) -> Any:
        return self.module.config_from_manifest(settings)

    def plan(self, config: Any, records: Any, part: str) -> Any:
        return self.module.plan(config, records, part)

    def claims(self, config: Any) -> tuple[()]:
        return ()

    def has_warm(self) -> bool:
        return hasattr(self.module, "warm")

    def warm(self) -> None:
        self.module.warm()

    def own(self, config: Any, records: Any) -> dict[str, Any]:
        return self.module.report(config, records, {})

    def figures(self, config: Any, records: Any) -> Any:
        return self.own(config, records).get("figure_groups", [])

    def tables(self, config: Any, records: Any) -> Any:
        return self.own(config, records).get("tables", [])

    def settings(self, config: Any) -> Any:
        return self.own(config, []).get("settings", [])


def new_or_legacy(cls: str, **kw: str) -> Experiment[Any]:
    """The package's new-style class ``cls`` when it has one, else the old module behind Legacy."""
    module = importlib.import_module(kw["package"])
    new = getattr(module, cls, None)
    return new() if new is not None else Legacy(**kw)
