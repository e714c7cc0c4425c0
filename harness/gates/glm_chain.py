"""Gates for Markov chains on GLM posteriors (target kind ``glm-posterior``, issue 13).

- **ess**: the worst coordinate's bulk ESS >= 100 and R-hat <= 1.05 over four segments
  (arviz-stats), with ESS per 1000 likelihood queries (at 1.01, correct FlyMC-MH chains of
  20000 steps on the D = 10 problem, ESS about 400, failed 42% of 40 seeds on R-hat alone,
  none at 1.05; the factor-graph chains use 1.05 too);
- **ks-marginals** (D <= 2, quadrature truth): KS of each coordinate of the chain thinned to
  near independence (thinning.py: the slowest decile indicator of any coordinate) against its
  marginal CDF, Holm across the coordinates;
- **sbc** (D > 2, no ground truth; any target that can ``simulate`` from its prior):
  simulation-based calibration (sbc.py). Each replication draws theta and data from the prior,
  runs the same sampler on the simulated posterior, and ranks theta's coordinates and its log
  posterior density among the thinned second half of the chain; 100 replications, or one per
  200 steps of the chain under test where that is more (an escalated run gets more);
- **z-conditional** (samplers with a ``theta_fixed`` option, FlyMC): at a fixed theta the
  long-run bright fraction of datum n is 1 - B_n/L_n (002, "Solution"). The sampler is rerun
  with theta held at the chain's last state and z started from that conditional, so every
  datum's bright steps have mean T (1 - B_n/L_n) exactly; the data are grouped by that
  probability and each group's count z-tested (Bonferroni over groups).

The sbc and z-conditional gates rerun the sampler: they need a :class:`GateContext`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from scipy import stats

from harness.gates.box_bounds import ks_marginals
from harness.gates.mcmc import ess_rhat
from harness.gates.result import GateContext, GateResult
from harness.gates.sbc import sbc_pit, sbc_uniformity
from harness.gates.thinning import quantile_indicators, thinning_lag
from harness.targets.glm_quadrature import MAX_QUADRATURE_D

#: SBC: simulated data sets (at least; one per SBC_STEPS_PER_REPLICATION steps of the chain
#: under test, so a run escalated to 4x the steps gets 4x the replications), and chain steps
#: per data set (the first half is warm-up).
SBC_REPLICATIONS = 100
SBC_STEPS_PER_REPLICATION = 200
SBC_MAX_REPLICATIONS = 1000
SBC_STEPS = 2000
#: z-conditional: sweeps at fixed theta (at least; a tenth of the chain's steps), and the least
#: expected bright count of a group.
Z_SWEEPS = 2000
Z_GROUP_COUNT = 50.0
Z_MAX_GROUPS = 10
_Z_POWER = float(stats.norm.ppf(0.8))


def chain_ess(values: np.ndarray, evals: int) -> GateResult:
    """The worst coordinate's bulk ESS (four segments), which every other gate's thinning
    relies on; R-hat from the same coordinate."""
    values = np.asarray(values, dtype=np.float64).reshape(len(values), -1)
    n = values.shape[0] - values.shape[0] % 4
    per = [
        ess_rhat(values[:n, j].reshape(4, -1), min_ess=100.0, max_rhat=1.05)
        for j in range(values.shape[1])
    ]
    worst = min(range(len(per)), key=lambda j: per[j].statistic)
    res = per[worst]
    rate = 1000.0 * res.statistic / max(evals, 1)
    return GateResult(
        **{
            **res.__dict__,
            "detail": f"worst of {len(per)} coordinates: theta[{worst}], {res.detail}; "
            f"ESS per 1000 likelihood queries {rate:.3g}",
        }
    )


def ks_thinned_marginals(values: np.ndarray, target: Any, alpha: float) -> GateResult:
    """KS of each coordinate, thinned by the slowest decile indicator of any coordinate."""
    values = np.asarray(values, dtype=np.float64).reshape(len(values), -1)
    if not np.all(np.isfinite(values)):
        thin = 1
    else:
        rows = [
            quantile_indicators(values[:, j], np.quantile(values[:, j], np.arange(1, 10) / 10))
            for j in range(values.shape[1])
        ]
        thin = thinning_lag(np.vstack(rows)).lag
    res = ks_marginals(values[::thin], target.marginal_cdf, alpha)
    return GateResult(
        **{**res.__dict__, "detail": f"{res.detail}; every {thin}-th of {len(values)} states"}
    )


def log_posterior_statistic(data: Any, thetas: np.ndarray) -> np.ndarray:
    """log p(theta | data) up to its constant, for each row: the SBC test quantity."""
    return np.array([data.log_posterior(theta) for theta in thetas])


def posterior_sbc(
    target: Any,
    context: GateContext,
    alpha: float,
    replications: int = SBC_REPLICATIONS,
    steps: int = SBC_STEPS,
) -> GateResult:
    """Simulation-based calibration of the sampler on ``target``'s prior (module docstring)."""

    def posterior(data: Any, n: int, rng: np.random.Generator) -> np.ndarray:
        return np.asarray(context.rerun(data, n, rng).values)[n // 2 :]

    pits, kept = sbc_pit(
        target.simulate,
        posterior,
        replications,
        steps,
        context.rng,
        mcmc=True,
        statistic=log_posterior_statistic,
    )
    names = [f"theta[{j}]" for j in range(pits.shape[1] - 1)] + ["log p(theta | data)"]
    res = sbc_uniformity(pits, alpha, kept, names)
    return GateResult(
        **{
            **res.__dict__,
            "detail": f"{res.detail}; {steps} steps per data set, the first half warm-up",
        }
    )


def _groups(p: np.ndarray, T: int) -> list[np.ndarray]:
    """Data sorted by p, cut into consecutive groups whose expected bright count
    T sum p(1 - p) is at least Z_GROUP_COUNT (at most Z_MAX_GROUPS groups)."""
    order = np.argsort(p, kind="stable")
    weight = T * p[order] * (1.0 - p[order])
    total = float(weight.sum())
    size = max(Z_GROUP_COUNT, total / Z_MAX_GROUPS)
    groups, start, acc, seen = [], 0, 0.0, 0.0
    for i, w in enumerate(weight):
        acc += w
        seen += w
        if acc >= size and total - seen >= size:
            groups.append(order[start : i + 1])
            start, acc = i + 1, 0.0
    groups.append(order[start:])
    return groups


def z_conditional(
    p: np.ndarray, bright_steps: np.ndarray, darkenings: np.ndarray, T: int, alpha: float
) -> GateResult:
    """Each group's bright count against T sum p_n (module docstring).

    Datum n's z is a two-state Markov chain at fixed theta. With flip rates a (dark to bright)
    and b (bright to dark), its stationary law is p = a / (a + b), and its bright count over T
    stationary steps has variance T p (1 - p) (2 - s) / s, s = a + b = b / (1 - p). b is
    estimated per group as darkenings per bright step (at least one darkening counted): a
    ratio that does not grow with the count it judges, as the total number of flips would
    (a datum that is rarely bright flips twice per visit). A z chain that barely leaves where
    it started is judged leniently (its variance is large); such a bug biases theta, which
    the chain's other gates test."""
    p = np.asarray(p, dtype=np.float64)
    c = np.asarray(bright_steps, dtype=np.float64)
    d = np.asarray(darkenings, dtype=np.float64)
    groups = _groups(p, T)
    zs, shifts = [], []
    for g in groups:
        bright = float(c[g].sum())
        b = max(float(d[g].sum()), 1.0) / bright if bright > 0 else 1.0
        s = np.clip(b / (1.0 - p[g]), 1e-12, 2.0)
        var = float(np.sum(T * p[g] * (1.0 - p[g]) * (2.0 - s) / s))
        expected = T * float(np.sum(p[g]))
        dev = bright - expected
        zs.append(dev / math.sqrt(var) if var > 0 else (0.0 if dev == 0 else math.inf))
        shifts.append(math.sqrt(var) / max(expected, 1e-300))
    G = len(groups)
    worst = int(np.argmax(np.abs(zs)))
    p_value = min(1.0, G * 2.0 * float(stats.norm.sf(abs(zs[worst]))))
    z_crit = float(stats.norm.isf(alpha / (2 * G)))
    detectable = (z_crit + _Z_POWER) * max(shifts)
    g = groups[worst]
    return GateResult.of_test(
        "z-conditional",
        float(zs[worst]),
        p_value,
        alpha,
        int(T),
        detectable,
        "relative shift of a group's bright count",
        detail=f"{p.size} data at fixed theta, {T} sweeps, {G} groups by 1 - B/L, Bonferroni; "
        f"worst group: {g.size} data with 1 - B/L in [{p[g].min():.3g}, {p[g].max():.3g}], "
        f"bright steps {int(c[g].sum())} against {T * float(np.sum(p[g])):.1f} expected "
        f"(z = {zs[worst]:.2f})",
    )


def bright_probabilities(target: Any, theta: np.ndarray) -> np.ndarray:
    """1 - B_n/L_n for every datum at theta."""
    idx = np.arange(target.N)
    return -np.expm1(target.log_bound(theta, idx) - target.log_lik(theta, idx))


def z_conditional_rerun(
    target: Any, theta: np.ndarray, context: GateContext, alpha: float, sweeps: int = Z_SWEEPS
) -> GateResult:
    """Rerun the sampler with theta held at ``theta`` and test its z chain."""
    chain = context.rerun(target, sweeps, context.rng, x0=theta, theta_fixed=True)
    p = bright_probabilities(target, np.asarray(theta, dtype=np.float64))
    extras = chain.extras
    return z_conditional(p, extras["bright_steps"], extras["darkenings"], sweeps, alpha)


def glm_posterior_gates(
    spec: Any,
    target: Any,
    chain: Any,
    alpha: float,
    params: Mapping[str, Any],
    context: GateContext | None = None,
) -> list[GateResult]:
    """The gates of one chain on a GLM posterior (module docstring); ``alpha`` is split evenly
    over the statistical gates."""
    values = np.asarray(chain.values, dtype=np.float64).reshape(len(chain.values), -1)
    n = values.shape[0]
    replications = min(SBC_MAX_REPLICATIONS, max(SBC_REPLICATIONS, n // SBC_STEPS_PER_REPLICATION))
    sweeps = max(Z_SWEEPS, n // 10)
    checks = []
    if target.D <= MAX_QUADRATURE_D:
        checks.append(lambda a: ks_thinned_marginals(values, target, a))
    elif context is not None and callable(getattr(target, "simulate", None)):
        checks.append(lambda a: posterior_sbc(target, context, a, replications))
    bounded = all(callable(getattr(target, f, None)) for f in ("log_lik", "log_bound"))
    if context is not None and bounded and any(p.name == "theta_fixed" for p in spec.params):
        checks.append(lambda a: z_conditional_rerun(target, values[-1], context, a, sweeps))
    if not checks:
        raise NotImplementedError(
            f"no statistical gate for {spec.name!r} on {target.name!r}: D = {target.D} has no "
            "quadrature truth, and simulation-based calibration needs a rerun context and a "
            "target that can simulate from its prior"
        )
    return [chain_ess(values, chain.evals)] + [check(alpha / len(checks)) for check in checks]
