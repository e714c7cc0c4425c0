"""The output contract (harness/checks/output_contract.py): a wrong count, dtype, shape, a list
or a NaN is one line naming what was expected and what came back, in verify (a failed ``contract``
verdict, no traceback) and in the pytest plugin's checks alike; a correct output passes."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import harness
from harness.checks.output_contract import (
    Declared,
    declared_output,
    output_breach,
    raised_text,
    reals,
    states,
    values_breach,
)
from harness.registry import build_registry
from harness.testing import Checker
from tests.conftest import BROKEN, ROOT
from tests.conftest import harness_here as _harness

OUTPUTS = str(ROOT / "tests" / "plugins" / "broken_outputs.py")


PMF = np.full(4, 0.25)
N = 100


def _ok(n):
    return np.random.default_rng(0).integers(0, 4, n)


BROKEN_VALUES = {
    "floats": (lambda n: _ok(n) + 0.25, "got float64 array"),
    "one short": (lambda n: _ok(n - 1), f"got {N - 1} draws when asked for {N}"),
    "two columns": (lambda n: np.stack([_ok(n), _ok(n)], axis=1), "of shape (100, 2)"),
    "a list": (lambda n: _ok(n).tolist(), "got a list of 100 entries"),
    "out of range": (lambda n: np.append(_ok(n - 1), 4), "1 values outside the domain"),
    "booleans": (lambda n: _ok(n) > 1, "got bool array"),
}


@pytest.mark.parametrize("case", list(BROKEN_VALUES))
def test_each_broken_output_is_one_line_naming_what_was_expected(case):
    make, got = BROKEN_VALUES[case]
    breach = values_breach(make(N), N, states(4))
    assert breach is not None and "\n" not in breach
    assert breach.startswith("expected an integer array of shape (100,), states 0..3; got")
    assert got in breach
    assert values_breach(_ok(N), N, states(4)) is None  # the control: the right output passes


def test_nan_and_out_of_domain_reals_are_breaches():
    values = np.linspace(0.0, 1.0, N)
    assert values_breach(values, N, reals()) is None
    values[7] = math.nan
    assert "1 NaN or infinite values, first at draw 7" in values_breach(values, N, reals())
    box = Declared(False, (), 0.0, 1.0)
    assert values_breach(np.linspace(0.0, 1.0, N), N, box) is None
    assert "33 values outside the domain, first at draw 67" in values_breach(
        np.linspace(0.0, 1.5, N), N, box
    )
    # A rounding past a closed end is no breach (a truncated law's inverse CDF rounds there).
    assert values_breach(np.full(N, 1.0 + 1e-15), N, box) is None


def test_the_return_value_and_its_evaluation_count_are_checked():
    registry = build_registry()
    target = registry.build_target("synthetic-normal-D10-N200")
    good = harness.Draws(np.zeros(N, dtype=np.int64), 5)
    assert output_breach(target, good, N) is None
    assert "expected harness.Draws" in output_breach(target, [0] * N, N)
    assert "evals" in output_breach(target, harness.Draws(good.values, -1), N)
    assert "evals" in output_breach(target, harness.Draws(good.values, 2.5), N)
    assert "evals" in output_breach(target, harness.Draws(good.values, True), N)


def test_every_built_in_kind_declares_its_output():
    registry = build_registry()
    shapes = {}
    for name in ("fg-random-n4-D2", "cfg-tiny-n3", "logistic-N100-D2-map", "truncgumbel-phi0-b1"):
        target = registry.build_target(name)
        shapes[target.kind] = declared_output(target)
    assert shapes["factor-graph"] == Declared(True, (4,), 0, 1)
    assert shapes["factor-graph-continuous"] == Declared(False, (3,), 0.0, 1.0)
    assert shapes["glm-posterior"].state_shape == (2,)
    assert shapes["continuous-1d"].hi == 1.0  # TruncGumbel(phi, b) declares its support
    assert declared_output(object()) is None  # a kind of a plugin's own: nothing declared


@settings(max_examples=500, deadline=None)
@given(
    hnp.arrays(
        dtype=st.sampled_from([np.int64, np.int32, np.float64, np.float32, np.bool_]),
        shape=hnp.array_shapes(min_dims=0, max_dims=3, max_side=6),
        elements={"allow_nan": True, "allow_infinity": True},
    )
    | st.lists(st.integers(0, 3), max_size=6),
    st.sampled_from([(states(4), 5), (reals(), 5), (Declared(False, (2,)), 4)]),
)
def test_fuzz_no_broken_output_passes_and_none_raises(values, declared_n):
    """Arrays of every dtype, shape, NaN and inf, and lists: the contract never raises, and
    whatever it lets through really is n draws of the declared dtype and shape in the domain."""
    declared, n = declared_n
    breach = values_breach(values, n, declared)
    if breach is None:
        assert isinstance(values, np.ndarray) and values.shape == (n, *declared.state_shape)
        kind = np.integer if declared.integer else np.floating
        assert np.issubdtype(values.dtype, kind)
        assert np.all(np.isfinite(values))
        assert np.all((values >= declared.lo) & (values <= declared.hi))


@pytest.mark.parametrize(
    ("algorithm", "expected"),
    [
        ("broken-float-states", "got float64 array of shape (20000,)"),
        ("broken-one-short", "got 19999 draws when asked for 20000"),
        ("broken-two-columns", "got int64 array of shape (20000, 2)"),
        ("broken-plain-list", "got a list of 20000 entries"),
        ("broken-nan", "got 1 NaN or infinite values, first at draw 10000"),
    ],
)
def test_verify_fails_a_broken_output_with_one_contract_line(tmp_path, algorithm, expected):
    out = _harness(
        *("verify", "--plugin", OUTPUTS, "--algorithm", algorithm, "--impl", "reference"),
        *("--out", str(tmp_path / "r"), "--no-progress"),
    )
    assert out.returncode == 1, out.stdout + out.stderr
    assert f"FAILED contract: {algorithm}" in out.stdout
    lines = [line for line in out.stdout.splitlines() if "values: expected" in line]
    assert len(lines) == 1 and expected in lines[0]
    assert "Traceback" not in out.stdout + out.stderr


def test_a_sampler_that_raises_is_named_at_its_file_and_line(tmp_path):
    out = _harness(
        *("verify", "--plugin", BROKEN, "--algorithm", "broken-raises"),
        *("--out", str(tmp_path / "r"), "--no-progress"),
    )
    assert out.returncode == 1, out.stdout + out.stderr
    assert "RuntimeError: index out of range in my kernel (raised at " in out.stdout
    assert "broken_samplers.py:" in out.stdout and " in raises" in out.stdout


def test_raised_text_points_into_the_users_code_not_the_harness():
    def users_sampler():
        np.asarray([1, 2]).reshape(3)  # numpy raises; the user's line is this one

    try:
        users_sampler()
    except ValueError as exc:
        text = raised_text(exc)
    assert text.startswith("ValueError: cannot reshape")
    assert "test_output_contract.py:" in text and "in users_sampler" in text


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (lambda n, rng: rng.integers(0, 4, n) + 0.25, "got float64 array"),
        (lambda n, rng: rng.integers(0, 4, n - 1), "draws when asked for"),
        (lambda n, rng: rng.integers(0, 4, (n, 2)), "of shape"),
        (lambda n, rng: rng.integers(0, 4, n).tolist(), "got a list"),
    ],
)
def test_the_pytest_checks_refuse_the_same_breaches_with_the_same_line(make, expected):
    checker = Checker(alpha=1e-3)
    with pytest.raises(ValueError, match="break the output contract: expected an integer") as got:
        checker.exact(make, pmf=PMF, n=200)
    assert expected in str(got.value)
    with pytest.raises(ValueError, match="got 1 NaN or infinite values"):
        checker.exact(lambda n, rng: np.append(rng.random(n - 1), np.nan), cdf=lambda x: x, n=200)
    assert checker.verdicts == []
