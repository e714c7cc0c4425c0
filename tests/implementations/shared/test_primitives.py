"""The shared primitives' twins (implementations/shared): the Numba version returns the
reference's value and leaves the Generator where the reference does, at ordinary and edge
arguments (a zero Exp(1) draw, an untruncated Gumbel, a rate of zero)."""

import math

import numpy as np
import pytest

from implementations.shared import fast, reference


@pytest.mark.parametrize("u", [0.0, 5e-324, 1e-300, 0.25, 1.0, 7.5])
def test_the_guarded_log_agrees_and_is_minus_inf_at_zero(u):
    assert fast.log_or_minus_inf(u) == reference.log_or_minus_inf(u)
    assert (reference.log_or_minus_inf(u) == -math.inf) == (u == 0.0)


@pytest.mark.parametrize("upper", [math.inf, 40.0, 2.0, -3.0])
@pytest.mark.parametrize("e", [0.0, 1e-12, 0.7, 30.0])
def test_gumbel_below_agrees_and_stays_below(upper, e):
    got, want = fast.gumbel_below(1.5, upper, e), reference.gumbel_below(1.5, upper, e)
    assert got == want and want <= upper
    if upper == math.inf:
        assert want == 1.5 - reference.log_or_minus_inf(e)


@pytest.mark.parametrize("rate", [0.0, 0.3, 11.24, 250.0])
def test_poisson_counts_agree_and_leave_the_generator_in_step(rate):
    a, b = np.random.default_rng(3), np.random.default_rng(3)
    counts = [(fast.poisson_count(rate, a), reference.poisson_count(rate, b)) for _ in range(50)]
    assert all(x == y for x, y in counts)
    assert a.random() == b.random()


def test_poisson_counts_have_the_poisson_mean():
    rng = np.random.default_rng(0)
    draws = np.array([reference.poisson_count(4.0, rng) for _ in range(20000)])
    assert abs(draws.mean() - 4.0) < 5 * math.sqrt(4.0 / draws.size)


def test_gumbel_noise_is_minus_log_of_the_exponentials():
    eps = reference.gumbel_noise(6, np.random.default_rng(1))
    e = np.random.default_rng(1).standard_exponential(6)
    assert np.array_equal(eps, [-math.log(v) for v in e])


def test_lane_sums_are_the_row_sums_to_rounding():
    rows = np.random.default_rng(2).normal(0.0, 30.0, (5, 37))
    exact = [math.fsum(row) for row in rows]
    np.testing.assert_allclose(reference.lane_sums(rows), exact, rtol=1e-12, atol=1e-9)


def _lane_order(row: np.ndarray) -> float:
    """lane_sums' documented order, one float at a time."""
    lanes = [0.0] * reference.LANES
    for lane in range(min(reference.LANES, row.size)):
        total = row[lane]
        for v in row[lane + reference.LANES :: reference.LANES]:
            total += v
        lanes[lane] = total
    return ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + (
        (lanes[4] + lanes[5]) + (lanes[6] + lanes[7])
    )


@pytest.mark.parametrize("N", [0, 1, 5, 8, 13, 16, 21, 40])
def test_lane_sums_follow_their_order_to_the_bit(N):
    rng = np.random.default_rng(N)
    rows = rng.normal(size=(40, N)) * 10.0 ** rng.integers(-5, 300, (40, N))
    pick = rng.random((40, N))
    rows[pick < 0.3] = -0.0
    rows[(pick > 0.97) & (np.arange(40)[:, None] % 3 == 0)] = -math.inf
    rows[0] = -0.0  # eight lanes of -0.0 sum to -0.0 (N >= 8); an empty lane is +0.0
    with np.errstate(all="ignore"):
        got = reference.lane_sums(rows)
        want = np.array([_lane_order(row) for row in rows])
    assert got.tobytes() == want.tobytes()
    assert math.copysign(1.0, got[0]) == (-1.0 if N >= 8 else 1.0)


def test_the_heap_pops_in_the_order_heapq_would():
    rng = np.random.default_rng(4)
    neg = np.round(rng.normal(size=40), 1)  # ties, broken by push order
    seq = np.arange(40)
    heap = np.empty(40, dtype=np.int64)
    size = 0
    for slot in range(40):
        size = fast.heap_push(heap, size, neg, seq, slot)
    popped = []
    while size:
        slot, size = fast.heap_pop(heap, size, neg, seq)
        popped.append(slot)
    assert popped == sorted(range(40), key=lambda s: (neg[s], s))
