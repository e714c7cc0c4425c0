"""The variants of A* sampling and OS* (001_78ff986a3d316097.txt, Sec. 4, 6.4 and Fig. 3): several
draws per node (``extra_draws``), the bound partition reused across draws (``reuse``) and OS*
refining on only some rejections (``refine_prob``).

Each variant is exact (KS of the draws against the quadrature CDF and of the Gumbel maxima
against Gumbel(log Z)), bit-identical between the reference and Numba, moves the costs the way
the paper says, and leaves today's streams alone at its default. Negative controls: the same KS
tests at the same sample size reject a variant with a planted mistake.
"""

import heapq
import math

import numpy as np
import pytest
from scipy import stats

from harness.gates.independence import pair_independence_continuous
from harness.registry import build_registry
from harness.spec import sample
from harness.targets.box_density import clutter, peaky_exponential
from implementations.astar import fast, reference
from implementations.astar.audit import SearchLog, split
from implementations.shared.reference import poisson_count, trunc_gumbel_from_exponential

N = 1500
ALPHA = 1e-3

ASTAR_VARIANTS = [
    {"extra_draws": 1.0},
    {"extra_draws": 4.0},
    {"reuse": True},
    {"extra_draws": 1.0, "reuse": True},
]
OS_STAR_VARIANTS = [
    {"refine_prob": 0.3},
    {"reuse": True},
    {"strategy": 2, "refine_prob": 0.3, "reuse": True},
    {"strategy": 3},
    {"strategy": 4, "refine_prob": 0.3, "reuse": True},
]
VARIANTS = [("astar", p) for p in ASTAR_VARIANTS] + [("os_star", p) for p in OS_STAR_VARIANTS]
VARIANT_IDS = [f"{name}-" + "-".join(f"{k}={v}" for k, v in p.items()) for name, p in VARIANTS]


@pytest.fixture(scope="module")
def targets():
    return {"peaky": peaky_exponential(10.0), "clutter": clutter(1), "clutter-D2": clutter(2)}


def _gumbel_cdf(log_z):
    return lambda g: np.exp(-np.exp(-(np.asarray(g) - log_z)))


def _p_values(target, values, gumbels):
    """KS p-values of the draws and of their Gumbel maxima."""
    return (
        stats.kstest(values, target.cdf).pvalue,
        stats.kstest(gumbels, _gumbel_cdf(target.log_normaliser)).pvalue,
    )


# --- exactness -----------------------------------------------------------------------------


@pytest.mark.parametrize("which", ["peaky", "clutter"])
@pytest.mark.parametrize(("name", "params"), VARIANTS, ids=VARIANT_IDS)
def test_every_variant_is_exact(targets, which, name, params):
    # The Numba build, which equals the reference draw for draw (the test below): the
    # reference's Python search takes about a second a case.
    target = targets[which]
    draws = getattr(fast, name)(target, N, np.random.default_rng(11), **params)
    p_values = _p_values(target, draws.values, draws.extras["gumbel_max"])
    assert min(p_values) > ALPHA, p_values
    assert draws.evals == draws.extras["draw_evals"].sum() > 0


@pytest.mark.parametrize(("name", "params"), [v for v in VARIANTS if v[1].get("reuse")])
def test_reused_partitions_keep_consecutive_draws_independent(targets, name, params):
    # The partition carries each draw's randomness into the next search; only the cost may
    # depend on it, not the draw (pair independence of consecutive draws, on CDF bins).
    target = targets["clutter"]
    draws = getattr(fast, name)(target, N, np.random.default_rng(12), **params)
    assert pair_independence_continuous(draws.values, target.cdf, ALPHA).passed


# --- reference and Numba -------------------------------------------------------------------


@pytest.mark.parametrize("which", ["peaky", "clutter", "clutter-D2"])
@pytest.mark.parametrize(("name", "params"), VARIANTS, ids=VARIANT_IDS)
def test_reference_and_numba_agree_exactly(targets, which, name, params):
    target = targets[which]
    n = 40 if target.d == 2 else 200
    rng_ref, rng_fast = np.random.default_rng(21), np.random.default_rng(21)
    ref = getattr(reference, name)(target, n, rng_ref, **params)
    out = getattr(fast, name)(target, n, rng_fast, **params)
    np.testing.assert_array_equal(ref.values, out.values)
    assert ref.evals == out.evals
    assert set(ref.extras) == set(out.extras) == {"gumbel_max", "draw_evals", "bound_evals"}
    for key in ref.extras:
        np.testing.assert_array_equal(ref.extras[key], out.extras[key])
    assert rng_ref.bit_generator.state == rng_fast.bit_generator.state


# --- defaults: today's streams --------------------------------------------------------------

#: Calls of the code before the variants existed (seed 7, n = 200): total likelihood and bound
#: evaluations, the first three draws and Gumbel maxima, and the sum of the draws.
BEFORE_VARIANTS = {
    ("peaky", "astar", 1): (
        640,
        1090,
        [0.18144585087690915, 0.17460584026772474, 0.09510637412178932],
        [-1.996321526480909, 0.012115347970864665, -1.199681480498529],
        26.140603365359347,
    ),
    ("clutter", "astar", 1): (
        2392,
        4076,
        [2.5316686790655307, 2.6060559481549563, 2.5871998474325206],
        [-80.73200855800366, -81.5863592360884, -81.9915714322163],
        102.33188672919808,
    ),
    ("peaky", "os_star", 1): (
        769,
        1338,
        [0.004092584617785658, 0.04464389781339706, 0.15724038633774784],
        [-1.684024374634648, -3.0376444195500576, -2.4444515735736085],
        20.47707221265855,
    ),
    ("clutter", "os_star", 1): (
        2775,
        5350,
        [2.7476165548474087, 3.1090826878635784, 3.040963738658366],
        [-79.25253613870895, -82.94484137684701, -83.17845821729543],
        200.0653688120055,
    ),
    ("clutter", "os_star", 2): (
        3025,
        5850,
        [2.627618611230167, 3.2095073628900597, 2.035957081997075],
        [-80.03984750408877, -82.59380821642466, -81.25976302899237],
        233.64723798187606,
    ),
}


@pytest.mark.parametrize("module", [reference, fast], ids=["reference", "numba"])
@pytest.mark.parametrize("key", list(BEFORE_VARIANTS), ids=lambda k: f"{k[0]}-{k[1]}-{k[2]}")
def test_defaults_reproduce_the_calls_from_before_the_variants(targets, module, key):
    which, name, strategy = key
    evals, bound_evals, first, gumbels, total = BEFORE_VARIANTS[key]
    extra = {"strategy": strategy} if name == "os_star" else {}
    draws = getattr(module, name)(targets[which], 200, np.random.default_rng(7), **extra)
    assert draws.evals == evals and draws.extras["bound_evals"].sum() == bound_evals
    # Counts pin the stream; the values to a few ulps, so a change in a target's arithmetic
    # elsewhere does not read as a change of stream.
    np.testing.assert_allclose(draws.values[:3], first, rtol=1e-12)
    np.testing.assert_allclose(draws.extras["gumbel_max"][:3], gumbels, rtol=1e-12)
    np.testing.assert_allclose(draws.values.sum(), total, rtol=1e-12)


@pytest.mark.parametrize("module", [reference, fast], ids=["reference", "numba"])
def test_params_off_are_the_defaults(targets, module):
    target = targets["clutter"]
    for name, off in (
        ("astar", {"extra_draws": 0.0, "reuse": False}),
        ("os_star", {"refine_prob": 1.0, "reuse": False}),
    ):
        a_rng, b_rng = np.random.default_rng(8), np.random.default_rng(8)
        a = getattr(module, name)(target, 50, a_rng)
        b = getattr(module, name)(target, 50, b_rng, **off)
        np.testing.assert_array_equal(a.values, b.values)
        for key in a.extras:
            np.testing.assert_array_equal(a.extras[key], b.extras[key])
        assert a_rng.bit_generator.state == b_rng.bit_generator.state


# --- an independent A* with extra draws, and the planted mistake ----------------------------


def _flat_search(target, rng, extra_draws=0.0, below="last"):
    """A* (001, Alg. 2) with 1 + Poisson(extra_draws) draws per expansion, written without the
    reference's partition tree. ``below="first"`` plants the mistake: children truncated below
    the popped node's own Gumbel instead of the last one drawn in its box, so the points between
    the two are drawn twice."""
    lik = bnd = 0
    lower, best = -math.inf, None
    lo, hi = target.lo.copy(), target.hi.copy()
    log_nu = target.log_mass(lo, hi)
    g = log_nu - math.log(rng.standard_exponential())
    x = target.sample_in(lo, hi, rng.random(target.d))
    m = target.M(lo, hi)
    bnd += 1
    queue, count = [(-(g + m), 0, g, m, x, lo, hi, log_nu)], 1
    while queue and lower < -queue[0][0]:
        _, _, g, m, x, lo, hi, log_nu = heapq.heappop(queue)
        first = g
        lb = g + target.o(x)
        lik += 1
        if lower < lb:
            lower, best = lb, x
        if extra_draws > 0.0:
            if lower < g + m:
                for _ in range(poisson_count(extra_draws, rng)):
                    if lower >= g + m:
                        break
                    g = trunc_gumbel_from_exponential(log_nu, g, rng.standard_exponential())
                    x_k = target.sample_in(lo, hi, rng.random(target.d))
                    lb = g + target.o(x_k)
                    lik += 1
                    if lower < lb:
                        lower, best = lb, x_k
            if lower >= g + m:
                continue
        upper = g if below == "last" else first
        for c_lo, c_hi in split(lo, hi, x):
            log_c = target.log_mass(c_lo, c_hi)
            if log_c == -math.inf:
                continue
            g_c = trunc_gumbel_from_exponential(log_c, upper, rng.standard_exponential())
            x_c = target.sample_in(c_lo, c_hi, rng.random(target.d))
            if lower < g_c + m:
                m_c = target.M(c_lo, c_hi)
                bnd += 1
                if lower < g_c + m_c:
                    heapq.heappush(queue, (-(g_c + m_c), count, g_c, m_c, x_c, c_lo, c_hi, log_c))
                    count += 1
    return best, lower, lik, bnd


def _flat(target, n, rng, **kwargs):
    out = [_flat_search(target, rng, **kwargs) for _ in range(n)]
    return (
        np.array([o[0][0] for o in out]),
        np.array([o[1] for o in out]),
        np.array([o[2] for o in out]),
        np.array([o[3] for o in out]),
    )


@pytest.mark.parametrize("extra_draws", [0.0, 1.0, 4.0])
def test_an_independent_flat_astar_consumes_the_same_draws(targets, extra_draws):
    # extra_draws = 0 is Alg. 2 as it was before the variants; the reference's tree must
    # reproduce a plain queue of boxes draw for draw.
    for target in (targets["peaky"], targets["clutter"]):
        values, gumbels, liks, bnds = _flat(
            target, 100, np.random.default_rng(3), extra_draws=extra_draws
        )
        ref = reference.astar(target, 100, np.random.default_rng(3), extra_draws=extra_draws)
        np.testing.assert_array_equal(values, ref.values)
        np.testing.assert_array_equal(gumbels, ref.extras["gumbel_max"])
        np.testing.assert_array_equal(liks, ref.extras["draw_evals"])
        np.testing.assert_array_equal(bnds, ref.extras["bound_evals"])


@pytest.mark.parametrize("which", ["peaky", "clutter"])
def test_children_truncated_below_the_first_gumbel_fail_the_same_ks(targets, which):
    # Negative control for test_every_variant_is_exact (extra_draws = 1, same N): the Gumbel
    # maxima are too large (p near 1e-19 on peaky and 1e-21 on clutter here). The draws
    # themselves move much less (their KS alone passes at this size).
    target = targets[which]
    values, gumbels, _, _ = _flat(
        target, N, np.random.default_rng(11), extra_draws=1.0, below="first"
    )
    assert min(_p_values(target, values, gumbels)) < 1e-6


@pytest.mark.parametrize("which", ["peaky", "clutter"])
def test_an_heir_picked_by_a_fair_coin_fails_the_same_ks(targets, which, monkeypatch):
    # Negative control for reuse: a box split in an earlier draw must hand its maximum to a
    # child with probability nu(child) / nu(box); a fair coin biases draws and maxima.
    target = targets[which]
    monkeypatch.setattr(reference, "share", lambda log_a, log_b: 0.5)
    draws = reference.astar(target, N, np.random.default_rng(11), reuse=True)
    assert max(_p_values(target, draws.values, draws.extras["gumbel_max"])) < 1e-6


# --- costs (001, Sec. 4 and Fig. 3) ---------------------------------------------------------


def _costs(draws):
    return draws.extras["draw_evals"].mean(), draws.extras["bound_evals"].mean()


def test_extra_draws_trade_likelihood_for_bound_evaluations(targets):
    target = targets["clutter"]
    costs = [
        _costs(fast.astar(target, 1000, np.random.default_rng(31), extra_draws=extra))
        for extra in (0.0, 1.0, 4.0)
    ]
    liks, bnds = zip(*costs, strict=True)
    # Measured: about 11.3, 19.3, 37 likelihood and 19.3, 16.9, 13.7 bound evaluations.
    assert liks[0] < liks[1] < liks[2] and liks[2] > 2.5 * liks[0]
    assert bnds[0] > bnds[1] > bnds[2] and bnds[2] < 0.8 * bnds[0]


def test_reuse_makes_bound_evaluations_rare(targets):
    target = targets["clutter"]
    fresh = fast.astar(target, 500, np.random.default_rng(32))
    kept = fast.astar(target, 500, np.random.default_rng(32), reuse=True)
    # The first search is the same either way (the partition starts as the whole box).
    assert fresh.values[0] == kept.values[0]
    assert fresh.extras["bound_evals"][0] == kept.extras["bound_evals"][0]
    (lik_fresh, bnd_fresh), (lik_kept, bnd_kept) = _costs(fresh), _costs(kept)
    assert bnd_kept < 0.25 * bnd_fresh and lik_kept < lik_fresh
    # The partition keeps refining: the later draws need fewer bounds than the earlier ones.
    assert kept.extras["bound_evals"][250:].mean() < kept.extras["bound_evals"][:50].mean()


def test_os_star_refine_prob_and_reuse_move_its_costs(targets):
    target = targets["clutter"]
    every = _costs(fast.os_star(target, 1000, np.random.default_rng(33)))
    some = _costs(fast.os_star(target, 1000, np.random.default_rng(33), refine_prob=0.3))
    kept = _costs(fast.os_star(target, 1000, np.random.default_rng(33), reuse=True))
    assert some[0] > every[0] and some[1] < every[1]
    assert kept[0] < every[0] and kept[1] < 0.25 * every[1]


@pytest.mark.parametrize(("strategy", "split_lo"), [(2, 0.5), (3, 0.0), (4, 0.0)])
def test_os_star_strategy_2_splits_by_proposal_mass_and_3_4_by_envelope_mass(
    targets, strategy, split_lo
):
    # Two pieces of peaky (a = 10): [0, 0.5] holds less proposal mass (0.39 of 1) but nearly
    # all the envelope nu(B) exp(M) (0.39 against 0.61 x 1.5^-10 = 0.011); the first rejection
    # splits [0.5, inf) under strategy 2 and [0, 0.5] under 3 and 4: at its median (2, 3) or
    # at a point drawn in it (4).
    target = targets["peaky"]
    pieces = [
        (lo, hi, target.log_mass(lo, hi), target.M(lo, hi))
        for lo, hi in ((np.array([0.0]), np.array([0.5])), (np.array([0.5]), np.array([math.inf])))
    ]
    log = SearchLog(target, 1, np.random.default_rng(0), False, True)
    reference.os_star_one(target, np.random.default_rng(2), strategy, 1.0, pieces, log)
    (_, lo_a, hi_a, _), (_, lo_b, hi_b, _) = log.boxes[:2]  # the first split's two children
    assert lo_a == split_lo and hi_a == lo_b
    assert hi_b == (math.inf if strategy == 2 else 0.5)
    halves = [
        target.log_mass(np.array([a]), np.array([b])) for a, b in ((lo_a, hi_a), (lo_b, hi_b))
    ]
    assert (halves[0] == pytest.approx(halves[1])) == (strategy != 4)


def test_a_call_keeps_its_partition_to_itself(targets):
    # No state outlives a call: the same seed gives the same run after any other run, and
    # n/2 + n/2 draws restart the partition (different costs from n draws).
    target = targets["peaky"]
    for module in (reference, fast):
        first = module.astar(target, 60, np.random.default_rng(34), reuse=True)
        module.astar(target, 30, np.random.default_rng(35), reuse=True)
        again = module.astar(target, 60, np.random.default_rng(34), reuse=True)
        np.testing.assert_array_equal(first.values, again.values)
        np.testing.assert_array_equal(first.extras["bound_evals"], again.extras["bound_evals"])
        rng = np.random.default_rng(34)
        halves = [module.astar(target, 30, rng, reuse=True) for _ in range(2)]
        assert (
            sum(h.extras["bound_evals"].sum() for h in halves) > first.extras["bound_evals"].sum()
        )


# --- parameters -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("algorithm", "params", "name"),
    [
        ("astar", {"extra_draws": -0.5}, "extra_draws"),
        ("astar", {"extra_draws": math.inf}, "extra_draws"),
        ("astar", {"extra_draws": math.nan}, "extra_draws"),
        ("astar", {"reuse": 1}, "reuse"),
        ("os-star", {"refine_prob": 0.0}, "refine_prob"),
        ("os-star", {"refine_prob": 1.5}, "refine_prob"),
        ("os-star", {"reuse": "yes"}, "reuse"),
        ("os-star", {"strategy": 5}, "strategy"),
        ("os-star", {"strategy": 0}, "strategy"),
    ],
)
def test_bad_variant_parameters_raise_before_any_draw(targets, algorithm, params, name):
    spec = build_registry().get(algorithm)
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    with pytest.raises(ValueError, match=name):
        sample(spec, "reference", targets["peaky"], 5, rng, **params)
    assert rng.bit_generator.state == state


def test_verify_runs_a_non_default_setting_of_every_variant_parameter():
    registry = build_registry()
    for algorithm, names in (
        ("astar", ("extra_draws", "reuse")),
        ("os-star", ("strategy", "refine_prob", "reuse")),
    ):
        spec = registry.get(algorithm)
        defaults = {p.name: p.default for p in spec.params}
        for name in names:
            assert any(
                name in check.params and check.params[name] != defaults[name]
                for check in spec.checks
            ), (algorithm, name)
