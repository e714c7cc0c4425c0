"""Helpers for a family's list of specs: what all its specs share is written once."""

from collections.abc import Callable, Mapping
from typing import Any

from harness.spec import AlgorithmSpec


def family_spec(
    family: str, kernels: Mapping[str, tuple[Any, ...]] | None = None, **shared: Any
) -> Callable[..., AlgorithmSpec]:
    """``AlgorithmSpec`` with ``family`` and the fields every spec of the family shares filled
    in (a spec may still pass any of them); ``kernels`` maps a spec's name to its Numba kernels
    where the family's ``fast.KERNELS`` keeps them by name."""

    def spec(name: str, **fields: Any) -> AlgorithmSpec:
        if kernels is not None:
            fields.setdefault("kernels", kernels[name])
        return AlgorithmSpec(name=name, family=family, **{**shared, **fields})

    return spec


def implemented(
    reference: Callable[..., Any], numba: Callable[..., Any], cuda: Callable[..., Any] | None = None
) -> dict[str, Callable[..., Any]]:
    """A spec's implementations: the NumPy reference, its Numba twin and, where one exists, the
    CUDA version."""
    impls = {"reference": reference, "numba": numba}
    if cuda is not None:
        impls["cuda"] = cuda
    return impls
