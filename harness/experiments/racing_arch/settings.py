"""Settings of the ARCH experiment (000_26bed7cc1ef3ab92.txt, Sec. 5.2) and the paper's numbers.

SIMULATED DATA: the paper fits one year of 5-minute Shanghai composite returns (~13,000 points);
those data are not available here, so the data are an ARCH(10) series with Student-t
innovations simulated with a fixed seed (see ``model.simulate_returns``).
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from harness.experiments.common import lists_to_tuples
from harness.experiments.framework import LEVELS, check_level
from harness.spec import Param

EXPERIMENT = "racing-arch"
PAPER_REF = "000_26bed7cc1ef3ab92.txt, Sec. 5.2"
MODELS = (5, 10, 15, 20, 25, 30)
QMAX = max(MODELS)
SAMPLERS = ("exact", "sub")
CONTROL_VARIATES = ("parameter", "data", "none")
ACF_LAGS = 50

# The simulated truth: ARCH(10), alpha decreasing over the lags. sum(alpha_1..10) = 0.45 keeps
# the series covariance-stationary with t_5 innovations: E[z^2] = nu / (nu - 2) = 5/3 and
# 0.45 * 5/3 = 0.75 < 1 (the plain condition sum(alpha) < 1 is not enough for unit-scale t).
TRUE_Q = 10
TRUE_ALPHA = (0.2, 0.08, 0.07, 0.06, 0.05, 0.05, 0.04, 0.04, 0.03, 0.02, 0.01)
TRUE_NU = 5.0
SIM_BURN_IN = 1000

PAPER_ARCH: dict[str, Any] = {
    "source": PAPER_REF,
    "data": "5-minute Shanghai stock exchange composite index, one year",
    "n_data": 13000,
    "models": list(MODELS),
    "m1": 50,
    "delta": 0.05,
    "iterations": 100000,
    "runs": 5,
    "gibbs_error_rate": 4e-4,
    "mh_error_rate": 2e-3,
    "convergence_speedup": 3.0,
    "ess_ratio_min": 2.0,
    "variance_reduction_log10": [2.0, 3.0],
    "claims": {
        "convergence_speedup": "Sub converges about three times faster (likelihood evaluations)",
        "ess_ratio_min": "Sub obtains over twice the effective sample size of q",
        "variance_reduction_log10": "control variates reduce the reward variance by 2~3 orders",
    },
}


def paper_arch() -> dict[str, Any]:
    """The paper's ARCH numbers (000, Sec. 5.2) as a fresh dict, to set beside ours."""
    return copy.deepcopy(PAPER_ARCH)


_LEVELS: dict[str, dict[str, Any]] = {
    # Quick: fewer data (N = 3000 instead of ~13,000) and short chains, ~1.5 minutes.
    "quick": {
        "N": 3000,
        "pilot_iterations": 2000,
        "adapt_iterations": 2000,
        "iterations": 4000,
        "chains": 3,
        "chunk": 500,
    },
    # Full: the paper's size (13,000 points, 1e5 iterations, 5 runs). Slow: ~2 hours on 2 cores.
    "full": {
        "N": 13000,
        "pilot_iterations": 5000,
        "adapt_iterations": 10000,
        "iterations": 100000,
        "chains": 5,
        "chunk": 2000,
    },
}


def _int(name: str, low: int, high: int | None = None) -> Param:
    return Param(name, low, kind=int, low=low, high=high)


def _positive(name: str, high: float | None = None, low: float = 0.0) -> Param:
    return Param(name, 1.0, low=low, high=high, low_inclusive=False, high_inclusive=False)


@dataclass(frozen=True)
class ArchConfig:
    """Settings of one ARCH run; ``config_for_level`` gives the quick and full presets.

    N: likelihood terms (returns after the first 30, which every model conditions on).
    pilot_iterations: exact MALA sweeps per model whose moments give the pseudo-priors.
    adapt_iterations: sweeps that tune pi~ (also the burn-in of the fixed runs).
    iterations / chains: sweeps per chain and chains per sampler after pi~ is fixed.
    chunk: sweeps per task (one record each; the unit of resumption).
    delta, m1: Racing-Normal's error bound and first mini-batch (000, Sec. 5.2: 0.05 and 50).
    step: Langevin step epsilon = step * d^(-1/3) for a model with d parameters, in the
        coordinates whitened by its pilot covariance; the same for MALA and SGLD (0.6: MALA
        accepts ~0.6-0.8, SGLD ~0.2-0.6 on the quick data).
    batch: SGLD mini-batch size (the same indices at x and x', see ``chain.sgld_mh``).
    control_variate: the rewards of Sub's races and its SGLD gradient: "parameter" (default;
        second-order Taylor of each term in the model's parameters around its pilot mean),
        "data" (000, Eq. 11 in the data space; raises the variance here), or "none" (plain
        rewards; SGLD proposals are then almost never accepted).
    adapt_gain, adapt_t0: adaptation step gamma_k = adapt_gain * min(1, adapt_t0 / k).
    trace_every: sweeps between recorded estimates of log p(q | r) during adaptation.
    """

    level: str = "quick"
    seed: int = 0
    N: int = 3000
    pilot_iterations: int = 2000
    adapt_iterations: int = 2000
    iterations: int = 4000
    chains: int = 3
    chunk: int = 500
    delta: float = 0.05
    m1: int = 50
    step: float = 0.6
    batch: int = 100
    control_variate: str = "parameter"
    adapt_gain: float = 1.0
    adapt_t0: int = 300
    trace_every: int = 5
    true_q: int = TRUE_Q
    true_alpha: tuple[float, ...] = TRUE_ALPHA
    true_nu: float = TRUE_NU

    def __post_init__(self) -> None:
        for name, value in _checked(self).items():
            object.__setattr__(self, name, value)

    def to_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        out["true_alpha"] = list(self.true_alpha)
        return out

    def manifest(self) -> dict[str, Any]:
        return {"experiment": EXPERIMENT, "paper": PAPER_REF, **self.to_dict()}


def _checked(c: ArchConfig) -> dict[str, Any]:
    """Every setting checked once, before any work; ValueError names the parameter."""
    out: dict[str, Any] = {"level": Param("level", "quick", str, choices=LEVELS).check(c.level)}
    m1 = out["m1"] = _int("m1", 2).check(c.m1)
    N = out["N"] = _int("N", max(4 * m1, 100)).check(c.N)
    for name, low in (
        ("seed", 0),
        ("pilot_iterations", 40),
        ("adapt_iterations", 1),
        ("iterations", 2),
        ("chains", 1),
        ("chunk", 1),
        ("adapt_t0", 1),
        ("trace_every", 1),
    ):
        out[name] = _int(name, low).check(getattr(c, name))
    out["batch"] = _int("batch", 1, N).check(c.batch)
    out["delta"] = _positive("delta", high=1.0).check(c.delta)
    out["step"] = _positive("step").check(c.step)
    out["adapt_gain"] = _positive("adapt_gain").check(c.adapt_gain)
    out["true_nu"] = _positive("true_nu", low=2.0).check(c.true_nu)
    Param("control_variate", "parameter", str, choices=CONTROL_VARIATES).check(c.control_variate)
    true_q = out["true_q"] = Param("true_q", TRUE_Q, int, choices=MODELS).check(c.true_q)
    alpha = tuple(float(a) for a in c.true_alpha)
    if len(alpha) != true_q + 1:
        raise ValueError(
            f"parameter 'true_alpha' = {c.true_alpha!r} is invalid for true_q = {true_q}; "
            f"valid: q + 1 alphas (alpha_0..alpha_q)"
        )
    persistence = float(np.sum(alpha[1:])) * out["true_nu"] / (out["true_nu"] - 2.0)
    if min(alpha) <= 0 or persistence >= 1.0:
        raise ValueError(
            f"parameter 'true_alpha' = {c.true_alpha!r} is invalid; valid: positive, with "
            f"sum(alpha_1..q) * nu / (nu - 2) < 1 (covariance-stationary), got {persistence:.3g}"
        )
    out["true_alpha"] = alpha
    return out


def config_for_level(level: str, seed: int) -> ArchConfig:
    return ArchConfig(level=check_level(level), seed=seed, **_LEVELS[level])


def config_from_manifest(settings: dict[str, Any]) -> ArchConfig:
    names = {f.name for f in dataclasses.fields(ArchConfig)}
    return ArchConfig(**lists_to_tuples({k: v for k, v in settings.items() if k in names}))
