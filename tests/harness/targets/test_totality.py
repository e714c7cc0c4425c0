"""The project's own targets are total: at every point of its domain, ends (+-inf), huge values
(+-1e300) and edges included, every built-in problem's log density is a float that is finite or
-inf. Never NaN, never +inf, never an exception. An external sampler that is correct (scipy's
NumericalInversePolynomial, say) evaluates the density wherever it likes, its domain's ends
included, and would fail on a NaN there.

Driven by the catalog (:data:`harness.targets.catalog.PROBLEMS`): each problem's kind says what
its density is (:data:`DENSITIES`). A deterministic sweep evaluates it at every corner value
(every state of a discrete target) and Hypothesis draws further points. A box density's bound
must also be total and at least o at points inside its box. A copy of pm-mixture's old formula,
NaN at +-inf and +-1e300, is the negative control that both checks must flag.
"""

from __future__ import annotations

import itertools
import math
import os
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.targets.box_density import BoxDensityTarget, box_density
from harness.targets.box_probes import compiled
from harness.targets.catalog import PROBLEMS, Problem, build_target
from harness.targets.continuous_factor_graph import factor_value
from tests.conftest import ROOT, run_command

BIG = np.finfo(np.float64).max
TINY = np.finfo(np.float64).tiny  # the smallest normal; 5e-324 is the smallest subnormal
#: Corner values of the real line: the ends, huge values (t * t overflows past 1.34e154),
#: signed zeros, subnormals, and a few ordinary points.
SPECIAL = (
    *(-math.inf, -BIG, -1e300, -1.4e154, -1e154, -1e10, -2.5, -1.0, -TINY, -5e-324, -0.0),
    *(0.0, 5e-324, TINY, 1.0, 2.5, 1e10, 1e154, 1.4e154, 1e300, BIG, math.inf),
)
#: Kinds whose every state the sweep evaluates (Hypothesis adds nothing there).
ENUMERATED = frozenset({"discrete", "discrete-ragged", "discrete-likelihood"})
#: Hypothesis draws per problem: the default run, and the slow sweep (or HYPOTHESIS_PROFILE=full).
EXAMPLES = 500 if os.environ.get("HYPOTHESIS_PROFILE") == "full" else 60
SLOW_EXAMPLES = 1000
#: Relative slack of bound >= o, as harness.targets.box_probes allows for rounding.
SLACK = 1e-9


# -- the check ---------------------------------------------------------------------------------


def _not_total(name: str, value: Any) -> str | None:
    """Why ``value`` is not a float that is finite or -inf (None when it is)."""
    if not isinstance(value, float | np.floating):
        return f"{name} = {value!r} is a {type(value).__name__}, not a float"
    if math.isnan(value) or value == math.inf:
        return f"{name} = {float(value)!r}"
    return None


def _evaluate(name: str, fn: Callable[[], Any], found: list[str]) -> Any:
    """fn(), or None with the exception recorded. Overflow on the way to -inf is expected, so
    NumPy's warnings about it are silenced."""
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore", RuntimeWarning)
            return fn()
    except Exception as exc:  # the property: no exception of any kind
        found.append(f"{name} raised {type(exc).__name__}: {exc}")
        return None


def _total(name: str, fn: Callable[[], Any], found: list[str]) -> Any:
    value = _evaluate(name, fn, found)
    if value is not None and (why := _not_total(name, value)):
        found.append(why)
    return value


def _box_density(target: BoxDensityTarget, point: tuple[np.ndarray, ...]) -> list[str]:
    """i(x) + o(x) at x, o by the reference and the Numba samplers (the same source compiled),
    o's gradient free of NaN; on the box [lo, hi] around x, bound(lo, hi) total and >= o(x)."""
    lo, x, hi = point
    found: list[str] = []
    data = target.data
    log_i = _total("log_proposal(x)", lambda: target.log_proposal(x), found)
    o = _total("log_lik(x, data)", lambda: target.log_lik(x, data), found)
    _total("Numba log_lik(x, data)", lambda: compiled(target.log_lik)(x, data), found)
    if log_i is not None and o is not None:
        _total("log_proposal(x) + log_lik(x, data)", lambda: log_i + o, found)
    if target.log_lik_grad is not None:
        grad = np.zeros(target.d)
        _total("log_lik_grad(x, data, grad)", lambda: target.log_lik_grad(x, data, grad), found)
        if np.isnan(grad).any():
            found.append(f"log_lik_grad wrote grad = {grad.tolist()}")
    if np.all(lo < hi):
        m = _total("bound(lo, hi, data)", lambda: target.bound(lo, hi, data), found)
        _total("Numba bound(lo, hi, data)", lambda: compiled(target.bound)(lo, hi, data), found)
        if m is not None and o is not None and not (o <= m or o <= m + SLACK * (1.0 + abs(m))):
            found.append(f"bound(lo, hi, data) = {m!r} < log_lik(x, data) = {o!r}")
    return [f"{why} (lo = {lo.tolist()}, x = {x.tolist()}, hi = {hi.tolist()})" for why in found]


def _at(point: Any, check: Callable[[list[str]], None]) -> list[str]:
    found: list[str] = []
    check(found)
    shown = point.tolist() if isinstance(point, np.ndarray) else point
    return [f"{why} at {shown}" for why in found]


def _continuous_1d(target: Any, g: float) -> list[str]:
    return _at(g, lambda f: _total("logpdf(g)", lambda: target.logpdf(np.array([g]))[0], f))


def _posterior_1d(target: Any, theta: float) -> list[str]:
    return _at(
        theta,
        lambda f: _total("log_posterior(theta)", lambda: target.log_posterior([theta])[0], f),
    )


def _glm(target: Any, theta: np.ndarray) -> list[str]:
    return _at(
        theta, lambda f: _total("log_posterior(theta)", lambda: target.log_posterior(theta), f)
    )


def _factor_graph(target: Any, x: np.ndarray) -> list[str]:
    return _at(x, lambda f: _total("log_unnormalised(x)", lambda: target.log_unnormalised(x), f))


def _scalar_sum(target: Any, x: np.ndarray) -> float:
    """U(x) as the samplers add it, factor by factor with :func:`factor_value`."""
    total = 0.0
    for (i, j), t, c in zip(target.scopes, target.types, target.coefs, strict=True):
        total += factor_value(int(t), *c.tolist(), float(x[i]), float(x[j]))
    return total


def _continuous_factor_graph(target: Any, x: np.ndarray) -> list[str]:
    def check(found: list[str]) -> None:
        _total("log_unnormalised(x)", lambda: target.log_unnormalised(x), found)
        _total("sum of factor_value(x)", lambda: _scalar_sum(target, x), found)

    return _at(x, check)


def _discrete(target: Any, states: Iterable[int]) -> list[str]:
    found: list[str] = []
    log_p = _evaluate("log_unnormalised", lambda: target.log_unnormalised, found)
    if log_p is not None:
        for i in states:
            if why := _not_total(f"log_unnormalised[{i}]", log_p[i]):
                found.append(why)
    return found


#: What "the log density at a point" is for each target kind, as a sampler evaluates it.
DENSITIES: dict[str, Callable[[Any, Any], list[str]]] = {
    "box-density": _box_density,
    "continuous-1d": _continuous_1d,
    "posterior-1d": _posterior_1d,
    "glm-posterior": _glm,
    "factor-graph": _factor_graph,
    "factor-graph-continuous": _continuous_factor_graph,
    "discrete": _discrete,
    "discrete-ragged": _discrete,
    "discrete-likelihood": _discrete,
}


# -- the points: the domain of each kind -------------------------------------------------------


#: One side of a domain: its closed ends and points of it worth a look besides the corners.
Side = tuple[float, float, tuple[float, ...]]


def _sides(target: Any, kind: str) -> list[Side]:
    """The domain of ``target`` as a box, one side a coordinate."""
    if kind == "box-density":
        return [(float(a), float(b), ()) for a, b in zip(target.lo, target.hi, strict=True)]
    if kind == "continuous-1d":  # above b the density is 0 (log -inf): a value to check too
        b = target.b
        return [(-math.inf, math.inf, (b, math.nextafter(b, -math.inf), target.phi))]
    if kind == "factor-graph-continuous":
        return [(target.a, target.b, ())] * target.n_vars
    return [(-math.inf, math.inf, ())] * (target.D if kind == "glm-posterior" else 1)


def _corners(lo: float, hi: float, extra: tuple[float, ...] = ()) -> list[float]:
    """The corner values inside [lo, hi], its ends and ``extra`` included, without repeats
    (-0.0 and 0.0 are both kept)."""
    inside = [min(max(v, lo), hi) for v in (*SPECIAL, *extra)] + [lo, hi]
    unique = {(v, math.copysign(1.0, v)): v for v in inside}
    return [unique[key] for key in sorted(unique)]


def _sweep(kind: str, target: Any) -> Iterator[Any]:
    """The deterministic points: every state of a discrete target (of a factor graph, every
    state where there are at most 4096, else states of every pair of values); else the corner
    values of each side, and in two or more coordinates every pair of them, alternating; for
    box densities every point c of every box [a, b] of corners (a <= c <= b, alike in every
    coordinate)."""
    if kind in ENUMERATED:
        yield range(target.D)
        return
    if kind == "factor-graph":
        n, D = target.n_vars, target.D
        pairs = itertools.product(range(D), repeat=2)
        states = itertools.product(range(D), repeat=n) if D**n <= 4096 else (
            np.resize([i, j], n) for i, j in pairs
        )  # fmt: skip
        yield from (np.array(s, dtype=np.int64) for s in states)
        return
    sides = [_corners(*side) for side in _sides(target, kind)]
    if kind == "box-density":
        size = min(len(c) for c in sides)
        for j, k in itertools.combinations_with_replacement(range(size), 2):
            for m in range(j, k + 1):
                yield tuple(np.array([c[i] for c in sides]) for i in (j, m, k))
    elif len(sides) == 1:
        yield from sides[0]
    else:
        for a, b in itertools.product(sides[0], repeat=2):
            yield np.resize(np.array([a, b]), len(sides))


def _coordinate(lo: float, hi: float, extra: tuple[float, ...]) -> st.SearchStrategy[float]:
    """Floats of [lo, hi]: its corner values often, else any float there (subnormals too)."""
    finite = math.isfinite(lo) and math.isfinite(hi)
    floats = st.floats(
        min_value=lo if math.isfinite(lo) else None,
        max_value=hi if math.isfinite(hi) else None,
        allow_nan=False,
        allow_infinity=not finite,
    )
    return st.one_of(st.sampled_from(_corners(lo, hi, extra)), floats)


def _drawn(kind: str, target: Any, data: st.DataObject) -> Any:
    """One point of the domain of ``target``, drawn by Hypothesis."""
    if kind == "factor-graph":
        return np.array(
            data.draw(st.lists(st.integers(0, target.D - 1), min_size=target.n_vars,
                               max_size=target.n_vars)),
            dtype=np.int64,
        )  # fmt: skip
    sides = _sides(target, kind)
    if kind == "box-density":  # three values a side, sorted: lo <= x <= hi
        triples = [sorted(data.draw(st.tuples(*[_coordinate(*s)] * 3))) for s in sides]
        return tuple(np.array([t[p] for t in triples]) for p in range(3))
    point = np.array([data.draw(_coordinate(*s)) for s in sides])
    return float(point[0]) if kind in ("continuous-1d", "posterior-1d") else point


# -- running the check -------------------------------------------------------------------------


def sweep_failures(kind: str, target: Any) -> list[str]:
    """Every way the density of ``target`` fails to be total at the sweep's points."""
    density = DENSITIES[kind]
    return [why for point in _sweep(kind, target) for why in density(target, point)]


def assert_total_at_drawn_points(kind: str, target: Any, examples: int = EXAMPLES) -> None:
    """The Hypothesis property: the density is total at ``examples`` drawn points."""

    @settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(st.data())
    def prop(data: st.DataObject) -> None:
        found = DENSITIES[kind](target, _drawn(kind, target, data))
        assert not found, f"{target.name}: " + "; ".join(found[:3])

    prop()


DRAWN = [p for p in PROBLEMS if p.kind not in ENUMERATED]


def test_every_kind_in_the_catalog_says_what_its_density_is() -> None:
    assert {p.kind for p in PROBLEMS} <= set(DENSITIES)


@pytest.mark.parametrize("problem", PROBLEMS, ids=lambda p: p.name)
def test_every_catalog_target_is_total_at_its_corners(problem: Problem) -> None:
    found = sweep_failures(problem.kind, build_target(problem.name))
    assert not found, f"{len(found)} failures, e.g.: " + "; ".join(found[:5])


@pytest.mark.parametrize("problem", DRAWN, ids=lambda p: p.name)
def test_every_catalog_target_is_total_at_drawn_points(problem: Problem) -> None:
    assert_total_at_drawn_points(problem.kind, build_target(problem.name))


@pytest.mark.slow
@pytest.mark.parametrize("problem", DRAWN, ids=lambda p: p.name)
def test_every_catalog_target_is_total_at_many_drawn_points(problem: Problem) -> None:
    assert_total_at_drawn_points(problem.kind, build_target(problem.name), SLOW_EXAMPLES)


# -- the negative control: pm-mixture's formula before it was made total ----------------------

_LOG_2 = math.log(2.0)


def _old_mixture_log_lik(x: np.ndarray, data: np.ndarray) -> float:
    t = x[0]
    a = -0.375 * t * t - 2.0 * t - 2.0 + _LOG_2
    b = -0.375 * t * t + 2.0 * t - 2.0 + _LOG_2 + _LOG_2
    top = max(a, b)
    return top + math.log(math.exp(a - top) + math.exp(b - top))


def _old_mixture_bound(lo: np.ndarray, hi: np.ndarray, data: np.ndarray) -> float:
    t_a = min(max(-8.0 / 3.0, lo[0]), hi[0])
    t_b = min(max(8.0 / 3.0, lo[0]), hi[0])
    a = -0.375 * t_a * t_a - 2.0 * t_a - 2.0 + _LOG_2
    b = -0.375 * t_b * t_b + 2.0 * t_b - 2.0 + _LOG_2 + _LOG_2
    top = max(a, b)
    return top + math.log(math.exp(a - top) + math.exp(b - top))


@pytest.fixture(scope="module")
def old_mixture() -> BoxDensityTarget:
    """pm-mixture as it was: NaN at +-inf and where t * t overflows (|x| > 1.34e154)."""
    return box_density(
        [-math.inf], [math.inf], [("normal", 0.0, 2.0)], _old_mixture_log_lik,
        _old_mixture_bound, np.zeros((1, 1)), name="old-pm-mixture",
    )  # fmt: skip


def test_the_sweep_flags_a_target_that_is_nan_at_its_ends(old_mixture: BoxDensityTarget) -> None:
    found = sweep_failures("box-density", old_mixture)
    for x in ("-inf", "inf", "-1e+300", "1e+300"):
        assert any(w.startswith("log_lik(x, data) = nan") and f"x = [{x}]" in w for w in found), x
    assert any(w.startswith("Numba log_lik(x, data) = nan") for w in found)
    assert any(w.startswith("bound(lo, hi, data) = nan") for w in found)


def test_the_drawn_points_flag_a_target_that_is_nan_at_its_ends(
    old_mixture: BoxDensityTarget,
) -> None:
    with pytest.raises(AssertionError, match=r"old-pm-mixture: .*= nan"):
        assert_total_at_drawn_points("box-density", old_mixture)


@pytest.mark.timeout(300)
def test_a_correct_external_sampler_meets_no_nan_on_pm_mixture(tmp_path):
    """scipy's NumericalInversePolynomial reads pm-mixture's density out to its infinite ends:
    verify passes it, and no NaN met on the way makes numpy warn."""
    out = run_command(
        [
            *(sys.executable, "-m", "harness.cli", "verify", "--algorithm", "scipy-pinv"),
            *("--plugin", str(ROOT / "tests" / "plugins" / "scipy_pinv.py")),
            *("--out", str(tmp_path / "run"), "--no-progress"),
        ]
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "invalid value" not in out.stderr, out.stderr
