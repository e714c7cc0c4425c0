"""The Carlin & Chib sampler of 000 Sec. 5.2 and its tasks. A sweep: phi_q by Langevin + MH,
phi_j ~ pseudo-prior_j for j != q, then q by a 6-arm draw. ``exact``: MALA and Gumbel-max over all
6 N terms; ``sub``: SGLD corrected by the racing MH test (Eq. 12), then Racing-Normal, on
control-variate rewards. A chunk resumes from the state (Generator included) its predecessor's
record saved, so a resumed run draws what an uninterrupted one would.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
from scipy.linalg import solve_triangular

from harness.registry import registry_for
from harness.spec import Draws, sample
from harness.targets import arch
from harness.targets.arch import MODELS, ArchData, ModelFit
from harness.targets.discrete import DiscreteFactorTarget
from harness.tasks import Records

if TYPE_CHECKING:
    from harness.experiments.racing_arch import ArchConfig

SAMPLERS = ("exact", "sub")
LOG_PI = np.full(len(MODELS), -math.log(len(MODELS)))  # the prior pi: uniform over q
LOG_PI.setflags(write=False)
Rec = Mapping[str, Any]


def config_returns(config: ArchConfig) -> tuple[np.ndarray, dict[str, Any]]:
    """The N + QMAX returns of ``config`` and what a record says of them: the last ones of its
    index, or a series simulated from the model (fixed by the seed)."""
    if config.data != "simulated":
        series = arch.index_returns(config.data, config.N + arch.QMAX)
        return series.returns, series.describe()
    r = arch.simulate_returns(config.N, config.true_alpha, config.true_nu, config.seed)
    return r, {
        "simulated": True,
        "note": "simulated ARCH returns; the paper's Shanghai index data are not available",
        "model": f"ARCH({config.true_q}) with t_{config.true_nu:g}(0, 1) innovations",
        "true_q": config.true_q,
        "true_alpha": list(config.true_alpha),
        "true_nu": config.true_nu,
    }


def race_two_arms(
    rewards: Any, N: int, order: np.ndarray, delta: float, m1: int
) -> tuple[bool, int]:
    """Sub's MH test: racing-mh's race of 000 Eq. 12 as registered (its reference, which
    ``harness verify`` gates through racing-mh's chains)."""
    return registry_for(()).get("racing-mh").part("race_two_arms")(rewards, N, order, delta, m1)


def racing_normal(
    target: DiscreteFactorTarget, n: int, rng: np.random.Generator, delta: float, m1: int
) -> Draws:
    """Sub's draw of q: the registered Racing-Normal (Numba build, pairwise variance), each
    draw with the exact answer beside it."""
    spec = registry_for(()).get("racing-normal")
    kw = {"delta": delta, "m1": m1, "variance": "pairwise", "exact_answer": True}
    return sample(spec, "numba", target, n, rng, **kw)


@functools.lru_cache(maxsize=4)
def config_data(config: ArchConfig) -> ArchData:
    """The data of ``config`` (made once per process)."""
    return arch.arch_data(config_returns(config)[0])


@dataclass(frozen=True, eq=False)
class Problem:
    """What a sweep reads: settings, data, pilot fits (preconditioners and control-variate
    anchors) and the pseudo-priors: the fits, or their covariance scaled by ``pseudo_scale``^2
    (a reading of the unavailable Appx. C.2, for the diagnosis of study.py)."""

    config: ArchConfig
    data: ArchData
    fits: tuple[ModelFit, ...]
    anchors: tuple[arch.ParameterAnchor, ...]
    pseudo: tuple[ModelFit, ...]

    @classmethod
    def build(
        cls, config: ArchConfig, fits: tuple[ModelFit, ...], pseudo_scale: float = 1.0
    ) -> Problem:
        data = config_data(config)
        s = pseudo_scale
        pseudo = tuple(dataclasses.replace(f, cov=f.cov * s * s, chol=f.chol * s) for f in fits)
        anchors = tuple(arch.parameter_anchor(f, data) for f in fits)
        return cls(config, data, fits, anchors, pseudo if s != 1.0 else fits)


@dataclass
class ChainState:
    """The evolving state of one chain (a sweep updates it in place)."""

    k: int
    phis: list[np.ndarray]
    log_pi_tilde: np.ndarray
    rng: np.random.Generator
    evals: int = 0
    sweeps: int = 0

    def to_record(self) -> dict[str, Any]:
        phis, pi = [p.tolist() for p in self.phis], self.log_pi_tilde.tolist()
        out = {"k": self.k, "phis": phis, "log_pi_tilde": pi, "rng": self.rng.bit_generator.state}
        return out | {"evals": self.evals, "sweeps": self.sweeps}

    @classmethod
    def from_record(cls, rec: Mapping[str, Any]) -> ChainState:
        rng = np.random.Generator(np.random.PCG64())
        rng.bit_generator.state = rec["rng"]
        phis = [np.asarray(p, dtype=np.float64) for p in rec["phis"]]
        pi = np.asarray(rec["log_pi_tilde"], dtype=np.float64)
        return cls(int(rec["k"]), phis, pi, rng, int(rec["evals"]), int(rec["sweeps"]))


@dataclass
class Tally:
    """Per-chunk counts, the body of its record."""

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

    def as_record(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        for k, values in self.cv_log10.items():
            v = [x for x in values if math.isfinite(x)]
            sq = float(sum(x * x for x in v))
            out["cv_log10"][k] = {"sum": float(sum(v)), "sumsq": sq, "n": len(v)}
        return out


@dataclass(frozen=True, eq=False)
class GibbsRace:
    """What a Racing-Normal draw of q saw: raw terms L (6, N), residual rewards by control
    variate, log f_0, the Gumbel noise, and its answer beside the exact one."""

    L: np.ndarray
    residuals: Mapping[str, np.ndarray]
    log_f0: np.ndarray
    eps: np.ndarray
    value: int
    exact: int
    evals: int
    early: bool


@dataclass(frozen=True, eq=False)
class MHRace:
    """What a racing MH test saw: the model j, (psi, psi'), log f_0 of both arms (Eq. 12), the
    exact log ratio, and its answer beside the exact one after ``used`` indices."""

    j: int
    psis: tuple[np.ndarray, np.ndarray]
    f0: tuple[float, float]
    log_ratio: float
    accept: bool
    exact: bool
    used: int


class Probe(Protocol):
    def gibbs(self, race: GibbsRace) -> None: ...

    def mh(self, race: MHRace) -> None: ...


def langevin_move(
    fit: ModelFit, phi: np.ndarray, grad: np.ndarray, eps: float, xi: np.ndarray
) -> np.ndarray:
    """x' = x + (eps/2) M grad + sqrt(eps) L xi with M = L L^T the pilot covariance."""
    return phi + 0.5 * eps * (fit.cov @ grad) + math.sqrt(eps) * (fit.chol @ xi)


def log_q(fit: ModelFit, to: np.ndarray, frm: np.ndarray, grad: np.ndarray, eps: float) -> float:
    """log N(to; frm + (eps/2) M grad, eps M) up to the constant shared by both directions."""
    z = solve_triangular(fit.chol, to - frm - 0.5 * eps * (fit.cov @ grad), lower=True)
    return -0.5 * float(z @ z) / eps


def mala_step(
    data: ArchData, fit: ModelFit, phi: np.ndarray, eps: float, rng: np.random.Generator
) -> tuple[np.ndarray, bool]:
    """One exact MH step with a full-gradient Langevin proposal preconditioned by ``fit.cov``."""
    ll, g = arch.full_loglik_grad(data, fit.q, phi)
    g = g + arch.log_prior_grad(phi)
    prop = langevin_move(fit, phi, g, eps, rng.standard_normal(fit.dim))
    log_u = math.log(1.0 - rng.random())
    if not arch.in_support(prop):
        return phi, False
    ll_p, g_p = arch.full_loglik_grad(data, fit.q, prop)
    g_p = g_p + arch.log_prior_grad(prop)
    forward = ll + arch.log_prior(phi) + log_q(fit, prop, phi, g, eps)
    backward = ll_p + arch.log_prior(prop) + log_q(fit, phi, prop, g_p, eps)
    if backward - forward > log_u:
        return prop, True
    return phi, False


def pilot_fit(q: int, data: ArchData, config: ArchConfig) -> ModelFit:
    """Pseudo-prior of model q: the moments of a pilot MALA chain (with Laplace's alone, chains
    stuck in a model for q >= 15); it also preconditions Langevin and anchors the control
    variate."""
    lap = arch.laplace_fit(q, data)
    rng = np.random.default_rng(np.random.SeedSequence(config.seed, spawn_key=(2, q)))
    eps = config.step * lap.dim ** (-1.0 / 3.0)
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
    rate = accepted / config.pilot_iterations
    return ModelFit(q, D.mean(axis=0), cov, np.linalg.cholesky(cov), lap.log_evidence, evals, rate)


def _grad(problem: Problem, j: int, phi: np.ndarray, rows: np.ndarray, cv: bool) -> np.ndarray:
    """SGLD gradient in phi from the terms ``rows``; with the parameter control variate, of
    sum_n (l_n - h_n) + N E[h] (the rewards the race uses)."""
    data, N = problem.data, problem.data.N
    psi = np.exp(phi)
    _, G = arch.term_grads(psi, MODELS[j], data.u[rows], data.X[rows])
    g_psi = (N / rows.size) * G.sum(axis=0)
    if cv:
        h_sum, h_mean = arch.param_cv_grad(problem.anchors[j], data, psi, rows)
        g_psi += N * h_mean - (N / rows.size) * h_sum
    return psi * g_psi + arch.log_prior_grad(phi)


def sgld_mh(problem: Problem, st: ChainState, tally: Tally, probe: Probe | None = None) -> None:
    """SGLD proposal corrected by the racing MH test of Eq. 12. q(x | x') takes its gradient on
    the same mini-batch S as q(x' | x): S is drawn independently of x, so detailed balance holds
    for each S. Arm 1 keeps x (f_0 = u p(x) q(x'|x)), arm 2 moves (f_0 = p(x') q(x|x')).
    ``probe`` (a diagnosis, study.py) sees the test's inputs and outcome; it draws nothing from
    the chain's Generator."""
    cfg, data = problem.config, problem.data
    j, fit, N = st.k, problem.fits[st.k], data.N
    eps = cfg.step * fit.dim ** (-1.0 / 3.0)
    cv = cfg.control_variate == "parameter"
    phi = st.phis[j]
    rows = st.rng.choice(N, size=cfg.batch, replace=False)
    g = _grad(problem, j, phi, rows, cv)
    prop = langevin_move(fit, phi, g, eps, st.rng.standard_normal(fit.dim))
    log_u = math.log(1.0 - st.rng.random())
    tally.mh_tests += 1
    if not arch.in_support(prop):
        tally.mh_evals += rows.size  # the gradient at x was spent; the test needs nothing
        return
    g_p = _grad(problem, j, prop, rows, cv)
    f0 = (
        log_u + arch.log_prior(phi) + log_q(fit, prop, phi, g, eps),
        arch.log_prior(prop) + log_q(fit, phi, prop, g_p, eps),
    )
    psis = (np.exp(phi), np.exp(prop))

    def residuals(psi: np.ndarray, idx: Any) -> tuple[np.ndarray, float]:
        terms, s = arch.term_loglik(psi, MODELS[j], data.u[idx], data.X[idx])
        h, e_h = arch.control_variate(cfg.control_variate, problem.anchors[j], data, psi, s, idx)
        return terms - h, e_h

    # Rewards l_n - h_n + E[h] + log f_0 / N, in the order of a fresh permutation.
    consts = [f / N + residuals(psi, slice(0, 0))[1] for f, psi in zip(f0, psis, strict=True)]

    def rewards(idx: Sequence[int]) -> np.ndarray:
        return np.array([residuals(psi, idx)[0] + c for psi, c in zip(psis, consts, strict=True)])

    accept, used = race_two_arms(rewards, N, st.rng.permutation(N), cfg.delta, cfg.m1)
    ll = [float(arch.term_loglik(p, MODELS[j], data.u, data.X)[0].sum()) for p in psis]
    exact = ll[1] - ll[0] + (f0[1] - f0[0]) > 0.0
    tally.mh_evals += 2 * rows.size + 2 * used
    tally.mh_errors += int(accept != exact)
    tally.mh_early += int(used < N)
    if probe is not None:
        probe.mh(MHRace(j, psis, f0, ll[1] - ll[0] + (f0[1] - f0[0]), accept, exact, used))
    if accept:
        st.phis[j] = prop
        tally.mh_accepts += 1


def refresh_pseudo(problem: Problem, st: ChainState) -> None:
    """phi_j ~ pseudo-prior_j for every model j other than the current one (no likelihood)."""
    for j, fit in enumerate(problem.pseudo):
        if j != st.k:
            st.phis[j] = fit.mean + fit.chol @ st.rng.standard_normal(fit.dim)


def _gibbs_f0(problem: Problem, st: ChainState) -> np.ndarray:
    """log f_0(j) = log pi~_j + log p(phi_j | j) - log pseudo-prior_j(phi_j) (Carlin & Chib)."""
    out = st.log_pi_tilde.copy()
    for j, phi in enumerate(st.phis):
        out[j] = out[j] + arch.log_prior(phi) - arch.gaussian_log_density(problem.pseudo[j], phi)
    return out


def residual_matrix(
    problem: Problem, st: ChainState, L: np.ndarray, sig2: list[np.ndarray], kind: str
) -> np.ndarray:
    R = np.empty_like(L)
    for j, phi in enumerate(st.phis):
        h, e_h = arch.control_variate(
            kind, problem.anchors[j], problem.data, np.exp(phi), sig2[j], slice(None)
        )
        R[j] = L[j] - h + e_h
    return R


def variance_factors(L: np.ndarray, R: np.ndarray) -> tuple[float, float]:
    """log10 of the median variance ratio raw / residual: per arm, and per pair of arms."""
    marg = np.var(L, axis=1) / np.var(R, axis=1)
    i, j = np.triu_indices(L.shape[0], 1)
    pair = np.var(L[i] - L[j], axis=1) / np.var(R[i] - R[j], axis=1)
    return float(np.log10(np.median(marg))), float(np.log10(np.median(pair)))


def gibbs_racing(
    problem: Problem, st: ChainState, tally: Tally, probe: Probe | None = None
) -> None:
    """Racing-Normal draw of q, counted against the exact draw; both control variates'
    variance cuts are measured at every draw. ``probe`` sees the race's rewards, f_0, Gumbel
    noise and outcome."""
    cfg = problem.config
    L, sig2 = arch.model_terms(problem.data, st.phis)
    residuals = {}
    for kind in ("parameter", "data"):
        residuals[kind] = residual_matrix(problem, st, L, sig2, kind)
        cuts = variance_factors(L, residuals[kind])
        for name, value in zip(("marginal", "pairwise"), cuts, strict=True):
            tally.cv_log10.setdefault(f"{kind}_{name}", []).append(value)
    target = DiscreteFactorTarget(residuals.get(cfg.control_variate, L), _gibbs_f0(problem, st))
    before = st.rng.bit_generator.state if probe is not None else None
    draw = racing_normal(target, 1, st.rng, cfg.delta, cfg.m1)
    st.k = int(draw.values[0])
    tally.gibbs_evals += int(draw.evals)
    tally.gibbs_draws += 1
    tally.gibbs_errors += int(draw.values[0] != draw.extras["exact"][0])
    tally.gibbs_early += int(bool(draw.extras["stopped_early"][0]))
    if probe is not None:
        # The kernel draws its D Exp(1) variates first (reference.py): replayed, they give the
        # Gumbel noise eps_i = -log E_i of this very draw.
        replay = np.random.Generator(np.random.PCG64())
        replay.bit_generator.state = before
        with np.errstate(divide="ignore"):
            eps = -np.log(replay.standard_exponential(target.D))
        exact = int(draw.extras["exact"][0])
        early = bool(draw.extras["stopped_early"][0])
        probe.gibbs(GibbsRace(L, residuals, target.log_f0, eps, st.k, exact, draw.evals, early))


def sweep(
    problem: Problem, sampler: str, st: ChainState, tally: Tally, probe: Probe | None = None
) -> None:
    """One Carlin & Chib sweep: update phi_q, refresh the others, draw q (Sub's races shown to
    ``probe``)."""
    before = tally.gibbs_evals + tally.mh_evals
    if sampler == "exact":
        fit = problem.fits[st.k]
        eps = problem.config.step * fit.dim ** (-1.0 / 3.0)
        st.phis[st.k], accepted = mala_step(problem.data, fit, st.phis[st.k], eps, st.rng)
        tally.mh_evals += problem.data.N
        tally.mh_tests += 1
        tally.mh_accepts += int(accepted)
        refresh_pseudo(problem, st)
        L, _ = arch.model_terms(problem.data, st.phis)
        logw = L.sum(axis=1) + _gibbs_f0(problem, st)
        st.k = int(np.argmax(logw + st.rng.gumbel(size=logw.size)))
        tally.gibbs_evals += L.size
        tally.gibbs_draws += 1
    else:
        sgld_mh(problem, st, tally, probe)
        refresh_pseudo(problem, st)
        gibbs_racing(problem, st, tally, probe)
    st.evals += tally.gibbs_evals + tally.mh_evals - before
    st.sweeps += 1
    tally.q.append(MODELS[st.k])


def adapt_step(config: ArchConfig, st: ChainState) -> None:
    """One step of pi~ towards a flat p~(q | r) after a sweep: our choice, Appx. C.2 (the
    paper's rule) is unavailable."""
    gamma = config.adapt_gain * min(1.0, config.adapt_t0 / st.sweeps)
    visit = np.zeros(len(MODELS))
    visit[st.k] = 1.0
    st.log_pi_tilde = st.log_pi_tilde - gamma * (visit - 1.0 / len(MODELS))


def log_posterior_estimate(log_pi: np.ndarray, log_pi_tilde: np.ndarray) -> np.ndarray:
    """log p(q | r) estimated by normalising pi_q / pi~_q (000, Sec. 5.2, Fig. 2(b))."""
    x = log_pi - log_pi_tilde
    return x - (x.max() + math.log(np.exp(x - x.max()).sum()))


def fixed_log_pi_tilde(config: ArchConfig, adapt_chunks: Sequence[Mapping]) -> np.ndarray:
    """pi~ of the fixed runs: log pi minus the exact adaptation's estimate averaged over its
    second half (Polyak-Ruppert: the last iterate is off by nats for the rarest models)."""
    trace = [t for c in sorted(adapt_chunks, key=lambda c: c["start"]) for t in c["trace"]]
    half = [t[2:] for t in trace if t[0] > config.adapt_iterations // 2] or [trace[-1][2:]]
    return LOG_PI - np.mean(np.asarray(half), axis=0)


def part_length(config: ArchConfig, part: str) -> int:
    return config.adapt_iterations if part.startswith("adapt/") else config.iterations


def pilot_task(config: ArchConfig, tag: str = "") -> Records:
    """The pilot fit of every model (pseudo-priors, preconditioners, anchors) and the data;
    ``tag`` prefixes the key (a variant's)."""
    data = config_data(config)
    t0 = time.perf_counter()
    fits = tuple(pilot_fit(q, data, config) for q in MODELS)
    r = data.returns
    about = {
        **config_returns(config)[1],
        "n_returns": int(r.size),
        "n_terms": data.N,
        "std": float(np.std(r)),
        "kurtosis": float(np.mean((r - r.mean()) ** 4) / np.var(r) ** 2),
        "max_abs": float(np.max(np.abs(r))),
    }
    models = [arch.fit_to_record(f) for f in fits]
    wall = time.perf_counter() - t0
    head = {"key": f"{tag}pilot", "kind": "pilot", "dataset": config.data}
    return [{**head, "wall_s": wall, "models": models, "data": about}]


@functools.lru_cache(maxsize=4)
def _problem(config: ArchConfig, models: str) -> Problem:
    return Problem.build(config, tuple(arch.fit_from_record(m) for m in json.loads(models)))


def chunk_task(
    config: ArchConfig,
    part: str,
    start: int,
    pilot: Rec,
    prev: Rec | None,
    adapt: Sequence[Rec],
    tag: str = "",
) -> Records:
    """Sweeps ``start``.. of ``part`` after ``prev`` (a run's first chunk: after its sampler's
    adaptation, with pi~ fixed from ``adapt``, the exact adaptation's chunks). Sub's adaptation
    is charged the parameter control variate's setup, 6 N terms. ``tag`` prefixes the key."""
    problem = _problem(config, json.dumps(pilot["models"]))
    kind, sampler, *chain = part.split("/")
    if start > 0 or kind == "run":
        if prev is None:
            raise ValueError(f"{part}:{start} continues a chunk; valid: its record")
        st = ChainState.from_record(prev["state"])
    if start == 0:
        code = (1 if kind == "adapt" else 2, SAMPLERS.index(sampler), int(chain[0]) if chain else 0)
        rng = np.random.default_rng(np.random.SeedSequence(config.seed, spawn_key=(1, *code)))
        if kind == "run":
            st = ChainState(st.k, st.phis, fixed_log_pi_tilde(config, adapt), rng)
        else:  # adaptation: q = 5, pi~ = pi
            st = ChainState(0, [f.mean.copy() for f in problem.fits], LOG_PI.copy(), rng)
            refresh_pseudo(problem, st)
            if sampler == "sub" and config.control_variate == "parameter":
                st.evals = problem.data.N * len(MODELS)
    stop = min(start + config.chunk, part_length(config, part))
    tally = Tally()
    t0 = time.perf_counter()
    for it in range(start, stop):
        sweep(problem, sampler, st, tally)
        if kind == "adapt":
            adapt_step(config, st)
            if (it + 1) % config.trace_every == 0 or it + 1 == stop:
                est = log_posterior_estimate(LOG_PI, st.log_pi_tilde)
                tally.trace.append([it + 1, st.evals, *est.tolist()])
    state = st.to_record()
    wall = time.perf_counter() - t0
    head = {"key": f"{tag}{part}:{start}", "kind": "chunk", "part": part, "sampler": sampler}
    head["dataset"] = config.data
    return [
        {**head, "start": start, "stop": stop, "wall_s": wall, **tally.as_record(), "state": state}
    ]
