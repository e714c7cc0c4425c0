"""The Numba cache's stamp: a kernel under the kernel trees is stale once any source there
changes, so a cached caller never keeps an old callee from another file."""

from pathlib import Path

import harness  # noqa: F401  (installs the cache's lock and stamp)
from harness import numba_cache
from implementations.astar import fast as astar_fast
from implementations.shared import fast as shared_fast


def test_kernels_in_the_trees_share_one_stamp_and_a_plugin_keeps_numbas(tmp_path: Path):
    here = numba_cache.tree_stamp(astar_fast.__file__)
    assert here is not None and here == numba_cache.tree_stamp(shared_fast.__file__)
    plugin = tmp_path / "my_sampler.py"
    plugin.write_text("x = 1\n")
    assert numba_cache.tree_stamp(str(plugin)) is None


def test_a_cached_kernel_is_stamped_with_its_tree():
    kernel = shared_fast.heap_push
    stamp = kernel._cache._impl.locator.get_source_stamp()
    assert stamp[1] == numba_cache.tree_stamp(shared_fast.__file__)


def test_the_digest_moves_when_a_source_in_the_tree_changes(tmp_path: Path, monkeypatch):
    tree = tmp_path / "implementations"
    tree.mkdir()
    source = tree / "fast.py"
    source.write_text("a = 1\n")
    monkeypatch.setattr(numba_cache, "ROOT", tmp_path)
    monkeypatch.setattr(numba_cache, "KERNEL_TREES", (tree,))
    numba_cache._trees_digest.cache_clear()
    before = numba_cache.tree_stamp(str(source))
    source.write_text("a = 22\n")
    numba_cache._trees_digest.cache_clear()
    after = numba_cache.tree_stamp(str(source))
    numba_cache._trees_digest.cache_clear()
    assert before is not None and after is not None and before != after
