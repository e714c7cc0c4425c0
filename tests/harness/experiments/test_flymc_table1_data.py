"""The data readings of flymc-table1 (002, Table 1): the loaders of harness.targets.glm_data
it adds, the R-CODA-style ESS and the robust-ess study's rows and data."""

from __future__ import annotations

import math

import numpy as np
import pytest

from harness.experiments.flymc_table1 import REAL, Row, row_data
from harness.experiments.flymc_table1.study import ar_ess, robust_data, study_rows
from harness.targets import glm_data


def test_the_default_synthetic_features_are_unchanged_and_feature_sd_widens_them() -> None:
    rng = np.random.default_rng(5)
    want = rng.standard_normal((40, 4)) / math.sqrt(4)
    for make in (glm_data.synthetic_logistic, glm_data.synthetic_robust):
        data = make(40, 4, seed=5)
        assert np.array_equal(data.X, want) and data.name.endswith("-N40-P4")
        wide = make(40, 4, seed=5, feature_sd=1.0)
        assert np.array_equal(wide.X, want * 2.0) and wide.name.endswith("-sd1")
        assert np.array_equal(wide.theta_true, data.theta_true)
    soft = glm_data.synthetic_softmax(40, 3, 4, seed=5, feature_sd=2.0)
    assert np.array_equal(soft.X, want * 4.0)
    with pytest.raises(ValueError, match="'feature_sd'"):
        glm_data.synthetic_logistic(40, 4, feature_sd=0.0)


def test_real_sets_have_their_documented_sizes_and_labels() -> None:
    pytest.importorskip("sklearn")
    for data, (model, N, load) in REAL.items():
        got = load()
        assert (got.model, got.N) == (model, N) and got.source.startswith("real")
        assert np.all(got.X[:, 0] == 1.0)  # the intercept column
        assert row_data(Row(model, data, "map", N, 100)).N == N
    cancer = glm_data.breast_cancer()
    assert cancer.X.shape == (569, 31) and set(np.unique(cancer.t)) == {0.0, 1.0}
    assert np.allclose(cancer.X[:, 1:].mean(axis=0), 0.0, atol=1e-12)
    three = glm_data.digits_3_class()
    assert three.X.shape == (537, 65) and three.classes == 3
    assert set(np.unique(three.t)) == {0.0, 1.0, 2.0} and three.X.max() == 1.0


def test_ar_ess_matches_an_ar1_chain_and_refuses_a_constant_one() -> None:
    rng = np.random.default_rng(0)
    rho, n = 0.9, 200_000
    x = np.empty(n)
    x[0] = rng.standard_normal()
    noise = rng.standard_normal(n) * math.sqrt(1 - rho * rho)
    for i in range(1, n):
        x[i] = rho * x[i - 1] + noise[i]
    want = n * (1 - rho) / (1 + rho)
    assert ar_ess(x) == pytest.approx(want, rel=0.05)
    assert ar_ess(rng.standard_normal(5000)) == pytest.approx(5000, rel=0.1)
    assert ar_ess(np.ones(100)) is None


def test_study_rows_vary_one_factor_at_a_time_and_data_have_the_asked_conditioning() -> None:
    rows = study_rows((10, 40), (1.0, 100.0), (4.0, 0.5), (200, 400), 100)
    base = [r for r in rows if (r.P, r.kappa, r.width, r.N) == (10, 1.0, 4.0, 200)]
    assert {r.algorithm for r in base} == {"slice", "flymc-slice"} and len(rows) == 6
    assert next(r for r in rows if r.P == 40).iterations == 400  # longer chains for larger D
    data = robust_data(20_000, 5, 100.0)
    eig = np.linalg.eigvalsh(data.X.T @ data.X / data.N)
    assert eig.max() / eig.min() == pytest.approx(100.0, rel=0.1)
    assert np.mean(np.sum(data.X**2, axis=1)) == pytest.approx(1.0, rel=0.05)


def test_the_mnist_row_runs_on_the_real_digits_at_every_level() -> None:
    from harness.experiments.flymc_table1 import MNIST, FlymcTable1, run_row

    flymc = FlymcTable1()
    for level in ("quick", "full"):
        rows = [r for r in flymc.config(level).rows if r.data == MNIST]
        assert {r.N for r in rows} == {12_214} and len(rows) == 12  # 4 chains of 3 columns
        assert {(r.model, r.column) for r in rows} == {
            ("logistic", c) for c in ("regular", "untuned", "map")
        }
    data = row_data(Row("logistic", MNIST, "map", 12_214, 100))
    assert data.source.startswith("real: MNIST 7 vs 9") and data.X.shape == (12_214, 51)
    assert data.name == "mnist-7-vs-9-pca50" and data.theta_true is None
    (record,) = run_row(
        Row("logistic", MNIST, "map", 12_214, 20), 0.01, 0.1, np.random.default_rng(0)
    )
    assert record["source"].startswith("real: MNIST") and (record["N"], record["D"]) == (12_214, 51)
    assert record["map_evaluations"] > 0
    # its claims are judged on it, not setting differs
    logistic = [c for c in flymc.claims(flymc.config("quick")) if c.id.startswith("logistic-")]
    assert logistic and all(not c.differs and "real MNIST" in c.quantity for c in logistic)
