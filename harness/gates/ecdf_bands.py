"""ECDF-difference summaries with simultaneous confidence bands: calibration a reader can see.

Values that are Uniform(0, 1) when the sampler (or the gate) is right: the PIT values F0(x) a KS
gate tests, SBC's randomised rank PITs, a gate's p-values over many seeds. Their ECDF minus the
uniform CDF is kept on a fixed grid of :data:`GRID_POINTS` points, beside the simultaneous band
for that n (Säilynoja, Bürkner & Vehtari 2022, "Graphical test for discrete uniformity and its
applications in goodness-of-fit evaluation and multiple sample comparison", Statistics and
Computing 32:32): when the values are uniform, the whole difference stays inside the band with
probability :data:`BAND_LEVEL`. A shift keeps the difference on one side; a law too narrow or
too wide makes it change sign at the middle. Where it leaves the band is marked in the report.

The band is arviz-stats' simulation method (``arviz_stats.ecdf_utils``): the pointwise level
gamma at which binomial intervals at every grid point hold all at once with probability
BAND_LEVEL, simulated at a number of draws near n, then the binomial intervals at the real n.
Simulating costs about a second, so gamma is simulated on a ladder of draws (16 to 1024, steps
of sqrt 2; n between two rungs takes the lower one, n above the top the top one) and, for the
default level and grid, was simulated once with 200 000 samples and stored
(:data:`PRECOMPUTED`; a slow test simulates one rung again and gets the same number). Measured
over 200 000 uniform samples at each n from 20 to 10^6, the difference leaves the band in 0.09%
to 0.13% of them (nominal 0.1%); the tests repeat this at four n.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Any, Literal

import numpy as np

#: Grid points u_k = k / (GRID_POINTS + 1): the percentiles 1..99.
GRID_POINTS = 99
#: The band's simultaneous coverage; 0.999 matches calibrate's uniformity level (0.001) and is
#: the closest level to a verify gate's (1e-6 or less) that a simulation resolves.
BAND_LEVEL = 0.999
#: The draws at which gamma is simulated (module docstring): 16 * 2^(k / 2), k = 0..12.
LADDER = (16, 23, 32, 45, 64, 91, 128, 181, 256, 362, 512, 724, 1024)
#: Simulated samples per rung outside the stored table (its 0.999 quantile rests on the 10
#: largest; the table's on 200).
SIMULATIONS = 10_000
PRECOMPUTED_SIMULATIONS = 200_000
#: gamma at BAND_LEVEL and GRID_POINTS per rung: simulate_confidence_bands(draws, 1, grid(),
#: 0.999, PRECOMPUTED_SIMULATIONS, np.random.default_rng(BAND_SEED)) with arviz-stats 0.8.0.
PRECOMPUTED = {
    16: 0.9998129152328379,
    23: 0.9998673893211313,
    32: 0.9998692489976021,
    45: 0.9999107115632995,
    64: 0.9999132747339663,
    91: 0.9999292759750102,
    128: 0.9999307232831647,
    181: 0.999947472489098,
    256: 0.9999491940059823,
    362: 0.9999535968334112,
    512: 0.9999567321992197,
    724: 0.9999583991053038,
    1024: 0.9999670896879869,
}
#: The band is a pure function of (n, level): its simulation has a seed of its own and never
#: touches the task's Generator, so the gates' draws are unchanged.
BAND_SEED = 20220301
#: Decimal places kept in records (values are multiples of 1/n; 1e-6 is below any plot's pixel).
DECIMALS = 6

Side = Literal["two-sided", "above"]


def grid(points: int = GRID_POINTS) -> np.ndarray:
    """The evaluation points u_k = k / (points + 1), k = 1..points."""
    return np.arange(1, points + 1) / (points + 1)


@dataclass(frozen=True)
class EcdfBand:
    """The ECDF of n values in [0, 1] minus the uniform CDF at :func:`grid`, with the
    simultaneous band at ``level`` (both as differences from u), and the largest |F_n - u| over
    all values (the KS statistic) with its place and sign."""

    label: str
    n: int
    level: float
    diff: tuple[float, ...]
    lower: tuple[float, ...]
    upper: tuple[float, ...]
    peak_at: float
    peak: float

    @property
    def grid(self) -> np.ndarray:
        return grid(len(self.diff))

    def exits(self, side: Side = "two-sided") -> np.ndarray:
        """Indices of the grid points where the difference leaves the band. ``above`` counts
        only exits above it (p-values of a conservative gate may sit below by design)."""
        d, lo, hi = (np.asarray(x) for x in (self.diff, self.lower, self.upper))
        out = d > hi if side == "above" else (d > hi) | (d < lo)
        return np.flatnonzero(out)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any] | EcdfBand) -> EcdfBand:
        """From a record (JSON lists) or an EcdfBand."""
        if isinstance(d, EcdfBand):
            return d
        return cls(
            label=str(d["label"]),
            n=int(d["n"]),
            level=float(d["level"]),
            diff=tuple(map(float, d["diff"])),
            lower=tuple(map(float, d["lower"])),
            upper=tuple(map(float, d["upper"])),
            peak_at=float(d["peak_at"]),
            peak=float(d["peak"]),
        )


def _check(n: int, level: float) -> None:
    if n < 1:
        raise ValueError(f"n = {n!r} is invalid for an ECDF band; valid: n >= 1")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level = {level!r} is invalid for an ECDF band; valid: 0 < level < 1")


def rung(n: int) -> int:
    """The ladder's draws that stand in for n: the largest rung <= n (the first below it)."""
    below = [d for d in LADDER if d <= n]
    return below[-1] if below else LADDER[0]


@lru_cache(maxsize=256)
def _simulated_level(draws: int, level: float, points: int) -> float:
    # A cache of a pure function of its arguments (the simulation has its own fixed seed): a
    # process pays a simulation once per (draws, level, points), not once per gate.
    from arviz_stats.ecdf_utils import simulate_confidence_bands

    rng = np.random.default_rng(BAND_SEED)
    return float(simulate_confidence_bands(draws, 1, grid(points), level, SIMULATIONS, rng))


def pointwise_level(n: int, level: float = BAND_LEVEL, points: int = GRID_POINTS) -> float:
    """gamma for n draws: the stored value where there is one, else simulated (and cached)."""
    draws = rung(n)
    if level == BAND_LEVEL and points == GRID_POINTS:
        return PRECOMPUTED[draws]
    return _simulated_level(draws, float(level), points)


def band(n: int, level: float = BAND_LEVEL, points: int = GRID_POINTS) -> np.ndarray:
    """The simultaneous band of the ECDF of n uniform values at :func:`grid`: shape (2, points),
    lower and upper ECDF values (not differences)."""
    from arviz_stats.ecdf_utils import get_pointwise_confidence_band

    _check(n, level)
    if points < 1:
        raise ValueError(f"points = {points!r} is invalid for an ECDF band; valid: points >= 1")
    lower, upper = get_pointwise_confidence_band(pointwise_level(n, level, points), n, grid(points))
    return np.vstack([lower, upper])


def _peak(u: np.ndarray) -> tuple[float, float]:
    """(place, signed F_n - u) of the largest |F_n - u|: the KS statistic of sorted ``u``."""
    n = u.size
    above = np.arange(1, n + 1) / n - u  # just after each value
    below = np.arange(n) / n - u  # just before it
    i, j = int(np.argmax(above)), int(np.argmin(below))
    if above[i] >= -below[j]:
        return float(u[i]), float(above[i])
    return float(u[j]), float(below[j])


def ecdf_band(
    u: np.ndarray, label: str = "", level: float = BAND_LEVEL, points: int = GRID_POINTS
) -> EcdfBand:
    """The :class:`EcdfBand` of values ``u`` that are Uniform(0, 1) under the null."""
    u = np.sort(np.asarray(u, dtype=np.float64).ravel())
    if u.size == 0 or not np.all(np.isfinite(u)):
        raise ValueError(
            f"an ECDF band needs finite values in [0, 1]; got {u.size} values, "
            f"{int(np.sum(~np.isfinite(u)))} not finite"
        )
    u = np.clip(u, 0.0, 1.0)
    g = grid(points)
    lower, upper = band(u.size, level, points) - g
    diff = np.searchsorted(u, g, side="right") / u.size - g
    at, peak = _peak(u)

    def rounded(x: np.ndarray) -> tuple[float, ...]:
        return tuple(float(v) for v in np.round(x, DECIMALS))

    return EcdfBand(
        label=label,
        n=int(u.size),
        level=float(level),
        diff=rounded(diff),
        lower=rounded(lower),
        upper=rounded(upper),
        peak_at=round(at, DECIMALS),
        peak=round(peak, DECIMALS),
    )
