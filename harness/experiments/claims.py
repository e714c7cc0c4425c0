"""A paper's claims as data, each judged by a decision rule fixed before the run.

A :class:`Claim` names the paper's statement (file and numbering, one sentence, the paper's
numbers), the quantity we compute from our records with its interval (:class:`Estimate`), and
a :class:`Rule`: the band the quantity must lie in for the claim to hold. :func:`judge` turns it
into a :class:`Verdict`:

- ``reproduced``: our whole interval lies inside the band;
- ``not reproduced``: our whole interval lies outside it;
- ``inconclusive``: the interval straddles an edge of the band; the verdict says about how many
  runs would decide, from the interval's 1 / sqrt(n) shrinkage;
- ``setting differs``: the claim declares that our setting cannot test it (synthetic stand-in
  data, a bound the paper does not define), and what differs; what the rule alone would say is
  kept in the reason.

Intervals are 95% throughout (:data:`CONFIDENCE`). The estimators below are the ones the
experiments use: a t interval of a mean, a percentile bootstrap over independent groups
(data sets, runs, seeds) with a fixed seed so the verdict is a function of the records alone,
a Clopper-Pearson interval of a proportion, and exact values that carry no sampling error.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from harness.text_table import text_table

CONFIDENCE = 0.95
VERDICTS = ("reproduced", "not reproduced", "inconclusive", "setting differs")
BOOTSTRAP = 2000
MIN_BOOTSTRAP = 5
Records = list[dict[str, Any]]


class Inconclusive(Exception):
    """Raised by a claim's measure when the records cannot give an interval (one run, say);
    its message is the verdict's reason and should say what would decide."""


@dataclass(frozen=True)
class Estimate:
    """Our value of a claim's quantity and its 95% interval, from ``n`` independent ``unit``."""

    value: float
    low: float
    high: float
    n: int
    unit: str = "runs"
    how: str = ""

    def text(self) -> str:
        if self.low == self.high == self.value:
            return f"{self.value:.3g}"
        return f"{self.value:.3g} [{self.low:.3g}, {self.high:.3g}]"


@dataclass(frozen=True)
class Rule:
    """The band ``[low, high]`` in which the quantity must lie for the claim to hold.

    ``log`` judges distances on the log scale (for ratios and factors), which is also how the
    number of runs that would decide an inconclusive verdict is extrapolated.
    """

    low: float = -math.inf
    high: float = math.inf
    log: bool = False
    text: str = ""

    def __post_init__(self) -> None:
        if not self.low <= self.high or (self.log and self.low <= 0):
            raise ValueError(f"rule band [{self.low}, {self.high}] is invalid; valid: low <= high")

    def outcome(self, est: Estimate) -> tuple[str, str, int | None]:
        """(verdict, reason, runs that would decide) for ``est`` under this rule."""
        band = f"[{self.low:.3g}, {self.high:.3g}]"
        if not all(math.isfinite(v) for v in (est.value, est.low, est.high)):
            return "inconclusive", "our value is not finite", None
        if self.low <= est.low and est.high <= self.high:
            return "reproduced", f"our interval lies inside {band}", None
        if est.high < self.low or est.low > self.high:
            return "not reproduced", f"our interval lies outside {band}", None
        f = (lambda v: math.log(max(v, 1e-300))) if self.log else (lambda v: v)
        edges = [e for e in (self.low, self.high) if math.isfinite(e)]
        dist = min(abs(f(est.value) - f(e)) for e in edges)
        half = (f(est.high) - f(est.low)) / 2
        need = math.ceil(est.n * (half / dist) ** 2) if dist > 0 and est.n > 0 else None
        more = f"; about {need} {est.unit} would decide" if need else ""
        return "inconclusive", f"our interval straddles an edge of {band}{more}", need


def within_factor(target: float, factor: float) -> Rule:
    """The quantity lies within a factor ``factor`` of ``target`` (both > 0)."""
    return Rule(target / factor, target * factor, True, f"within {factor:g}x of {target:.3g}")


def above(threshold: float, what: str = "") -> Rule:
    return Rule(threshold, math.inf, False, what or f"above {threshold:.3g}")


def below(threshold: float, what: str = "") -> Rule:
    return Rule(-math.inf, threshold, False, what or f"below {threshold:.3g}")


def between(low: float, high: float, what: str = "", log: bool = False) -> Rule:
    return Rule(low, high, log, what or f"in [{low:.3g}, {high:.3g}]")


@dataclass(frozen=True)
class Claim:
    """One statement of a paper, what we compute to check it, and how it is decided."""

    id: str
    paper: str
    text: str
    quantity: str
    rule: Rule
    measure: Callable[[Records], Estimate | None]
    paper_value: str = ""
    differs: str = ""


@dataclass(frozen=True)
class Verdict:
    """A judged claim: what the report and ``claims.json`` show."""

    id: str
    paper: str
    text: str
    paper_value: str
    quantity: str
    rule: str
    verdict: str
    ours: str
    value: float | None
    low: float | None
    high: float | None
    n: int | None
    unit: str
    how: str
    reason: str
    runs_to_decide: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def judge(claim: Claim, records: Records) -> Verdict:
    """The verdict of ``claim`` on ``records``; an estimator that fails is inconclusive."""
    try:
        est = claim.measure(records)
        problem = "" if est is not None else "no records to measure it from yet"
    except Inconclusive as exc:
        est, problem = None, str(exc)
    except (ValueError, ZeroDivisionError, KeyError, IndexError) as exc:
        est, problem = None, f"cannot measure it: {exc}"
    need = None
    if est is None:
        verdict, reason = "inconclusive", problem
    else:
        verdict, reason, need = claim.rule.outcome(est)
    if claim.differs:
        reason = f"{claim.differs} (the rule alone: {verdict}{'; ' + reason if reason else ''})"
        verdict, need = "setting differs", None
    return Verdict(
        id=claim.id,
        paper=claim.paper,
        text=claim.text,
        paper_value=claim.paper_value,
        quantity=claim.quantity,
        rule=claim.rule.text,
        verdict=verdict,
        ours=est.text() if est else "-",
        value=est.value if est else None,
        low=est.low if est else None,
        high=est.high if est else None,
        n=est.n if est else None,
        unit=est.unit if est else "",
        how=est.how if est else "",
        reason=reason,
        runs_to_decide=need,
    )


def counts(verdicts: Sequence[Verdict | dict[str, Any]]) -> dict[str, int]:
    """How many verdicts of each kind, in :data:`VERDICTS` order."""
    names = [v["verdict"] if isinstance(v, dict) else v.verdict for v in verdicts]
    return {k: names.count(k) for k in VERDICTS}


def claims_text(verdicts: Sequence[Verdict]) -> str:
    """The claims table for the terminal."""
    rows = [
        [v.id, v.paper_value or "-", v.ours, v.rule, v.verdict, v.reason[:90]] for v in verdicts
    ]
    headers = ("claim", "paper", "ours [95% interval]", "rule", "verdict", "reason")
    c = counts(verdicts)
    tally = ", ".join(f"{n} {k}" for k, n in c.items() if n)
    return text_table(headers, rows, align="llllll") + f"\nclaims: {tally} (of {len(verdicts)})"


# Estimators: each returns an Estimate with a 95% interval.


def exact(value: float, how: str = "exact (no sampling error)") -> Estimate:
    """A value that carries no sampling error (an eigenvalue, a count fixed by the design)."""
    return Estimate(float(value), float(value), float(value), 1, "computations", how)


def mean_interval(values: Sequence[float], unit: str = "runs") -> Estimate:
    """The mean and its t interval."""
    from scipy import stats

    v = np.asarray(values, dtype=float)
    if v.size < 2:
        raise Inconclusive(f"{v.size} {unit}: a mean's interval needs at least 2")
    m, se = float(v.mean()), float(v.std(ddof=1) / math.sqrt(v.size))
    h = float(stats.t.ppf(0.5 + CONFIDENCE / 2, v.size - 1)) * se
    return Estimate(m, m - h, m + h, int(v.size), unit, "mean, t interval")


def proportion(k: int, n: int, unit: str = "draws") -> Estimate | None:
    """A rate k / n with its Clopper-Pearson interval."""
    from statsmodels.stats.proportion import proportion_confint

    if n <= 0:
        return None
    lo, hi = proportion_confint(k, n, alpha=1 - CONFIDENCE, method="beta")
    return Estimate(k / n, float(lo), float(hi), int(n), unit, "Clopper-Pearson")


def bootstrap(
    groups: Sequence[Any],
    statistic: Callable[[Sequence[Any]], float],
    unit: str = "runs",
    seed: int = 0,
) -> Estimate:
    """``statistic(groups)`` with a percentile bootstrap over the independent ``groups``; fewer
    than :data:`MIN_BOOTSTRAP` groups give no interval worth the name (Inconclusive)."""
    groups = list(groups)
    if len(groups) < MIN_BOOTSTRAP:
        raise Inconclusive(
            f"{len(groups)} {unit}: a bootstrap interval needs at least {MIN_BOOTSTRAP}"
        )
    value = float(statistic(groups))
    rng = np.random.default_rng(seed)
    stats = []
    for _ in range(BOOTSTRAP):
        pick = rng.integers(0, len(groups), len(groups))
        stats.append(float(statistic([groups[i] for i in pick])))
    s = np.asarray(stats)
    s = s[np.isfinite(s)]
    if s.size < BOOTSTRAP // 2:
        raise Inconclusive(f"the statistic is not finite on most resamples of the {unit}")
    lo, hi = np.quantile(s, [(1 - CONFIDENCE) / 2, (1 + CONFIDENCE) / 2])
    return Estimate(value, float(lo), float(hi), len(groups), unit, "bootstrap, percentile")


def ratio_of_means(a: Sequence[float], b: Sequence[float], unit: str = "runs") -> Estimate:
    """mean(a) / mean(b) of two independent positive samples: a t interval of the log ratio
    by the delta method, with min(n_a, n_b) - 1 degrees of freedom (wide for few runs)."""
    from scipy import stats

    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if min(x.size, y.size) < 2:
        raise Inconclusive(
            f"{min(x.size, y.size)} {unit[:-1] if unit.endswith('s') else unit} of one side "
            "gives no interval; at least 2 would"
        )
    mx, my = x.mean(), y.mean()
    if mx <= 0 or my <= 0:
        raise ValueError("a ratio of means needs positive means")
    se = math.sqrt(x.var(ddof=1) / (x.size * mx**2) + y.var(ddof=1) / (y.size * my**2))
    h = float(stats.t.ppf(0.5 + CONFIDENCE / 2, min(x.size, y.size) - 1)) * se
    r = float(mx / my)
    n = int(min(x.size, y.size))
    return Estimate(r, r * math.exp(-h), r * math.exp(h), n, unit, "log ratio, delta-method t")


def loglog_slope(x: Sequence[float], y: Sequence[float], unit: str = "points") -> Estimate:
    """The slope of log y on log x, with its t interval (the growth exponent)."""
    from scipy import stats

    lx, ly = np.log(np.asarray(x, dtype=float)), np.log(np.asarray(y, dtype=float))
    if lx.size < 3:
        raise Inconclusive(f"{lx.size} {unit}: a slope's interval needs at least 3")
    fit = stats.linregress(lx, ly)
    h = float(stats.t.ppf(0.5 + CONFIDENCE / 2, lx.size - 2)) * fit.stderr
    return Estimate(fit.slope, fit.slope - h, fit.slope + h, int(lx.size), unit, "OLS slope")
