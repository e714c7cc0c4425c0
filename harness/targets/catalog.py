"""The standard verification problems, by target kind.

Each problem builds its target deterministically (fixed construction seed), so a verification run
is a pure function of its own seed. ``quick`` runs in CI; ``full`` adds larger problems.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from harness.spec import LEVELS, Param
from harness.targets.continuous import TruncatedGumbelTarget
from harness.targets.discrete import (
    DiscreteFactorTarget,
    default_pmf,
    ragged_rewards,
    synthetic_rewards,
)
from harness.targets.likelihood_terms import KIND as LIKELIHOOD
from harness.targets.likelihood_terms import logistic_candidates, studentt_candidates
from harness.targets.location_model import model_target, studentt_location_model
from harness.targets.posterior import studentt_posterior

#: The discrete problem whose log weights are sums of many terms (see PROBLEMS).
LONG_SUM = "cv-studentt-D10-N40000"


@dataclass(frozen=True)
class Problem:
    """A named target; ``draws`` overrides the run size of each level (draws, or chain steps)
    where the standard size cannot resolve what the problem is there to show."""

    name: str
    kind: str
    build: Callable[[], Any]
    levels: tuple[str, ...] = LEVELS
    draws: Mapping[str, int] | None = None


def _synthetic(D: int, N: int, distribution: str, sigma: float, seed: int) -> Callable[[], Any]:
    def build() -> Any:
        return synthetic_rewards(
            D,
            N,
            distribution,
            sigma,
            np.random.default_rng(seed),
            name=f"synthetic-{distribution}-D{D}-N{N}",
        )

    return build


def _with_f0(D: int, N: int, seed: int) -> Any:
    """The synthetic family with a prior term: log f_0 ~ N(0, 1), the size of one factor's
    spread, and the factors shifted so the target is still :func:`default_pmf` (a sampler that
    drops f_0 draws from pmf / f_0 instead)."""
    base = synthetic_rewards(D, N, "normal", 1.0, np.random.default_rng(seed))
    log_f0 = np.random.default_rng(seed + 1000).standard_normal(D)
    factors = base.log_factors - (log_f0 / N)[:, None]
    return DiscreteFactorTarget(factors, log_f0, name=f"synthetic-f0-D{D}-N{N}")


#: A log weight this far below the rest underflows exp() to exactly 0 in double precision.
UNDERFLOW = -800.0


def _ties_and_zeros(N: int, seed: int) -> Any:
    """Twelve states: five distinct log weights, each held by a pair of states with identical
    rows (exact ties of log p~), plus two states whose pmf underflows to exactly 0 and whose
    rows put them far behind (a draw of one is always an error)."""
    rng = np.random.default_rng(seed)
    distinct = synthetic_rewards(5, N, "normal", 1.0, rng).log_factors
    rows = np.vstack([distinct, distinct[::-1], np.full((2, N), UNDERFLOW / N)])
    order = rng.permutation(rows.shape[0])
    return DiscreteFactorTarget(rows[order], None, name=f"ties-zeros-D12-N{N}")


def _long_race(D: int, N: int, sigma: float, seed: int, name: str = "") -> Any:
    """Many arms with small gaps: log p falls by only 1.5 over D states, so the Gumbel-perturbed
    leaders are close and races run through much of the data before they stop."""
    return synthetic_rewards(
        D,
        N,
        "normal",
        sigma,
        np.random.default_rng(seed),
        pmf=default_pmf(D, spread=1.5),
        name=name or f"race-long-D{D}-N{N}",
    )


def _control_variates(N: int, D: int, nu: float, seed: int) -> Callable[[], Any]:
    def build() -> Any:
        model = studentt_location_model(N, D, nu, np.random.default_rng(seed))
        return model_target(model, control_variates=True)

    return build


def _factor_graph(n: int, D: int, seed: int) -> Callable[[], Any]:
    from harness.targets.factor_graph import random_factor_graph

    return lambda: random_factor_graph(n, D, np.random.default_rng(seed))


def _tied_factor_graph(n: int, D: int, seed: int) -> Any:
    """A tiny complete graph with stronger factors than :func:`_factor_graph` (M up to 1.5)
    whose table entries take only the values 0, M/2 and M: many states tie."""
    from harness.targets.factor_graph import FactorGraphTarget

    rng = np.random.default_rng(seed)
    scopes = np.array([(i, j) for i in range(n) for j in range(i + 1, n)])
    M = 1.5 * (0.4 + 0.6 * rng.random(len(scopes)))
    levels = rng.integers(0, 3, size=(len(scopes), D, D)) / 2.0
    return FactorGraphTarget(n, D, scopes, levels * M[:, None, None], M, name=f"ties-n{n}-D{D}")


def _potts(side: int, beta: float, D: int) -> Any:
    from harness.targets.factor_graph import potts_grid

    return potts_grid(side, beta, D)


def _continuous(which: str) -> Any:
    from harness.targets.continuous_factor_graph import continuous_spin_grid, tiny_continuous_graph

    return tiny_continuous_graph() if which == "tiny" else continuous_spin_grid(4)


def _box(which: str, size: float) -> Any:
    from harness.targets.box_density import clutter, peaky_exponential
    from harness.targets.pm_examples import bimodal_mixture

    if which == "mixture":
        return bimodal_mixture()
    return peaky_exponential(size) if which == "peaky" else clutter(int(size))


def _glm(model: str, N: int, P: int, tuning: str, seed: int, classes: int = 2) -> Any:
    from harness.targets import glm_data
    from harness.targets.glm import from_data

    if model == "logistic":
        data = glm_data.synthetic_logistic(N, P, seed)
    elif model == "softmax":
        data = glm_data.synthetic_softmax(N, classes, P, seed)
    else:
        data = glm_data.synthetic_robust(N, P, seed=seed)
    target = from_data(data, tuning)
    return target


def _clutter(D: int, quick: int, full: int) -> Problem:
    """The clutter posterior of 001 Sec. 6.1 in D dimensions, with its draws at each level."""
    return Problem(
        f"clutter-D{D}",
        "box-density",
        lambda: _box("clutter", D),
        draws={"quick": quick, "full": full},
    )


def _trunc(phi: float, b: float) -> Callable[[], Any]:
    return lambda: TruncatedGumbelTarget(phi, b)


PROBLEMS: tuple[Problem, ...] = (
    Problem("synthetic-normal-D10-N200", "discrete", _synthetic(10, 200, "normal", 1.0, 1)),
    Problem("synthetic-lognormal-D100-N50", "discrete", _synthetic(100, 50, "lognormal", 1.0, 2)),
    Problem(
        "synthetic-uniform-D1000-N20",
        "discrete",
        _synthetic(1000, 20, "uniform", 1.0, 3),
        levels=("full",),
    ),
    # Racing problems (000 Sec. 5.1 family): small sigma makes races stop early, so they can err.
    Problem("race-normal-D10-N1000-s1e-3", "discrete", _synthetic(10, 1000, "normal", 1e-3, 4)),
    Problem(
        "race-lognormal-D10-N1000-s1e-3", "discrete", _synthetic(10, 1000, "lognormal", 1e-3, 5)
    ),
    Problem("race-normal-D10-N1000-s1e-4", "discrete", _synthetic(10, 1000, "normal", 1e-4, 6)),
    # Large noise, two arms: Racing-Normal's error nears delta, so a wrong B shows.
    Problem("race-normal-D2-N1000-s0.3", "discrete", _synthetic(2, 1000, "normal", 0.3, 7)),
    # Ten close arms and large noise: Racing-Normal errs near delta (0.034 at delta = 0.05), so a
    # race that loses its union bound over the D - 1 rivals shows.
    Problem(
        "race-normal-D10-N1000-s0.3",
        "discrete",
        lambda: _long_race(10, 1000, 0.3, 18, name="race-normal-D10-N1000-s0.3"),
    ),
    # A population size per state (000 Sec. 5.3): only Racing-Normal takes it.
    Problem(
        "ragged-normal-D8-s1e-3",
        "discrete-ragged",
        lambda: ragged_rewards(
            [2, 7, 40, 150, 600, 2000, 60, 900],
            1e-3,
            np.random.default_rng(10),
            name="ragged-normal-D8-s1e-3",
        ),
    ),
    # The same kind of posterior as a racing target with control variates (000 Sec. 3.4).
    # Features the discrete kind allows that the problems above never show: a prior term f_0
    # as large as a factor; exact ties and states of probability 0 (in double precision).
    Problem("synthetic-f0-D10-N200", "discrete", lambda: _with_f0(10, 200, 13)),
    Problem("ties-zeros-D12-N50", "discrete", lambda: _ties_and_zeros(50, 14)),
    # A long race (many close arms, moderate noise): the delta grid where races do not stop
    # early, so a race's bookkeeping over many rounds is exercised.
    Problem("race-long-D30-N500", "discrete", lambda: _long_race(30, 500, 0.01, 15)),
    Problem("cv-studentt-D10-N4000", "discrete", _control_variates(4000, 10, 30.0, 9)),
    # A long sum: log p~(i) adds 40000 terms to about -21000, where a float32 running sum
    # drifts by about 0.1 (w = 0.18 on this target) and a double one by 1e-11. Exact samplers
    # recompute the sum for every draw, so fewer draws: 5000 still resolve w = 0.09.
    Problem(
        LONG_SUM,
        "discrete",
        _control_variates(40_000, 10, 30.0, 9),
        draws={"quick": 5_000, "full": 20_000},
    ),
    # Rewards computed from data on demand (000 Eq. 1 with f_n(i) = p(y_n | x_n, theta_i)): exact
    # and racing samplers evaluate likelihood terms, none precomputed. Close candidates, so the
    # pmf is spread over every state and races run long enough to err. Every exact draw (and
    # every race's exact answer) computes all N D terms, about 0.1 ms: 10000 draws at quick
    # still resolve a chi-square TV of about 0.03 over five or six states.
    Problem(
        "logistic-terms-D6-N500",
        LIKELIHOOD,
        lambda: logistic_candidates(500, 6, 5, 10.0, 21, name="logistic-terms-D6-N500"),
        draws={"quick": 10_000, "full": 40_000},
    ),
    Problem(
        "studentt-terms-D5-N400",
        LIKELIHOOD,
        lambda: studentt_candidates(400, 5, 3, 6.0, 22, name="studentt-terms-D5-N400"),
        draws={"quick": 10_000, "full": 40_000},
    ),
    Problem(
        "studentt-posterior-N500",
        "posterior-1d",
        lambda: studentt_posterior(500, 1.0, 4.0, np.random.default_rng(8)),
    ),
    # Factor graphs (003): tiny ones have an enumerated joint and exact kernels; the Potts grid
    # is checked by the symmetry of its marginals.
    # A cheap posterior (N = 50) for chains of plugins, long enough for the moment gates to
    # resolve a scale error of 2% (pi^(1/1.02)): a random-walk chain with ESS / n ~ 0.22 gives
    # an MCSE of 0.3% of the variance at 1e6 steps, so z ~ 6.5 (4e5 steps gave z = 1.7 to 5.3
    # over three seeds: too few to rely on escalation).
    Problem(
        "studentt-posterior-N50",
        "posterior-1d",
        lambda: studentt_posterior(50, 1.0, 4.0, np.random.default_rng(17)),
        draws={"quick": 1_000_000, "full": 4_000_000},
    ),
    Problem("fg-random-n4-D2", "factor-graph", _factor_graph(4, 2, 11)),
    Problem("fg-random-n3-D3", "factor-graph", _factor_graph(3, 3, 12)),
    Problem("fg-ties-n4-D3", "factor-graph", lambda: _tied_factor_graph(4, 3, 16)),
    Problem("potts-grid-5x5-D3-beta1", "factor-graph", lambda: _potts(5, 1.0, 3)),
    # Continuous factor graphs (003 Sec. 3, 4.2): a tiny graph with a quadrature joint, and a
    # small continuous-spin grid checked through its exact truncated-exponential conditionals.
    Problem("cfg-tiny-n3", "factor-graph-continuous", lambda: _continuous("tiny")),
    Problem("continuous-spin-4x4", "factor-graph-continuous", lambda: _continuous("spin")),
    Problem("truncgumbel-phi0-b1", "continuous-1d", _trunc(0.0, 1.0)),
    Problem("truncgumbel-phi0-b-3", "continuous-1d", _trunc(0.0, -3.0)),
    Problem("truncgumbel-phi2-b8", "continuous-1d", _trunc(2.0, 8.0), levels=("full",)),
    # The far tails, b - phi = -30 and +30, where naive formulas overflow or cancel. The left
    # tail sits at b = 0: its draws spread over about exp(-30) = 1e-13 below b, which doubles
    # resolve near 0 but not near -30 (an ulp of 30 is 3.6e-15, so draws there are quantised).
    Problem("truncgumbel-phi30-b0", "continuous-1d", _trunc(30.0, 0.0)),
    Problem("truncgumbel-phi0-b30", "continuous-1d", _trunc(0.0, 30.0)),
    # Box densities for A* (001 Sec. 6.1): the peaky unimodal target, and the bimodal clutter
    # posterior in 1-D (quadrature truth). A* reference draws cost about 2 ms there, so fewer.
    Problem("peaky-exponential-a10", "box-density", lambda: _box("peaky", 10.0)),
    _clutter(1, quick=4000, full=20000),
    # 004 Sec. 5.1 (Fig. 2a): N(-2, 1) + 2 N(2, 1) under the proposal N(0, 2), for PM-A*.
    Problem("pm-mixture", "box-density", lambda: _box("mixture", 0.0)),
    # The clutter posterior in 2-D: four modes' worth of refinement, a 2-D quadrature truth,
    # each marginal tested (Holm). About 45 likelihood and 75 bound evaluations a draw.
    _clutter(2, quick=2000, full=10000),
    # GLM posteriors for FlyMC and its baselines (002): synthetic prior-predictive data, bounds
    # tuned at theta_MAP or untuned. D = 2 has a quadrature truth (ks-marginals); D = 10 is
    # checked by simulation-based calibration on its prior (harness/gates/glm_chain.py).
    Problem("logistic-N100-D2-map", "glm-posterior", lambda: _glm("logistic", 100, 2, "map", 21)),
    Problem(
        "logistic-N100-D2-untuned",
        "glm-posterior",
        lambda: _glm("logistic", 100, 2, "untuned", 21),
    ),
    Problem("softmax-N100-K2-D2-map", "glm-posterior", lambda: _glm("softmax", 100, 1, "map", 22)),
    Problem("robust-N100-D2-map", "glm-posterior", lambda: _glm("robust", 100, 2, "map", 23)),
    Problem(
        "logistic-N200-D10-map",
        "glm-posterior",
        lambda: _glm("logistic", 200, 10, "map", 24),
        draws={"quick": 10000, "full": 40000},
    ),
)


def problems(kind: str, level: str) -> list[Problem]:
    Param("level", "quick", str, choices=LEVELS).check(level)
    return [p for p in PROBLEMS if p.kind == kind and level in p.levels]


def problem(name: str) -> Problem:
    for p in PROBLEMS:
        if p.name == name:
            return p
    raise ValueError(f"unknown problem {name!r}; known: {', '.join(p.name for p in PROBLEMS)}")


@lru_cache(maxsize=16)
def build_target(name: str) -> Any:
    """The target of a named problem, built once per process (construction is deterministic)."""
    return problem(name).build()
