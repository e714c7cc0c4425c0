"""pytest-benchmark suite: not under the default test paths, run by `make bench`.

The checkout root goes on sys.path so the suites' problem table is shared with asv; importing
``suites`` first sets the per-environment NUMBA_CACHE_DIR before numba loads.
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import suites  # noqa: E402, F401
