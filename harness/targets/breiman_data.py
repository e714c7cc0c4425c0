"""Breiman's generated data sets (Breiman 1996, "Bias, variance and arcing classifiers"), three of
the 13 sets of Mika et al. (1999) on which 004_b270422b62f00607.txt runs logistic regression
(Sec. 5.3.2; sizes in Appx. C, Table 1: ringnorm and twonorm 20 inputs, 7400 points; waveform
21 inputs, 5000 points). Because they are defined by their generators, drawing from them gives
the sets' distribution itself, where the other ten sets can only have synthetic stand-ins.

- twonorm: class 1 ~ N(mu, I), class 2 ~ N(-mu, I), mu = (a, ..., a), a = 2 / sqrt(20);
- ringnorm: class 1 ~ N(0, 4 I), class 2 ~ N(mu, I), mu = (a, ..., a), a = 1 / sqrt(20);
- waveform: base waves h1(i) = max(6 - |i - 11|, 0), h2(i) = h1(i - 4), h3(i) = h1(i + 4),
  i = 1..21; class 1 = u h1 + (1 - u) h2, class 2 = u h1 + (1 - u) h3, class 3 = u h2 + (1 - u)
  h3, u ~ U(0, 1) once per point, plus N(0, 1) noise on each input.

Classes are equally likely and drawn independently per point, as in Breiman's generators (004
states no priors). Our reading of waveform as a two-class set: class 1 is the positive class and
classes 2 and 3 the negative (Mika et al.'s benchmark makes it two-class; 004 does not say how),
so about a third of the points are positive. Labels are in {-1, +1}, class 1 -> +1 throughout.
"""

from __future__ import annotations

import math

import numpy as np

#: The inputs each generator draws (004 Appx. C, Table 1's dim).
TWONORM_DIM = RINGNORM_DIM = 20
WAVEFORM_DIM = 21
TWONORM_A = 2.0 / math.sqrt(TWONORM_DIM)
RINGNORM_A = 1.0 / math.sqrt(RINGNORM_DIM)
RINGNORM_CLASS1_VAR = 4.0
#: Waveform's (first, second) base wave of each class, 0-based rows of :data:`WAVES`.
WAVEFORM_PAIRS = ((0, 1), (0, 2), (1, 2))


def _base_waves() -> np.ndarray:
    i = np.arange(1, WAVEFORM_DIM + 1, dtype=np.float64)
    h1 = np.maximum(6.0 - np.abs(i - 11.0), 0.0)
    h2 = np.maximum(6.0 - np.abs(i - 4.0 - 11.0), 0.0)  # h1(i - 4)
    h3 = np.maximum(6.0 - np.abs(i + 4.0 - 11.0), 0.0)  # h1(i + 4)
    return np.stack([h1, h2, h3])


#: h1, h2, h3 as rows, each over i = 1..21.
WAVES = _base_waves()


def _check(n: int, rng: np.random.Generator) -> None:
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
        raise ValueError(f"n = {n!r} is invalid; valid: an integer >= 1")
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng = {rng!r} is invalid; valid: a numpy.random.Generator")


def twonorm(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """n points of twonorm: (X of shape (n, 20), y in {-1, +1}, +1 for class 1 = N(mu, I))."""
    _check(n, rng)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    X = rng.standard_normal((n, TWONORM_DIM)) + TWONORM_A * y[:, None]
    return X, y


def ringnorm(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """n points of ringnorm: (X of shape (n, 20), y in {-1, +1}, +1 for class 1 = N(0, 4 I))."""
    _check(n, rng)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    Z = rng.standard_normal((n, RINGNORM_DIM))
    one = y > 0
    X = np.where(one[:, None], math.sqrt(RINGNORM_CLASS1_VAR) * Z, Z + RINGNORM_A)
    return X, y


def waveform_classes(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """n points of Breiman's three-class waveform: (X of shape (n, 21), class in {1, 2, 3})."""
    _check(n, rng)
    cls = rng.integers(0, 3, size=n)
    u = rng.random(n)[:, None]
    first, second = (np.array(p)[cls] for p in zip(*WAVEFORM_PAIRS, strict=True))
    X = u * WAVES[first] + (1.0 - u) * WAVES[second] + rng.standard_normal((n, WAVEFORM_DIM))
    return X, cls + 1


def waveform(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """n points of waveform as two classes (our reading): +1 for class 1, -1 for classes 2, 3."""
    X, cls = waveform_classes(n, rng)
    return X, np.where(cls == 1, 1.0, -1.0)


#: Table 1's short name -> its generator.
GENERATORS = {"ringnorm": ringnorm, "twonorm": twonorm, "waveform": waveform}
