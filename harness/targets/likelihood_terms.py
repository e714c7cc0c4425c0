"""Discrete targets whose factors are likelihood terms computed from data on demand.

000_26bed7cc1ef3ab92.txt, Eq. 1 with f_n(i) = p(y_n | x_n, theta_i): state i is a candidate
parameter theta_i (a row of ``theta``), and the reward l[i, n] = log f_n(i) is computed from the
datum (x_n, y_n) only when a sampler reads it, as in a Gibbs step over a discrete parameter
(000, Sec. 5.2). Nothing of size N x D is stored for the samplers: an exact draw computes all
N x D terms, a race only those it reads, so the evaluation saving of a race is also a saving of
arithmetic, not only of memory reads (on a precomputed matrix a read costs about a nanosecond).

Models (``model``), each a linear predictor z = x_n . theta_i (summed left to right) and a link:
- ``logistic``: y_n in {-1, +1}, log f_n(i) = log sigmoid(y_n z);
- ``student-t``: regression with Student-t noise, log f_n(i) = -(nu + 1)/2 log(1 + r^2 / nu),
  r = (y_n - z) / scale (the datum's constant, equal for every state, is left out).

:func:`link_term` is one source for the reference (Python floats, ``math``) and the compiled
kernels (``register_jitable``), so both compute the same bits. The ground truth sums each row of
the whole term matrix exactly (``math.fsum``) once, when the target is made.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import ClassVar

import numpy as np
from numba.extending import register_jitable

from harness.targets.discrete import ExactPmf, finite_matrix
from harness.targets.glm_data import DesignShape
from harness.targets.glm_kernels import log_sigmoid

KIND = "discrete-likelihood"
LOGISTIC, STUDENT_T = 0, 1
MODELS = {"logistic": LOGISTIC, "student-t": STUDENT_T}


@register_jitable
def link_term(model: int, z: float, y: float, nu: float, scale: float) -> float:
    """log f_n(i) given the linear predictor z = x_n . theta_i and the label y = y_n."""
    if model == LOGISTIC:
        return log_sigmoid(y * z)
    r = (y - z) / scale
    return -0.5 * (nu + 1.0) * math.log1p(r * r / nu)


@register_jitable
def log_term(model, X, y, theta, nu, scale, i, n) -> float:
    """l[i, n] for one (state, datum): the compiled kernels' per-reward evaluation."""
    z = 0.0
    for p in range(X.shape[1]):
        z += X[n, p] * theta[i, p]
    return link_term(model, z, y[n], nu, scale)


@dataclass(frozen=True, eq=False)
class LikelihoodTarget(ExactPmf, DesignShape):
    """p(i) ∝ f_0(i) prod_n p(y_n | x_n, theta_i), i in {0, ..., D-1} (000, Eq. 1).

    ``X`` (N, P) and ``y`` (N,) are the data, ``theta`` (D, P) the candidate parameters,
    ``log_f0`` (D,) the log prior. :meth:`terms` is the reference's evaluation of any block of
    rewards; the compiled kernels call :func:`log_term` with :attr:`model_code`.
    """

    model: str
    X: np.ndarray
    y: np.ndarray
    theta: np.ndarray
    log_f0: np.ndarray | None = None
    nu: float = 4.0
    scale: float = 1.0
    name: str = KIND
    meta: dict = field(default_factory=dict)
    kind: ClassVar[str] = KIND

    def __post_init__(self) -> None:
        if not isinstance(self.model, str) or self.model not in MODELS:
            raise ValueError(
                f"parameter 'model' = {self.model!r} is invalid; valid: {', '.join(MODELS)}"
            )
        X = finite_matrix("X", self.X, 2)
        y = finite_matrix("y", self.y, 1)
        theta = finite_matrix("theta", self.theta, 2)
        if y.size != X.shape[0]:
            raise ValueError(f"y has {y.size} entries but X has N = {X.shape[0]} rows")
        if theta.shape[1] != X.shape[1]:
            raise ValueError(
                f"theta has shape {theta.shape}; valid: (D, P) with P = {X.shape[1]} (X's columns)"
            )
        if self.model == "logistic" and not np.all(np.abs(y) == 1.0):
            bad = float(y[np.abs(y) != 1.0][0])
            raise ValueError(f"y contains {bad!r}; valid for the logistic model: -1 or +1")
        for name in ("nu", "scale"):
            value = getattr(self, name)
            if not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
                raise ValueError(f"parameter {name!r} = {value!r} is invalid; valid: a finite > 0")
        f0 = np.zeros(theta.shape[0]) if self.log_f0 is None else self.log_f0
        f0 = finite_matrix("log_f0", f0, 1)
        if f0.size != theta.shape[0]:
            raise ValueError(f"log_f0 has {f0.size} entries but theta has D = {theta.shape[0]}")
        for name, arr in (("X", X), ("y", y), ("theta", theta), ("log_f0", f0)):
            object.__setattr__(self, name, arr)
        object.__setattr__(self, "nu", float(self.nu))
        object.__setattr__(self, "scale", float(self.scale))

    @property
    def D(self) -> int:
        return int(self.theta.shape[0])

    @property
    def model_code(self) -> int:
        return MODELS[self.model]

    @property
    def kernel_args(self) -> tuple:
        """(model code, X, y, theta, nu, scale): what :func:`log_term` takes besides (i, n)."""
        return (self.model_code, self.X, self.y, self.theta, self.nu, self.scale)

    def terms(self, rows, idx) -> np.ndarray:
        """l[i, n] for i in ``rows`` and n in ``idx``, shape (len(rows), len(idx)).

        The linear predictor is summed column by column, left to right, as :func:`log_term`
        does per datum (elementwise products and sums are correctly rounded, so the bits are
        the same); the link runs per scalar with ``math``, which is what Numba calls.
        """
        idx = np.asarray(idx, dtype=np.int64)
        Xs = self.X[idx]
        ys = self.y[idx].tolist()
        code = self.model_code
        out = np.empty((len(rows), idx.size))
        for q, i in enumerate(rows):
            z = np.zeros(idx.size)
            for p in range(self.P):
                z = z + Xs[:, p] * self.theta[i, p]
            out[q] = [
                link_term(code, zz, yy, self.nu, self.scale)
                for zz, yy in zip(z.tolist(), ys, strict=True)
            ]
        return out

    @cached_property
    def _reward_rows(self) -> np.ndarray:
        """Every term l[i, n], computed once (a race with the EBS bound needs the reward range
        before it reads any reward)."""
        out = self.terms(range(self.D), np.arange(self.N))
        out.setflags(write=False)
        return out


def _features(N: int, P: int, rng: np.random.Generator) -> np.ndarray:
    return rng.standard_normal((N, P)) / math.sqrt(P)


def logistic_candidates(
    N: int,
    D: int,
    P: int,
    spread: float,
    seed: int,
    name: str | None = None,
) -> LikelihoodTarget:
    """Logistic regression with data from the model and D candidates around the truth.

    Features x_n ~ N(0, I / P), theta* ~ N(0, 4 I), y_n = +-1 from the model. Candidate i is
    theta* + spread * (i / (D - 1)) * u_i / sqrt(N) for random unit directions u_i: candidate 0
    is the truth and each further one is farther off, so log p~ falls roughly quadratically
    in i with a scale set by ``spread`` (``spread`` of a few makes close arms that races must
    read to the end; tens make the far arms drop out early).
    """
    rng = np.random.default_rng(seed)
    X = _features(N, P, rng)
    truth = 2.0 * rng.standard_normal(P)
    z = X @ truth
    y = np.where(rng.random(N) < 1.0 / (1.0 + np.exp(-z)), 1.0, -1.0)
    theta = _candidates(truth, D, spread / math.sqrt(N), rng)
    label = name or f"logistic-D{D}-N{N}-P{P}-spread{spread:g}"
    meta = {"data": "synthetic (model's own draws)", "spread": spread, "P": P}
    return LikelihoodTarget("logistic", X, y, theta, name=label, meta=meta)


def studentt_candidates(
    N: int,
    D: int,
    P: int,
    spread: float,
    seed: int,
    nu: float = 4.0,
    name: str | None = None,
) -> LikelihoodTarget:
    """Linear regression with Student-t noise (nu, scale 1), candidates as in
    :func:`logistic_candidates`; y_n = x_n . theta* + t_nu noise."""
    rng = np.random.default_rng(seed)
    X = _features(N, P, rng)
    truth = 2.0 * rng.standard_normal(P)
    y = X @ truth + rng.standard_t(nu, N)
    theta = _candidates(truth, D, spread / math.sqrt(N), rng)
    label = name or f"studentt-D{D}-N{N}-P{P}-spread{spread:g}"
    meta = {"data": "synthetic (model's own draws)", "spread": spread, "P": P}
    return LikelihoodTarget("student-t", X, y, theta, nu=nu, name=label, meta=meta)


def _candidates(truth: np.ndarray, D: int, step: float, rng: np.random.Generator) -> np.ndarray:
    u = rng.standard_normal((D, truth.size))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    radius = step * np.arange(D) / max(D - 1, 1)
    return truth[None, :] + radius[:, None] * u
