"""The GLM posterior target of Firefly Monte Carlo (harness/targets/glm.py; 002, notes-firefly.md):
collapsed bound sums, bound validity and tightness, gradients, Numba twins, the prior simulator,
the quadrature truth for D <= 2, a planted bad bound, and every bad-input error."""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest
from scipy import integrate, special

from harness.targets import glm, glm_data, glm_kernels
from harness.targets.glm import EPS, MODELS, TUNINGS, glm_posterior
from harness.targets.glm_bound_check import check_bounds
from harness.targets.glm_kernels import KERNELS
from harness.targets.glm_quadrature import glm_quadrature

SMALL = {
    "logistic": lambda: glm_data.synthetic_logistic(N=120, P=4, seed=1),
    "softmax": lambda: glm_data.synthetic_softmax(N=120, classes=3, P=3, seed=2),
    "robust": lambda: glm_data.synthetic_robust(N=120, P=4, seed=3),
}
CASES = [(m, tn) for m in MODELS for tn in TUNINGS]


@pytest.fixture(scope="module")
def targets():
    return {(m, tn): glm.from_data(SMALL[m](), tn) for m, tn in CASES}


def _thetas(target, seed=0):
    """The tuning point, points near it, prior draws and far points (both tails of every term)."""
    rng = np.random.default_rng(seed)
    near = [target.theta_tuning + s * rng.standard_normal(target.D) for s in (1e-3, 0.1, 0.5)]
    far = [k * target.prior_sd * rng.standard_normal(target.D) for k in (1.0, 1.0, 5.0)]
    return [target.theta_tuning, *near, *far]


@pytest.mark.parametrize(("model", "tuning"), CASES)
def test_collapsed_sum_equals_the_sum_over_all_data(targets, model, tuning):
    target = targets[model, tuning]
    everyone = np.arange(target.N)
    for theta in _thetas(target):
        full = target.log_bound(theta, everyone).sum()
        assert target.sum_log_bound(theta) == pytest.approx(full, rel=1e-10)
        grad = target.grad_log_bound(theta, everyone).sum(axis=0)
        scale = np.abs(target.grad_log_bound(theta, everyone)).sum(axis=0)
        assert np.all(np.abs(target.grad_sum_log_bound(theta) - grad) <= 1e-10 * (1 + scale))


@pytest.mark.parametrize(("model", "tuning"), CASES)
def test_bounds_lie_below_the_likelihood(targets, model, tuning):
    target = targets[model, tuning]
    report = check_bounds(target, np.random.default_rng(5), points=16)
    assert report.data == target.N and report.thetas == 17
    assert report.min_gap >= EPS * (1 - 1e-6)
    everyone = np.arange(target.N)
    for theta in _thetas(target, 1):
        gap = target.log_lik(theta, everyone) - target.log_bound(theta, everyone)
        assert np.all(gap >= EPS * (1 - 1e-6))


@pytest.mark.parametrize("model", MODELS)
def test_map_tuned_bounds_are_tight_at_the_map(targets, model):
    target = targets[model, "map"]
    everyone = np.arange(target.N)
    theta = target.theta_tuning
    gap = target.log_lik(theta, everyone) - target.log_bound(theta, everyone)
    assert np.allclose(gap, EPS, rtol=0, atol=1e-11)
    # log(L/B - 1) at the tight point is log(EPS) to first order: finite, far below 0
    assert glm_kernels.log_l_tilde(1.0, 1.0 - EPS) == pytest.approx(math.log(EPS), abs=1e-5)
    # theta_MAP is a stationary point, and the optimiser's cost is kept apart
    assert np.max(np.abs(target.grad_log_posterior(theta))) < 1e-4
    cost = target.map_cost
    assert cost.converged and cost.evaluations >= 1
    assert cost.likelihood_evals == cost.evaluations * target.N and cost.seconds > 0
    assert targets[model, "untuned"].map_cost is None


def _central(f, theta, h=1e-6):
    out = []
    for j in range(theta.size):
        e = np.zeros(theta.size)
        e[j] = h
        out.append((f(theta + e) - f(theta - e)) / (2 * h))
    return np.array(out).T


@pytest.mark.parametrize(("model", "tuning"), CASES)
def test_gradients_match_finite_differences(targets, model, tuning):
    target = targets[model, tuning]
    idx = np.array([0, 5, 17, target.N - 1])
    theta = _thetas(target, 2)[2]
    pairs = [
        (lambda th: target.log_lik(th, idx), target.grad_log_lik(theta, idx)),
        (lambda th: target.log_bound(th, idx), target.grad_log_bound(theta, idx)),
        (target.sum_log_bound, target.grad_sum_log_bound(theta)),
        (target.log_prior, target.grad_log_prior(theta)),
        (target.log_posterior, target.grad_log_posterior(theta)),
    ]
    for f, analytic in pairs:
        numeric = _central(f, theta)
        assert np.allclose(analytic, numeric, rtol=1e-5, atol=1e-6 * (1 + np.abs(numeric).max()))


def _run_both(name, *args, out=None):
    results = []
    for kernel in KERNELS[name]:
        buf = None if out is None else np.full(out, np.nan)
        value = kernel(*args) if buf is None else kernel(*args, buf)
        results.append(np.asarray(value if buf is None else buf).tobytes())
    return results


@pytest.mark.parametrize(("model", "tuning"), CASES)
def test_numba_twins_equal_the_reference_to_the_last_bit(targets, model, tuning):
    t = targets[model, tuning]
    idx = np.array([3, 0, 7, 7, t.N - 1, 50], dtype=np.int64)
    lik = (t.code, t.X, t.t, t.nu)
    bnd = (t.code, t.X, t.t, t.bq, t.bl, t.bc)
    for theta in _thetas(t, 3):
        calls = [
            ("log_lik_terms", (*lik, theta, idx), (idx.size,)),
            ("log_bound_terms", (*bnd, theta, idx), (idx.size,)),
            ("grad_log_lik_terms", (*lik, theta, idx), (idx.size, t.D)),
            ("grad_log_bound_terms", (*bnd, theta, idx), (idx.size, t.D)),
            ("log_lik_total", (*lik, theta), None),
            ("grad_log_lik_total", (*lik, theta), (t.D,)),
            ("collapsed_log_bound", (t.quad, t.lin, t.const, theta), None),
            ("collapsed_grad_log_bound", (t.quad, t.lin, theta), (t.D,)),
            ("log_prior_value", (theta, t.prior_sd), None),
            ("grad_log_prior_value", (theta, t.prior_sd), (t.D,)),
        ]
        for name, args, out in calls:
            ref, fast = _run_both(name, *args, out=out)
            assert ref == fast, name
        # the target's methods run the twins: the same numbers as the reference kernels
        ref = np.empty(idx.size)
        glm_kernels.log_lik_terms(*lik, theta, idx, ref)
        assert ref.tobytes() == t.log_lik(theta, idx).tobytes()
    for gap in (EPS, 1e-3, 0.7, 40.0):
        assert (
            _run_both("log_l_tilde", 0.5, 0.5 - gap)[0]
            == _run_both("log_l_tilde", 0.5, 0.5 - gap)[1]
        )


@pytest.mark.parametrize(("model", "tuning"), CASES)
def test_simulate_gives_a_valid_target_of_the_same_kind(targets, model, tuning):
    target = targets[model, tuning]
    theta, sim = target.simulate(np.random.default_rng(7))
    again, sim2 = target.simulate(np.random.default_rng(7))
    assert np.array_equal(theta, again) and np.array_equal(sim.t, sim2.t)
    assert theta.shape == (target.D,)
    assert (sim.model, sim.tuning, sim.N, sim.D, sim.K) == (
        model,
        tuning,
        target.N,
        target.D,
        target.K,
    )
    assert sim.X is target.X or np.array_equal(sim.X, target.X)
    assert not np.array_equal(sim.t, target.t)
    if model == "logistic":
        assert set(np.unique(sim.t)) <= {0.0, 1.0}
    elif model == "softmax":
        assert set(np.unique(sim.t)) <= {0.0, 1.0, 2.0}
    assert (sim.map_cost is None) == (tuning == "untuned")
    assert check_bounds(sim, np.random.default_rng(0), points=4).min_gap > 0


def _brute_log_z_1d(target, grid):
    lp = np.array([target.log_posterior([v]) for v in grid])
    top = lp.max()
    dens = np.exp(lp - top)
    return top + math.log(np.trapezoid(dens, grid)), dens


def test_quadrature_truth_in_one_dimension():
    target = glm.from_data(glm_data.synthetic_robust(N=30, P=1, seed=3), "untuned")
    truth = target.truth
    grid = truth.grids[0]
    # a proper distribution: the CDF runs from 0 to 1 and the density integrates to 1
    assert truth.cdfs[0][0] == 0 and truth.cdfs[0][-1] == pytest.approx(1.0, abs=1e-12)
    assert integrate.simpson(truth.densities[0], x=grid) == pytest.approx(1.0, abs=1e-9)
    assert truth.log_z_error < 1e-9 and truth.cdf_error < 1e-9
    # brute force: the trapezoid rule on a wide uniform grid of the unnormalised posterior
    wide = np.linspace(-8.0, 8.0, 40001)
    log_z, dens = _brute_log_z_1d(target, wide)
    assert target.log_normaliser == pytest.approx(log_z, abs=1e-7)
    cdf = integrate.cumulative_trapezoid(dens, wide, initial=0.0)
    cdf /= cdf[-1]
    probe = np.quantile(grid, [0.3, 0.45, 0.5, 0.6])
    assert np.allclose(target.marginal_cdf(0, probe), np.interp(probe, wide, cdf), atol=1e-6)


def test_quadrature_truth_in_two_dimensions():
    target = glm.from_data(glm_data.synthetic_logistic(N=200, P=2, seed=4), "map")
    truth = glm_quadrature(target, points=257)
    assert truth.log_z_error < 1e-6 and truth.cdf_error < 1e-4
    for j in range(2):
        assert integrate.simpson(truth.densities[j], x=truth.grids[j]) == pytest.approx(1, abs=1e-8)
    # brute force: NumPy's log_expit on a wide uniform grid, trapezoid in both axes
    axes = [np.linspace(c - 3.0, c + 3.0, 401) for c in target.theta_tuning]
    a, b = np.meshgrid(*axes, indexing="ij")
    lp = -0.5 * (a * a + b * b) - math.log(2 * math.pi)
    for x, label in zip(target.X, target.t, strict=True):
        lp += special.log_expit((2 * label - 1) * (x[0] * a + x[1] * b))
    top = lp.max()
    f = np.exp(lp - top)
    marginal = integrate.trapezoid(f, axes[1], axis=1)
    log_z = top + math.log(integrate.trapezoid(marginal, axes[0]))
    assert truth.log_z == pytest.approx(log_z, abs=1e-5)
    cdf = integrate.cumulative_trapezoid(marginal, axes[0], initial=0.0)
    probe = target.theta_tuning[0] + np.array([-0.3, 0.0, 0.2])
    assert np.allclose(
        truth.marginal_cdf(0, probe), np.interp(probe, axes[0], cdf / cdf[-1]), atol=1e-4
    )


def test_quadrature_truths_are_kept_on_disk_by_what_they_depend_on(tmp_path, monkeypatch):
    from harness.targets import glm_quadrature as quadrature

    monkeypatch.setenv("SAMPLER_HARNESS_CACHE", str(tmp_path))
    data = glm_data.synthetic_robust(N=30, P=1, seed=3)
    computed = glm_quadrature(glm.from_data(data, "untuned"), points=257)
    (kept,) = (tmp_path / "glm-quadrature").iterdir()
    loaded = glm_quadrature(glm.from_data(data, "map"), points=257)  # same posterior
    assert loaded.log_z == computed.log_z and loaded.cdf_error == computed.cdf_error
    assert np.array_equal(loaded.cdfs[0], computed.cdfs[0])
    assert np.array_equal(loaded.densities[0], computed.densities[0])
    assert len(list(kept.parent.iterdir())) == 1
    # other data or another grid: another entry, never the kept one
    other = glm.from_data(glm_data.synthetic_robust(N=30, P=1, seed=4), "untuned")
    assert glm_quadrature(other, points=257).log_z != computed.log_z
    glm_quadrature(glm.from_data(data, "untuned"), points=129)
    assert len(list(kept.parent.iterdir())) == 3
    # a damaged entry is recomputed and replaced
    kept.write_bytes(b"not a npz")
    again = glm_quadrature(glm.from_data(data, "untuned"), points=257)
    assert again.log_z == computed.log_z and np.load(kept)["scalars"][0] == computed.log_z
    # a folder that cannot be written costs only the recomputation
    monkeypatch.setenv("SAMPLER_HARNESS_CACHE", str(kept))  # a file, not a folder
    assert quadrature.glm_quadrature(other, points=257).log_z != computed.log_z


def test_quadrature_needs_d_at_most_2(targets):
    with pytest.raises(ValueError, match=r"D = 4 is invalid for glm_quadrature; valid: D <= 2"):
        glm_quadrature(targets["logistic", "map"])


@pytest.mark.parametrize(("model", "tuning"), CASES)
def test_a_raised_bound_is_rejected_naming_the_datum(targets, model, tuning):
    """Negative control: B_7 raised so it exceeds L_7 (by 2 EPS at the tight MAP point; by 5
    at the untuned point, beyond every untuned gap of these data)."""
    target = targets[model, tuning]
    amount = 2 * EPS if tuning == "map" else 5.0
    bad = glm.with_raised_bound(target, [7], amount)
    assert bad.sum_log_bound(target.theta_tuning) == pytest.approx(
        bad.log_bound(target.theta_tuning, np.arange(target.N)).sum(), rel=1e-10
    )
    with pytest.raises(
        ValueError, match=r"the bound of datum n = 7 is invalid at theta = .* > log L_n"
    ):
        check_bounds(bad, np.random.default_rng(0), points=8)
    check_bounds(target, np.random.default_rng(0), points=8)  # the unplanted target passes


def test_the_constructor_rejects_a_bound_above_the_likelihood(monkeypatch):
    """Negative control through glm_posterior itself: a bound-parameter routine whose constant
    for datum 3 is 1 too high fails the constructor's check."""
    right = glm.bound_parameters

    def raised(*args):
        bq, bl, bc = right(*args)
        bc = bc.copy()
        bc[3] += 1.0
        return bq, bl, bc

    monkeypatch.setattr(glm, "bound_parameters", raised)
    data = SMALL["robust"]()
    with pytest.raises(ValueError, match=r"the bound of datum n = 3 is invalid"):
        glm.from_data(data, "untuned")


GOOD_X = np.random.default_rng(0).standard_normal((6, 2))


def _with(a, index, value):
    a = np.array(a, dtype=np.float64)
    a[index] = value
    return a


BAD_INPUT = [
    (
        dict(t=[0, 1, 2, 0, 1, 0]),
        r"t\[2\] = 2.0 is invalid for model 'logistic'; valid: labels 0..1",
    ),
    (dict(t=[0, 1, -1, 0, 1, 0]), r"t\[2\] = -1.0 is invalid for model 'logistic'"),
    (dict(t=[0, 0.5, 1, 0, 1, 0]), r"t\[1\] = 0.5 is invalid"),
    (
        dict(model="softmax", classes=3, t=[0, 1, 2, 3, 1, 0]),
        r"t\[3\] = 3.0 is invalid for model 'softmax'; valid: labels 0..2",
    ),
    (
        dict(model="softmax", classes=1, t=[0] * 6),
        r"parameter 'classes' = 1 is invalid; valid: an integer in \[2, inf\)",
    ),
    (dict(X=_with(GOOD_X, (4, 1), np.nan)), r"X\[4, 1\] = nan is invalid; valid: finite numbers"),
    (dict(X=_with(GOOD_X, (0, 0), np.inf)), r"X\[0, 0\] = inf is invalid"),
    (
        dict(model="robust", t=[0.1, np.nan, 0, 0, 0, 0]),
        r"t\[1\] = nan is invalid; valid: finite numbers",
    ),
    (dict(X=np.zeros((0, 2)), t=[]), r"the data set is empty; valid: N >= 1"),
    (dict(X=np.zeros(6)), r"X has shape \(6,\); valid: a design matrix"),
    (dict(t=[0, 1, 0]), r"t has shape \(3,\); valid: \(6,\)"),
    (dict(prior_sd=0.0), r"parameter 'prior_sd' = 0.0 is invalid; valid: a number in \(0.0, inf\)"),
    (dict(prior_sd=-1.0), r"parameter 'prior_sd' = -1.0 is invalid"),
    (dict(prior_sd=math.nan), r"parameter 'prior_sd' = nan is invalid"),
    (
        dict(model="robust", nu=0.0),
        r"parameter 'nu' = 0.0 is invalid; valid: a number in \(0.0, inf\)",
    ),
    (dict(model="robust", nu=-2.0), r"parameter 'nu' = -2.0 is invalid"),
    (
        dict(model="probit"),
        r"parameter 'model' = 'probit' is invalid; valid: one of 'logistic', 'softmax', 'robust'",
    ),
    (
        dict(tuning="laplace"),
        r"parameter 'tuning' = 'laplace' is invalid; valid: one of 'untuned', 'map'",
    ),
]


@pytest.mark.parametrize(("change", "message"), BAD_INPUT)
def test_bad_input_is_named(change, message):
    args = dict(X=GOOD_X, t=[0, 1, 1, 0, 1, 0], model="logistic") | change
    with pytest.raises(ValueError, match=message):
        glm_posterior(**args)


def test_methods_check_theta_and_indices(targets):
    target = targets["logistic", "untuned"]
    with pytest.raises(ValueError, match=r"theta has shape \(3,\); valid: .* D = 4"):
        target.log_lik(np.zeros(3), [0])
    with pytest.raises(ValueError, match=r"valid: data indices in \[0, 120\)"):
        target.log_bound(np.zeros(4), [120])


def test_data_sets_at_the_papers_sizes():
    assert (glm_data.LOGISTIC_N, glm_data.SOFTMAX_N, glm_data.SOFTMAX_CLASSES) == (
        12_214,
        18_000,
        3,
    )
    assert (glm_data.ROBUST_N_QUICK, glm_data.ROBUST_N_FULL) == (100_000, 1_800_000)
    data = glm_data.synthetic_logistic()
    assert data.X.shape == (12_214, 50) and set(np.unique(data.t)) == {0.0, 1.0}
    again = glm_data.synthetic_logistic()
    assert np.array_equal(data.X, again.X) and np.array_equal(data.t, again.t)
    soft = glm_data.synthetic_softmax(N=500)
    assert soft.X.shape == (500, 16) and soft.classes == 3 and set(np.unique(soft.t)) == {0, 1, 2}


def test_digits_names_the_optional_extra_when_scikit_learn_is_missing(monkeypatch):
    monkeypatch.setitem(sys.modules, "sklearn", None)
    monkeypatch.setitem(sys.modules, "sklearn.datasets", None)
    with pytest.raises(
        ImportError, match=r"scikit-learn, an optional extra: pip install 'sampler-harness\[data\]'"
    ):
        glm_data.digits_7_vs_9()


def test_digits_7_vs_9_when_scikit_learn_is_installed():
    pytest.importorskip("sklearn")
    data = glm_data.digits_7_vs_9()
    assert data.X.shape == (359, 65) and set(np.unique(data.t)) == {0.0, 1.0}
    assert glm.from_data(data, "untuned").D == 65
