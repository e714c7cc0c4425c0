"""The Carlin & Chib sampler of the ARCH experiment (000_26bed7cc1ef3ab92.txt, Sec. 5.2).

The product space of Carlin & Chib (1995) (notes-racing-appendix.md, C). The state is
(q, phi_5, ..., phi_30), phi_j = log(alpha_0..alpha_j, nu) (positives on the log scale). One sweep:
1. phi_q of the current model: a Langevin proposal and an MH test;
2. phi_j ~ pseudo-prior_j for every j != q;
3. q | phi ~ pi~_q p(r | phi_q) p(phi_q) / pseudo-prior_q(phi_q): a |Q| = 6 arm discrete draw;
4. during adaptation only, the adjusted priors pi~ move towards a flat p~(q | r).
Two versions run on the same data:
- ``exact``: Gumbel-max Gibbs draw of q over all N terms of all 6 models (cost 6 N) and MALA
  with the full-data gradient (cost N; the current state's terms count as cached);
- ``sub``: Racing-Normal Gibbs (``implementations.racing.fast.racing_normal``, pairwise variance,
  exact_answer=True so its error is measured against the exact draw under the same Gumbel noise)
  and an SGLD proposal corrected by the two-arm racing MH test
  (``implementations.racing.reference.race_two_arms``; 000, Sec. 4, Eq. 12), both on
  control-variate rewards (000, Sec. 3.4; see ``control_variates``).

The paper's Appx. C.2 with the sampler's details is unavailable; every choice it would have fixed
is made here and documented where it is implemented:
- pseudo-priors: Gaussians on phi with the moments of a pilot MALA chain per model
  (``pilot_fit``; the Laplace approximation alone made the chain stick in large models);
- adjusted priors: stochastic approximation towards a flat p~(q | r) (``adapt_step``), then fixed
  to the exact adaptation's second-half average for both samplers (``fixed_log_pi_tilde``);
- SGLD: preconditioned by the pilot covariance, step eps = step * d^(-1/3), mini-batch ``batch``,
  the reverse density q(x | x') from the same mini-batch (``sgld_mh``).
Costs are likelihood terms evaluated ("evals"): one per term and parameter value, gradient
included; the exact MH decision and exact Gibbs answer computed beside Sub to measure its errors,
and the full reward matrix handed to ``racing_normal`` (which reads only what it races), are not
counted. The pilot's cost is reported apart (shared by both samplers).
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.linalg import solve_triangular

from harness.experiments.racing_arch.control_variates import (
    ParameterAnchor,
    data_cv,
    param_cv,
    param_cv_grad,
    parameter_anchor,
    variance_factors,
)
from harness.experiments.racing_arch.model import (
    ArchData,
    ModelFit,
    config_data,
    full_loglik_grad,
    laplace_fit,
    log_prior,
    log_prior_grad,
    pseudo_log_density,
    term_grads,
    term_loglik,
)
from harness.experiments.racing_arch.settings import MODELS, SAMPLERS, ArchConfig
from harness.targets.discrete import DiscreteFactorTarget
from implementations.racing.reference import race_two_arms


@dataclass(frozen=True, eq=False)
class Problem:
    """Everything a sweep reads: settings, data, pilot fits and control-variate anchors."""

    config: ArchConfig
    data: ArchData
    fits: tuple[ModelFit, ...]
    anchors: tuple[ParameterAnchor, ...]
    log_pi: np.ndarray


def build_problem(config: ArchConfig, fits: tuple[ModelFit, ...]) -> Problem:
    data = config_data(config)
    anchors = tuple(parameter_anchor(f, data) for f in fits)
    return Problem(config, data, fits, anchors, np.full(len(MODELS), -math.log(len(MODELS))))


@dataclass
class ChainState:
    """The evolving state of one chain (mutable on purpose: a sweep updates it in place)."""

    k: int
    phis: list[np.ndarray]
    log_pi_tilde: np.ndarray
    rng: np.random.Generator
    evals: int = 0
    sweeps: int = 0

    def to_record(self) -> dict[str, Any]:
        return {
            "k": self.k,
            "phis": [p.tolist() for p in self.phis],
            "log_pi_tilde": self.log_pi_tilde.tolist(),
            "rng": self.rng.bit_generator.state,
            "evals": self.evals,
            "sweeps": self.sweeps,
        }

    @classmethod
    def from_record(cls, rec: Mapping[str, Any]) -> ChainState:
        rng = np.random.Generator(np.random.PCG64())
        rng.bit_generator.state = rec["rng"]
        return cls(
            int(rec["k"]),
            [np.asarray(p, dtype=np.float64) for p in rec["phis"]],
            np.asarray(rec["log_pi_tilde"], dtype=np.float64),
            rng,
            int(rec["evals"]),
            int(rec["sweeps"]),
        )


@dataclass
class Tally:
    """Per-chunk counts; turned into a record by ``as_record``."""

    q: list[int] = field(default_factory=list)
    gibbs_evals: int = 0
    mh_evals: int = 0
    gibbs_draws: int = 0
    gibbs_errors: int = 0
    gibbs_early: int = 0
    mh_tests: int = 0
    mh_errors: int = 0
    mh_early: int = 0
    mh_accepts: int = 0
    cv_log10: dict[str, list[float]] = field(default_factory=dict)
    trace: list[list[float]] = field(default_factory=list)

    def add_cv(self, name: str, value: float) -> None:
        self.cv_log10.setdefault(name, []).append(value)

    def as_record(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        out["cv_log10"] = {k: _sum_count(v) for k, v in self.cv_log10.items()}
        return out


def _sum_count(values: list[float]) -> dict[str, float]:
    finite = [v for v in values if math.isfinite(v)]
    return {"sum": float(sum(finite)), "sumsq": float(sum(v * v for v in finite)), "n": len(finite)}


# ---------------------------------------------------------------------------------------------
# Langevin proposals and exact MALA (also the pilot chain)
# ---------------------------------------------------------------------------------------------


def step_size(config: ArchConfig, dim: int) -> float:
    return config.step * dim ** (-1.0 / 3.0)


def langevin_move(
    fit: ModelFit, phi: np.ndarray, grad: np.ndarray, eps: float, xi: np.ndarray
) -> np.ndarray:
    """x' = x + (eps/2) M grad + sqrt(eps) L xi with M = L L^T the pilot covariance."""
    return phi + 0.5 * eps * (fit.cov @ grad) + math.sqrt(eps) * (fit.chol @ xi)


# The target is truncated to this box of phi = log(alpha, nu): the Gamma(1, 1) prior puts mass
# below 1e-17 outside it, and it keeps exp(phi) finite when a noisy gradient throws a proposal
# far away (such a proposal is rejected, as its target density is taken as zero).
PHI_BOX = (-40.0, math.log(40.0))


def in_support(phi: np.ndarray) -> bool:
    return bool(np.all(phi >= PHI_BOX[0]) and np.all(phi <= PHI_BOX[1]))


def log_q(fit: ModelFit, to: np.ndarray, frm: np.ndarray, grad: np.ndarray, eps: float) -> float:
    """log N(to; frm + (eps/2) M grad, eps M) up to the constant shared by both directions."""
    z = solve_triangular(fit.chol, to - frm - 0.5 * eps * (fit.cov @ grad), lower=True)
    return -0.5 * float(z @ z) / eps


def mala_step(
    data: ArchData, fit: ModelFit, phi: np.ndarray, eps: float, rng: np.random.Generator
) -> tuple[np.ndarray, bool]:
    """One exact MH step with a full-gradient Langevin proposal preconditioned by ``fit.cov``."""
    ll, g = full_loglik_grad(data, fit.q, phi)
    g = g + log_prior_grad(phi)
    prop = langevin_move(fit, phi, g, eps, rng.standard_normal(fit.dim))
    log_u = math.log(1.0 - rng.random())
    if not in_support(prop):
        return phi, False
    ll_p, g_p = full_loglik_grad(data, fit.q, prop)
    g_p = g_p + log_prior_grad(prop)
    forward = ll + log_prior(phi) + log_q(fit, prop, phi, g, eps)
    backward = ll_p + log_prior(prop) + log_q(fit, phi, prop, g_p, eps)
    if backward - forward > log_u:
        return prop, True
    return phi, False


def pilot_fit(q: int, data: ArchData, config: ArchConfig) -> ModelFit:
    """Pseudo-prior of model q: a Gaussian on phi with the moments of a pilot MALA chain.

    Laplace alone is a poor pseudo-prior for q >= 15: the posteriors of superfluous log-alphas
    are skewed (log of a near-exponential), and the resulting mismatch makes the Carlin & Chib
    chain stick in a model for many sweeps. Moment matching minimises KL(posterior || Gaussian).
    The pilot starts at the Laplace mode, uses its covariance as preconditioner, and drops its
    first quarter; its cost (terms evaluated) is reported apart and shared by both samplers.
    """
    lap = laplace_fit(q, data)
    rng = np.random.default_rng(np.random.SeedSequence(config.seed, spawn_key=(2, q)))
    eps = step_size(config, lap.dim)
    phi, burn = lap.mean.copy(), config.pilot_iterations // 4
    draws, accepted = [], 0
    for it in range(config.pilot_iterations):
        phi, ok = mala_step(data, lap, phi, eps, rng)
        accepted += int(ok)
        if it >= burn:
            draws.append(phi)
    D = np.array(draws)
    cov = np.cov(D.T)
    evals = lap.evals + config.pilot_iterations * data.N
    fit = ModelFit(q, D.mean(axis=0), cov, np.linalg.cholesky(cov), lap.log_evidence, evals)
    return dataclasses.replace(fit, pilot_accept_rate=accepted / config.pilot_iterations)


def _mala_exact(problem: Problem, st: ChainState, tally: Tally) -> None:
    """Exact MALA for phi_q; cost N (the current state's terms count as cached)."""
    fit = problem.fits[st.k]
    eps = step_size(problem.config, fit.dim)
    st.phis[st.k], accepted = mala_step(problem.data, fit, st.phis[st.k], eps, st.rng)
    tally.mh_evals += problem.data.N
    tally.mh_tests += 1
    tally.mh_accepts += int(accepted)


# ---------------------------------------------------------------------------------------------
# Sub: SGLD corrected by the racing MH test
# ---------------------------------------------------------------------------------------------


def cv_terms(
    problem: Problem, kind: str, j: int, psi: np.ndarray, s: np.ndarray, rows: Any
) -> tuple[np.ndarray | float, float]:
    """(h_n at ``rows``, E_n[h]) of model j's control variate ``kind`` (zero for "none")."""
    if kind == "parameter":
        return param_cv(problem.anchors[j], problem.data, psi, rows)
    if kind == "data":
        return data_cv(problem.data, MODELS[j], psi, s, rows)
    return 0.0, 0.0


def _batch_grad(
    problem: Problem, j: int, phi: np.ndarray, rows: np.ndarray, cv: bool
) -> np.ndarray:
    """SGLD gradient of the log posterior in phi from the terms ``rows`` (000, Sec. 5.2).

    With the parameter control variate the mini-batch estimates the gradient of
    sum_n (l_n - h_n) + N E[h] instead of sum_n l_n: the same rewards the race uses.
    """
    data, N = problem.data, problem.data.N
    psi = np.exp(phi)
    _, G = term_grads(psi, MODELS[j], data.u[rows], data.X[rows])
    g_psi = (N / rows.size) * G.sum(axis=0)
    if cv:
        h_sum, h_mean = param_cv_grad(problem.anchors[j], data, psi, rows)
        g_psi += N * h_mean - (N / rows.size) * h_sum
    return psi * g_psi + log_prior_grad(phi)


def _residuals(problem: Problem, j: int, psi: np.ndarray, rows: Any) -> tuple[np.ndarray, float]:
    """Control-variate residuals l_n - h_n of model j at ``psi`` and ``rows``, and E_n[h]."""
    data = problem.data
    terms, s = term_loglik(psi, MODELS[j], data.u[rows], data.X[rows])
    h, e_h = cv_terms(problem, problem.config.control_variate, j, psi, s, rows)
    return terms - h, e_h


def sgld_mh(problem: Problem, st: ChainState, tally: Tally) -> None:
    """SGLD proposal (one mini-batch) corrected by the racing MH test of Eq. 12.

    q(x'|x) = N(x'; x + (eps/2) M g_S(x), eps M), and q(x|x') uses g_S(x') on the SAME indices S:
    S is drawn independently of x, so for each S this is an MH kernel with a fixed drift and
    detailed balance holds exactly (an independent batch for the reverse move would not).
    Arm 1 keeps x: f_0(1) = u p(x) q(x'|x); arm 2 moves: f_0(2) = p(x') q(x|x'); their rewards
    are the control-variate residuals l_n - h_n + E[h] + log f_0 / N, visited in the order of a
    fresh permutation. The exact decision under the same u and proposal is computed apart,
    uncounted, to measure errors.
    """
    cfg = problem.config
    j, fit, N = st.k, problem.fits[st.k], problem.data.N
    eps = step_size(cfg, fit.dim)
    cv = cfg.control_variate == "parameter"
    phi = st.phis[j]
    rows = st.rng.choice(N, size=cfg.batch, replace=False)
    g = _batch_grad(problem, j, phi, rows, cv)
    prop = langevin_move(fit, phi, g, eps, st.rng.standard_normal(fit.dim))
    log_u = math.log(1.0 - st.rng.random())
    tally.mh_tests += 1
    if not in_support(prop):
        tally.mh_evals += rows.size  # the gradient at x was spent; the test needs nothing
        return
    g_p = _batch_grad(problem, j, prop, rows, cv)
    f0 = (
        log_u + log_prior(phi) + log_q(fit, prop, phi, g, eps),
        log_prior(prop) + log_q(fit, phi, prop, g_p, eps),
    )
    psis = (np.exp(phi), np.exp(prop))
    consts = [
        f / N + _residuals(problem, j, psi, slice(0, 0))[1] for f, psi in zip(f0, psis, strict=True)
    ]

    def rewards(idx: Sequence[int]) -> np.ndarray:
        return np.array(
            [_residuals(problem, j, psi, idx)[0] + c for psi, c in zip(psis, consts, strict=True)]
        )

    accept, used = race_two_arms(rewards, N, st.rng.permutation(N), cfg.delta, cfg.m1)
    exact = _exact_mh_decision(problem, j, psis, f0[1] - f0[0])
    tally.mh_evals += 2 * rows.size + 2 * used
    tally.mh_errors += int(accept != exact)
    tally.mh_early += int(used < N)
    if accept:
        st.phis[j] = prop
        tally.mh_accepts += 1


def _exact_mh_decision(
    problem: Problem, j: int, psis: tuple[np.ndarray, np.ndarray], f0_diff: float
) -> bool:
    data, q = problem.data, MODELS[j]
    ll = [float(term_loglik(p, q, data.u, data.X)[0].sum()) for p in psis]
    return ll[1] - ll[0] + f0_diff > 0.0


# ---------------------------------------------------------------------------------------------
# Pseudo-prior refresh and the Gibbs draw of q
# ---------------------------------------------------------------------------------------------


def refresh_pseudo(problem: Problem, st: ChainState) -> None:
    """phi_j ~ pseudo-prior_j for every model j other than the current one (no likelihood)."""
    for j, fit in enumerate(problem.fits):
        if j != st.k:
            st.phis[j] = fit.mean + fit.chol @ st.rng.standard_normal(fit.dim)


def _gibbs_f0(problem: Problem, st: ChainState) -> np.ndarray:
    """log f_0(j) = log pi~_j + log p(phi_j | j) - log pseudo-prior_j(phi_j) (Carlin & Chib)."""
    return np.array(
        [
            st.log_pi_tilde[j] + log_prior(phi) - pseudo_log_density(problem.fits[j], phi)
            for j, phi in enumerate(st.phis)
        ]
    )


def reward_rows(problem: Problem, st: ChainState) -> tuple[np.ndarray, list[np.ndarray]]:
    """Raw rewards l[j, n] = log p(r_t | phi_j, q_j) of all models, and each model's sigma^2."""
    data = problem.data
    rows, sig2 = [], []
    for j, phi in enumerate(st.phis):
        terms, s = term_loglik(np.exp(phi), MODELS[j], data.u, data.X)
        rows.append(terms)
        sig2.append(s)
    return np.array(rows), sig2


def _gibbs_exact(problem: Problem, st: ChainState, tally: Tally) -> None:
    L, _ = reward_rows(problem, st)
    logw = L.sum(axis=1) + _gibbs_f0(problem, st)
    st.k = int(np.argmax(logw + st.rng.gumbel(size=logw.size)))
    tally.gibbs_evals += L.size
    tally.gibbs_draws += 1


def residual_matrix(
    problem: Problem, st: ChainState, L: np.ndarray, sig2: list[np.ndarray], kind: str
) -> np.ndarray:
    if kind == "none":
        return L
    R = np.empty_like(L)
    rows = slice(None)
    for j, phi in enumerate(st.phis):
        h, e_h = cv_terms(problem, kind, j, np.exp(phi), sig2[j], rows)
        R[j] = L[j] - h + e_h
    return R


def gibbs_racing(problem: Problem, st: ChainState, tally: Tally) -> None:
    """Racing-Normal draw of q on control-variate rewards, measured against the exact draw."""
    from implementations.racing import fast  # Numba: compiled on first use, cached

    cfg = problem.config
    L, sig2 = reward_rows(problem, st)
    residuals = {}
    for kind in ("parameter", "data"):
        residuals[kind] = residual_matrix(problem, st, L, sig2, kind)
        marg, pair = variance_factors(L, residuals[kind])
        tally.add_cv(f"{kind}_marginal", marg)
        tally.add_cv(f"{kind}_pairwise", pair)
    R = residuals.get(cfg.control_variate, L)
    target = DiscreteFactorTarget(R, _gibbs_f0(problem, st))
    draw = fast.racing_normal(
        target, 1, st.rng, delta=cfg.delta, m1=cfg.m1, variance="pairwise", exact_answer=True
    )
    st.k = int(draw.values[0])
    tally.gibbs_evals += int(draw.evals)
    tally.gibbs_draws += 1
    tally.gibbs_errors += int(draw.values[0] != draw.extras["exact"][0])
    tally.gibbs_early += int(bool(draw.extras["stopped_early"][0]))


# ---------------------------------------------------------------------------------------------
# Sweeps, adaptation and a chunk of sweeps
# ---------------------------------------------------------------------------------------------


def sweep(problem: Problem, sampler: str, st: ChainState, tally: Tally) -> None:
    """One Carlin & Chib sweep: update phi_q, refresh the others, draw q."""
    before = tally.gibbs_evals + tally.mh_evals
    if sampler == "exact":
        _mala_exact(problem, st, tally)
        refresh_pseudo(problem, st)
        _gibbs_exact(problem, st, tally)
    else:
        sgld_mh(problem, st, tally)
        refresh_pseudo(problem, st)
        gibbs_racing(problem, st, tally)
    st.evals += tally.gibbs_evals + tally.mh_evals - before
    st.sweeps += 1
    tally.q.append(MODELS[st.k])


def adapt_step(problem: Problem, st: ChainState) -> None:
    """Stochastic approximation towards a flat p~(q | r) (documented choice; Appx. C.2 missing).

    log pi~_j -= gamma_k (1[q = j] - 1/|Q|), gamma_k = gain * min(1, t0 / k): the visited model
    loses weight, the others gain it, so visits equalise; sum gamma = inf, sum gamma^2 < inf.
    Then pi~_q p(r | q) is nearly constant, and pi_q / pi~_q estimates p(q | r) (000, Sec. 5.2).
    """
    cfg = problem.config
    gamma = cfg.adapt_gain * min(1.0, cfg.adapt_t0 / st.sweeps)
    visit = np.zeros(len(MODELS))
    visit[st.k] = 1.0
    st.log_pi_tilde = st.log_pi_tilde - gamma * (visit - 1.0 / len(MODELS))


def log_posterior_estimate(log_pi: np.ndarray, log_pi_tilde: np.ndarray) -> np.ndarray:
    """log p(q | r) estimated by normalising pi_q / pi~_q (000, Sec. 5.2, Fig. 2(b))."""
    x = log_pi - log_pi_tilde
    return x - (x.max() + math.log(np.exp(x - x.max()).sum()))


def fixed_log_pi_tilde(config: ArchConfig, adapt_chunks: Sequence[Mapping]) -> np.ndarray:
    """pi~ of the fixed runs: the exact adaptation's estimate of log p(q | r), averaged over its
    second half (Polyak-Ruppert), turned back into log pi~ = log pi - estimate.

    The last iterate alone is off by a few nats for the least probable models (the chain dwells
    in a model for a while and gamma is still ~ t0 / k), which would tilt p~(q | r) far from flat.
    """
    trace = [t for c in sorted(adapt_chunks, key=lambda c: c["start"]) for t in c["trace"]]
    half = [t[2:] for t in trace if t[0] > config.adapt_iterations // 2] or [trace[-1][2:]]
    log_pi = np.full(len(MODELS), -math.log(len(MODELS)))
    return log_pi - np.mean(np.asarray(half), axis=0)


def part_names(config: ArchConfig) -> list[str]:
    """The chains: each sampler's adaptation, then ``chains`` fixed-pi~ runs per sampler."""
    runs = [f"run/{s}/{c}" for s in SAMPLERS for c in range(config.chains)]
    return ["adapt/exact", "adapt/sub", *runs]


def part_length(config: ArchConfig, part: str) -> int:
    return config.adapt_iterations if part.startswith("adapt/") else config.iterations


def _stream(config: ArchConfig, part: str) -> np.random.Generator:
    """An independent Generator per part, fixed by (seed, part); later chunks carry its state."""
    kind, sampler, *chain = part.split("/")
    code = (1 if kind == "adapt" else 2, SAMPLERS.index(sampler), int(chain[0]) if chain else 0)
    return np.random.default_rng(np.random.SeedSequence(config.seed, spawn_key=(1, *code)))


def first_state(
    problem: Problem,
    part: str,
    adapt_end: Mapping[str, Any] | None,
    fixed: np.ndarray | None,
) -> ChainState:
    """Adaptation starts at q = 5 with pi~ = pi; a fixed run starts where its sampler's
    adaptation ended (``adapt_end``, that run is its burn-in), with pi~ = ``fixed`` for both
    samplers. Sub's adaptation is charged the parameter control variate's setup: every model's
    terms at its anchor once, 6 N."""
    rng = _stream(problem.config, part)
    if part.startswith("adapt/"):
        st = ChainState(0, [f.mean.copy() for f in problem.fits], problem.log_pi.copy(), rng)
        refresh_pseudo(problem, st)
        if part == "adapt/sub" and problem.config.control_variate == "parameter":
            st.evals = problem.data.N * len(MODELS)
        return st
    if adapt_end is None or fixed is None:
        raise ValueError(f"{part} starts from its finished adaptation; valid: its last chunk")
    end = ChainState.from_record(adapt_end["state"])
    return ChainState(end.k, end.phis, fixed.copy(), rng)


def run_chunk(problem: Problem, part: str, st: ChainState, start: int) -> dict[str, Any]:
    """Sweeps ``start``.. of ``part`` (at most ``chunk`` of them) from ``st``: one record."""
    cfg = problem.config
    stop = min(start + cfg.chunk, part_length(cfg, part))
    sampler = part.split("/")[1]
    adapt = part.startswith("adapt/")
    tally = Tally()
    t0 = time.perf_counter()
    for it in range(start, stop):
        sweep(problem, sampler, st, tally)
        if adapt:
            adapt_step(problem, st)
            if (it + 1) % cfg.trace_every == 0 or it + 1 == stop:
                est = log_posterior_estimate(problem.log_pi, st.log_pi_tilde)
                tally.trace.append([it + 1, st.evals, *est.tolist()])
    return {
        "key": f"{part}:{start}",
        "kind": "chunk",
        "part": part,
        "sampler": sampler,
        "start": start,
        "stop": stop,
        "wall_s": time.perf_counter() - t0,
        **tally.as_record(),
        "state": st.to_record(),
    }
