"""A verification run's settings, declared as an experiment's are (:mod:`harness.declare`):
type, valid range and default once, checked when the config is made (a ``ValueError`` naming
the parameter, the value and the valid range, before any work), written to run.json by
:meth:`RunConfig.manifest` and read back by :func:`harness.declare.from_manifest`. The command
line takes its defaults and choices from here."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from harness.checks.reference_modes import REFERENCE_MODES
from harness.declare import Declared, from_manifest, param
from harness.gates.multiple import Escalation
from harness.spec import LEVELS
from harness.store import clean

#: The family-wise false-failure budget of a whole run.
ALPHA = 1e-4


def default(name: str) -> Any:
    """The declared default of ``RunConfig``'s parameter ``name`` (the command line's)."""
    return {f.name: f.default for f in dataclasses.fields(RunConfig)}[name]


@dataclass(frozen=True)
class RunConfig(Declared):
    """Everything that determines a verification run's results (stored as run.json)."""

    algorithms: tuple[str, ...] = param(empty=True, doc="algorithms (all when empty)")
    impls: tuple[str, ...] = param(doc="implementation keys")
    level: str = param("quick", choices=LEVELS, doc="level")
    seed: int = param(0, low=0, doc="run seed")
    alpha: float = param(ALPHA, low=0.0, high=1.0, open=True, doc="family-wise alpha")
    plugins: tuple[str, ...] = param((), empty=True, doc="plugins")
    escalation: Escalation = param(Escalation(), doc="escalation")
    reference: str = param("stream", choices=REFERENCE_MODES, doc="reference mode")
    #: Only these problems (all when empty): `harness verify --problem NAME`.
    problems: tuple[str, ...] = param((), empty=True, doc="problems (all when empty)")

    @classmethod
    def from_manifest(cls, settings: dict[str, Any]) -> RunConfig:
        """The inverse of :meth:`manifest`."""
        return from_manifest(cls, settings)

    def manifest(self) -> dict[str, Any]:
        """The settings as JSON data (run.json). ``problems`` is left out when empty, so a run
        over every problem resumes from a run.json written without the field."""
        settings = clean(dataclasses.asdict(self))
        if not self.problems:
            del settings["problems"]
        return settings
