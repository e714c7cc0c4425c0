"""003 Statement 1 as a benchmark: Poisson-Gibbs factors per step do not grow with the degree."""

import pytest

from harness.speed.ratios import degree_scaling, format_degree_scaling


def test_poisson_gibbs_work_is_flat_in_the_degree_while_gibbs_grows():
    result = degree_scaling([20, 200], L=2.0, steps=2000, repeat=3)
    rows = {(r["algorithm"], r["degree"]): r for r in result["rows"]}
    assert rows[("gibbs", 20)]["factors_per_step"] == 20
    assert rows[("gibbs", 200)]["factors_per_step"] == 200
    small, large = rows[("poisson-gibbs", 20)], rows[("poisson-gibbs", 200)]
    assert abs(small["L"] - 2.0) < 1e-9 and abs(large["L"] - 2.0) < 1e-9
    # E|S| <= lam + L = 6 at both degrees: the minibatch does not see the degree.
    assert small["factors_per_step"] < 6 and large["factors_per_step"] < 6
    assert "poisson-gibbs" in format_degree_scaling(result)


def test_degree_scaling_rejects_bad_input():
    with pytest.raises(ValueError, match="degrees"):
        degree_scaling([40])
    with pytest.raises(ValueError, match="repeat"):
        degree_scaling([4, 40], repeat=1)
