"""Reference vs Numba for every registered algorithm, side by side in one process.

Generated from the registry: one benchmark group per algorithm holding its two implementations
on the same (smallest) problem with the same draws, so pytest-benchmark's table and JSON compare
the pair directly. Steady state: the Numba kernels are compiled and warmed before timing.
"""

from __future__ import annotations

from typing import Any

import pytest

from suites import problems as p


def _cases() -> list[Any]:
    out = []
    for spec in p.registry():
        kind = spec.target_kinds[0]
        label = p.sizes(kind)[0].label
        for impl in p.IMPLS:
            marks = [] if impl in spec.implementations else [pytest.mark.skip(reason="no " + impl)]
            out.append(
                pytest.param(spec.name, impl, kind, label, id=f"{spec.name}-{impl}", marks=marks)
            )
    return out


@pytest.mark.parametrize(("algorithm", "impl", "kind", "size"), _cases())
def test_speed(benchmark: Any, algorithm: str, impl: str, kind: str, size: str) -> None:
    case = p.case(algorithm, impl, kind, size)
    if impl == "numba":
        case.run(n=2, seed=0)  # compile (or load the cache) and warm
    benchmark.group = algorithm
    benchmark.extra_info.update({"kind": kind, "size": size, "n": case.n})
    benchmark(case.run)
