"""004 Sec. 4.3 as a benchmark: PM-A*'s pick from the balanced tree against the linear scan.
Times are reported, never asserted (shared machines); the structure and the work are."""

import numpy as np
import pytest

from harness.speed.ratios import format_selection_scaling, selection_scaling, selection_tree
from implementations.astar import pm_fast


def test_selection_scaling_reports_both_methods_per_m():
    result = selection_scaling([50, 500], picks=200, repeat=3)
    assert [r["m"] for r in result["rows"]] == [50, 500]
    for r in result["rows"]:
        assert r["tree_s_per_pick"] > 0 and r["linear_s_per_pick"] > 0
    assert result["rows"][0]["tree_vs_smallest_m"] == 1.0
    text = format_selection_scaling(result)
    assert "tree us/pick" in text and "limit 3" in text


def test_a_pick_keeps_the_tree_size_and_its_sums():
    """The timed step (draw, delete, re-insert) leaves m elements and sums that match a fresh
    re-summation, so the benchmark times the same tree throughout."""
    rng = np.random.default_rng(0)
    m = 300
    _, _, fl, it, meta, free, stack = selection_tree(m, rng)
    pm_fast.tree_pick_loop(fl, it, meta, free, stack, 500, rng)
    root = meta[0]
    live = [j for j in range(meta[1]) if j not in set(free[: meta[2]].tolist())]
    assert len(live) == m
    assert fl[root, 4] == pytest.approx(np.logaddexp.reduce(fl[live, 1]), rel=1e-12)


def test_selection_scaling_rejects_bad_input():
    with pytest.raises(ValueError, match="sizes"):
        selection_scaling([100])
    with pytest.raises(ValueError, match="m"):
        selection_scaling([1, 100])
