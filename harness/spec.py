"""The contracts every sampler in the harness keeps (see DESIGN.md, Contracts).

A sampler is described by a frozen :class:`AlgorithmSpec`. Its parameters are :class:`Param`
records, and :func:`AlgorithmSpec.validate` is the one place where a parameter value is checked.
Implementations return :class:`Draws` (independent draws) or :class:`Chain` (Markov chains); both
carry the number of likelihood (factor) evaluations spent, because cost is part of the result,
and ``extras`` whose fields harness/extras.py declares.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

import numpy as np

from harness.extras import ExtraField, check_extras, check_field

Guarantee = Literal["exact", "approximate", "mcmc"]
Entry = Literal["draw", "run_chain"]
IMPLEMENTATION_NAMES = ("reference", "numba", "cuda")


@dataclass(frozen=True)
class Draws:
    """Independent draws: ``values[k]`` is draw k; ``evals`` counts factor evaluations."""

    values: np.ndarray
    evals: int
    extras: Mapping[str, np.ndarray] = field(default_factory=dict)


@dataclass(frozen=True)
class Chain:
    """A Markov chain: ``values[t]`` is the state after step t; ``evals`` as in :class:`Draws`."""

    values: np.ndarray
    evals: int
    extras: Mapping[str, np.ndarray] = field(default_factory=dict)


@dataclass(frozen=True)
class Param:
    """One tunable parameter with its default and valid range.

    ``low``/``high`` bound numeric values (``None`` = unbounded); ``choices`` lists the allowed
    values of a categorical parameter. ``keeps_state``: away from its default, the parameter
    makes a call carry state from draw to draw (a search tree reused), so n/2 + n/2 draws differ
    from n draws even in a ``splittable`` spec (:meth:`AlgorithmSpec.splits`).
    """

    name: str
    default: Any
    kind: type = float
    low: float | None = None
    high: float | None = None
    low_inclusive: bool = True
    high_inclusive: bool = True
    choices: tuple[Any, ...] | None = None
    doc: str = ""
    keeps_state: bool = False

    def range_text(self) -> str:
        if self.choices is not None:
            return "one of " + ", ".join(repr(c) for c in self.choices)
        if self.kind is bool:
            return "True or False"
        lo = "-inf" if self.low is None else repr(self.low)
        hi = "inf" if self.high is None else repr(self.high)
        left = "[" if self.low_inclusive and self.low is not None else "("
        right = "]" if self.high_inclusive and self.high is not None else ")"
        what = "an integer" if self.kind is int else "a number"
        return f"{what} in {left}{lo}, {hi}{right}"

    def check(self, value: Any) -> Any:
        """Return ``value`` coerced to the parameter's kind, or raise ``ValueError``."""

        def bad(why: str = "") -> ValueError:
            extra = f" ({why})" if why else ""
            return ValueError(
                f"parameter {self.name!r} = {value!r} is invalid{extra}; valid: {self.range_text()}"
            )

        if self.choices is not None:
            if value not in self.choices:
                raise bad()
            return value
        if self.kind is bool:
            if isinstance(value, bool | np.bool_):
                return bool(value)
            raise bad("expected a boolean")
        if isinstance(value, bool | np.bool_) or not isinstance(value, int | float | np.number):
            raise bad("expected a number")
        if self.kind is int:
            if isinstance(value, float | np.floating) and not float(value).is_integer():
                raise bad("expected an integer")
            value = int(value)
        else:
            value = float(value)
            if math.isnan(value):
                raise bad("NaN")
        if self.low is not None and (
            value < self.low or (not self.low_inclusive and value == self.low)
        ):
            raise bad()
        if self.high is not None and (
            value > self.high or (not self.high_inclusive and value == self.high)
        ):
            raise bad()
        return value


SEED = Param("seed", 0, kind=int, low=0, doc="run seed")
#: The levels of every run, verification and experiment alike: quick (CI-sized, minutes) and
#: full (the papers' sizes).
LEVELS = ("quick", "full")
#: A spec's stated bound on the error of each Gibbs update (0: exact conditionals).
CONDITIONAL_ERROR = Param("conditional_error", 0.0, float, 0.0, 1.0, high_inclusive=False)


def check_seed(seed: Any) -> int:
    """The run seed: an integer >= 0 (one Param, used by verify and every experiment)."""
    return SEED.check(seed)


def finite_number(name: str, above: float | None = None) -> Param:
    """The :class:`Param` of a finite number, greater than ``above`` when given (for checking a
    value that has no default of its own: ``finite_number("beta", above=0.0).check(beta)``)."""
    low = -math.inf if above is None else above
    return Param(name, low, float, low, math.inf, low_inclusive=False, high_inclusive=False)


@dataclass(frozen=True)
class Agreement:
    """How reference and Numba outputs are compared under the same seed.

    ``rtol == 0`` means bit-for-bit equality (the default and the strongest test). A spec that
    cannot promise equality sets ``rtol`` and says why in ``reason``; one whose outputs differ
    sample by sample sets ``law_only`` and is checked by a two-sample test instead.

    ``reference_draws``: where the reference is too slow to run a verification's whole stream
    (the racing references take over a minute a case at 2e4 draws), the most draws it runs
    beside its Numba twin by default; ``reference_reason`` says why. The two then agree on
    those first draws only, and ``harness verify --reference full`` still compares them all.
    """

    rtol: float = 0.0
    reason: str = ""
    law_only: bool = False
    reference_draws: int | None = None
    reference_reason: str = ""

    def __post_init__(self) -> None:
        if self.reference_draws is not None and (
            self.reference_draws < 1 or not self.reference_reason
        ):
            raise ValueError(
                f"Agreement.reference_draws must be an integer >= 1 with a reference_reason, "
                f"got {self.reference_draws!r} and {self.reference_reason!r}"
            )


@dataclass(frozen=True)
class Check:
    """One parameter set a verification run exercises, optionally only on named problems or
    target kinds; ``skip`` names problems it never runs on (where it would cost far more than
    the problem is there to show)."""

    params: Mapping[str, Any] = field(default_factory=dict)
    problems: tuple[str, ...] | None = None
    kinds: tuple[str, ...] | None = None
    skip: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", MappingProxyType(dict(self.params)))
        if self.problems is not None:
            object.__setattr__(self, "problems", tuple(self.problems))
        if self.kinds is not None:
            object.__setattr__(self, "kinds", tuple(self.kinds))
        object.__setattr__(self, "skip", tuple(self.skip))

    def applies_to(self, problem: str, kind: str) -> bool:
        return (
            (self.problems is None or problem in self.problems)
            and (self.kinds is None or kind in self.kinds)
            and problem not in self.skip
        )


@dataclass(frozen=True, eq=False)
class AlgorithmSpec:
    """Everything the harness needs to know about one algorithm.

    ``implementations`` maps ``"reference"``/``"numba"`` to callables with the entry point's
    signature: ``draw(target, n, rng, **params)`` or
    ``run_chain(target, n_steps, rng, x0=None, **params)``.
    ``checks`` lists the parameter sets a verification run exercises (defaults first).
    ``kernels`` lists the Numba dispatchers behind the fast implementation, so the contract tests
    can check that each compiles once per signature.
    ``target_check(target, params)`` validates what depends on the target (e.g. m1 <= N) and
    raises ``ValueError`` naming the parameter, before any draw.
    ``exact_kernel(target, params)`` returns the kernel's transition matrix over the target's
    enumerated states and a bound on its numerical error, for the invariance gate on tiny
    models; ``gap_bound(target, params)`` returns a theorem's lower bound on its spectral gap and
    the theorem's name (or None where the theorem's conditions do not hold).
    ``parts`` names the building blocks the implementations themselves call, for a caller that
    composes its own chain or exact computation from them (racing-mh's two-arm race of Eq. 12
    inside a Carlin & Chib sweep, a kernel's transition matrix at another truncation): it reaches
    them through the registry (:meth:`part`), so what it runs is what the algorithm's gates check.
    ``conditional_steps``: every recorded step of the chain redraws one coordinate from its full
    conditional (a Gibbs step, at the parameters of every check; on a discrete factor graph a
    random-scan step, the site uniform); the harness then tests the conditional PIT of each
    update, which is i.i.d. uniform whatever the mixing. ``conditional_error``: for Gibbs steps
    whose conditionals are approximate (an interpolated inverse CDF, a discretised conditional),
    a bound on the total variation between each update's law and the exact conditional (for a
    1-D continuous conditional the Kolmogorov distance sup |G - F| suffices); 0 claims exact
    conditionals. The per-step gate then tests against that bound.
    """

    name: str
    family: str
    paper: str
    guarantee: Guarantee
    target_kinds: tuple[str, ...]
    implementations: Mapping[str, Callable[..., Draws | Chain]]
    params: tuple[Param, ...] = ()
    entry: Entry = "draw"
    summary: str = ""
    delta_param: str | None = None
    splittable: bool = True
    agreement: Agreement = Agreement()
    checks: tuple[Check, ...] = (Check(),)
    kernels: tuple[Any, ...] = ()
    target_check: Callable[[Any, Mapping[str, Any]], None] | None = None
    exact_kernel: Callable[[Any, Mapping[str, Any]], tuple[np.ndarray, float]] | None = None
    gap_bound: Callable[[Any, Mapping[str, Any]], tuple[float, str] | None] | None = None
    conditional_steps: bool = False
    conditional_error: float = 0.0
    #: The chain carries state x0 cannot set (a stored likelihood estimate, bright/dark
    #: variables): a gate that starts chains from exact draws of x warms them up first.
    auxiliary_state: bool = False
    parts: Mapping[str, Callable[..., Any]] = field(default_factory=dict)
    #: Fields of ``extras`` this sampler returns beyond the shared ones of harness/extras.py.
    extra_fields: tuple[ExtraField, ...] = ()

    def __post_init__(self) -> None:
        if not self.name or not isinstance(self.name, str):
            raise ValueError(f"spec name must be a non-empty string, got {self.name!r}")
        if self.guarantee not in ("exact", "approximate", "mcmc"):
            raise ValueError(
                f"spec {self.name!r}: guarantee = {self.guarantee!r}; "
                "valid: 'exact', 'approximate' or 'mcmc'"
            )
        if self.entry not in ("draw", "run_chain"):
            raise ValueError(f"spec {self.name!r}: entry = {self.entry!r}; valid: draw, run_chain")
        if not self.implementations:
            raise ValueError(f"spec {self.name!r} has no implementations")
        for impl, fn in self.implementations.items():
            if not callable(fn):
                raise ValueError(f"spec {self.name!r}: implementation {impl!r} is not callable")
        names = [p.name for p in self.params]
        if len(set(names)) != len(names):
            raise ValueError(f"spec {self.name!r}: duplicate parameter names {names}")
        if self.guarantee == "approximate" and self.delta_param not in names:
            raise ValueError(f"spec {self.name!r} is approximate and must name its delta parameter")
        error = CONDITIONAL_ERROR.check(self.conditional_error)
        object.__setattr__(self, "conditional_error", error)
        if self.conditional_error > 0.0 and not self.conditional_steps:
            raise ValueError(
                f"spec {self.name!r}: conditional_error = {self.conditional_error!r} bounds the "
                "error of Gibbs steps; valid: 0 unless conditional_steps=True"
            )
        object.__setattr__(self, "implementations", MappingProxyType(dict(self.implementations)))
        for name, fn in self.parts.items():
            if not callable(fn):
                raise ValueError(f"spec {self.name!r}: part {name!r} is not callable")
        object.__setattr__(self, "parts", MappingProxyType(dict(self.parts)))
        fields = tuple(check_field(f) for f in self.extra_fields)
        object.__setattr__(self, "extra_fields", fields)
        object.__setattr__(self, "target_kinds", tuple(self.target_kinds))
        object.__setattr__(self, "checks", tuple(self.checks))
        for check in self.checks:
            self.validate(check.params)

    def validate(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """Fill defaults and check every value; raise ``ValueError`` naming the bad one."""
        known = {p.name for p in self.params}
        unknown = sorted(set(params) - known)
        if unknown:
            valid = ", ".join(sorted(known)) or "none"
            raise ValueError(
                f"algorithm {self.name!r} has no parameter {unknown[0]!r}; "
                f"valid parameters: {valid}"
            )
        return {p.name: p.check(params.get(p.name, p.default)) for p in self.params}

    def splits(self, params: Mapping[str, Any]) -> bool:
        """Whether n/2 + n/2 draws equal n draws under ``params``: independent draws of a
        ``splittable`` spec, no parameter that keeps state set away from its default."""
        return (
            self.entry == "draw"
            and self.splittable
            and all(
                params.get(p.name, p.default) == p.default for p in self.params if p.keeps_state
            )
        )

    def implementation(self, impl: str) -> Callable[..., Draws | Chain]:
        try:
            return self.implementations[impl]
        except KeyError:
            valid = ", ".join(self.implementations)
            raise ValueError(
                f"algorithm {self.name!r} has no implementation {impl!r}; valid: {valid}"
            ) from None

    def part(self, name: str) -> Callable[..., Any]:
        """The building block ``name`` of this algorithm (see the class docstring)."""
        try:
            return self.parts[name]
        except KeyError:
            valid = ", ".join(self.parts) or "none"
            raise ValueError(
                f"algorithm {self.name!r} has no part {name!r}; valid: {valid}"
            ) from None


def check_sample_size(n: Any, name: str = "n") -> int:
    """``n`` (draws or chain steps, called ``name``) must be a whole number >= 1."""
    return Param(name, 1, int, low=1).check(n)


def _summary(value: Any) -> str:
    """A short description of ``value`` for an error message (shape and a few entries)."""
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError):  # not array-like: described by its repr
        arr = None
    if arr is None or arr.dtype == object or arr.ndim == 0:
        text = repr(value)
        return text if len(text) <= 80 else text[:77] + "..."
    entries = np.array2string(arr, threshold=8, edgeitems=3, separator=", ")
    return f"{type(value).__name__} of shape {arr.shape} {entries}"


def check_x0(x0: Any, target: Any) -> Any:
    """A chain's start state ``x0``, checked against ``target``; returned unchanged.

    ``None`` (the implementation's default start) is always valid. Otherwise ``x0`` must be
    finite numbers, as many as the target says where it says: ``n_vars`` values on a target with
    ``n_vars`` (factor graphs), a single number on a one-dimensional target (kind ``*-1d``).
    What only a kernel knows (e.g. the range of a discrete state) it checks itself.
    """
    if x0 is None:
        return None
    n_vars = getattr(target, "n_vars", None)
    if n_vars is not None:
        shape: tuple[int, ...] | None = (int(n_vars),)
        valid = f"None or {int(n_vars)} finite numbers (one per variable)"
    elif str(getattr(target, "kind", "")).endswith("-1d"):
        shape, valid = (), "None or a single finite number"
    else:
        shape, valid = None, "None or finite numbers"

    def bad(why: str) -> ValueError:
        return ValueError(f"x0 = {_summary(x0)} is invalid ({why}); valid: {valid}")

    if isinstance(x0, str | bytes):
        raise bad("expected numbers")
    try:
        arr = np.asarray(x0)
    except (TypeError, ValueError):
        raise bad("not array-like") from None
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.number):
        raise bad("expected numbers")
    if shape is not None and arr.shape != shape:
        raise bad(f"shape {arr.shape}, expected {shape}")
    if not np.all(np.isfinite(arr)):
        raise bad("not finite")
    return x0


def sample(
    spec: AlgorithmSpec,
    impl: str,
    target: Any,
    n: int,
    rng: np.random.Generator,
    *,
    x0: Any = None,
    **params: Any,
) -> Draws | Chain:
    """Validate everything once, then call one implementation of ``spec``.

    This is the entry point the runner, the tests and users go through; implementations may
    assume validated input. ``x0`` is a chain's start state (``run_chain`` specs only, checked by
    :func:`check_x0`); it is passed on as ``x0=`` when given, else the implementation's default
    start applies.
    """
    fn = spec.implementation(impl)
    kind = getattr(target, "kind", None)
    if kind not in spec.target_kinds:
        raise ValueError(
            f"target kind {kind!r} is not accepted by {spec.name!r}; "
            f"valid: {', '.join(spec.target_kinds)}"
        )
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng = {rng!r} is invalid; valid: a numpy.random.Generator")
    n = check_sample_size(n, "n" if spec.entry == "draw" else "n_steps")
    if spec.entry == "draw" and x0 is not None:
        raise ValueError(
            f"x0 = {_summary(x0)} is invalid: {spec.name!r} draws independent samples "
            "(entry 'draw'); valid: None (x0 is a start state for 'run_chain' specs only)"
        )
    start = {} if x0 is None else {"x0": check_x0(x0, target)}
    checked = spec.validate(params)
    if spec.target_check is not None:
        spec.target_check(target, checked)
    out = fn(target, n, rng, **start, **checked)
    check_extras(out.extras, n, f"{spec.name!r} ({impl})", spec.extra_fields)
    return out


def rerun_for(spec: AlgorithmSpec, impl: str, params: Mapping[str, Any]) -> Callable[..., Any]:
    """``rerun(target, n, rng, x0=None, **overrides)``: :func:`sample` of ``spec``'s ``impl``
    with ``params``, ``overrides`` replacing some (what a gate that reruns the sampler calls)."""

    def rerun(target: Any, n: int, rng: np.random.Generator, x0: Any = None, **overrides: Any):
        return sample(spec, impl, target, n, rng, x0=x0, **{**params, **overrides})

    return rerun
