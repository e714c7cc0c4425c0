"""Numba's on-disk cache, safe when several processes compile at once.

Numba saves a compiled signature by reading the cache index, picking the first free data file
number, then writing the index and the data file (numba.core.caching.IndexDataCacheFile.save).
Two processes that compile different signatures of one function at the same time both pick the
same number: the index can then point at the other signature's machine code, and the next
process that loads it segfaults or computes garbage (numba/numba#4807; measured here: 4 of 64
loads wrong after 8 rounds of 8 processes). Every process that imports ``harness`` (workers of
the process pool, Dask workers, tests) takes a file lock in the cache directory around each
save (exclusive) and load (shared), which closes the window.
"""

from __future__ import annotations

import fcntl
import functools
import os
from collections.abc import Callable
from typing import Any

LOCK_FILE = ".sampler-harness.lock"


def _locked(method: Callable[..., Any], mode: int) -> Callable[..., Any]:
    @functools.wraps(method)
    def under_lock(self: Any, *args: Any, **kwargs: Any) -> Any:
        os.makedirs(self._cache_path, exist_ok=True)
        with open(os.path.join(self._cache_path, LOCK_FILE), "a") as lock:
            fcntl.flock(lock, mode)
            try:
                return method(self, *args, **kwargs)
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    under_lock.harness_locked = True  # type: ignore[attr-defined]
    return under_lock


def install() -> None:
    """Wrap the cache file's save and load in the lock (once per process)."""
    from numba.core.caching import IndexDataCacheFile

    if getattr(IndexDataCacheFile.save, "harness_locked", False):
        return
    IndexDataCacheFile.save = _locked(IndexDataCacheFile.save, fcntl.LOCK_EX)
    IndexDataCacheFile.load = _locked(IndexDataCacheFile.load, fcntl.LOCK_SH)
