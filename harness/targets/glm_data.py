"""Data sets for the GLM posteriors of Firefly Monte Carlo (002_3c1996bf78df7865.txt, Table 1).

The paper's data (MNIST 7 vs 9, 3-class CIFAR-10, the OPV molecules) cannot be fetched here, so
Table 1 is rerun on stand-ins (notes-firefly.md Sec. 8 says what is known of the originals):

- **synthetic** (all three rows, at the paper's sizes): a draw from the model's prior predictive,
  so simulation-based calibration on it tests the sampler on the data it was built for. The
  design matrix has i.i.d. N(0, 1/P) entries (no intercept column), so x_n . theta has prior
  variance prior_sd^2 whatever P is (with N(0, 1) entries and P = 50 the classes would be all
  but separable), theta_true ~ N(0, prior_sd^2 I), then labels or targets from the model at
  X theta_true. One seeded Generator draws X, then
  theta_true, then the labels/noise, in that order.

  ===========  =========  ==========  ===============================================
  model        N          features    paper's data set it stands in for
  ===========  =========  ==========  ===============================================
  logistic     12,214     P = 50      MNIST 7 vs 9, 50 PCA components [U]
  softmax      18,000     P = 16      3-class CIFAR-10 (features unknown); D = 48
  robust       100,000    P = 10      OPV (quick level; features unknown)
  robust       1,800,000  P = 10      OPV (full level, about the paper's N [U])
  ===========  =========  ==========  ===============================================

- **real** (logistic only): scikit-learn's bundled 8x8 digits (offline, part of the package),
  7 against 9, pixels scaled to [0, 1] plus an intercept column: N = 359, P = 65. scikit-learn
  is an optional extra, imported only when this data set is asked for.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

from harness.spec import Param

#: Table 1's data sizes (002, Table 1: the regular-MCMC query counts of MNIST and CIFAR-10 equal
#: N; OPV's N is about 1.8e6, notes-firefly.md Sec. 7-8).
LOGISTIC_N, LOGISTIC_P = 12_214, 50
SOFTMAX_N, SOFTMAX_CLASSES, SOFTMAX_P = 18_000, 3, 16
ROBUST_N_QUICK, ROBUST_N_FULL, ROBUST_P = 100_000, 1_800_000, 10
#: Student-t degrees of freedom of the robust model (the authors' code default, notes Sec. 2).
ROBUST_NU = 4.0
#: The optional extra that brings scikit-learn (for :func:`digits_7_vs_9`).
SKLEARN_EXTRA = "sampler-harness[data]"


@dataclass(frozen=True, eq=False)
class GLMData:
    """A design matrix and its labels (logistic: 0/1; softmax: 0..classes-1) or real targets
    (robust), with where they came from. ``theta_true`` is the parameter the synthetic labels
    were drawn at (None for real data)."""

    X: np.ndarray
    t: np.ndarray
    model: str
    source: str
    name: str
    classes: int | None = None
    nu: float = ROBUST_NU
    theta_true: np.ndarray | None = None

    @property
    def N(self) -> int:
        return int(self.X.shape[0])


def _sizes(N: int, P: int, seed: int) -> tuple[int, int, int]:
    N = Param("N", 1, int, low=1, doc="data points").check(N)
    P = Param("P", 1, int, low=1, doc="features").check(P)
    seed = Param("seed", 0, int, low=0).check(seed)
    return N, P, seed


def synthetic_logistic(
    N: int = LOGISTIC_N, P: int = LOGISTIC_P, seed: int = 0, prior_sd: float = 1.0
) -> GLMData:
    """Logistic-regression data from the prior predictive: X_np ~ N(0, 1/P), theta ~
    N(0, prior_sd^2 I), t_n ~ Bernoulli(sigmoid(x_n . theta)) (stand-in for MNIST 7 vs 9)."""
    N, P, seed = _sizes(N, P, seed)
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, P)) / math.sqrt(P)
    theta = prior_sd * rng.standard_normal(P)
    t = (rng.random(N) < special.expit(X @ theta)).astype(np.float64)
    return GLMData(
        X,
        t,
        "logistic",
        f"synthetic: prior predictive, seed {seed}",
        f"logistic-synth-N{N}-P{P}",
        theta_true=theta,
    )


def synthetic_softmax(
    N: int = SOFTMAX_N,
    classes: int = SOFTMAX_CLASSES,
    P: int = SOFTMAX_P,
    seed: int = 0,
    prior_sd: float = 1.0,
) -> GLMData:
    """Softmax data from the prior predictive: X_np ~ N(0, 1/P), Theta (classes x P) ~
    N(0, prior_sd^2 I), t_n ~ Categorical(softmax(Theta x_n)) by inversion of one uniform
    (stand-in for 3-class CIFAR-10)."""
    N, P, seed = _sizes(N, P, seed)
    classes = Param("classes", 3, int, low=2).check(classes)
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, P)) / math.sqrt(P)
    theta = prior_sd * rng.standard_normal(classes * P)
    t = categorical(special.softmax(X @ theta.reshape(classes, P).T, axis=1), rng)
    return GLMData(
        X,
        t,
        "softmax",
        f"synthetic: prior predictive, seed {seed}",
        f"softmax-synth-N{N}-K{classes}-P{P}",
        classes=classes,
        theta_true=theta,
    )


def synthetic_robust(
    N: int = ROBUST_N_QUICK,
    P: int = ROBUST_P,
    nu: float = ROBUST_NU,
    seed: int = 0,
    prior_sd: float = 1.0,
) -> GLMData:
    """Robust-regression data from the prior predictive: X_np ~ N(0, 1/P), theta ~
    N(0, prior_sd^2 I), t_n = x_n . theta + Student-t(nu) noise (stand-in for OPV; N = 1e5 at
    the quick level, :data:`ROBUST_N_FULL` at the full level)."""
    N, P, seed = _sizes(N, P, seed)
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, P)) / math.sqrt(P)
    theta = prior_sd * rng.standard_normal(P)
    t = X @ theta + rng.standard_t(nu, size=N)
    return GLMData(
        X,
        t,
        "robust",
        f"synthetic: prior predictive, seed {seed}",
        f"robust-synth-N{N}-P{P}",
        nu=nu,
        theta_true=theta,
    )


def categorical(probs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One label per row of ``probs`` (N, K) by inversion of one uniform each, as float64; the
    last class takes whatever the rounded cumulative sum leaves, so labels stay in 0..K-1."""
    cum = np.cumsum(probs[:, :-1], axis=1)
    u = rng.random(probs.shape[0])
    return (u[:, None] >= cum).sum(axis=1).astype(np.float64)


def digits_7_vs_9() -> GLMData:
    """scikit-learn's bundled 8x8 digits, 7 (t = 0) against 9 (t = 1): pixels / 16 and an
    intercept column, N = 359, P = 65 (a real stand-in for MNIST 7 vs 9; offline).

    Raises ImportError naming the optional extra when scikit-learn is missing."""
    try:
        from sklearn.datasets import load_digits
    except ImportError as err:
        raise ImportError(
            "digits_7_vs_9 needs scikit-learn, an optional extra: pip install "
            f"'{SKLEARN_EXTRA}' (or pip install scikit-learn); synthetic_logistic() needs "
            "nothing extra"
        ) from err
    digits = load_digits()
    keep = (digits.target == 7) | (digits.target == 9)
    pixels = np.asarray(digits.data[keep], dtype=np.float64) / 16.0
    X = np.column_stack([np.ones(pixels.shape[0]), pixels])
    t = (digits.target[keep] == 9).astype(np.float64)
    return GLMData(
        X,
        t,
        "logistic",
        "real: scikit-learn load_digits(), 7 vs 9, pixels/16 + intercept",
        "digits-7-vs-9",
    )
