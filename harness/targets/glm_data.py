"""Data sets for the GLM posteriors of Firefly Monte Carlo (002_3c1996bf78df7865.txt, Table 1).

Table 1's MNIST 7 vs 9 ships with the package (``harness/targets/data``, its README: source,
checksums, CC BY-SA 3.0 licence): :func:`mnist_7_vs_9` reduces it to 50 principal components
and an intercept. 3-class CIFAR-10 and the OPV molecules cannot be fetched here, so their rows
are rerun on stand-ins (notes-firefly.md Sec. 8 says what is known of the originals):

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

- **wide** synthetic (``feature_sd=1``): the same draws with N(0, 1) entries, so ||x_n||^2 is
  about P rather than 1 and x_n . theta_true has standard deviation about sqrt(P) (7 at
  P = 50: nearly separable classes). 002 says nothing of its features' scale; 50 principal
  components of [0, 1] pixel images (the notes' unverified reading of the MNIST row) have a
  squared norm of some tens, not 1, so this stands for "features at the paper's scale", an
  assumption. The bundled digits below have ||x_n||^2 about 16, breast cancer 31.

- **real** (scikit-learn's bundled sets: offline, part of the package; an optional extra,
  imported only when one is asked for), none of them standardised draws:

  ================  ==========  =====  ======  ==========================================
  loader            model       N      P       preprocessing
  ================  ==========  =====  ======  ==========================================
  digits_7_vs_9     logistic    359    65      8x8 digits 7 (t = 0) vs 9, pixels / 16 + 1
  breast_cancer     logistic    569    31      30 measurements z-scored + intercept
  digits_3_class    softmax     537    65      8x8 digits 0, 1, 2, pixels / 16 + 1 (K = 3)
  ================  ==========  =====  ======  ==========================================
"""

from __future__ import annotations

import hashlib
import io
import math
from dataclasses import dataclass
from importlib import resources
from typing import Any, NamedTuple

import numpy as np
from scipy import special

from harness.spec import Param, finite_number

#: Table 1's data sizes (002, Table 1: the regular-MCMC query counts of MNIST and CIFAR-10 equal
#: N; OPV's N is about 1.8e6, notes-firefly.md Sec. 7-8).
LOGISTIC_N, LOGISTIC_P = 12_214, 50
SOFTMAX_N, SOFTMAX_CLASSES, SOFTMAX_P = 18_000, 3, 16
ROBUST_N_QUICK, ROBUST_N_FULL, ROBUST_P = 100_000, 1_800_000, 10
#: Student-t degrees of freedom of the robust model (the authors' code default, notes Sec. 2).
ROBUST_NU = 4.0
#: The optional extra that brings scikit-learn (for the real data sets below).
SKLEARN_EXTRA = "sampler-harness[data]"


class DesignShape:
    """N (data points) and P (features) of a design matrix ``X`` of shape (N, P)."""

    @property
    def N(self) -> int:
        return int(self.X.shape[0])

    @property
    def P(self) -> int:
        return int(self.X.shape[1])


@dataclass(frozen=True, eq=False)
class GLMData(DesignShape):
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


def _sizes(N: int, P: int, seed: int) -> tuple[int, int, int]:
    N = Param("N", 1, int, low=1, doc="data points").check(N)
    P = Param("P", 1, int, low=1, doc="features").check(P)
    seed = Param("seed", 0, int, low=0).check(seed)
    return N, P, seed


def _features(
    rng: np.random.Generator, N: int, P: int, feature_sd: float | None
) -> tuple[np.ndarray, str]:
    """The (N, P) design matrix of i.i.d. normal entries, sd 1/sqrt(P) when ``feature_sd`` is
    None (the default data, unchanged), and the name's suffix ("" or "-sd<feature_sd>")."""
    Z = rng.standard_normal((N, P))
    if feature_sd is None:
        return Z / math.sqrt(P), ""
    feature_sd = finite_number("feature_sd", above=0.0).check(feature_sd)
    return Z * feature_sd, f"-sd{feature_sd:g}"


class _PriorDraw(NamedTuple):
    N: int
    P: int
    seed: int
    rng: np.random.Generator
    X: np.ndarray
    suffix: str
    theta: np.ndarray


def _prior_draw(
    N: int, P: int, seed: int, feature_sd: float | None, prior_sd: float, K: int = 1
) -> _PriorDraw:
    """The start every synthetic data set shares, from one Generator: the features, then
    theta ~ N(0, prior_sd^2 I) of length K * P."""
    N, P, seed = _sizes(N, P, seed)
    rng = np.random.default_rng(seed)
    X, suffix = _features(rng, N, P, feature_sd)
    return _PriorDraw(N, P, seed, rng, X, suffix, prior_sd * rng.standard_normal(K * P))


def _synthetic(d: _PriorDraw, t: np.ndarray, model: str, sizes: str = "", **rest: Any) -> GLMData:
    """The data set of labels ``t`` drawn at ``d.theta``; ``sizes`` stands after N in its name."""
    name = f"{model}-synth-N{d.N}{sizes}-P{d.P}{d.suffix}"
    source = f"synthetic: prior predictive, seed {d.seed}"
    return GLMData(d.X, t, model, source, name, theta_true=d.theta, **rest)


def synthetic_logistic(
    N: int = LOGISTIC_N,
    P: int = LOGISTIC_P,
    seed: int = 0,
    prior_sd: float = 1.0,
    feature_sd: float | None = None,
) -> GLMData:
    """Logistic-regression data from the prior predictive: X_np ~ N(0, 1/P) (or N(0,
    feature_sd^2), :func:`_features`), theta ~ N(0, prior_sd^2 I), t_n ~
    Bernoulli(sigmoid(x_n . theta)) (stand-in for MNIST 7 vs 9)."""
    d = _prior_draw(N, P, seed, feature_sd, prior_sd)
    t = (d.rng.random(d.N) < special.expit(d.X @ d.theta)).astype(np.float64)
    return _synthetic(d, t, "logistic")


def synthetic_softmax(
    N: int = SOFTMAX_N,
    classes: int = SOFTMAX_CLASSES,
    P: int = SOFTMAX_P,
    seed: int = 0,
    prior_sd: float = 1.0,
    feature_sd: float | None = None,
) -> GLMData:
    """Softmax data from the prior predictive: X_np ~ N(0, 1/P) (or N(0, feature_sd^2)),
    Theta (classes x P) ~ N(0, prior_sd^2 I), t_n ~ Categorical(softmax(Theta x_n)) by
    inversion of one uniform (stand-in for 3-class CIFAR-10)."""
    classes = Param("classes", 3, int, low=2).check(classes)
    d = _prior_draw(N, P, seed, feature_sd, prior_sd, classes)
    t = categorical(special.softmax(d.X @ d.theta.reshape(classes, d.P).T, axis=1), d.rng)
    return _synthetic(d, t, "softmax", f"-K{classes}", classes=classes)


def synthetic_robust(
    N: int = ROBUST_N_QUICK,
    P: int = ROBUST_P,
    nu: float = ROBUST_NU,
    seed: int = 0,
    prior_sd: float = 1.0,
    feature_sd: float | None = None,
) -> GLMData:
    """Robust-regression data from the prior predictive: X_np ~ N(0, 1/P) (or N(0,
    feature_sd^2)), theta ~ N(0, prior_sd^2 I), t_n = x_n . theta + Student-t(nu) noise
    (stand-in for OPV; N = 1e5 at the quick level, :data:`ROBUST_N_FULL` at the full level)."""
    d = _prior_draw(N, P, seed, feature_sd, prior_sd)
    t = d.X @ d.theta + d.rng.standard_t(nu, size=d.N)
    return _synthetic(d, t, "robust", nu=nu)


def categorical(probs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One label per row of ``probs`` (N, K) by inversion of one uniform each, as float64; the
    last class takes whatever the rounded cumulative sum leaves, so labels stay in 0..K-1."""
    cum = np.cumsum(probs[:, :-1], axis=1)
    u = rng.random(probs.shape[0])
    return (u[:, None] >= cum).sum(axis=1).astype(np.float64)


def _datasets(who: str) -> object:
    """``sklearn.datasets``, or an ImportError naming the optional extra."""
    try:
        from sklearn import datasets
    except ImportError as err:
        raise ImportError(
            f"{who} needs scikit-learn, an optional extra: pip install "
            f"'{SKLEARN_EXTRA}' (or pip install scikit-learn); synthetic_logistic() needs "
            "nothing extra"
        ) from err
    return datasets


def _with_intercept(features: np.ndarray) -> np.ndarray:
    return np.column_stack([np.ones(features.shape[0]), features])


def digits_7_vs_9() -> GLMData:
    """scikit-learn's bundled 8x8 digits, 7 (t = 0) against 9 (t = 1): pixels / 16 and an
    intercept column, N = 359, P = 65 (a real stand-in for MNIST 7 vs 9; offline).

    Raises ImportError naming the optional extra when scikit-learn is missing."""
    digits = _datasets("digits_7_vs_9").load_digits()  # type: ignore[attr-defined]
    keep = (digits.target == 7) | (digits.target == 9)
    pixels = np.asarray(digits.data[keep], dtype=np.float64) / 16.0
    X = _with_intercept(pixels)
    t = (digits.target[keep] == 9).astype(np.float64)
    return GLMData(
        X,
        t,
        "logistic",
        "real: scikit-learn load_digits(), 7 vs 9, pixels/16 + intercept",
        "digits-7-vs-9",
    )


def breast_cancer() -> GLMData:
    """scikit-learn's bundled Wisconsin breast-cancer set: 30 cell-nucleus measurements, each
    z-scored over the set (their raw units span 1e-3 to 4e3, which a N(0, 1) prior on the
    weights cannot meet), and an intercept column; t = 1 benign, 0 malignant. N = 569, P = 31
    (a real logistic-regression set; offline). ImportError without scikit-learn."""
    data = _datasets("breast_cancer").load_breast_cancer()  # type: ignore[attr-defined]
    raw = np.asarray(data.data, dtype=np.float64)
    X = _with_intercept((raw - raw.mean(axis=0)) / raw.std(axis=0))
    t = np.asarray(data.target, dtype=np.float64)
    return GLMData(
        X,
        t,
        "logistic",
        "real: scikit-learn load_breast_cancer(), z-scored + intercept",
        "breast-cancer",
    )


#: The classes of :func:`digits_3_class`: the first three digits (002's CIFAR-10 row uses three
#: classes; which three of the digits is our choice, fixed before any run).
DIGITS_3 = (0, 1, 2)


def digits_3_class() -> GLMData:
    """scikit-learn's bundled 8x8 digits 0, 1 and 2 (t = the digit), pixels / 16 and an
    intercept column: N = 537, P = 65, K = 3, D = 195 (a real three-class stand-in for
    3-class CIFAR-10; offline). ImportError without scikit-learn."""
    digits = _datasets("digits_3_class").load_digits()  # type: ignore[attr-defined]
    keep = np.isin(digits.target, DIGITS_3)
    X = _with_intercept(np.asarray(digits.data[keep], dtype=np.float64) / 16.0)
    t = np.searchsorted(DIGITS_3, digits.target[keep]).astype(np.float64)
    return GLMData(
        X,
        t,
        "softmax",
        "real: scikit-learn load_digits(), digits 0/1/2, pixels/16 + intercept",
        "digits-3-class",
        classes=len(DIGITS_3),
    )


#: The real MNIST 7s and 9s shipped with the package (harness/targets/data/README.md: where they
#: come from, the licence and the credit) and the SHA-256 the loader checks them against.
MNIST_FILE = "mnist_7_9.npz"
MNIST_SHA256 = "006384d55566c5b9cc18b41c86216827670de86544c741f0a5aa222fe36848da"
#: Principal components the MNIST row keeps (notes-firefly.md Sec. 8; 002 does not say).
MNIST_COMPONENTS = 50
MNIST_SPLITS = ("train", "test")


def load_mnist_7_9(
    split: str = "train", sha256: str = MNIST_SHA256
) -> tuple[np.ndarray, np.ndarray]:
    """(images uint8 (n, 784), labels uint8 (n,) of 7 or 9) of the shipped MNIST file, after
    checking its SHA-256: 12,214 training images (002's N for Table 1's MNIST row) or 2,037
    test images. A file that does not match raises ValueError naming both digests."""
    split = Param("split", "train", str, choices=MNIST_SPLITS).check(split)
    blob = resources.files("harness.targets").joinpath("data", MNIST_FILE).read_bytes()
    got = hashlib.sha256(blob).hexdigest()
    if got != sha256:
        raise ValueError(
            f"harness/targets/data/{MNIST_FILE} has SHA-256 {got}, expected {sha256}: the file "
            "is damaged or replaced; restore it from the repository"
        )
    with np.load(io.BytesIO(blob)) as npz:
        return npz[f"{split}_images"], npz[f"{split}_labels"]


def pca_components(features: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(scores (n, k), variances (k,)): ``features`` centred on their mean and projected on the
    k leading eigenvectors of their covariance (numpy eigh, float64; no randomness), largest
    variance first, not whitened. Each eigenvector's sign is fixed so that its largest-magnitude
    entry is positive, so the scores do not depend on the LAPACK build's sign choice."""
    k = Param("k", 1, int, low=1, high=features.shape[1]).check(k)
    F = np.asarray(features, dtype=np.float64)
    centred = F - F.mean(axis=0)
    cov = centred.T @ centred / F.shape[0]
    values, vectors = np.linalg.eigh(cov)  # ascending
    top = vectors[:, ::-1][:, :k]
    top = top * np.sign(top[np.argmax(np.abs(top), axis=0), np.arange(k)])
    return centred @ top, values[::-1][:k].copy()


def mnist_7_vs_9(components: int = MNIST_COMPONENTS) -> GLMData:
    """The real MNIST 7s (t = 0) and 9s (t = 1) of Table 1's logistic row (002, Table 1: N =
    12,214, the regular MCMC query count), reduced as we read it: pixels / 255, centred, the
    ``components`` leading principal components of the 12,214 training images (not whitened),
    and an intercept column: P = components + 1.

    002_3c1996bf78df7865.txt (slide notes: Table 1 and its caption) names only "MNIST" and
    "logistic regression"; the 50 components are notes-firefly.md Sec. 8's unverified reading,
    and the [0, 1] scale, no whitening and the intercept (the authors' toy example adds one)
    are ours, fixed before any run: a N(0, 1) prior on the weights then meets features of about
    the scale it allows (their squared norm is some tens)."""
    images, labels = load_mnist_7_9("train")
    scores, _ = pca_components(images / 255.0, components)
    return GLMData(
        _with_intercept(scores),
        (labels == 9).astype(np.float64),
        "logistic",
        f"real: MNIST 7 vs 9 (training set), pixels/255, {components} PCA components + intercept",
        f"mnist-7-vs-9-pca{components}",
    )
