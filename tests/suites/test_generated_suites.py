"""The asv suites are generated from the registry: every algorithm on every kind it takes, every
catalog kind, a plugin with no edit; invalid combinations skip through NotImplementedError."""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterator
from types import ModuleType

import pytest

from harness.registry import build_registry
from tests.conftest import BROKEN


@pytest.fixture(scope="module")
def suites() -> Iterator[tuple[ModuleType, ModuleType]]:
    # Importing the suites sets NUMBA_CACHE_DIR for benchmark processes; keep it out of this one.
    before = os.environ.get("NUMBA_CACHE_DIR")
    try:
        bench = importlib.import_module("suites.bench_samplers")
        problems = importlib.import_module("suites.problems")
    finally:
        if before is None:
            os.environ.pop("NUMBA_CACHE_DIR", None)
        else:
            os.environ["NUMBA_CACHE_DIR"] = before
    yield bench, problems


def test_every_algorithm_kind_and_catalog_kind_is_benchmarked(suites, monkeypatch) -> None:
    bench, problems = suites
    registry = build_registry([BROKEN])  # a plugin stands in for a family added later
    monkeypatch.setattr(problems, "registry", lambda: registry)
    classes = bench._generate()
    for kind in problems.catalog_kinds():
        assert f"Time{bench._camel(kind)}" in classes
    for spec in registry:
        for kind in spec.target_kinds:
            name = bench._camel(kind)
            assert spec.name in classes[f"Time{name}"].params[0]
            assert spec.name in classes[f"Cost{name}"].params[0]
            assert spec.name in classes[f"Memory{name}"].params[0]
            if spec.entry == "run_chain":
                assert spec.name in classes[f"Mixing{name}"].params[0]
    assert classes["TimeFactorGraph"].param_names == ["algorithm", "impl", "size"]


def test_invalid_combinations_skip(suites) -> None:
    _, problems = suites
    with pytest.raises(NotImplementedError):
        problems.case("gibbs", "numba", "discrete", "D10-N1000")  # wrong kind
    with pytest.raises(NotImplementedError):
        problems.case("top-down", "cuda", "discrete", "D10-N1000")  # no such implementation
    with pytest.raises(NotImplementedError):
        problems.case("gumbel-max", "numba", "discrete", "D9-N9")  # no such size


def test_ragged_racing_gets_a_parameter_set_that_fits(suites) -> None:
    _, problems = suites
    case = problems.case("racing-normal", "reference", "discrete-ragged", "D8-N3759")
    assert case.params.get("variance") == "marginal"
    assert case.run(n=2).evals > 0
