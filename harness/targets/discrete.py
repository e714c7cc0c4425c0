"""Discrete targets given by log-factors, with the exact pmf as ground truth.

The distribution is 000, Eq. 1: p(x) ∝ f_0(x) prod_{n=1}^N f_n(x) over x in {0, ..., D-1}.
It is stored as the log-factor (reward) matrix ``log_factors[i, n] = log f_n(i)`` and the vector
``log_f0[i] = log f_0(i)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import ClassVar

import numpy as np
from scipy.special import logsumexp

REWARD_DISTRIBUTIONS = ("normal", "uniform", "lognormal")


def finite_matrix(name: str, value: object, ndim: int) -> np.ndarray:
    try:
        arr = np.array(value, dtype=np.float64, order="C")
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a numeric array, got {type(value).__name__}") from None
    if arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, got shape {arr.shape}")
    if 0 in arr.shape:
        raise ValueError(
            f"{name} has shape {arr.shape}; valid: at least one state (D >= 1) and one factor"
        )
    bad = ~np.isfinite(arr)
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(
            f"{name}{list(where)} = {float(arr[where])!r}; valid: finite log-weights "
            "(NaN and +-inf are rejected; drop a zero-probability state from the domain)"
        )
    arr.setflags(write=False)
    return arr


def _exact_log_unnormalised(rows, log_f0: np.ndarray) -> np.ndarray:
    """log f_0(i) + sum_n log f_n(i) per row, correctly rounded (math.fsum)."""
    out = np.array([math.fsum([*row, f0]) for row, f0 in zip(rows, log_f0, strict=True)])
    out.setflags(write=False)
    return out


def _pmf(log_unnormalised: np.ndarray, log_normaliser: float) -> np.ndarray:
    p = np.exp(log_unnormalised - log_normaliser)
    p /= p.sum()
    p.setflags(write=False)
    return p


class ExactPmf:
    """The exact pmf of a discrete target whose rewards are the rows l[i, :] of ``_reward_rows``
    (one array per state) and whose log prior is ``log_f0``; each quantity computed once."""

    @cached_property
    def log_unnormalised(self) -> np.ndarray:
        """log p~(i) = log f_0(i) + sum_n log f_n(i), each row summed exactly (fsum)."""
        return _exact_log_unnormalised(self._reward_rows, self.log_f0)

    @cached_property
    def reward_range(self) -> np.ndarray:
        """C_i = max_{n,n'} l[i, n] - l[i, n'] (000, Sec. 3.1): the per-arm reward range.

        The Gumbel offset (log f_0(i) + eps_i) / N shifts a whole row, so it leaves C_i unchanged.
        """
        out = np.array([row.max() - row.min() for row in self._reward_rows])
        out.setflags(write=False)
        return out

    @cached_property
    def log_normaliser(self) -> float:
        """log Z = log sum_i p~(i)."""
        return float(logsumexp(self.log_unnormalised))

    @cached_property
    def pmf(self) -> np.ndarray:
        return _pmf(self.log_unnormalised, self.log_normaliser)


@dataclass(frozen=True, eq=False)
class DiscreteFactorTarget(ExactPmf):
    """p(i) ∝ exp(log_f0[i] + sum_n log_factors[i, n]), i in {0, ..., D-1} (000, Eq. 1).

    Ground truth: :attr:`log_unnormalised` sums each row with ``math.fsum`` (correctly rounded),
    so the exact pmf is known to a few ulps, far below anything a gate resolves.
    """

    log_factors: np.ndarray
    log_f0: np.ndarray | None = None
    name: str = "discrete"
    meta: dict = field(default_factory=dict)
    kind: ClassVar[str] = "discrete"

    def __post_init__(self) -> None:
        lf = finite_matrix("log_factors", self.log_factors, 2)
        object.__setattr__(self, "log_factors", lf)
        f0 = np.zeros(lf.shape[0]) if self.log_f0 is None else self.log_f0
        f0 = finite_matrix("log_f0", f0, 1)
        if f0.shape[0] != lf.shape[0]:
            raise ValueError(
                f"log_f0 has {f0.shape[0]} entries but log_factors has D = {lf.shape[0]} rows"
            )
        object.__setattr__(self, "log_f0", f0)

    @property
    def D(self) -> int:
        return int(self.log_factors.shape[0])

    @property
    def N(self) -> int:
        return int(self.log_factors.shape[1])

    def terms(self, rows, idx) -> np.ndarray:
        """l[i, n] for i in ``rows`` and n in ``idx``, shape (len(rows), len(idx)): the
        rewards a sampler reads (a ``discrete-likelihood`` target computes them instead)."""
        return self.log_factors[np.ix_(np.asarray(rows, dtype=np.int64), np.asarray(idx))]

    @cached_property
    def log_factors_by_index(self) -> np.ndarray:
        """The same rewards stored index-major, (N, D): a race reads every alive arm at one
        random index, which is then one cache line instead of D (made once per target)."""
        out = np.ascontiguousarray(self.log_factors.T)
        out.setflags(write=False)
        return out

    @property
    def _reward_rows(self) -> np.ndarray:
        return self.log_factors


def default_pmf(D: int, spread: float = 4.5) -> np.ndarray:
    """A fixed pmf for the synthetic family: geometric, log p falls linearly by ``spread``.

    000 Fig. 1(a) fixes p(X) but its values are not given in the text; this choice keeps every
    state reachable (p_max / p_min = e^4.5 ≈ 90) for any D.
    """
    if D == 1:
        return np.ones(1)
    logp = -spread * np.arange(D) / (D - 1)
    p = np.exp(logp - logsumexp(logp))
    return p / p.sum()


def synthetic_rewards(
    D: int,
    N: int,
    distribution: str,
    sigma: float,
    rng: np.random.Generator,
    pmf: np.ndarray | None = None,
    name: str | None = None,
) -> DiscreteFactorTarget:
    """The synthetic family of 000, Sec. 5.1.

    Draw N raw rewards per state from N(0, 1), Uniform[0, 1] or LogNormal(0, 2), standardise each
    row to mean 0 and variance 1, then set ``l[i, n] = sigma * z[i, n] + log(pmf[i]) / N``.
    So every arm has reward variance sigma^2 (the difficulty knob) while
    sum_n l[i, n] = log pmf[i] fixes the target: p(X) = pmf for every sigma.
    """
    if isinstance(D, bool) or not isinstance(D, int | np.integer) or D < 1:
        raise ValueError(f"D = {D!r} is invalid; valid: an integer >= 1")
    if isinstance(N, bool) or not isinstance(N, int | np.integer) or N < 2:
        raise ValueError(f"N = {N!r} is invalid; valid: an integer >= 2")
    if distribution not in REWARD_DISTRIBUTIONS:
        raise ValueError(
            f"distribution = {distribution!r} is invalid; valid: {', '.join(REWARD_DISTRIBUTIONS)}"
        )
    if not (isinstance(sigma, int | float) and math.isfinite(sigma) and sigma >= 0):
        raise ValueError(f"sigma = {sigma!r} is invalid; valid: a finite number >= 0")
    if pmf is None:
        pmf = default_pmf(int(D))
    pmf = np.asarray(pmf, dtype=np.float64)
    if pmf.shape != (D,) or not np.all(np.isfinite(pmf)) or np.any(pmf <= 0):
        raise ValueError(f"pmf must have D = {D} positive finite entries, got {pmf!r}")
    pmf = pmf / pmf.sum()
    if distribution == "normal":
        raw = rng.standard_normal((D, N))
    elif distribution == "uniform":
        raw = rng.random((D, N))
    else:
        raw = rng.lognormal(0.0, 2.0, size=(D, N))
    z = (raw - raw.mean(axis=1, keepdims=True)) / raw.std(axis=1, keepdims=True)
    rewards = sigma * z + (np.log(pmf) / N)[:, None]
    label = name or f"synthetic-{distribution}-D{D}-N{N}-sigma{sigma:g}"
    meta = {"family": "000 Sec. 5.1", "distribution": distribution, "sigma": sigma}
    return DiscreteFactorTarget(rewards, None, name=label, meta=meta)


@dataclass(frozen=True, eq=False)
class RaggedFactorTarget(ExactPmf):
    """000, Eq. 1 with a population size per state: p(i) ∝ f_0(i) prod_{n < N_i} f_n(i).

    As in the coreference experiment (000, Sec. 5.3), where candidate cluster y has N_y = |C_y|
    factors. ``rows[i]`` holds the N_i log-factors of state i. They are stored zero-padded in
    ``log_factors`` (D, max N_i) with ``sizes``; a padded zero adds nothing to a left-to-right
    sum, so samplers that sum whole rows still see the exact log p~(i).
    """

    rows: tuple
    log_f0: np.ndarray | None = None
    name: str = "discrete-ragged"
    meta: dict = field(default_factory=dict)
    kind: ClassVar[str] = "discrete-ragged"

    def __post_init__(self) -> None:
        rows = [finite_matrix(f"rows[{i}]", r, 1) for i, r in enumerate(self.rows)]
        if not rows:
            raise ValueError("rows is empty; valid: at least one state with at least one factor")
        sizes = np.array([r.size for r in rows], dtype=np.int64)
        padded = np.zeros((len(rows), int(sizes.max())))
        for i, r in enumerate(rows):
            padded[i, : r.size] = r
        padded.setflags(write=False)
        sizes.setflags(write=False)
        f0 = np.zeros(len(rows)) if self.log_f0 is None else self.log_f0
        f0 = finite_matrix("log_f0", f0, 1)
        if f0.shape[0] != len(rows):
            raise ValueError(f"log_f0 has {f0.shape[0]} entries but there are {len(rows)} rows")
        object.__setattr__(self, "rows", tuple(rows))
        object.__setattr__(self, "log_f0", f0)
        object.__setattr__(self, "log_factors", padded)
        object.__setattr__(self, "sizes", sizes)

    @property
    def D(self) -> int:
        return len(self.rows)

    @property
    def N(self) -> int:
        """The largest population; the total work of an exact draw is ``sizes.sum()``."""
        return int(self.sizes.max())

    @property
    def _reward_rows(self) -> tuple[np.ndarray, ...]:
        return self.rows


def ragged_rewards(
    sizes: list[int], sigma: float, rng: np.random.Generator, name: str | None = None
) -> RaggedFactorTarget:
    """Normal rewards with N_i = sizes[i] per state, standardised to variance sigma^2 and
    shifted so that sum_n l[i, n] = log pmf[i] for the fixed pmf of :func:`default_pmf`."""
    D = len(sizes)
    if D < 1 or any(isinstance(s, bool) or int(s) < 2 for s in sizes):
        raise ValueError(f"sizes = {sizes!r} is invalid; valid: at least one size, each >= 2")
    pmf = default_pmf(D)
    rows = []
    for i, size in enumerate(sizes):
        raw = rng.standard_normal(int(size))
        z = (raw - raw.mean()) / raw.std()
        rows.append(sigma * z + math.log(pmf[i]) / int(size))
    label = name or f"ragged-normal-D{D}-sigma{sigma:g}"
    return RaggedFactorTarget(tuple(rows), None, name=label, meta={"sizes": list(sizes)})
