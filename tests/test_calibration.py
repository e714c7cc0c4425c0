"""The gates' false-failure rate on correct samplers matches their nominal alpha (slow).

For each exact algorithm, 500 independent seeds: each gate's rejection rate at alpha = 0.05
must contain 0.05 in its 99.9% Clopper-Pearson interval, and the p-values must not be far from
uniform. The negative control runs the same sweep on a tempered sampler, which must be rejected
far more often than alpha.
"""

import pytest

from harness.calibration import calibrate
from tests.conftest import BROKEN

pytestmark = pytest.mark.slow


@pytest.mark.parametrize(
    ("algorithm", "problem"),
    [
        ("gumbel-max", "synthetic-normal-D10-N200"),
        ("cdf-inversion", "synthetic-normal-D10-N200"),
        ("top-down", "synthetic-normal-D10-N200"),
        ("truncated-gumbel", "truncgumbel-phi0-b1"),
        ("truncated-gumbel", "truncgumbel-phi0-b-3"),
    ],
)
def test_false_failure_rate_matches_alpha(algorithm, problem):
    result = calibrate(algorithm, problem=problem, seeds=500, n=5000, alpha=0.05)
    for gate, g in result["gates"].items():
        assert g["alpha_inside"], (gate, g)
        assert g["uniformity_ks_p"] > 1e-4, (gate, g)


def test_calibration_sweep_rejects_a_broken_sampler():
    result = calibrate(
        "broken-temperature",
        problem="synthetic-normal-D10-N200",
        impl="reference",
        seeds=100,
        n=5000,
        alpha=0.05,
        plugins=(BROKEN,),
    )
    assert result["gates"]["chi-square"]["rate"] > 0.5
    assert not result["calibrated"]
