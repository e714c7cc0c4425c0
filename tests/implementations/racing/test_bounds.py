"""Racing bounds: the doubling schedule, B_Normal and B_EBS (000_26bed7cc1ef3ab92.txt, Sec. 3.3).

B_Normal is checked three ways: against the Monte Carlo sanity table of notes-racing-appendix.md
(section A), against a fresh Monte Carlo of the Gaussian walk built by the notes' backward recipe
(independent of the AR(1) form the quadrature uses), and against real finite populations drawn
without replacement, which is what Eq. 5 is about.
"""

import math
import time

import numba
import numpy as np
import pytest
from scipy.stats import binom, norm

from implementations.racing import bounds
from implementations.racing.bounds import (
    KAPPA,
    b_normal,
    b_normal_table,
    doubling_schedule,
    ebs_bound,
)

DELTA = 0.05
M1 = 50


def binomial_interval(trials, p, level=0.999):
    """Range of crossing frequencies a correct crossing probability p yields at this level."""
    lo, hi = binom.interval(level, trials, p)
    return lo / trials, hi / trials


def unit_variances(N, m1):
    """V_t = (1/T)(1 - (T-1)/(N-1)) for every stage t = 1..t* (000, Remark 5); V_{t*} = 0."""
    T = doubling_schedule(N, m1).astype(float)
    return (1.0 / T) * (1.0 - (T - 1.0) / (N - 1.0))


def gaussian_walk_crossing(B, N, m1, paths, seed, chunk=250_000):
    """P(exists t < t*: Z_t > B) by the notes' recipe: X_{t*} = 0, X_t = X_{t+1} + sqrt(V_t -
    V_{t+1}) xi_t, Z_t = X_t / sqrt(V_t)."""
    V = unit_variances(N, m1)
    steps = np.sqrt(V[:-1] - V[1:])
    scale = np.sqrt(V[:-1])
    rng = np.random.default_rng(seed)
    hits = 0
    for start in range(0, paths, chunk):
        xi = rng.standard_normal((min(chunk, paths - start), steps.size))
        X = np.cumsum((xi * steps)[:, ::-1], axis=1)[:, ::-1]
        hits += int(np.count_nonzero((X / scale > B).any(axis=1)))
    return hits / paths


def finite_population_crossing(x, m1, B, draws, seed, chunk=5000):
    """Crossing frequencies of the standardized running means of x drawn without replacement.

    x must have mean 0 and population variance 1. Returns (any look t < t*, first look only).
    """
    N = x.size
    T = doubling_schedule(N, m1)[:-1]
    scale = np.sqrt(unit_variances(N, m1)[:-1])
    rng = np.random.default_rng(seed)
    hits = first = 0
    for start in range(0, draws, chunk):
        rows = min(chunk, draws - start)
        perm = rng.permuted(np.tile(x, (rows, 1)), axis=1)[:, : T[-1]]
        Z = np.cumsum(perm, axis=1)[:, T - 1] / T / scale
        hits += int(np.count_nonzero((Z > B).any(axis=1)))
        first += int(np.count_nonzero(Z[:, 0] > B))
    return hits / draws, first / draws


# ----------------------------------------------------------------------------- schedule


@pytest.mark.parametrize(
    ("N", "m1", "expected"),
    [
        (100, 25, [25, 50, 100]),
        (10**5, 50, [50 * 2**k for k in range(11)] + [10**5]),
        (6400, 50, [50 * 2**k for k in range(8)]),  # N / m1 a power of two: no capped stage
        (7, 7, [7]),
        (7, 9, [7]),
        (1, 1, [1]),
    ],
)
def test_schedule_examples(N, m1, expected):
    got = doubling_schedule(N, m1)
    assert got.dtype == np.int64
    assert got.tolist() == expected
    if m1 < N:
        assert got.size == math.ceil(math.log2(N / m1)) + 1  # t* of Sec. 3.3


def test_schedule_stays_exact_for_large_integers():
    N = 2**60 + 1
    got = doubling_schedule(N, 1)
    assert got.size == 62 and got[-2] == 2**60 and got[-1] == N


# ----------------------------------------------------------------------------- B_Normal

# notes-racing-appendix.md, section A: the notes' own 2e6-draw Monte Carlo, two decimals.
SANITY_TABLE = [
    (10**4, 0.1, 2.10),
    (10**4, 0.05, 2.40),
    (10**4, 0.01, 2.97),
    (10**4, 0.001, 3.64),
    (10**5, 0.05, 2.51),
    (10**5, 0.001, 3.72),
]


@pytest.mark.parametrize(("N", "delta", "expected"), SANITY_TABLE)
def test_b_normal_matches_the_sanity_table(N, delta, expected):
    assert b_normal(delta, N, M1) == pytest.approx(expected, abs=0.02)


@pytest.mark.parametrize("N", [10**4, 10**5, 10**6])
def test_b_normal_grows_as_delta_shrinks_and_exceeds_one_look(N):
    deltas = [0.1, 0.05, 0.01, 0.001, 1e-4, 1e-8]
    B = [b_normal(d, N, M1) for d in deltas]
    assert np.all(np.diff(B) > 0)
    for d, b in zip(deltas, B, strict=True):
        looks = doubling_schedule(N, M1).size - 1
        # More looks need a larger B, but never more than the union bound over the looks.
        assert norm.isf(d) < b <= norm.isf(d / looks) + 1e-9


def test_b_normal_grows_with_the_number_of_looks():
    B = [b_normal(DELTA, N, M1) for N in (10**4, 10**5, 10**6, 10**7)]
    assert np.all(np.diff(B) > 0)


@pytest.mark.parametrize("delta", [0.1, 0.05, 1e-3, 1e-5, 1e-8])
@pytest.mark.parametrize(("N", "m1"), [(10**4, 50), (10**7, 2), (2000, 1)])
def test_b_normal_solves_the_equation_with_converged_quadrature(delta, N, m1):
    B = b_normal(delta, N, m1)
    ratios = bounds._look_ratios(N, m1)
    coarse = bounds._crossing_probability(B, ratios)
    fine = bounds._crossing_probability(B, ratios, nodes_per_unit=16.0)
    assert coarse == pytest.approx(fine, rel=1e-11)
    # xtol 1e-10 in B moves E(B) by ~B * 1e-10 relative.
    assert coarse == pytest.approx(delta, rel=1e-8)


def test_b_normal_degenerate_schedules():
    # t* = 1: the only stage is T = N, where G_Normal (Eq. 9) is 0 whatever B is.
    assert b_normal(DELTA, 100, 100) == 0.0
    # t* = 2: one look, so B is the plain normal quantile.
    assert b_normal(DELTA, 100, 99) == pytest.approx(norm.isf(DELTA), abs=1e-12)
    assert b_normal(DELTA, 100, 50) == pytest.approx(norm.isf(DELTA), abs=1e-12)


def test_b_normal_extreme_deltas_stay_finite_and_ordered():
    tiny = [1e-100, 1e-249, 1e-251, 1e-300, 5e-324]
    B = [b_normal(d, 10**5, M1) for d in tiny]
    assert all(np.isfinite(B)) and np.all(np.diff(B) > 0)
    near_one = b_normal(1.0 - 1e-12, 10**5, M1)
    assert norm.isf(1.0 - 1e-12) < near_one < 0.0


def test_b_normal_is_cached_and_the_cache_clears():
    b_normal.cache_clear()
    b_normal(0.02, 12345, 40)
    b_normal(0.02, np.int64(12345), np.int32(40))
    info = b_normal.cache_info()
    assert (info.hits, info.misses) == (1, 1)


def test_b_normal_uncached_runtime():
    b_normal.cache_clear()
    bounds._gauss_legendre.cache_clear()
    start = time.perf_counter()
    b_normal(0.001 / 9, 10**5, M1)
    assert time.perf_counter() - start < 1.0


# ----------------------------------------------------------------------------- Monte Carlo

WALK_PATHS = 10**6


@pytest.mark.parametrize("delta", [0.05, 0.001])
def test_b_normal_agrees_with_a_gaussian_walk_monte_carlo(delta):
    freq = gaussian_walk_crossing(b_normal(delta, 10**4, M1), 10**4, M1, WALK_PATHS, seed=20160)
    lo, hi = binomial_interval(WALK_PATHS, delta)
    assert lo <= freq <= hi, freq


def test_negative_control_the_single_look_quantile_is_too_small():
    # Same walk, same seed: the one-look quantile ignores the 7 further looks.
    freq = gaussian_walk_crossing(norm.isf(DELTA), 10**4, M1, WALK_PATHS, seed=20160)
    assert freq > binomial_interval(WALK_PATHS, DELTA)[1]
    assert freq > 1.5 * DELTA, freq


POP_N = 2000
POP_DRAWS = 40_000


def standardized_population(kind, seed=7):
    rng = np.random.default_rng(seed)
    x = {
        "normal": lambda: rng.standard_normal(POP_N),
        "uniform": lambda: rng.uniform(size=POP_N),
        "lognormal": lambda: rng.lognormal(0.0, 0.5, POP_N),
    }[kind]()
    return (x - x.mean()) / x.std()  # mean 0, population variance 1 (ddof = 0)


@pytest.mark.parametrize("kind", ["normal", "uniform"])
def test_finite_population_crossing_matches_delta(kind):
    B = b_normal(DELTA, POP_N, M1)
    freq, _ = finite_population_crossing(standardized_population(kind), M1, B, POP_DRAWS, 11)
    lo, hi = binomial_interval(POP_DRAWS, DELTA)
    assert lo <= freq <= hi, freq


def test_finite_population_crossing_skewed_population():
    # Lognormal(0, 0.5) has skewness ~1.7; the mean of the first 50 draws keeps skewness ~0.24,
    # so its upper tail is heavier than Gaussian and the first look alone crosses ~1.5x as often
    # as norm.sf(B) says. This is the CLT limit of Assumption 6 (T >> 1), not an error in B:
    # 4e5 draws give 0.056 overall (delta = 0.05). We allow up to 1.25 delta and nothing below.
    B = b_normal(DELTA, POP_N, M1)
    x = standardized_population("lognormal")
    freq, first = finite_population_crossing(x, M1, B, POP_DRAWS, 11)
    assert (
        binomial_interval(POP_DRAWS, DELTA)[0]
        <= freq
        <= binomial_interval(POP_DRAWS, 1.25 * DELTA)[1]
    ), freq
    assert first > binomial_interval(POP_DRAWS, norm.sf(B))[1]  # the skew shows at look 1


# ----------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("args", "name"),
    [
        ((0.0, 100, 5), "delta"),
        ((1.0, 100, 5), "delta"),
        ((math.nan, 100, 5), "delta"),
        ((0, 100, 5), "delta"),
        (("0.1", 100, 5), "delta"),
        ((0.1, 1, 1), "N"),
        ((0.1, 100.0, 5), "N"),
        ((0.1, True, 1), "N"),
        ((0.1, 100, 0), "m1"),
        ((0.1, 100, 101), "m1"),
        ((0.1, 100, True), "m1"),
    ],
)
def test_bad_input_names_the_parameter_value_and_range(args, name):
    with pytest.raises(ValueError, match=rf"^{name} must be .* got ") as err:
        b_normal(*args)
    assert repr(args[["delta", "N", "m1"].index(name)]) in str(err.value)


def test_bad_schedule_input():
    with pytest.raises(ValueError, match=r"^N must be"):
        doubling_schedule(0, 5)
    with pytest.raises(ValueError, match=r"^m1 must be"):
        doubling_schedule(100, False)


def test_b_normal_table_rows():
    rows = b_normal_table([0.1, 0.01], [(10**4, 50), (100, 100)])
    assert [(r["N"], r["m1"], r["looks"], r["delta"]) for r in rows] == [
        (10**4, 50, 8, 0.1),
        (10**4, 50, 8, 0.01),
        (100, 100, 0, 0.1),
        (100, 100, 0, 0.01),
    ]
    assert rows[0]["B"] == b_normal(0.1, 10**4, 50) and rows[2]["B"] == 0.0


# ----------------------------------------------------------------------------- B_EBS


def test_ebs_bound_by_hand():
    # Eq. 6 with n <= N/2: rho = 1 - (n-1)/N.
    rho = 1 - 99 / 10**4
    log_term = math.log(5.0 / 0.05)
    expected = 1.5 * np.sqrt(2 * rho * log_term / 100) + (7 / 3 + 3 / np.sqrt(2)) * 2.0 * (
        log_term / 100
    )
    assert ebs_bound(0.05, 100, 1.5, 2.0, 10**4) == pytest.approx(expected, rel=1e-14)
    # n > N/2: rho = (1 - n/N)(1 + 1/n); at n = N only the range term is left.
    assert ebs_bound(0.05, 10**4, 1.5, 2.0, 10**4) == KAPPA * 2.0 * log_term / 10**4
    rho_hi = (1 - 6000 / 10**4) * (1 + 1 / 6000)
    assert ebs_bound(0.05, 6000, 1.0, 0.0, 10**4) == pytest.approx(
        np.sqrt(2 * rho_hi * log_term / 6000), rel=1e-14
    )


def test_ebs_bound_shrinks_with_n_and_grows_as_delta_shrinks():
    N = 10**4
    values = [ebs_bound(0.01, n, 1.0, 3.0, N) for n in doubling_schedule(N, 2)]
    assert np.all(np.diff(values) < 0)
    assert ebs_bound(0.001, 100, 1.0, 3.0, N) > ebs_bound(0.01, 100, 1.0, 3.0, N)


def test_ebs_bound_compiles_with_numba_bit_for_bit():
    compiled = numba.njit(ebs_bound)
    rng = np.random.default_rng(3)
    for N in (2, 3, 101, 10**5):
        for n in sorted({1, N // 2, N // 2 + 1, N, *rng.integers(1, N + 1, 5).tolist()}):
            delta, sigma, C = rng.uniform(1e-6, 1.0), rng.exponential(), rng.exponential()
            assert compiled(delta, n, sigma, C, N) == ebs_bound(delta, n, sigma, C, N)
