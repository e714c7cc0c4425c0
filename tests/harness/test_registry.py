import textwrap

import pytest

import harness
from harness.registry import build_registry, load_plugin
from harness.spec import IMPLEMENTATION_NAMES
from tests.conftest import BROKEN


def test_builtin_families_are_collected_from_explicit_tables():
    reg = build_registry()
    assert {"gumbel-max", "cdf-inversion", "truncated-gumbel", "top-down"} <= set(reg.names())
    for spec in reg:
        assert {"reference", "numba"} <= set(spec.implementations) <= set(IMPLEMENTATION_NAMES)
        assert spec.paper and spec.family
    assert {s.name for s in reg if "cuda" in s.implementations} == {
        "gumbel-max",
        "cdf-inversion",
        "rwmh",
    }


def test_unknown_algorithm_names_the_registered_ones():
    with pytest.raises(ValueError, match=r"unknown algorithm 'nope'; registered: .*gumbel-max"):
        build_registry().get("nope")


def test_plugins_join_the_same_registry():
    reg = build_registry([BROKEN])
    assert "broken-exp-noise" in reg and "gumbel-max" in reg
    assert reg.plugins == [BROKEN]


def test_plugin_errors_are_clear(tmp_path):
    with pytest.raises(ValueError, match="no such file"):
        build_registry([str(tmp_path / "missing.py")])
    with pytest.raises(ValueError, match="no such module"):
        build_registry(["not_a_module_anywhere"])
    empty = tmp_path / "empty.py"
    empty.write_text("x = 1\n")
    with pytest.raises(ValueError, match="registered no algorithm"):
        build_registry([str(empty)])
    broken = tmp_path / "syntax.py"
    broken.write_text("def (:\n")
    with pytest.raises(ValueError, match="failed to import: SyntaxError"):
        build_registry([str(broken)])


def test_duplicate_names_are_refused(tmp_path):
    dup = tmp_path / "dup.py"
    dup.write_text(
        textwrap.dedent(
            """
            import harness
            harness.register(harness.AlgorithmSpec(
                "gumbel-max", "x", "p", "exact", ("discrete",), {"reference": print}))
            """
        )
    )
    with pytest.raises(ValueError, match="already registered"):
        load_plugin(str(dup), build_registry())


def test_registering_a_spec_object_already_registered_says_so(tmp_path):
    again = tmp_path / "again.py"
    again.write_text(
        "import harness\nfrom harness.registry import build_registry\n"
        "harness.register(build_registry().get('gumbel-max'))\n"
    )
    with pytest.raises(ValueError, match=r"register\('gumbel-max'\): this spec object is already"):
        load_plugin(str(again), build_registry())


def test_register_outside_plugin_loading_explains_itself():
    spec = next(iter(build_registry()))
    with pytest.raises(RuntimeError, match="--plugin"):
        harness.register(spec)
