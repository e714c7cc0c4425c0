"""The discrete factor-graph target (003, Sec. 1.1): validation, L / Psi / Delta, ground truth."""

import itertools
import math

import numpy as np
import pytest

from harness.targets.factor_graph import (
    FactorGraphTarget,
    potts_grid,
    potts_target,
    random_factor_graph,
)


def chain3(tables=None, M=(1.0, 2.0), D=2):
    """x0 - x1 - x2 with two factors."""
    if tables is None:
        tables = np.stack([np.full((D, D), 0.5), np.eye(D) * 2.0])
    return FactorGraphTarget(3, D, np.array([[0, 1], [1, 2]]), tables, np.array(M))


def test_definitions_follow_the_paper():
    t = chain3()
    # A[0] = {phi_0}, A[1] = {phi_0, phi_1}, A[2] = {phi_1}
    assert t.L == 3.0  # max_i sum_{A[i]} M_phi (variable 1)
    assert t.psi == 3.0  # sum over all factors
    assert t.delta == 2  # max degree
    assert t.m_sum.tolist() == [1.0, 3.0, 2.0]
    assert t.adj_indptr.tolist() == [0, 1, 3, 4]


def test_pmf_is_the_enumerated_joint():
    t = random_factor_graph(4, 3, np.random.default_rng(0))
    states = t.states()
    assert states.shape == (81, 4)
    brute = []
    for x in itertools.product(range(3), repeat=4):
        brute.append(sum(t.tables[f, x[a], x[b]] for f, (a, b) in enumerate(t.scopes)))
    p = np.exp(np.array(brute) - max(brute))
    np.testing.assert_allclose(t.pmf, p / p.sum(), rtol=1e-13)
    assert t.state_index(states[57]) == 57
    assert math.isclose(t.log_unnormalised(states[57]), brute[57], rel_tol=1e-14)


def test_alias_tables_reproduce_the_weights_exactly():
    t = potts_grid(4, 1.3, 3)
    for i in range(t.n_vars):
        lo, hi = t.adj_indptr[i], t.adj_indptr[i + 1]
        K = hi - lo
        prob, alias = t.alias_prob[lo:hi], t.alias_idx[lo:hi]
        implied = prob / K
        for k in range(K):
            implied[alias[k]] += (1.0 - prob[k]) / K
        M = t.M[t.adj_factors[lo:hi]]
        np.testing.assert_allclose(implied, M / M.sum(), rtol=1e-12)


def test_potts_builder():
    A = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 2.0], [0.0, 2.0, 0.0]])
    t = potts_target(A, 0.5, 3)
    assert t.n_factors == 2 and t.M.tolist() == [0.5, 1.0]
    assert t.log_unnormalised(np.array([1, 1, 1])) == 1.5
    assert t.log_unnormalised(np.array([1, 1, 0])) == 0.5
    with pytest.raises(ValueError, match="beta"):
        potts_target(A, 0.0, 3)
    with pytest.raises(ValueError, match="symmetric"):
        potts_target(np.triu(A), 1.0, 3)


def test_paper_potts_constants():
    """003, Sec. 4.1: 20x20 grid, beta = 4.6, A_ij = exp(-1.5 d^2): L = 5.09."""
    t = potts_grid(20, 4.6, 10)
    assert abs(t.L - 5.0878) < 1e-3
    assert t.delta == 399


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"scopes": np.zeros((0, 2), dtype=int), "tables": np.zeros((0, 2, 2)), "M": []}, "empty"),
        ({"D": 1}, r"D = 1 \(domain size\); valid: an integer >= 2"),
        ({"scopes": [[0, 3], [1, 2]]}, r"scopes\[0\] = \(0, 3\) names variable 3; valid: 0..2"),
        ({"scopes": [[1, 1], [1, 2]]}, "two distinct variables"),
        ({"scopes": [[0, 1, 2], [1, 2, 0]]}, r"valid: \(n_factors, 2\)"),
        ({"M": [1.0, 0.0]}, r"M\[1\] = 0.0; valid: a finite number > 0"),
        ({"M": [1.0]}, r"M has shape \(1,\)"),
        ({"tables": np.zeros((2, 3, 2))}, r"tables has shape"),
        (
            {"tables": np.stack([np.full((2, 2), 0.5), np.full((2, 2), 2.5)])},
            r"tables\[1, 0, 0\] = 2.5 \(factor value\); valid: \[0, M\[1\]\] = \[0, 2.0\]",
        ),
        (
            {"tables": np.stack([np.full((2, 2), -0.1), np.eye(2)])},
            r"tables\[0, 0, 0\] = -0.1",
        ),
        ({"n_vars": 1}, "n_vars = 1"),
    ],
)
def test_bad_graphs_raise(kwargs, message):
    base = {
        "n_vars": 3,
        "D": 2,
        "scopes": [[0, 1], [1, 2]],
        "tables": np.stack([np.full((2, 2), 0.5), np.eye(2) * 2.0]),
        "M": [1.0, 2.0],
    }
    base.update(kwargs)
    with pytest.raises(ValueError, match=message):
        FactorGraphTarget(**base)


def test_enumeration_refuses_large_graphs():
    t = potts_grid(5, 1.0, 3)
    with pytest.raises(ValueError, match="valid for enumeration"):
        t.states()
