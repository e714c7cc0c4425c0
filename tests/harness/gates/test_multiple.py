import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from harness.gates import Escalation, holm


def test_holm_matches_the_step_down_rule():
    p = np.array([0.01, 0.04, 0.03, 0.2])
    reject, adjusted = holm(p, 0.05)
    # Sorted: 0.01*4 = 0.04, max(0.03*3, 0.04) = 0.09, ...
    assert reject.tolist() == [True, False, False, False]
    assert adjusted[0] == pytest.approx(0.04)
    assert adjusted[2] == pytest.approx(0.09)


def test_holm_agrees_with_statsmodels_multipletests():
    rng = np.random.default_rng(3)
    for m in (1, 2, 7, 50):
        p = rng.random(m) ** 3
        p[: m // 3] = p[0]  # ties
        reject, adjusted = holm(p, 0.05)
        ref_reject, ref_adjusted, _, _ = multipletests(p, alpha=0.05, method="holm")
        assert np.allclose(adjusted, ref_adjusted, rtol=1e-12, atol=0.0)
        assert reject.tolist() == ref_reject.tolist()


def test_escalation_splits_alpha_over_stages_and_grows_n():
    policy = Escalation(stages=3, factor=4, inconclusive=100)
    a = 3e-4
    assert policy.stage_alpha(a) == pytest.approx(1e-4)
    assert policy.sample_size(1000, 2) == 16_000
    assert policy.decide(5e-5, a, 0) == "fail"
    assert policy.decide(5e-3, a, 0) == "escalate"
    assert policy.decide(5e-3, a, 2) == "pass"  # the last stage cannot escalate
    assert policy.decide(0.5, a, 0) == "pass"
    with pytest.raises(ValueError):
        Escalation(stages=0)
