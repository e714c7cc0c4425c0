"""asv benchmarks generated from the registry: algorithm x implementation x problem size.

One class per (benchmark kind, target kind), created at import from the registry and
:mod:`suites.problems`, so a family added later is benchmarked with no edit here:

- ``Time<Kind>.time_sample``: steady state; the target is built and the Numba kernels are compiled
  (or loaded from the per-environment cache) and warmed in ``setup``;
- ``Cost<Kind>.track_evals_per_sample``: likelihood (factor) evaluations per draw or step;
- ``Mixing<Kind>.track_ess*``: bulk ESS, ESS per second and ESS per evaluation of Markov chains;
- ``Memory<Kind>.peakmem_sample``: peak memory on the largest problem of the kind;
- ``Compile.time_compile`` and ``Startup.time_startup``: a fresh interpreter with an empty Numba
  cache, with and without the first call; their difference is the compile time.

An invalid combination (an algorithm that does not take the kind, a missing implementation, no
parameter set that fits the target) raises NotImplementedError in ``setup``: asv shows it skipped.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path as _Path

import suites  # noqa: F401  (sets NUMBA_CACHE_DIR before anything imports numba)
from suites import problems as _p

# Markov chains for the ESS tracks run this many times the timed length.
_MIXING_FACTOR = 10
_SUITES = _Path(__file__).resolve().parent


def _camel(kind: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[^0-9A-Za-z]+", kind))


def _warm(case: _p.Case) -> None:
    # Numba compiles (or loads its cache) on the first call; the reference has nothing to warm.
    if case.impl == "numba":
        case.run(n=2, seed=0)


class _WarmCase:
    """Setup shared by the time and peak-memory benchmarks: the case built and warmed."""

    kind = ""
    param_names = ["algorithm", "impl", "size"]
    timeout = 300

    def setup(self, algorithm: str, impl: str, size: str) -> None:
        self.case = _p.case(algorithm, impl, self.kind, size)
        _warm(self.case)


class _TimeBase(_WarmCase):
    def time_sample(self, algorithm: str, impl: str, size: str) -> None:
        self.case.run()


class _CostBase:
    kind = ""
    param_names = ["algorithm", "size"]
    unit = "evaluations per sample"
    timeout = 300

    def setup(self, algorithm: str, size: str) -> None:
        # Evaluation counts are equal across implementations (a contract test checks it), so the
        # fast one is counted when there is one.
        spec = _p.registry().get(algorithm) if algorithm in _p.registry() else None
        impl = "numba" if spec is not None and "numba" in spec.implementations else "reference"
        self.case = _p.case(algorithm, impl, self.kind, size)

    def track_evals_per_sample(self, algorithm: str, size: str) -> float:
        return self.case.run().evals / self.case.n


def _mixing_all() -> dict[tuple[str, str, str, str], dict[str, float]]:
    """Run every chain once for all kinds (asv keys setup_cache by source line, so the generated
    Mixing classes share one cache; computing all kinds here keeps that sharing correct)."""
    out: dict[tuple[str, str, str, str], dict[str, float]] = {}
    for kind in _p.kinds():
        for algorithm in _p.algorithms(kind, "run_chain"):
            for impl in _p.IMPLS:
                for s in _p.sizes(kind):
                    try:
                        case = _p.case(algorithm, impl, kind, s.label)
                    except NotImplementedError:
                        continue
                    _warm(case)
                    steps = _MIXING_FACTOR * case.n
                    t0 = time.perf_counter()
                    chain = case.run(n=steps, seed=2)
                    seconds = time.perf_counter() - t0
                    out[(kind, algorithm, impl, s.label)] = {
                        "ess": _p.bulk_ess(chain.values, case.target),
                        "seconds": seconds,
                        "evals": float(chain.evals),
                    }
    return out


class _MixingBase:
    kind = ""
    param_names = ["algorithm", "impl", "size"]
    timeout = 900

    def setup_cache(self) -> dict[tuple[str, str, str, str], dict[str, float]]:
        return _mixing_all()

    def setup(self, cache: dict, algorithm: str, impl: str, size: str) -> None:
        self.row = cache.get((self.kind, algorithm, impl, size))
        if self.row is None:
            raise NotImplementedError(f"no chain for {algorithm} {impl} {size}")

    def track_ess(self, cache: dict, algorithm: str, impl: str, size: str) -> float:
        return self.row["ess"]

    track_ess.unit = "effective samples"  # type: ignore[attr-defined]

    def track_ess_per_second(self, cache: dict, algorithm: str, impl: str, size: str) -> float:
        return self.row["ess"] / self.row["seconds"]

    track_ess_per_second.unit = "effective samples per second"  # type: ignore[attr-defined]

    def track_ess_per_eval(self, cache: dict, algorithm: str, impl: str, size: str) -> float:
        return self.row["ess"] / max(self.row["evals"], 1.0)

    track_ess_per_eval.unit = "effective samples per evaluation"  # type: ignore[attr-defined]


class _MemoryBase(_WarmCase):
    def peakmem_sample(self, algorithm: str, impl: str, size: str) -> None:
        self.case.run()


def _cold_run(algorithm: str, kind: str, size: str, first_call: bool) -> None:
    """A fresh interpreter with an empty Numba cache: imports, builds the case, and with
    ``first_call`` draws twice (compiling every kernel on the way)."""
    # Only the suites package is made importable (as asv itself does): putting the checkout on
    # sys.path would shadow the installed harness of the commit under test.
    code = (
        "import importlib.util, sys\n"
        "pkg = sys.argv[5]\n"
        "spec = importlib.util.spec_from_file_location(\n"
        "    'suites', pkg + '/__init__.py', submodule_search_locations=[pkg])\n"
        "mod = importlib.util.module_from_spec(spec)\n"
        "sys.modules['suites'] = mod\n"
        "spec.loader.exec_module(mod)\n"
        "from suites import problems as p\n"
        "c = p.case(sys.argv[1], 'numba', sys.argv[2], sys.argv[3])\n"
        "if sys.argv[4] == '1':\n"
        "    c.run(n=2, seed=0)\n"
    )
    flag = "1" if first_call else "0"
    with tempfile.TemporaryDirectory(prefix="numba-cold-") as cache:
        env = dict(os.environ, SAMPLER_BENCH_NUMBA_CACHE_DIR=cache)
        subprocess.run(
            [sys.executable, "-c", code, algorithm, kind, size, flag, str(_SUITES)],
            check=True,
            env=env,
            cwd=cache,
            stdout=subprocess.DEVNULL,
        )


def _smallest(algorithm: str) -> tuple[str, str]:
    if algorithm not in _p.registry():
        raise NotImplementedError(f"{algorithm!r} is not registered")
    kind = _p.registry().get(algorithm).target_kinds[0]
    return kind, _p.sizes(kind)[0].label


class _FreshProcess:
    """One call per sample, each in a fresh process, no warm-up: the only honest way, as
    in-process a dispatcher compiles once and every later sample would time a cache hit."""

    number = 1
    repeat = (1, 3, 60.0)
    rounds = 1
    warmup_time = 0.0


class Compile(_FreshProcess):
    """Cold start of each algorithm's Numba implementation; minus ``Startup`` of its kind, the
    compile time."""

    params = [s.name for s in _p.registry() if "numba" in s.implementations]
    param_names = ["algorithm"]
    timeout = 300

    def setup(self, algorithm: str) -> None:
        self.kind, self.size = _smallest(algorithm)
        _p.case(algorithm, "numba", self.kind, self.size)  # skips an invalid case before timing

    def time_compile(self, algorithm: str) -> None:
        _cold_run(algorithm, self.kind, self.size, first_call=True)


class Startup(_FreshProcess):
    """The baseline of ``Compile``: the same fresh interpreter, imports and target, no call."""

    params = _p.kinds()
    param_names = ["kind"]
    timeout = 120

    def setup(self, kind: str) -> None:
        fast = _p.algorithms(kind)
        fast = [a for a in fast if "numba" in _p.registry().get(a).implementations]
        if not fast:
            raise NotImplementedError(f"no Numba algorithm takes {kind!r}")
        self.algorithm, self.size = fast[0], _p.sizes(kind)[0].label

    def time_startup(self, kind: str) -> None:
        _cold_run(self.algorithm, kind, self.size, first_call=False)


def _generate() -> dict[str, type]:
    classes: dict[str, type] = {}
    for kind in _p.kinds():
        algorithms = _p.algorithms(kind)
        labels = [s.label for s in _p.sizes(kind)]
        if not algorithms or not labels:
            continue
        name = _camel(kind)
        made = {
            f"Time{name}": (_TimeBase, [algorithms, list(_p.IMPLS), labels]),
            f"Cost{name}": (_CostBase, [algorithms, labels]),
            f"Memory{name}": (_MemoryBase, [algorithms, list(_p.IMPLS), labels[-1:]]),
        }
        chains = _p.algorithms(kind, "run_chain")
        if chains:
            made[f"Mixing{name}"] = (_MixingBase, [chains, list(_p.IMPLS), labels])
        for cls_name, (base, params) in made.items():
            classes[cls_name] = type(
                cls_name, (base,), {"kind": kind, "params": params, "__module__": __name__}
            )
    return classes


globals().update(_generate())
