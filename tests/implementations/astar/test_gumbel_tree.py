"""The balanced tree of truncated Gumbels (004_b270422b62f00607.txt Sec. 4.3, Eq. 5-8): its
(max, argmax) draws against the exact law (harness.gates.truncated_gumbels), the compiled tree
against the reference op for op, and a tree left stale after a delete as the negative control
the gate must reject."""

import math

import numpy as np
import pytest

from harness.gates.truncated_gumbels import argmax_pmf, max_cdf, selection_gates
from implementations.astar import gumbel_tree as gt
from implementations.astar import pm_fast

ALPHA = 1e-3


def _elements(seed: int, m: int = 30) -> tuple[np.ndarray, np.ndarray]:
    """Locations spread over a few units and truncations above and below them, as PM-A*'s
    particles have (a = log(w Q(S)) + Y, b = G(S) + Y)."""
    rng = np.random.default_rng(seed)
    a = rng.normal(0.0, 1.5, m)
    return a, a + rng.normal(0.5, 1.5, m)


def _built(tree, a, b, rng, deleted=(), delete=None):
    """A tree holding every element, after the ``deleted`` ones went in and out again (so the
    draws run on a tree changed by deletes); ``delete`` overrides the delete (planted bugs)."""
    delete = delete or tree.tree_delete
    fl, it, meta, free, stack = tree.tree_new(4)
    slots = {}

    def insert(j):
        nonlocal fl, it, free
        if tree.tree_full(fl, meta):
            fl, it, free = tree.tree_grow(fl, it, free)
        slots[j] = tree.tree_insert(
            fl, it, meta, free, stack, b[j], a[j], a[j] - b[j], rng.random(), j
        )

    for j in range(a.size):
        insert(j)
    for j in deleted:
        delete(fl, it, meta, free, stack, slots[j])
    return fl, it, meta, free, stack, slots


def _draws(tree, fl, it, meta, n, rng):
    values, owners = np.empty(n), np.empty(n, np.int64)
    for k in range(n):
        values[k], slot = tree.tree_draw(fl, it, meta, rng.standard_exponential(), rng.random())
        owners[k] = it[slot, gt.OWNER]
    return values, owners


def test_exact_law_matches_brute_force():
    """The closed-form CDF and argmax pmf the gate uses agree with direct draws of every v_j."""
    a, b = _elements(0, 6)
    rng = np.random.default_rng(1)
    n = 40_000
    vals = np.empty(n)
    args = np.empty(n, np.int64)
    for k in range(n):
        vals[k], args[k] = gt.draw_linear(a, b, rng)
    gates = selection_gates(a, b, vals, args, ALPHA)
    assert all(g.passed for g in gates), gates
    assert max_cdf(a, b, np.array([b.max()]))[0] == pytest.approx(1.0)
    assert argmax_pmf(a, b).sum() == pytest.approx(1.0)


@pytest.mark.parametrize("tree", [gt, pm_fast.tree], ids=["reference", "numba"])
def test_tree_draws_pass_the_selection_gate(tree):
    a, b = _elements(2)
    rng = np.random.default_rng(3)
    deleted = list(range(0, 30, 3))
    # The deleted elements go back in, so the law is of all 30 again.
    fl, it, meta, free, stack, _slots = _built(tree, a, b, rng, deleted=deleted)
    for j in deleted:
        if tree.tree_full(fl, meta):
            fl, it, free = tree.tree_grow(fl, it, free)
        tree.tree_insert(fl, it, meta, free, stack, b[j], a[j], a[j] - b[j], rng.random(), j)
    n = 6000 if tree is gt else 40_000
    values, owners = _draws(tree, fl, it, meta, n, rng)
    gates = selection_gates(a, b, values, owners, ALPHA)
    assert all(g.passed for g in gates), gates


def test_compiled_tree_matches_the_reference_op_for_op():
    a, b = _elements(4, 200)
    outs = []
    for tree in (gt, pm_fast.tree):
        rng = np.random.default_rng(5)
        fl, it, meta, _free, _stack, _slots = _built(tree, a, b, rng, deleted=range(0, 200, 7))
        values, owners = _draws(tree, fl, it, meta, 300, rng)
        outs.append((values, owners, fl[: meta[gt.USED]].copy(), rng.random()))
    (v1, o1, f1, r1), (v2, o2, f2, r2) = outs
    assert np.array_equal(v1, v2) and np.array_equal(o1, o2)
    assert np.array_equal(f1, f2, equal_nan=True) and r1 == r2


def _stale_delete(fl, it, meta, free, stack, slot):
    """Planted: the delete unlinks the element but every subtree keeps its old sums, so the
    tree answers with a maximum that still counts the deleted element."""
    sums = fl[:, gt.SUM_A :].copy()
    gt.tree_delete(fl, it, meta, free, stack, slot)
    fl[:, gt.SUM_A :] = sums


def test_a_stale_tree_is_rejected():
    a, b = _elements(6)
    heavy = list(np.argsort(a)[-5:])  # the deleted elements would often have been the argmax
    rng = np.random.default_rng(7)
    fl, it, meta, _free, _stack, _ = _built(gt, a, b, rng, deleted=heavy, delete=_stale_delete)
    keep = np.setdiff1d(np.arange(a.size), heavy)
    values, owners = _draws(gt, fl, it, meta, 6000, rng)
    # The law of the elements still in the tree; owners of deleted slots cannot occur in it.
    index = {j: i for i, j in enumerate(keep)}
    mapped = np.array([index.get(o, -1) for o in owners])
    gates = selection_gates(a[keep], b[keep], values, mapped, ALPHA)
    assert not all(g.passed for g in gates), gates


@pytest.mark.slow
def test_selection_gate_false_failure_rate():
    """Correct compiled trees over 200 seeds: the gate (alpha 0.05) fails about 5% of them."""
    fails = 0
    for seed in range(200):
        a, b = _elements(1000 + seed)
        rng = np.random.default_rng(seed)
        fl, it, meta, *_ = _built(pm_fast.tree, a, b, rng, deleted=())
        values, owners = _draws(pm_fast.tree, fl, it, meta, 5000, rng)
        fails += not all(g.passed for g in selection_gates(a, b, values, owners, 0.05))
    print(f"selection gate: {fails}/200 correct trees failed at alpha 0.05")
    # Binomial(200, 0.05): 21 or more has probability < 0.01.
    assert fails <= 20


def test_bad_elements_are_refused():
    with pytest.raises(ValueError, match="a and b"):
        argmax_pmf(np.array([0.0, math.nan]), np.array([1.0, 1.0]))
