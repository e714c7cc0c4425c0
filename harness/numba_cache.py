"""Numba's on-disk cache, safe when several processes compile at once.

Numba saves a compiled signature by reading the cache index, picking the first free data file
number, then writing the index and the data file (numba.core.caching.IndexDataCacheFile.save).
Two processes that compile different signatures of one function at the same time both pick the
same number: the index can then point at the other signature's machine code, and the next
process that loads it segfaults or computes garbage (numba/numba#4807; measured here: 4 of 64
loads wrong after 8 rounds of 8 processes). Every process that imports ``harness`` (workers of
the process pool, Dask workers, tests) takes a file lock in the cache directory around each
save (exclusive) and load (shared), which closes the window.

Numba also judges a cached kernel fresh by its own file's time stamp alone, so a kernel that
calls one from another file (``implementations.shared.fast``, a reference function compiled
from its own source) would keep the old callee after that file changes (numba/numba#6845): the
reference and the Numba version would then disagree, or agree on stale code. Kernels under
``implementations/`` and ``harness/targets/`` are stamped with every source file there instead.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

LOCK_FILE = ".sampler-harness.lock"
ROOT = Path(__file__).resolve().parent.parent
#: Where kernels that call each other across files live: one change there stales them all.
KERNEL_TREES = (ROOT / "implementations", ROOT / "harness" / "targets")


def tree_stamp(py_file: str) -> str | None:
    """A digest of the path, time stamp and size of every source file in the kernel tree that
    holds ``py_file`` (None outside them: a user's plugin keeps Numba's own stamp)."""
    path = Path(py_file).resolve()
    if not any(path.is_relative_to(tree) for tree in KERNEL_TREES):
        return None
    return _trees_digest()


@functools.cache
def _trees_digest() -> str:
    # Once per process: the kernels a process compiles come from the sources it imported.
    entries = []
    for tree in KERNEL_TREES:
        for source in sorted(tree.rglob("*.py")):
            st = source.stat()
            entries.append(f"{source.relative_to(ROOT)} {st.st_mtime_ns} {st.st_size}")
    return hashlib.sha256("\n".join(entries).encode()).hexdigest()


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


def _tree_stamped(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def stamp(self: Any) -> Any:
        tree = tree_stamp(self._py_file)
        return method(self) if tree is None else (method(self), tree)

    return stamp


def install() -> None:
    """Wrap the cache file's save and load in the lock, and stamp kernels with their tree
    (once per process)."""
    from numba.core.caching import IndexDataCacheFile, _SourceFileBackedLocatorMixin

    if getattr(IndexDataCacheFile.save, "harness_locked", False):
        return
    IndexDataCacheFile.save = _locked(IndexDataCacheFile.save, fcntl.LOCK_EX)
    IndexDataCacheFile.load = _locked(IndexDataCacheFile.load, fcntl.LOCK_SH)
    locator = _SourceFileBackedLocatorMixin
    locator.get_source_stamp = _tree_stamped(locator.get_source_stamp)
