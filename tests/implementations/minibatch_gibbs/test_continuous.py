"""Continuous Gibbs / Poisson-Gibbs samplers (003, Sec. 3, Alg. 3): input checks, reference =
Numba bit for bit, one-step invariance of the quadrature joint, Chebyshev accuracy."""

import itertools
import math

import numpy as np
import pytest
from numpy.polynomial import chebyshev as npcheb
from scipy.stats import chi2

from harness.spec import sample
from harness.targets.continuous_factor_graph import (
    ContinuousFactorGraphTarget,
    continuous_spin_grid,
    tiny_continuous_graph,
)
from implementations.minibatch_gibbs import continuous_fast, continuous_reference
from implementations.minibatch_gibbs.continuous import CONTINUOUS_FAMILY
from implementations.minibatch_gibbs.continuous_reference import (
    cheb_coefficients,
    cheb_integral,
    cheb_plan,
    clenshaw,
    lift_nonnegative,
)

SPECS = {s.name: s for s in CONTINUOUS_FAMILY}
#: Low degrees on purpose: the MH step, not the interpolant, must carry exactness.
PARAMS = {
    "gibbs-rejection": {},
    "pg-rejection": {"lam": 4.0},
    "gibbs-its": {"m": 2},
    "pgits": {"lam": 4.0, "m": 2},
    "gibbs-da": {"m": 2, "k": 3},
    "pgda": {"lam": 4.0, "m": 2, "k": 3},
}


@pytest.fixture(scope="module")
def tiny() -> ContinuousFactorGraphTarget:
    return tiny_continuous_graph(2.0)


@pytest.fixture(scope="module")
def spin() -> ContinuousFactorGraphTarget:
    return continuous_spin_grid(5)


def test_family_contract() -> None:
    assert list(SPECS) == list(PARAMS)
    for spec in CONTINUOUS_FAMILY:
        assert spec.guarantee == "mcmc" and spec.entry == "run_chain" and not spec.splittable
        assert spec.target_kinds == ("factor-graph-continuous",)
        assert spec.kernels == continuous_fast.KERNELS


def test_bad_domain_and_bounds() -> None:
    with pytest.raises(ValueError, match=r"\[1.0, 1.0\].*a < b"):
        ContinuousFactorGraphTarget(2, 1.0, 1.0, [(0, 1)], [(0.0, 0.0, 0.0, 1.0)], [1.0])
    with pytest.raises(ValueError, match=r"\[2.0, -1.0\]"):
        ContinuousFactorGraphTarget(2, 2.0, -1.0, [(0, 1)], [(0.0, 0.0, 0.0, 1.0)], [1.0])
    with pytest.raises(ValueError, match="M\\[0\\]"):  # phi = u w reaches 4 > M on [0, 2]
        ContinuousFactorGraphTarget(2, 0.0, 2.0, [(0, 1)], [(0.0, 0.0, 0.0, 1.0)], [1.0])
    with pytest.raises(ValueError, match="factor 0 ranges over"):  # negative at a corner
        ContinuousFactorGraphTarget(2, -1.0, 1.0, [(0, 1)], [(0.0, 0.0, 0.0, 1.0)], [1.0])


@pytest.mark.parametrize("lam", [0.0, -1.0, math.inf])
def test_bad_lam(tiny, lam) -> None:
    rng = np.random.default_rng(0)
    for name in ("pg-rejection", "pgits", "pgda"):
        for impl in ("reference", "numba"):
            with pytest.raises(ValueError, match="'lam'"):
                sample(SPECS[name], impl, tiny, 5, rng, lam=lam)
    for mod in (continuous_reference, continuous_fast):
        with pytest.raises(ValueError, match="'lam'"):
            mod.run(tiny, 5, rng, None, "da", True, lam=lam)


@pytest.mark.parametrize(("param", "value"), [("m", 0), ("k", 0), ("m", -2), ("k", 1.5)])
def test_bad_degree(tiny, param, value) -> None:
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match=f"'{param}'"):
        sample(SPECS["pgda"], "numba", tiny, 5, rng, **{param: value})
    for mod in (continuous_reference, continuous_fast):
        with pytest.raises(ValueError, match=f"'{param}'"):
            mod.run(tiny, 5, rng, None, "da", False, **{param: value})


def test_bad_x0(tiny) -> None:
    with pytest.raises(ValueError, match="x0"):
        continuous_reference.gibbs_its(tiny, 5, np.random.default_rng(0), x0=[0.5, 0.5, 1.5])


@pytest.mark.parametrize("name", list(PARAMS))
@pytest.mark.parametrize("which", ["tiny", "spin"])
def test_reference_and_numba_are_identical(name, which, tiny, spin) -> None:
    target = tiny if which == "tiny" else spin
    params = dict(PARAMS[name])
    if which == "spin":  # 003 Sec. 4.2 settings on a 5x5 grid: lam = L^2, m = 3, k = 10
        params = {p: v for p, v in {"lam": spin.L**2, "m": 3, "k": 10}.items() if p in params}
    steps = 1500 if which == "tiny" else 200
    out = []
    for impl in ("reference", "numba"):
        rng = np.random.default_rng(77)
        out.append((sample(SPECS[name], impl, target, steps, rng, **params), rng))
    (a, ra), (b, rb) = out
    np.testing.assert_array_equal(a.values, b.values)
    assert a.evals == b.evals > 0
    assert a.extras.keys() == b.extras.keys()
    for key in a.extras:
        np.testing.assert_array_equal(a.extras[key], b.extras[key])
    assert ra.bit_generator.state == rb.bit_generator.state
    assert np.all((a.values >= target.a) & (a.values <= target.b))
    assert a.evals == int(a.extras["evals_per_step"].sum())
    if "accepted" in a.extras:  # the MH step must not be a formality nor reject everything
        assert 0.3 < a.extras["accepted"].mean() <= 1.0


def one_step_pvalue(target, starts, method, poisson, params, mh=True, n_steps=2) -> float:
    """Run n_steps from each exact draw and chi-square the end states against the quadrature
    joint over 4^3 boxes. Exact kernels keep pi, so the p-value is uniform."""
    rng = np.random.default_rng(11)
    ends = np.empty_like(starts)
    for r, x0 in enumerate(starts):
        chain = continuous_fast.run(target, n_steps, rng, x0, method, poisson, mh=mh, **params)
        ends[r] = chain.values[-1]
    n_bins = 4
    probs = target.bin_probabilities(n_bins)
    idx = np.minimum(((ends - target.a) / (target.b - target.a) * n_bins).astype(int), n_bins - 1)
    counts = np.zeros_like(probs)
    np.add.at(counts, tuple(idx.T), 1.0)
    expected = probs * len(starts)
    stat = float(np.sum((counts - expected) ** 2 / expected))
    return float(chi2.sf(stat, probs.size - 1))


@pytest.fixture(scope="module")
def exact_starts(tiny) -> np.ndarray:
    return tiny.exact_draws(20000, np.random.default_rng(5))


def test_exact_draws_match_quadrature(tiny, exact_starts) -> None:
    """The ground truth itself: rejection draws against the quadrature box probabilities."""
    probs = tiny.bin_probabilities(4)
    idx = np.minimum((exact_starts * 4).astype(int), 3)
    counts = np.zeros_like(probs)
    np.add.at(counts, tuple(idx.T), 1.0)
    expected = probs * len(exact_starts)
    assert chi2.sf(float(np.sum((counts - expected) ** 2 / expected)), 63) > 1e-3
    np.testing.assert_allclose(probs, tiny.bin_probabilities(4, 24), rtol=0, atol=1e-13)


@pytest.mark.parametrize("name", list(PARAMS))
def test_kernel_keeps_the_joint(name, tiny, exact_starts) -> None:
    method = {"rejection": "rejection", "its": "its", "da": "da"}[
        "rejection" if "rejection" in name else ("da" if name.endswith("da") else "its")
    ]
    p = one_step_pvalue(tiny, exact_starts, method, name.startswith("pg"), PARAMS[name])
    assert p > 1e-3, f"{name}: chi-square p = {p:.2e}"


def test_negative_control_pgda_without_mh(tiny, exact_starts) -> None:
    """PGDA at k = 1 without its MH step samples a linear density, not the conditional: the
    same test must reject it."""
    p = one_step_pvalue(tiny, exact_starts, "da", True, {"lam": 4.0, "m": 2, "k": 1}, mh=False)
    assert p < 1e-8, f"biased kernel not detected: p = {p:.2e}"


def test_chebyshev_matches_numpy() -> None:
    rng = np.random.default_rng(3)
    for deg in (1, 2, 3, 10, 25):
        t, table = cheb_plan(deg)
        assert np.allclose(np.sort(t), npcheb.chebpts1(deg + 1), rtol=0, atol=1e-15)
        fn = lambda s: np.exp(1.7 * s) * np.cos(3 * s) + 2.0  # noqa: E731
        c = cheb_coefficients(fn(t).tolist(), table.tolist())
        np.testing.assert_allclose(c, npcheb.chebinterpolate(fn, deg), rtol=0, atol=1e-12)
        s = rng.uniform(-1, 1, 50)
        np.testing.assert_allclose(
            [clenshaw(c, v) for v in s], npcheb.chebval(s, c), rtol=0, atol=1e-12
        )
        C = cheb_integral(c)
        np.testing.assert_allclose(
            npcheb.chebval(s, C), npcheb.chebval(s, npcheb.chebint(c, lbnd=-1)), atol=1e-12
        )


def test_lift_makes_interpolant_nonnegative() -> None:
    t, table = cheb_plan(3)
    c = cheb_coefficients(np.exp(12.0 * (t - 1.0)).tolist(), table.tolist())
    grid = np.linspace(-1, 1, 2001)
    assert npcheb.chebval(grid, c).min() < 0  # the plain interpolant dips below 0
    lift_nonnegative(c)
    assert npcheb.chebval(grid, c).min() >= 0


def test_interpolant_error_at_degrees_m_and_k(spin) -> None:
    """The PG energy of one variable of the spin grid, E(v) = sum s log(1 + L phi(v) / (lam M)),
    and exp of its degree-m interpolant: sup errors at 003's m = 3, k = 10, and geometric decay
    in the degree (Thm. 3)."""
    rng = np.random.default_rng(1)
    i, lam = 12, spin.L**2
    start, stop = spin.adj_indptr[i], spin.adj_indptr[i + 1]
    x = rng.random(spin.n_vars)
    s = rng.poisson(lam * spin.M[spin.adj_factors[start:stop]] / spin.L + 1.0)
    w = spin.coefs[spin.adj_factors[start:stop], 0]
    xo = x[spin.adj_other[start:stop]]
    M = spin.M[spin.adj_factors[start:stop]]

    def energy(t: np.ndarray) -> np.ndarray:
        v = 0.5 * (t + 1.0)  # [-1, 1] -> [0, 1]
        phi = w[None, :] * (v[:, None] * xo[None, :] + 1.0)
        return np.sum(s * np.log1p(spin.L * phi / (lam * M)), axis=1)

    grid = np.linspace(-1, 1, 4001)
    errs = []
    for m in (1, 2, 3, 5, 8):
        t, table = cheb_plan(m)
        c = cheb_coefficients(energy(t).tolist(), table.tolist())
        errs.append(np.abs(npcheb.chebval(grid, c) - energy(grid)).max())
    assert all(e2 < e1 for e1, e2 in itertools.pairwise(errs))
    assert errs[2] < 1e-3 and errs[-1] < 1e-8  # m = 3 and m = 8
    tm, table_m = cheb_plan(3)
    cE = cheb_coefficients(energy(tm).tolist(), table_m.tolist())
    top = energy(grid).max()
    target = np.exp(npcheb.chebval(grid, cE) - top)
    kerr = []
    for k in (2, 5, 10, 15):
        tk, table_k = cheb_plan(k)
        f = np.exp(npcheb.chebval(tk, cE) - top)
        c = cheb_coefficients(f.tolist(), table_k.tolist())
        kerr.append(np.abs(npcheb.chebval(grid, c) - target).max() / target.max())
    assert all(e2 < e1 for e1, e2 in itertools.pairwise(kerr))
    assert kerr[2] < 1e-6  # k = 10, relative to the peak of exp(E~)
