"""A balanced tree for the maximum and argmax of truncated Gumbels, 004_b270422b62f00607.txt
Sec. 4.3 (Eq. 5-8), written as plain functions of NumPy arrays so that ``pm_fast.py`` compiles this
same source with Numba: the reference and the compiled sampler then do the same arithmetic.

Each element j is a truncated Gumbel v_j ~ TG(a_j, b_j) (location a_j, truncated below b_j).
Sorted by b, with m elements above a threshold g forming the set T(g) = {j : b_j > g}, the log
CDF of v = max_j v_j is (Eq. 7's setting)

    log U(g) = sum_{j in T(g)} exp(a_j - b_j) - exp(-g) sum_{j in T(g)} exp(a_j),

so inverting U needs only suffix sums of exp(a_j) and exp(a_j - b_j) in b-order, and given
v = g the argmax is j in T(g) with probability proportional to exp(a_j) (Eq. 8). A treap keyed
by (b_j, slot) keeps both sums per subtree, in log space (the a_j of posterior regions run to
-1e3 and below), so an insert, a delete and a draw of (v, argmax) each cost O(log m).

Layout: ``fl[j]`` holds b_j, a_j, c_j = a_j - b_j (given apart, finite when a_j = b_j =
-inf), the treap priority, and the subtree's log-sum-exp of a and of
a - b; ``it[j]`` holds the left and right children (-1: none) and the owner (the caller's
region index); ``meta`` = [root, slots ever used, free slots]; ``free`` stacks deleted slots
for reuse; ``stack`` is scratch for the nodes a split or merge must re-sum. The priority is
the caller's ``random()`` draw, so the tree's shape, like everything else, follows the seed.

The off-by-one in Sec. 4.3 ("for j >= i") is read as j > i: an element with b_j <= g cannot
reach g.
"""

from __future__ import annotations

import math

import numpy as np

B, A, C, PRIO, SUM_A, SUM_C = 0, 1, 2, 3, 4, 5
LEFT, RIGHT, OWNER = 0, 1, 2
ROOT, USED, FREE = 0, 1, 2
#: Scratch depth: a treap of 1e7 random priorities is deeper than 120 with probability far
#: below 1e-12.
STACK = 256


def tree_new(capacity: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """An empty tree with room for ``capacity`` elements."""
    fl = np.empty((capacity, 6))
    it = np.full((capacity, 3), -1, dtype=np.int64)
    meta = np.zeros(3, dtype=np.int64)
    meta[ROOT] = -1
    free = np.empty(capacity, dtype=np.int64)
    stack = np.empty(STACK, dtype=np.int64)
    return fl, it, meta, free, stack


def tree_grow(fl: np.ndarray, it: np.ndarray, free: np.ndarray):
    """The arrays with twice the room, contents kept."""
    cap = fl.shape[0]
    fl2 = np.empty((2 * cap, 6))
    it2 = np.full((2 * cap, 3), -1, dtype=np.int64)
    free2 = np.empty(2 * cap, dtype=np.int64)
    # Rows copied through flat views: Numba compiles a 2-D slice assignment's shape-mismatch
    # message once a process (1.4 s); the 1-D one the kernels share anyway.
    fl2.reshape(fl2.size)[: fl.size] = fl.reshape(fl.size)
    it2.reshape(it2.size)[: it.size] = it.reshape(it.size)
    free2[:cap] = free
    return fl2, it2, free2


def tree_full(fl: np.ndarray, meta: np.ndarray) -> bool:
    """No slot left for an insert."""
    return meta[FREE] == 0 and meta[USED] == fl.shape[0]


def lse(x: float, y: float) -> float:
    """log(exp(x) + exp(y)), exact for -inf."""
    top = max(x, y)
    if top == -math.inf:
        return -math.inf
    return top + math.log(math.exp(x - top) + math.exp(y - top))


def _exp(x: float) -> float:
    """exp(x), inf past the double range as compiled code gives (Python's math.exp raises):
    the log CDF compares sums whose terms, exp(a_j - b_t), overflow when a region's Y runs
    hundreds of nats above another's."""
    if x > 709.0:
        return math.inf
    return math.exp(x)


def _sum(fl: np.ndarray, t: int, col: int) -> float:
    return fl[t, col] if t >= 0 else -math.inf


def _pull(fl: np.ndarray, it: np.ndarray, t: int) -> None:
    """Re-sum node t from its children (left, own, right: a fixed order, so both builds round
    alike)."""
    left, right = it[t, LEFT], it[t, RIGHT]
    own_a = fl[t, A]
    fl[t, SUM_A] = lse(lse(_sum(fl, left, SUM_A), own_a), _sum(fl, right, SUM_A))
    fl[t, SUM_C] = lse(lse(_sum(fl, left, SUM_C), fl[t, C]), _sum(fl, right, SUM_C))


def _before(fl: np.ndarray, i: int, b: float, slot: int) -> bool:
    """(b_i, i) < (b, slot): the treap's key order, ties in b by slot."""
    return fl[i, B] < b or (fl[i, B] == b and i < slot)


def _hang(it: np.ndarray, root: int, tail: int, side: int, node: int) -> int:
    """Hang ``node`` below ``tail`` on ``side`` (a split's or merge's growing chain), or start
    the chain with it when there is no tail yet; returns the chain's root."""
    if tail < 0:
        return node
    it[tail, side] = node
    return root


def _split(fl, it, t: int, b: float, slot: int, stack) -> tuple[int, int]:
    """Split the subtree t into keys before (b, slot) and the rest (roots of both)."""
    left_root = right_root = -1
    left_tail = right_tail = -1
    depth = 0
    while t >= 0:
        stack[depth] = t
        depth += 1
        if _before(fl, t, b, slot):
            left_root = _hang(it, left_root, left_tail, RIGHT, t)
            left_tail = t
            t = it[t, RIGHT]
        else:
            right_root = _hang(it, right_root, right_tail, LEFT, t)
            right_tail = t
            t = it[t, LEFT]
    if left_tail >= 0:
        it[left_tail, RIGHT] = -1
    if right_tail >= 0:
        it[right_tail, LEFT] = -1
    for k in range(depth - 1, -1, -1):  # bottom up: children first
        _pull(fl, it, stack[k])
    return left_root, right_root


def _merge(fl, it, left: int, right: int, stack) -> int:
    """Join two treaps, every key of ``left`` before every key of ``right``."""
    root = tail = -1
    tail_side = LEFT
    depth = 0
    while left >= 0 and right >= 0:
        # The higher priority is the parent; the merge goes on below it, on the side that
        # still joins the other treap.
        if fl[left, PRIO] > fl[right, PRIO]:
            node, side = left, RIGHT
            left = it[left, RIGHT]
        else:
            node, side = right, LEFT
            right = it[right, LEFT]
        root = _hang(it, root, tail, tail_side, node)
        tail, tail_side = node, side
        stack[depth] = node
        depth += 1
    rest = left if left >= 0 else right
    root = _hang(it, root, tail, tail_side, rest)
    for k in range(depth - 1, -1, -1):
        _pull(fl, it, stack[k])
    return root


def tree_insert(
    fl, it, meta, free, stack, b: float, a: float, c: float, prio: float, owner: int
) -> int:
    """Add v ~ TG(a, b), with c = a - b, for region ``owner``; returns its slot. The caller
    grows full arrays first."""
    if meta[FREE] > 0:
        meta[FREE] -= 1
        slot = free[meta[FREE]]
    else:
        slot = meta[USED]
        meta[USED] += 1
    fl[slot, B] = b
    fl[slot, A] = a
    fl[slot, C] = c
    fl[slot, PRIO] = prio
    it[slot, LEFT] = -1
    it[slot, RIGHT] = -1
    it[slot, OWNER] = owner
    _pull(fl, it, slot)
    before, after = _split(fl, it, meta[ROOT], b, slot, stack)
    meta[ROOT] = _merge(fl, it, _merge(fl, it, before, slot, stack), after, stack)
    return slot


def tree_delete(fl, it, meta, free, stack, slot: int) -> None:
    """Remove the element in ``slot``."""
    before, rest = _split(fl, it, meta[ROOT], fl[slot, B], slot, stack)
    # rest starts with the slot itself: everything after it is keyed after (b, slot + 1/2).
    _, after = _split(fl, it, rest, fl[slot, B], slot + 1, stack)
    meta[ROOT] = _merge(fl, it, before, after, stack)
    free[meta[FREE]] = slot
    meta[FREE] += 1


def tree_draw(fl, it, meta, e: float, u: float) -> tuple[float, int]:
    """(v, j): v = max_j v_j and j its argmax, for independent v_j ~ TG(a_j, b_j) (Eq. 5, 6),
    from e ~ Exp(1) (log s = -e, inverse transform) and u ~ U[0, 1); the tree must be non-empty.

    First descent: the largest key b_k with log U(b_k) <= log s, carrying the sums of every key
    after the current node. Then Eq. 7 gives v in (b_k, next key], and a second descent picks j
    among the keys after b_k with probability proportional to exp(a_j) (Eq. 8), walking keys
    from the largest down.
    """
    log_s = -e
    t = meta[ROOT]
    acc_a = acc_c = -math.inf
    set_a, set_c = fl[t, SUM_A], fl[t, SUM_C]  # T(g) = all keys until a b_k is found below
    while t >= 0:
        right = it[t, RIGHT]
        after_a = lse(acc_a, _sum(fl, right, SUM_A))
        after_c = lse(acc_c, _sum(fl, right, SUM_C))
        log_u = _exp(after_c) - _exp(after_a - fl[t, B])
        if log_u <= log_s:  # U(b_t) <= s: v lies above b_t
            set_a, set_c = after_a, after_c
            t = right
        else:
            acc_a = lse(after_a, fl[t, A])
            acc_c = lse(after_c, fl[t, C])
            t = it[t, LEFT]
    # Eq. 7: exp(-v) sum exp(a_j) = sum exp(a_j - b_j) - log s over the keys above v.
    # e = 0 or u = 0 (probability 2^-53 each) would be log 0: Python raises, Numba gives -inf.
    v = set_a - lse(set_c, math.log(e) if e > 0.0 else -math.inf)
    target = (math.log(u) if u > 0.0 else -math.inf) + set_a
    t = meta[ROOT]
    acc = -math.inf
    while True:
        right = it[t, RIGHT]
        with_right = lse(acc, _sum(fl, right, SUM_A))
        if right >= 0 and target < with_right:
            t = right
            continue
        acc = lse(with_right, fl[t, A])
        left = it[t, LEFT]
        if target < acc or left < 0:
            return v, t
        t = left


def draw_linear(a: np.ndarray, b: np.ndarray, rng: np.random.Generator) -> tuple[float, int]:
    """The O(m) way (004 Sec. 4.2, after Chapelle & Li): draw every v_j ~ TG(a_j, b_j) and take
    the largest; the benchmark's and the gate's yardstick for :func:`tree_draw`."""
    best, arg = -math.inf, -1
    for j in range(a.size):
        e = rng.standard_exponential()
        # TG(a, b) = a - log(E + exp(a - b)) (notes-astar.md Sec. 1).
        v = a[j] - math.log(e + math.exp(a[j] - b[j]))
        if v > best:
            best, arg = v, j
    return best, arg
