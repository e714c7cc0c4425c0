"""User functions that misbehave get a clear error where they misbehave, never a hang."""

from __future__ import annotations

import dataclasses

import numba
import numpy as np
import pytest

from harness.registry import build_registry
from harness.spec import sample
from harness.targets.box_density import box_density

SEARCHES = ("astar", "rejection", "os-star")


def _bound(lo, hi, data):
    return 0.0


def _nan_everywhere(x, data):
    return float("nan")  # log(0 * inf), say


def _nan_near_the_top(x, data):
    # NaN on (0.93, 0.95) only: a thin slice of the box that probes may well miss.
    return float("nan") if 0.93 < x[0] < 0.95 else -x[0]


def _nan_bound(lo, hi, data):
    return float("nan")


def _box(log_lik, bound=_bound, **kw):
    # Data as rows (N x 1), as the built-in box targets hold it: the Numba searches then run the
    # kernels those compile, rather than compiling each once more for 1-D data.
    return box_density([0.0], [1.0], [("uniform",)], log_lik, bound, np.zeros((1, 1)), **kw)


def test_a_nan_log_lik_is_refused_when_the_target_is_built() -> None:
    with pytest.raises(ValueError, match=r"log_lik\(x, data\) = nan at x = \[.*\] is invalid"):
        _box(_nan_everywhere)


def _nan_gradient(x, data, grad):
    grad[0] = float("nan")
    return -x[0]


def test_a_nan_gradient_is_refused_when_the_target_is_built() -> None:
    with pytest.raises(ValueError, match=r"log_lik_grad\(x, data, grad\) = .* grad = \[nan\]"):
        _box(lambda x, data: -x[0], log_lik_grad=_nan_gradient, compiles=False)


def test_a_nan_bound_is_refused_when_the_target_is_built() -> None:
    with pytest.raises(ValueError, match=r"bound\(lo, hi, data\) = nan on the box"):
        _box(lambda x, data: -x[0], _nan_bound)


@pytest.mark.parametrize("impl", ["reference", "numba"])
@pytest.mark.parametrize("algorithm", SEARCHES)
def test_a_log_lik_nan_on_part_of_the_box_stops_the_draw_naming_it(algorithm, impl) -> None:
    try:
        target = _box(_nan_near_the_top)
    except ValueError as exc:  # the probes found it: as good
        assert "log_lik(x, data) = nan" in str(exc)
        return
    spec = build_registry().get(algorithm)
    with pytest.raises(ValueError, match=r"log_lik\(x, data\) (= nan at x|returned NaN)"):
        sample(spec, impl, target, 2000, np.random.default_rng(0))


def _nan_on_small_boxes(lo, hi, data):
    # data[0, 0] = 1 turns on NaN on the narrower boxes a search splits off (where probes that
    # found nothing at build time might not have looked)
    return float("nan") if data[0, 0] == 1.0 and hi[0] - lo[0] < 0.4 else -lo[0]


def _raises_near_the_top(x, data):
    if data[0, 0] == 1.0 and x[0] > 0.9:
        raise ValueError("a user's own error")
    return -x[0]


@pytest.mark.parametrize("impl", ["reference", "numba"])
def test_a_bound_nan_on_a_split_box_stops_the_draw_naming_it(impl) -> None:
    target = dataclasses.replace(
        _box(lambda x, data: -x[0], _nan_on_small_boxes), data=np.ones((1, 1))
    )
    spec = build_registry().get("astar")
    with pytest.raises(ValueError, match=r"bound\(lo, hi, data\) (= nan|returned NaN)"):
        sample(spec, impl, target, 200, np.random.default_rng(0))


def test_a_log_lik_that_raises_inside_numba_stops_the_draw_naming_it() -> None:
    target = dataclasses.replace(_box(_raises_near_the_top), data=np.ones((1, 1)))
    spec = build_registry().get("astar")
    with pytest.raises(ValueError, match=r"log_lik\(x, data\) returned NaN or \+inf, or raised"):
        sample(spec, "numba", target, 2000, np.random.default_rng(0))
    with pytest.raises(ValueError, match="a user's own error"):
        sample(spec, "reference", target, 2000, np.random.default_rng(0))


@numba.njit
def _jitted_log_lik(x, data):
    return -3.0 * x[0]


@numba.njit
def _jitted_bound(lo, hi, data):
    return -3.0 * lo[0]


def test_already_compiled_functions_are_accepted_by_both_implementations() -> None:
    target = _box(_jitted_log_lik, _jitted_bound)
    spec = build_registry().get("astar")
    ref = sample(spec, "reference", target, 50, np.random.default_rng(1))
    fast = sample(spec, "numba", target, 50, np.random.default_rng(1))
    np.testing.assert_array_equal(ref.values, fast.values)


def _helper(x):  # not compiled: Numba cannot call it from compiled code
    return -x


def _calls_a_helper(x, data):
    return _helper(x[0])


def test_an_uncompiled_helper_is_named_when_the_target_is_built() -> None:
    with pytest.raises(ValueError, match=r"'_helper', which is not compiled: decorate it"):
        _box(_calls_a_helper)
    target = _box(_calls_a_helper, compiles=False)
    spec = build_registry().get("astar")
    assert sample(spec, "reference", target, 5, np.random.default_rng(2)).values.shape == (5,)
    with pytest.raises(ValueError, match="invalid for the numba implementation"):
        sample(spec, "numba", target, 5, np.random.default_rng(2))
