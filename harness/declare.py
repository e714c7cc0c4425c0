"""Experiment settings declared once: type, valid range and the value at each level.

A config is a frozen dataclass that subclasses :class:`Config` and declares each parameter
with :func:`param`::

    @dataclass(frozen=True, kw_only=True)
    class MyConfig(Config):
        n: int = param(low=1, quick=2000, full=10_000, doc="draws per setting")
        deltas: tuple[float, ...] = param(low=0.0, high=1.0, open=True, quick=(0.01, 0.1))

From that declaration the framework derives the rest: :meth:`Config.for_level` builds a level's
config, ``__post_init__`` checks and coerces every value (a bad one raises ``ValueError``
naming the parameter, the value and the valid range, before any work),
:meth:`Config.manifest` writes the JSON-ready settings and :func:`from_manifest` reads them
back, and :func:`settings_rows` gives the report's settings list. Nested settings (a sampler
line, a variant) subclass :class:`Declared` and are checked the same way.
"""

from __future__ import annotations

import dataclasses
import math
import re
import types
import typing
from functools import cache
from typing import Any, ClassVar, TypeVar

from harness.spec import LEVELS, SEED, Param
from harness.store import clean

_MISSING = dataclasses.MISSING

T = TypeVar("T")


def param(
    default: Any = _MISSING,
    *,
    quick: Any = _MISSING,
    full: Any = _MISSING,
    low: float | None = None,
    high: float | None = None,
    open: bool | str = False,
    choices: tuple[Any, ...] | None = None,
    empty: bool = False,
    doc: str = "",
) -> Any:
    """A declared parameter: its default, its value at each level, and its valid range.

    ``low``/``high`` bound numbers, excluded when ``open`` (True: both ends; "low" or "high":
    that end only); ``choices`` lists the values of a
    categorical one. For a tuple the range applies to every entry, and ``empty`` allows ().
    ``doc`` names it in the report's settings (undocumented parameters are not listed there).
    """
    levels = {k: v for k, v in (("quick", quick), ("full", full)) if v is not _MISSING}
    meta = {
        "levels": levels,
        "range": (low, high, open, choices),
        "empty": empty,
        "doc": doc,
    }
    if default is _MISSING:
        return dataclasses.field(metadata=meta)
    if isinstance(default, list | dict | set):
        raise TypeError("param: a mutable default; use a tuple")
    return dataclasses.field(default=default, metadata=meta)


def check_level(level: str) -> str:
    if level not in LEVELS:
        raise ValueError(f"--level {level!r} is invalid; valid: {', '.join(LEVELS)}")
    return level


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _scalar(name: str, kind: type, meta: dict[str, Any]) -> Param:
    low, high, open_, choices = meta.get("range", (None, None, False, None))
    if kind is float and low is None and high is None and choices is None:
        low, high, open_ = -math.inf, math.inf, True  # a float is finite unless declared
    return Param(
        name,
        None,
        kind=kind,
        low=low,
        high=high,
        low_inclusive=open_ not in (True, "low"),
        high_inclusive=open_ not in (True, "high"),
        choices=choices,
    )


def _check(name: str, hint: Any, value: Any, meta: dict[str, Any]) -> Any:
    """``value`` checked against the type ``hint`` and the declared range; coerced."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any or origin is dict or hint is dict:
        return value
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        (inner,) = [a for a in args if a is not type(None)]
        return _check(name, inner, value, meta)
    if origin is tuple:
        if isinstance(value, list):
            value = tuple(value)
        if not isinstance(value, tuple) or (not value and not meta.get("empty")):
            raise ValueError(
                f"parameter {name!r} = {value!r} is invalid; valid: a non-empty tuple"
                if not meta.get("empty")
                else f"parameter {name!r} = {value!r} is invalid; valid: a tuple"
            )
        inner = args[0]
        return tuple(_check(f"{name}[{i}]", inner, v, meta) for i, v in enumerate(value))
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        if isinstance(value, dict):
            return decode(hint, value)
        if not isinstance(value, hint):
            raise ValueError(f"parameter {name!r} = {value!r} is invalid; valid: a {hint.__name__}")
        return value
    if hint is str:
        choices = meta.get("range", (None, None, False, None))[3]
        if not isinstance(value, str) or (choices is not None and value not in choices):
            valid = "one of " + ", ".join(map(repr, choices)) if choices else "a string"
            raise ValueError(f"parameter {name!r} = {value!r} is invalid; valid: {valid}")
        return value
    if hint in (int, float, bool):
        return _scalar(name, hint, meta).check(value)
    raise TypeError(f"{name}: undeclarable type {hint!r}")


class Declared:
    """A frozen dataclass whose every field is checked (and coerced) when it is made."""

    def __post_init__(self) -> None:
        hints = _hints(type(self))
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            value = _check(f.name, hints[f.name], getattr(self, f.name), dict(f.metadata))
            object.__setattr__(self, f.name, value)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Config(Declared):
    """The settings of one experiment run: what determines its records (its manifest)."""

    experiment: ClassVar[str] = ""
    level: str = param(choices=LEVELS, doc="level")
    seed: int = param(doc="seed")
    notes: tuple[str, ...] = param((), empty=True)

    def __post_init__(self) -> None:
        object.__setattr__(self, "seed", SEED.check(self.seed))
        super().__post_init__()

    @classmethod
    def for_level(cls: type[T], level: str, seed: int = 0, **overrides: Any) -> T:
        """The config of ``level``: every parameter at its declared level value or default."""
        values: dict[str, Any] = {"level": check_level(level), "seed": seed}
        for f in dataclasses.fields(cls):  # type: ignore[arg-type]
            levels = f.metadata.get("levels", {})
            if f.name not in values and level in levels:
                values[f.name] = levels[level]
        return cls(**{**values, **overrides})

    def manifest(self) -> dict[str, Any]:
        """The settings as JSON data (:func:`harness.store.clean`): the experiment's name and
        every field; :func:`from_manifest` reads them back."""
        return clean({"experiment": self.experiment, **dataclasses.asdict(self)})


def decode(cls: type[T], data: dict[str, Any]) -> T:
    """The dataclass ``cls`` from its ``dataclasses.asdict`` form read back from JSON, as
    :func:`harness.store.clean` wrote it (an infinite float as "inf" or "-inf")."""
    hints = _hints(cls)
    names = {f.name for f in dataclasses.fields(cls) if f.init}  # type: ignore[arg-type]
    return cls(**{k: _decode(hints[k], v) for k, v in data.items() if k in names})


def _decode(hint: Any, value: Any) -> Any:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if value is None:
        return None
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in args if a is not type(None)]
        return _decode(inner[0], value) if len(inner) == 1 else value
    if origin is tuple and isinstance(value, list | tuple):
        return tuple(_decode(args[0], v) for v in value)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint) and isinstance(value, dict):
        return decode(hint, value)
    if hint is float and value in ("inf", "-inf"):
        return float(value)
    return value


def from_manifest(cls: type[T], settings: dict[str, Any]) -> T:
    """The inverse of :meth:`Config.manifest`."""
    return decode(cls, settings)


def _text(value: Any) -> str:
    if hasattr(value, "describe"):
        return str(value.describe())
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, tuple):
        return ", ".join(_text(v) for v in value) if value else "-"
    return str(value)


def settings_rows(config: Config) -> list[tuple[str, str]]:
    """(label, value) of every documented parameter; a tuple of settings that describe
    themselves gives one row per entry."""
    rows = []
    for f in dataclasses.fields(config):
        doc = f.metadata.get("doc")
        if not doc:
            continue
        value = getattr(config, f.name)
        if isinstance(value, tuple) and value and hasattr(value[0], "describe"):
            rows += [(f"{doc} {i + 1}", _text(v)) for i, v in enumerate(value)]
        else:
            rows.append((doc, _text(value)))
    return rows


#: Parameters every config has, set by options of their own rather than ``--set``.
OWN_OPTIONS = {"level": "--level", "seed": "--seed"}
_TRUE, _FALSE = ("true", "yes", "1", "on"), ("false", "no", "0", "off")


def _settable(hint: Any) -> bool:
    """Whether a value of type ``hint`` can be written as text: numbers, strings, booleans,
    None, and tuples of those."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return all(_settable(a) for a in args)
    if origin is tuple:
        return _settable(args[0])
    return hint in (int, float, bool, str, type(None))


def _parse(name: str, hint: Any, text: str) -> Any:
    """``text`` read as a value of type ``hint`` (a tuple: comma-separated; '' is empty)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if text.strip().lower() == "none" and type(None) in args:
            return None
        (inner,) = [a for a in args if a is not type(None)]
        return _parse(name, inner, text)
    if origin is tuple:
        items = [t.strip() for t in text.split(",")] if text.strip() else []
        return tuple(_parse(f"{name}[{i}]", args[0], t) for i, t in enumerate(items))
    word = text.strip()
    try:
        if hint is bool:
            if word.lower() not in _TRUE + _FALSE:
                raise ValueError
            return word.lower() in _TRUE
        if hint is int:
            return int(word)
        if hint is float:
            return float(word)
    except ValueError:
        kind = {bool: "true or false", int: "an integer", float: "a number"}[hint]
        raise ValueError(f"parameter {name!r} = {text!r} is invalid; valid: {kind}") from None
    return word


def settable_names(cls: type) -> list[str]:
    """The parameters of config class ``cls`` that ``--set`` and ``--config`` can set."""
    hints = _hints(cls)
    return [
        f.name
        for f in dataclasses.fields(cls)
        if f.init and f.name not in OWN_OPTIONS and f.name != "notes" and _settable(hints[f.name])
    ]


def _check_name(cls: type, name: str, how: str) -> None:
    if name in OWN_OPTIONS:
        raise ValueError(f"{how} {name!r} is invalid; valid: the {OWN_OPTIONS[name]} option")
    names = settable_names(cls)
    if name not in names:
        fields = {f.name for f in dataclasses.fields(cls)}
        why = " (a nested setting: set it from Python)" if name in fields else ""
        raise ValueError(
            f"{how} {name!r} is invalid for {cls.experiment}{why}; valid: one of "
            + ", ".join(names)
        )


def overrides(cls: type, settings: typing.Sequence[str] = (), path: Any = None) -> dict[str, Any]:
    """Parameter values for ``cls`` from a TOML file of ``name = value`` lines (``path``)
    and ``PARAM=VALUE`` texts (``--set``, which win): names are checked here, values when
    the config is made (a ``ValueError`` naming the parameter, value and valid range)."""
    import tomllib
    from pathlib import Path

    out: dict[str, Any] = {}
    if path is not None:
        try:
            data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise ValueError(f"--config {str(path)!r} is invalid: {exc}") from None
        for name, value in data.items():
            _check_name(cls, name, f"--config {path}: parameter")
            out[name] = tuple(value) if isinstance(value, list) else value
    hints = _hints(cls)
    for text in settings:
        name, eq, value = text.partition("=")
        name = name.strip()
        if not eq or not name:
            raise ValueError(f"--set {text!r} is invalid; valid: PARAM=VALUE")
        _check_name(cls, name, "--set")
        out[name] = _parse(name, hints[name], value)
    return out


def _shown(value: Any) -> str:
    return "-" if value is _MISSING else _text(value) if not isinstance(value, str) else value


def params_rows(cls: type) -> list[list[str]]:
    """One row a parameter of ``cls``: name, type, valid range, default, quick and full
    values, what it is (``--help-params``)."""
    hints = _hints(cls)
    settable = set(settable_names(cls))
    rows = []
    for f in dataclasses.fields(cls):
        if not f.init or f.name == "notes":
            continue
        low, high, open_, choices = f.metadata.get("range", (None, None, False, None))
        if choices is not None:
            valid = ", ".join(map(str, choices))
        elif low is None and high is None:
            valid = "-"
        else:
            left = "(" if open_ in (True, "low") else "["
            right = ")" if open_ in (True, "high") else "]"
            valid = f"{left}{_text(low if low is not None else -math.inf)}, "
            valid += f"{_text(high if high is not None else math.inf)}{right}"
        hint = re.sub(r"<class '(\w+)'>", r"\1", str(hints[f.name]))
        hint = re.sub(r"\b(?:\w+\.)+(\w+)", r"\1", hint)  # a class by its own name
        if f.name in OWN_OPTIONS:
            hint += f" ({OWN_OPTIONS[f.name]})"
        elif f.name not in settable:
            hint += " (Python only)"
        levels = f.metadata.get("levels", {})
        rows.append(
            [
                f.name,
                hint,
                valid,
                _shown(f.default),
                _shown(levels.get("quick", _MISSING)),
                _shown(levels.get("full", _MISSING)),
                f.metadata.get("doc", ""),
            ]
        )
    return rows
