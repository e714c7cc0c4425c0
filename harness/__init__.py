"""sampler-harness: statistical verdicts, measured costs and reports for scalable samplers."""

from harness import numba_cache
from harness.extras import ExtraField
from harness.registry import Registry, build_registry, load_plugin, register, register_problem
from harness.spec import Agreement, AlgorithmSpec, Chain, Check, Draws, Param, sample

numba_cache.install()

__all__ = [
    "Agreement",
    "AlgorithmSpec",
    "Chain",
    "Check",
    "Draws",
    "ExtraField",
    "Param",
    "Registry",
    "build_registry",
    "load_plugin",
    "register",
    "register_problem",
    "sample",
]
