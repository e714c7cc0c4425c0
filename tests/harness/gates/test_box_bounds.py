"""Box-density gates: marginal KS with Holm in 2-D, and bound validity on visited boxes, each
with a negative control it must reject."""

import dataclasses
import math

import numpy as np
import pytest

from harness.gates.box_bounds import bound_validity, ks_marginals, visited_boxes
from harness.targets.box_density import box_density, clutter, quadrature_truth
from implementations.astar import fast, reference


@pytest.fixture(scope="module")
def clutter2():
    return clutter(2)


def test_2d_truth_of_a_flat_likelihood_is_the_product_of_the_proposal_marginals():
    from scipy import stats

    target = box_density(
        [-1.0, 0.0],
        [2.0, math.inf],
        [("normal", 0.0, 1.0), ("exponential", 2.0)],
        lambda x, data: 0.0,
        lambda lo, hi, data: 0.0,
        np.ones(1),
    )
    truth = quadrature_truth(target)
    # Each within its stated error (the difference from the rule on a grid half as fine).
    assert truth.log_z_error < 1e-5 and truth.cdf_error < 1e-4
    assert truth.log_z == pytest.approx(
        target.log_mass(target.lo, target.hi), abs=truth.log_z_error
    )
    x = np.linspace(-1.0, 2.0, 9)
    ref = (stats.norm.cdf(x) - stats.norm.cdf(-1.0)) / (stats.norm.cdf(2.0) - stats.norm.cdf(-1))
    assert np.max(np.abs(truth.marginal_cdf(0, x) - ref)) <= truth.cdf_error
    y = np.linspace(0.0, 3.0, 9)
    assert (
        np.max(np.abs(truth.marginal_cdf(1, y) - stats.expon(scale=0.5).cdf(y))) <= truth.cdf_error
    )


def test_ks_marginals_passes_astar_on_2d_clutter_and_rejects_prior_draws(clutter2):
    draws = fast.astar(clutter2, 2000, np.random.default_rng(3))
    good = ks_marginals(draws.values, clutter2.marginal_cdf, 0.01)
    assert good.passed and good.gate == "ks-marginals" and "Holm" in good.detail
    # Negative control: one coordinate shuffled in from the other mode's side (x1 -> -x1)
    # keeps x0's law and breaks x1's; Holm over the two must still reject.
    bad = draws.values.copy()
    bad[:, 1] = -bad[:, 1]
    wrong = ks_marginals(bad, clutter2.marginal_cdf, 0.01)
    assert not wrong.passed and "x1" in wrong.detail


def _low_near_zero(lo, hi, data):
    """The clutter bound, but on boxes lying inside [-1, 1]^d it is 30 too low: invalid on a
    small part of the space only, which the constructor's probe may miss."""
    m = clutter(2).bound(lo, hi, data)
    inside = np.all(lo >= -1.0) and np.all(hi <= 1.0)
    return m - 30.0 if inside else m


def test_bound_validity_passes_clutter_and_names_the_box_of_a_bound_too_low(clutter2):
    rng = np.random.default_rng(0)
    boxes = visited_boxes(reference.astar, clutter2, {}, 5, rng)
    good = bound_validity(clutter2, boxes, 0.01, rng)
    assert good.passed and good.n > 1000
    # Boxes inside [-1, 1]^2 are not visited by the search (no mass there), so the gate checks
    # them through the handed boxes: the negative control states the gate's reach.
    broken = dataclasses.replace(clutter2, bound=_low_near_zero)
    inner = [(np.array([-0.5, -0.5]), np.array([0.5, 0.5]))]
    handed = [(lo, hi, broken.M(lo, hi)) for lo, hi in inner]
    bad = bound_validity(broken, handed, 0.01, rng)
    assert not bad.passed
    assert "[[-0.5, -0.5], [0.5, 0.5]]" in bad.detail and "below o(x)" in bad.detail


def test_bound_validity_catches_a_bound_too_low_where_the_search_goes():
    # o peaks at x = 0.3 (a Gaussian bump); the bound is the clipped peak, 2 too low on boxes
    # narrower than 0.5 that contain the peak: exactly the boxes A* refines.
    def log_lik(x, data):
        return -0.5 * ((x[0] - 0.3) / 0.05) ** 2

    def bound_ok(lo, hi, data):
        c = min(max(0.3, lo[0]), hi[0])
        return -0.5 * ((c - 0.3) / 0.05) ** 2

    def bound_low(lo, hi, data):
        m = bound_ok(lo, hi, data)
        return m - 2.0 if hi[0] - lo[0] < 0.5 and lo[0] <= 0.3 <= hi[0] else m

    good = box_density([0.0], [1.0], [("uniform",)], log_lik, bound_ok, np.ones(1))
    bad = dataclasses.replace(good, bound=bound_low)
    rng = np.random.default_rng(1)
    result = bound_validity(bad, visited_boxes(reference.astar, bad, {}, 10, rng), 0.01, rng)
    assert not result.passed and "is below o(x)" in result.detail
    assert bound_validity(good, visited_boxes(reference.astar, good, {}, 10, rng), 0.01, rng).passed
    # The constructor's probe turns the same function into a clear error before any work.
    with pytest.raises(ValueError, match=r"bound\(lo, hi, data\) = .* is below o\(x\)"):
        box_density([0.0], [1.0], [("uniform",)], log_lik, bound_low, np.ones(1))
