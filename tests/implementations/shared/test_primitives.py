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
