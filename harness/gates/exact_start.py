"""Exact-start invariance (DESIGN.md, Gates): many short chains of the kernel under test, each
started from an independent exact draw of the target (harness/targets/exact_draws.py).

If the kernel P leaves pi invariant and x_0 ~ pi, then every x_t ~ pi. Chains started
independently are independent, so with no thinning and no estimate of autocorrelation:

- **exact-start-moments**: each chain's average over its k measured steps of every statistic
  of the law (coordinates, their squares about the true mean, the Mahalanobis square, U on
  continuous graphs; marginal indicators and U on factor graphs) has expectation E_pi exactly.
  The averages are i.i.d. across chains: a t-test per statistic (skewness-corrected, Hall
  1992), Bonferroni across them. A kernel's stationary error builds up over about tau steps
  from an exact start, so averages over k = 5 tau steps keep ~92% of a long chain's power per
  step (AR(1) model). The statistic's value at the chain's start is a control variate
  (regression estimator): it removes the part of the average that only repeats where the
  chain started (another ~4% at k = 5 tau, more where k is capped). The chains run in four
  batches (LOOKS); after each but the last (with at least MIN_LOOK_CHAINS chains) the test
  spends EARLY_WEIGHT = 1% of its alpha and stops the gate if it already rejects (a weighted
  Bonferroni over the looks: a gross bug costs an eighth to a half of the budget, a correct
  kernel 3% of the alpha);
- **exact-start-ks** / **exact-start-chi-square**: the chains' end states are i.i.d. draws of
  pi P^(w + k): KS of each coordinate against the marginal CDF (GLM and 1-D posteriors), the boxes
  of a tiny continuous graph or the states of an enumerated one against their probabilities
  (chi-square), and a two-sample KS of the end states' log density against fresh exact draws
  where the law has one; Bonferroni across them;
- **exact-start-bright** (chains that report ``extras["bright"]``, FlyMC): the average bright
  count against E_pi sum_n (1 - B_n / L_n) (002, "Solution": z_n | theta ~ Bernoulli(1 - B/L)),
  its value at the start's theta the control variate.

Chain length and count. tau is the largest integrated autocorrelation time of the statistics
(and the bright count) in the chain under test, with their slowest linear combination
(harness/gates/thinning.py); k = clip(K_PER_TAU tau, K_MIN, K_MAX). The chains rerun
RERUN_FACTOR times the steps of the chain under test (at most MAX_STEPS, at least MIN_CHAINS
chains), so an escalated run, with 4x the steps, gets 4x the chains (past MAX_CHAINS, longer
ones). A variance error is a small signal: the chains' Mahalanobis square shifts by 2 eps on a
D = 2 posterior whose variances are off by eps, against a per-draw sd of 2, so resolving eps
takes about (z / eps)^2 tau steps (z ~ 5.6 at a verify's alpha and power 0.8). At 20 times a
quick 20000-step chain, what a one-plugin quick run resolves on logistic-N100-D2-map: 2.5%
(random-walk MH, tau ~ 9), 2.0% (slice, tau ~ 5), 1.4% (MALA, tau ~ 4), 3-6% (FlyMC, whose
warm-up costs 2/3 of the steps); 4x the chains after one escalation halve those, and
MAX_STEPS stops the second at 1.25x more. Resolving 1% at the first stage would take ~6x the
chains (rwmh: 2.4e6 steps, ~20 s of Numba, minutes of a Python plugin).

FlyMC's state includes z, which x0 cannot set: its chains start z all dark, the kernel's own
start, so the first WARMUP_PER_TAU tau steps (at least WARMUP_MIN) are run and dropped before
the k measured ones. On logistic-N100-D2-untuned (tau ~ 25-30) that start inflates the
Mahalanobis square by 13% at step 1 and leaves the bright count 2 of 4 short, and it moves
the mean: over 20000 chains of 100 measured steps (2e6 steps, about a twice-escalated run's
budget) the coordinates' averages sit at z = +23 and +28 with no warm-up, +3.3 and +3.9 after
50 dropped steps, and within |z| < 2.2 on every statistic after 100, 200 or 300. A tau estimated
from a short chain can be far too small (a 2000-step chain put 33 of 400 correct seeds below
alpha = 0.05 with a floor of 50), hence the floor of 200. For kernels with auxiliary state the
gate is exact only up to the remainder of that warm-up; for every other kernel it is exact.

Only kernels held to exactness (guarantee "mcmc") are tested: an approximate kernel (racing
MH) is biased on purpose, and its bias allowance is judged by its own gates.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from harness.gates.exactness import chisquare_gof, ks_1samp, ks_2samp
from harness.gates.power import FalsePass
from harness.gates.result import GateContext, GateResult, Supplement
from harness.gates.thinning import thinning_lag
from harness.targets.exact_draws import ExactLaw, exact_law, has_exact_law, posterior_grid

#: Steps rerun per step of the chain under test, and the most in one gate.
RERUN_FACTOR = 20
MAX_STEPS = 2_000_000
#: Measured steps per chain, in units of tau, and their range.
K_PER_TAU = 5.0
K_MIN, K_MAX = 20, 400
#: Warm-up of kernels with auxiliary state (FlyMC's z), in units of tau, and its range.
WARMUP_PER_TAU = 10.0
WARMUP_MIN, WARMUP_MAX = 200, 1000
#: Chains per gate (the skewness-corrected t-test holds its level at 1e-4 from about 1000),
#: and the fewest an early look tests.
MIN_CHAINS, MAX_CHAINS = 1000, 20_000
MIN_LOOK_CHAINS = 400
#: The share of the chains after which the moments test looks, and the share of its alpha
#: spent at each look but the last (the rest at the last): a weighted Bonferroni over looks.
LOOKS = (0.125, 0.25, 0.5, 1.0)
EARLY_WEIGHT = 0.01
FINAL_WEIGHT = 1.0 - EARLY_WEIGHT * (len(LOOKS) - 1)
#: Fresh exact draws per end state for the two-sample KS of the log density.
REFERENCE_DRAWS = 4
#: The named bugs of the false-pass rate (harness/gates/power.py): a 2% error of the second
#: moment (the planted kernels' size), or of a marginal probability 0.01 on a factor graph.
NAMED_EFFECT = 0.02
NAMED_PROBABILITY = 0.01
#: Grid cells per axis for the expected bright count (the midpoint rule is spectrally accurate).
BRIGHT_CELLS = 64
POWER = 0.8
_Z_POWER = float(stats.norm.ppf(POWER))


@dataclass(frozen=True)
class Plan:
    """Chains of ``warmup`` dropped and ``steps`` measured steps each; ``tau`` set them.
    ``thinned``: the spec takes ``thin``, run at 1 (one state per step); ``bright``: the
    chains report FlyMC's bright count and the target can compute its expectation."""

    chains: int
    steps: int
    warmup: int
    tau: float
    thinned: bool = False
    bright: bool = False


@dataclass(frozen=True)
class Replay:
    """What the chains gave: per chain the statistics at the start and averaged over the
    measured steps, the end state, and (FlyMC) the bright count averaged and expected at the
    start's theta."""

    starts: np.ndarray
    at_start: np.ndarray
    averages: np.ndarray
    ends: np.ndarray
    bright: np.ndarray | None
    bright_at_start: np.ndarray | None


def _join(parts: list[Replay]) -> Replay:
    """The chains of several batches as one."""

    def cat(name: str) -> np.ndarray | None:
        arrays = [getattr(p, name) for p in parts]
        return None if any(a is None for a in arrays) else np.concatenate(arrays)

    return Replay(*(cat(f.name) for f in dataclasses.fields(Replay)))


@dataclass(frozen=True)
class Look:
    """The moments test after ``chains`` chains: its p-value and the share ``weight`` of the
    gate's alpha spent there (a weighted Bonferroni over the looks)."""

    chains: int
    p: float
    weight: float


@dataclass(frozen=True)
class CVTest:
    """A t-test of chain averages ``y`` against ``truth``, with the start value as control
    variate: ``estimate`` of E y, its standard error ``se``, ``t`` and two-sided ``p``."""

    estimate: float
    se: float
    t: float
    p: float


def applies(spec: Any, target: Any, params: Mapping[str, Any]) -> bool:
    """Markov-chain kernels held to exactness on targets with an exact law."""
    return (
        getattr(spec, "entry", None) == "run_chain"
        and getattr(spec, "guarantee", None) == "mcmc"
        and has_exact_law(target)
    )


def _auxiliary(spec: Any, output: Any) -> bool:
    """Whether the kernel keeps state x0 cannot set: declared (``spec.auxiliary_state``: MIN-Gibbs'
    stored estimate, whose stationary law given x is tilted by exp(eps)), or bright/dark
    variables (FlyMC), known by a ``theta_fixed`` parameter or a reported ``bright`` count."""
    names = {p.name for p in getattr(spec, "params", ())}
    declared = bool(getattr(spec, "auxiliary_state", False))
    return declared or "theta_fixed" in names or "bright" in getattr(output, "extras", {})


def _reports_bright(output: Any, target: Any) -> bool:
    return "bright" in getattr(output, "extras", {}) and all(
        callable(getattr(target, f, None)) for f in ("log_lik", "log_bound")
    )


def plan_chains(
    law: ExactLaw,
    output: Any,
    thin: int = 1,
    auxiliary: bool = False,
    bright: bool = False,
    thinned: bool = False,
) -> Plan:
    """k, the warm-up and the chain count from the chain under test (module docstring);
    ``thin``: its states are every thin-th step; ``auxiliary``: the kernel has state x0 cannot
    set (a warm-up); ``bright``, ``thinned``: as :class:`Plan` says."""
    values = np.asarray(output.values)
    observables = law.statistics(values.reshape(len(values), -1)).T
    if "bright" in getattr(output, "extras", {}):
        observables = np.vstack([observables, np.asarray(output.extras["bright"], float)[None]])
    if observables.shape[1] >= 4 and np.all(np.isfinite(observables)):
        tau = thinning_lag(observables).tau_max * thin
    else:  # nothing to estimate from: the longest chains
        tau = K_MAX / K_PER_TAU
    steps = int(np.clip(math.ceil(K_PER_TAU * tau), K_MIN, K_MAX))
    warmup = int(np.clip(math.ceil(WARMUP_PER_TAU * tau), WARMUP_MIN, WARMUP_MAX))
    warmup = warmup if auxiliary else 0
    budget = min(RERUN_FACTOR * len(values) * thin, MAX_STEPS)
    chains = int(np.clip(budget // (steps + warmup), MIN_CHAINS, MAX_CHAINS))
    if chains == MAX_CHAINS:  # a larger budget (an escalated run) lengthens the chains instead
        steps = max(steps, budget // MAX_CHAINS - warmup)
    return Plan(chains, steps, warmup, float(tau), thinned, bright)


def _x0(kind: str, start: np.ndarray) -> Any:
    """A start in the form ``sample`` checks: one number on a 1-D target, else an array."""
    return float(start.reshape(-1)[0]) if kind == "posterior-1d" else start


def expected_bright(target: Any, theta: np.ndarray) -> np.ndarray:
    """sum_n (1 - B_n / L_n) at each row of ``theta``: z's conditional mean count."""
    idx = np.arange(target.N)
    rows = np.asarray(theta, dtype=np.float64).reshape(len(theta), -1)
    return np.array(
        [float(-np.expm1(target.log_bound(t, idx) - target.log_lik(t, idx)).sum()) for t in rows]
    )


def replay(
    target: Any, law: ExactLaw, plan: Plan, context: GateContext, starts: np.ndarray, name: str
) -> Replay:
    """Chains of ``plan`` from ``starts`` through ``context.rerun``, the task's Generator
    drawing every step."""
    overrides = {"thin": 1} if plan.thinned else {}
    length = plan.warmup + plan.steps
    measured: list[np.ndarray] = []
    ends: list[np.ndarray] = []
    bright: list[float] = []
    for start in starts:
        chain = context.rerun(target, length, context.rng, x0=_x0(target.kind, start), **overrides)
        values = np.asarray(chain.values)
        if values.shape[0] != length:
            raise ValueError(
                f"{name!r} returned {values.shape[0]} states for n_steps = {length}; "
                "valid: one state per step"
            )
        measured.append(values[plan.warmup :])
        ends.append(values[-1])
        if "bright" in chain.extras:
            bright.append(float(np.mean(np.asarray(chain.extras["bright"])[plan.warmup :])))
    count = len(starts)
    flat = law.statistics(np.stack(measured).reshape(count * plan.steps, -1))
    has_bright = plan.bright and len(bright) == count
    return Replay(
        starts=starts,
        at_start=law.statistics(starts.reshape(count, -1)),
        averages=flat.reshape(count, plan.steps, -1).mean(axis=1),
        ends=np.stack(ends),
        bright=np.array(bright) if has_bright else None,
        bright_at_start=expected_bright(target, starts) if has_bright else None,
    )


def cv_test(y: np.ndarray, g0: np.ndarray, truth: float) -> CVTest:
    """Is E y = truth? With the control variate g0 (E g0 = truth exactly, as E y is under
    invariance): u = y - beta (g0 - truth), beta the OLS slope, has the regression estimator
    as its mean. Chain averages of squares are right-skewed (skewness 1.4-1.8 for FlyMC's), and
    a plain t-test then rejects in its lower tail several times too often at small alpha
    (4.4x at 1e-4 with 300 chi-square(2) draws); Hall's (1992, JRSS B 54:221) cubic transform
    of the studentised mean removes the skewness term (1.4x there, 0.9x with 1000)."""
    y, g0 = np.asarray(y, dtype=np.float64), np.asarray(g0, dtype=np.float64)
    n = y.size
    gc = g0 - g0.mean()
    sxx = float(gc @ gc)
    beta = float(gc @ (y - y.mean())) / sxx if sxx > 0.0 else 0.0
    u = y - beta * (g0 - truth)
    estimate = float(u.mean())
    sd = float(u.std(ddof=1)) if n > 1 else 0.0
    se = sd / math.sqrt(n)
    dev = estimate - truth
    if se == 0.0 or not math.isfinite(se):
        # No spread at all (a kernel that never moves repeats its exact start): only an
        # exact match passes.
        t = 0.0 if abs(dev) <= 1e-12 * max(1.0, abs(truth)) else math.inf
    else:
        theta = dev / sd
        gamma = float(np.mean((u - estimate) ** 3)) / sd**3
        t = math.sqrt(n) * (
            theta + gamma * theta**2 / 3.0 + gamma**2 * theta**3 / 27.0 + gamma / (6.0 * n)
        )
    p = float(2.0 * stats.norm.sf(abs(t))) if math.isfinite(t) else 0.0
    return CVTest(estimate, se, float(t), p)


def moment_tests(law: ExactLaw, run: Replay) -> list[CVTest]:
    """One control-variate t-test per statistic of the law."""
    return [
        cv_test(run.averages[:, j], run.at_start[:, j], law.truth[j]) for j in range(len(law.names))
    ]


def moments_gate(
    law: ExactLaw, run: Replay, plan: Plan, alpha: float, looks: list[Look]
) -> GateResult:
    """exact-start-moments (module docstring): one CV t-test per statistic, Bonferroni across
    them, weighted Bonferroni across the looks (the last one's is computed here)."""
    s = len(law.names)
    tests = moment_tests(law, run)
    worst = min(range(s), key=lambda j: tests[j].p)
    n = len(run.averages)
    done = list(looks)
    if not done or done[-1].chains != n:  # the chains ran to the end: the last look
        done.append(Look(n, min(1.0, s * tests[worst].p), FINAL_WEIGHT))
    p = min(1.0, min(look.p / look.weight for look in done))
    # The last look's share of alpha fixes what this many chains resolve.
    a = alpha * done[-1].weight / s
    z = float(stats.norm.isf(a / 2.0)) + _Z_POWER
    h = law.headline
    unit = abs(law.truth[h]) if law.headline_measure.startswith("relative") else 1.0
    effect = NAMED_EFFECT if unit != 1.0 else NAMED_PROBABILITY
    # How much of each statistic's detectable shift the law's own error could explain.
    share = float(np.max(law.error / np.maximum(z * np.array([t.se for t in tests]), 1e-300)))
    w = tests[worst]
    early = f"; stopped after look {len(done)} of {len(LOOKS)}" if len(done) < len(LOOKS) else ""
    return GateResult.of_test(
        "exact-start-moments",
        w.t,
        p,
        alpha,
        len(run.averages),
        z * tests[h].se / unit,
        f"{law.headline_measure} ({law.names[h]}), chains' k-step averages",
        detail=f"{len(run.averages)} chains from exact starts, {plan.steps} measured steps each"
        f"{_warmup_text(plan)} (tau {plan.tau:.1f}){early}; {s} statistics, t-tests with the "
        f"start as control variate, Bonferroni; worst: {law.names[worst]} {w.estimate:.6g} "
        f"against {law.truth[worst]:.6g} (t = {w.t:.2f}); the law's own error is at most "
        f"{share:.1%} of a detectable shift; {law.method}",
        false_pass=_false_pass(tests[h].se / unit, a, law.headline_measure, effect),
    )


def _false_pass(se: float, alpha: float, measure: str, effect: float) -> FalsePass:
    """The probability that a two-sided z-test with standard error ``se`` at ``alpha`` passes
    a shift of ``effect`` (normal approximation)."""
    z = float(stats.norm.isf(alpha / 2.0))
    shift = effect / se if se > 0.0 else math.inf
    rate = float(stats.norm.cdf(z - shift) - stats.norm.cdf(-z - shift))
    return FalsePass(rate, effect, measure, bound=False)


def _warmup_text(plan: Plan) -> str:
    if not plan.warmup:
        return ""
    return f" after {plan.warmup} dropped (the kernel's auxiliary state starts where x0 leaves it)"


def bright_gate(target: Any, run: Replay, plan: Plan, alpha: float) -> GateResult:
    """exact-start-bright: the chains' average bright count against its exact expectation
    (midpoint rule on a BRIGHT_CELLS grid; error from every other midpoint)."""
    grid = posterior_grid(target, BRIGHT_CELLS)
    per_cell = expected_bright(target, grid.midpoints)
    truth = float(grid.expect(per_cell))
    error = abs(truth - float(grid.expect(per_cell, every=2)))
    test = cv_test(run.bright, run.bright_at_start, truth)
    z = float(stats.norm.isf(alpha / 2.0)) + _Z_POWER
    return GateResult.of_test(
        "exact-start-bright",
        test.t,
        test.p,
        alpha,
        len(run.bright),
        z * test.se / max(truth, 1e-300),
        "relative error of the mean bright count",
        detail=f"mean bright count {test.estimate:.4f} against E_pi sum_n (1 - B_n/L_n) = "
        f"{truth:.4f} (quadrature error {error:.1e}); {len(run.bright)} chains, {plan.steps} "
        f"steps each{_warmup_text(plan)}",
    )


def _bonferroni(
    results: list[GateResult], gate: str, alpha: float, what: str, n: int
) -> GateResult:
    """One verdict from several tests at alpha / m each: the smallest p times m. Keeps each
    KS's ECDF band, named by what it tested (the report plots them)."""
    m = len(results)
    worst = min(results, key=lambda r: r.p_value)
    p = min(1.0, m * worst.p_value)
    first = results[0]
    return GateResult.of_test(
        gate,
        worst.statistic,
        p,
        alpha,
        n,
        first.detectable,
        f"{first.detectable_measure} ({first.gate})",
        detail=f"{what}; Bonferroni over "
        + "; ".join(f"{r.gate} p = {r.p_value:.3g}" for r in results),
        false_pass=first.false_pass,
        ecdf=tuple(dataclasses.replace(b, label=r.gate) for r in results for b in r.ecdf),
    )


def end_state_gate(
    target: Any, law: ExactLaw, run: Replay, plan: Plan, alpha: float, rng: np.random.Generator
) -> GateResult:
    """The end states against the target (module docstring)."""
    kind, ends = target.kind, run.ends
    n = len(ends)
    what = f"{n} end states, {plan.warmup + plan.steps} steps from exact starts"
    if kind == "factor-graph":
        states = np.asarray(ends, dtype=np.int64)
        inside = np.all((states >= 0) & (states < target.D), axis=1)
        shape = (target.D,) * target.n_vars
        idx = np.where(inside, np.ravel_multi_index(tuple(states.T), shape, mode="clip"), -1)
        res = chisquare_gof(idx, target.pmf, alpha)
        detail = f"{what}, against the enumerated joint; {res.detail}"
        return GateResult(**{**res.__dict__, "gate": "exact-start-chi-square", "detail": detail})
    checks = []
    if kind == "factor-graph-continuous":
        checks.append(lambda a: _boxes(target, ends, a))
    elif kind == "posterior-1d":
        checks.append(lambda a: ks_1samp(ends.reshape(-1), target.cdf, a, "KS of x"))
    else:
        for j in range(target.D):
            cdf = functools.partial(target.marginal_cdf, j)
            checks.append(lambda a, j=j, cdf=cdf: ks_1samp(ends[:, j], cdf, a, f"KS of x[{j}]"))
    if law.log_density is not None:
        fresh = law.draw(REFERENCE_DRAWS * n, rng)
        checks.append(
            lambda a: _renamed(
                ks_2samp(law.log_density(ends), law.log_density(fresh), a),
                f"two-sample KS of the log density against {REFERENCE_DRAWS * n} fresh draws",
            )
        )
    parts = [check(alpha / len(checks)) for check in checks]
    return _bonferroni(parts, "exact-start-ks", alpha, what, n)


def _renamed(result: GateResult, gate: str) -> GateResult:
    return GateResult(**{**result.__dict__, "gate": gate})


def _boxes(target: Any, ends: np.ndarray, alpha: float) -> GateResult:
    """Chi-square of the end states' boxes against the quadrature box probabilities."""
    from harness.gates.continuous_chain import N_BINS

    probs = np.asarray(target.bin_probabilities(N_BINS), dtype=np.float64).ravel()
    edges = np.linspace(target.a, target.b, N_BINS + 1)
    cells = np.clip(np.searchsorted(edges, ends, side="right") - 1, 0, N_BINS - 1)
    outside = np.any((ends < target.a) | (ends > target.b), axis=1)
    idx = np.where(outside, -1, np.ravel_multi_index(tuple(cells.T), (N_BINS,) * ends.shape[1]))
    res = chisquare_gof(idx, probs, alpha)
    return _renamed(res, f"chi-square of the {N_BINS}^{ends.shape[1]} boxes")


def run(
    spec: Any,
    target: Any,
    output: Any,
    alpha: float,
    params: Mapping[str, Any],
    context: GateContext,
) -> list[GateResult]:
    """The exact-start gates of one case, ``alpha`` split evenly over them. The chains run in
    batches (LOOKS); after each but the last the moments test spends EARLY_WEIGHT of its alpha,
    and a kernel it already rejects stops there (a gross bug costs a fraction of the budget)."""
    law = exact_law(target)
    names = {p.name for p in getattr(spec, "params", ())}
    thinned = "thin" in names
    thin = int(spec.validate(params)["thin"]) if thinned else 1
    bright = _reports_bright(output, target)
    plan = plan_chains(law, output, thin, _auxiliary(spec, output), bright, thinned)
    starts = law.draw(plan.chains, context.rng)
    gates = 2 + plan.bright
    a = alpha / gates
    parts: list[Replay] = []
    looks: list[Look] = []
    done = 0
    for share in LOOKS:
        upto = max(done + 1, round(share * plan.chains))
        parts.append(replay(target, law, plan, context, starts[done:upto], spec.name))
        done = upto
        so_far = _join(parts)
        if done == plan.chains:
            break
        if done < MIN_LOOK_CHAINS:
            continue
        tests = moment_tests(law, so_far)
        looks.append(Look(done, min(1.0, len(tests) * min(t.p for t in tests)), EARLY_WEIGHT))
        if looks[-1].p < EARLY_WEIGHT * a:
            break
    out = [
        moments_gate(law, so_far, plan, a, looks),
        end_state_gate(target, law, so_far, plan, a, context.rng),
    ]
    if plan.bright and so_far.bright is not None:
        out.append(bright_gate(target, so_far, plan, a))
    return out


SUPPLEMENTS: tuple[Supplement, ...] = (Supplement("exact-start", applies, run),)
