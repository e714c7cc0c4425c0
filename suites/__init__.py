"""asv benchmark suites, generated from the registry (see docs/benchmarks.md).

Numba reads NUMBA_CACHE_DIR when it is first imported, so it is set here, before any suite
imports the harness: one cache per environment (each asv virtualenv, or the development venv),
so compiled kernels never leak between the commits and environments asv compares.
SAMPLER_BENCH_NUMBA_CACHE_DIR overrides it (the compile benchmark points it at an empty folder).
"""

import os
import sys

os.environ["NUMBA_CACHE_DIR"] = os.environ.get("SAMPLER_BENCH_NUMBA_CACHE_DIR") or os.path.join(
    sys.prefix, "numba-cache"
)
