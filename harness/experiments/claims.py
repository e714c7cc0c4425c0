"""A paper's claims as data, each judged by a decision rule fixed before the run.

A :class:`Claim` names the paper's statement (file and numbering, one sentence in the paper's
own words, the paper's numbers), the quantity we compute from our records with its interval
(:class:`Estimate`), a :class:`Rule` (the band the quantity must lie in for the claim to hold)
and ``fails_if``: the outcome that would have made it fail, and why that outcome was possible
in our run. :func:`judge` turns it into a :class:`Verdict`:

- ``reproduced``: our whole interval lies inside the band;
- ``not reproduced``: our whole interval lies outside it;
- ``inconclusive``: the interval straddles an edge of the band; the verdict says how many more
  replicates, in the estimate's own unit, would decide, from the interval's own shape on the
  side of that edge, or that the value sits on the edge and no size near it decides;
- ``setting differs``: our setting cannot produce the claim's quantity at all (an absolute
  number of a data set we do not have); the verdict keeps what the rule alone gives
  (``rule_alone``), and the report counts those.

One sentence of a paper is one claim, judged on its literal reading. Other readings of the same
sentence are ``readings``: judged and shown under the claim, never counted. A number set by our
inputs or true by construction is not a claim but a :class:`Given`, listed with the settings.
``kind`` separates the papers' claims from the harness's own (gate quality).

Intervals are 95% throughout (:data:`CONFIDENCE`). The estimators below are the ones the
experiments use: a t interval of a mean, a percentile bootstrap over independent groups
(data sets, runs, seeds) with a fixed seed so the verdict is a function of the records alone,
a Clopper-Pearson interval of a proportion, and exact values that carry no sampling error.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from harness.display import text_table
from harness.gates.rates import clopper_pearson

CONFIDENCE = 0.95
VERDICTS = ("reproduced", "not reproduced", "inconclusive", "setting differs")
#: Whose claim it is: a paper's, or the harness's own (gate quality); counted apart.
KINDS = ("paper", "harness")
#: Units in which more can be run: "runs to decide" counts these. Other units (the paper's
#: settings, fit points) are fixed by the design, and more replicates cannot add to them.
REPLICABLE = frozenset(
    {
        "runs",
        "seeds",
        "data sets",
        "draws",
        "chains",
        "steps",
        "sweeps",
        "races",
        "samples",
        "iterations",
        "replicates",
        "blocks of states",
        "trials",
        "sets",
    }
)
#: Beyond this many times the replicates we have, a straddling value is called undecidable
#: near its value: its distance to the edge is under a tenth of the interval's half-width.
EDGE_FACTOR = 100
BOOTSTRAP = 2000
MIN_BOOTSTRAP = 5
Records = list[dict[str, Any]]


class Inconclusive(Exception):
    """Raised by a claim's measure when the records cannot give an interval (one run, say);
    its message is the verdict's reason and should say what would decide. ``value``, when
    known, is shown as our value without an interval; ``unit``, when known, names the
    replicates it has too few of (``--decide`` adds only :data:`REPLICABLE` ones)."""

    def __init__(self, reason: str, value: float | None = None, unit: str = "") -> None:
        super().__init__(reason)
        self.value = value
        self.unit = unit


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

    def scaled(self, factor: float) -> Estimate:
        """The same estimate of ``factor`` times the quantity (factor > 0)."""
        v, lo, hi = (x * factor for x in (self.value, self.low, self.high))
        return Estimate(v, lo, hi, self.n, self.unit, self.how)


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
        """(verdict, reason, replicates in all that would decide) for ``est`` under this rule."""
        band = f"[{self.low:.3g}, {self.high:.3g}]"
        if not all(math.isfinite(v) for v in (est.value, est.low, est.high)):
            return "inconclusive", "our value is not finite", None
        if self.low <= est.low and est.high <= self.high:
            return "reproduced", f"our interval lies inside {band}", None
        if est.high < self.low or est.low > self.high:
            return "not reproduced", f"our interval lies outside {band}", None
        more, need = self.to_decide(est)
        return "inconclusive", f"our interval straddles an edge of {band}; {more}", need

    def to_decide(self, est: Estimate) -> tuple[str, int | None]:
        """What would decide a straddling ``est``: more of its replicates, from the interval's
        own half on the side of the edge it crosses (bootstrap and Clopper-Pearson intervals
        are not symmetric), shrinking as 1 / sqrt(n); or nothing near this value."""
        f = (lambda v: math.log(max(v, 1e-300))) if self.log else (lambda v: v)
        v = f(est.value)
        crossed = [e for e in (self.low, self.high) if f(est.low) <= f(e) <= f(est.high)]
        edge = min(crossed, key=lambda e: abs(f(e) - v))
        side = f(est.high) - v if f(edge) >= v else v - f(est.low)
        dist = abs(f(edge) - v)
        way = "reproduced" if self.low <= est.value <= self.high else "not reproduced"
        if dist <= 0 or side <= 0 or est.n <= 0 or (side / dist) ** 2 > EDGE_FACTOR:
            near = f"our value {est.value:.3g} sits on the edge {edge:.3g}"
            return f"{near}: undecidable at any size near this value", None
        need = max(math.ceil(est.n * (side / dist) ** 2), est.n + 1)
        if est.unit not in REPLICABLE:
            fixed = f"the interval is over the design's {est.n} {est.unit}"
            return f"{fixed}: more of them cannot be added to decide it", None
        return (
            f"about {need - est.n} more {est.unit} ({need} in all) would decide it "
            f"({way}, if our value holds)",
            need,
        )


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
    """One statement of a paper, what we compute to check it, and how it is decided.

    ``fails_if`` says in one line which outcome would have made the claim fail and why that
    outcome was possible in our run (a claim that cannot fail is a :class:`Given`).
    ``readings`` are other readings of the same sentence, judged under it and not counted.
    ``differs`` is only for a quantity our setting cannot produce at all.
    """

    id: str
    paper: str
    text: str
    quantity: str
    rule: Rule
    measure: Callable[[Records], Estimate | None]
    paper_value: str = ""
    differs: str = ""
    fails_if: str = ""
    kind: str = "paper"
    readings: tuple[Claim, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"claim {self.id}: kind {self.kind!r} is invalid; valid: {KINDS}")


@dataclass(frozen=True)
class Given:
    """A number the paper states that our run does not test: set by our inputs ("taken from
    the paper") or true by construction. Listed with the settings, outside the tally."""

    what: str
    paper: str
    value: str
    basis: str
    why: str = ""

    def __post_init__(self) -> None:
        if self.basis not in ("taken from the paper", "by construction"):
            raise ValueError(
                f"given {self.what!r}: basis {self.basis!r} is invalid; "
                "valid: 'taken from the paper' or 'by construction'"
            )


@dataclass(frozen=True)
class Verdict:
    """A judged claim: what the report and ``claims.json`` show. ``rule_alone`` is what the
    rule gives whatever the setting; ``reading_of`` names the claim this row is another
    reading of (None for a primary reading, which alone is counted)."""

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
    rule_alone: str = ""
    fails_if: str = ""
    kind: str = "paper"
    reading_of: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def judge(claim: Claim, records: Records, reading_of: str | None = None) -> Verdict:
    """The verdict of ``claim`` on ``records``; an estimator that fails is inconclusive."""
    point, short = None, ""
    try:
        est = claim.measure(records)
        problem = "" if est is not None else "no records to measure it from yet"
    except Inconclusive as exc:
        est, problem, point, short = None, str(exc), exc.value, exc.unit
    except (ValueError, ZeroDivisionError, KeyError, IndexError) as exc:
        est, problem = None, f"cannot measure it: {exc}"
    need = None
    if est is None:
        verdict, reason = "inconclusive", problem
    else:
        verdict, reason, need = claim.rule.outcome(est)
    alone = verdict
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
        ours=est.text() if est else (f"{point:.3g} (no interval)" if point is not None else "-"),
        value=est.value if est else point,
        low=est.low if est else None,
        high=est.high if est else None,
        n=est.n if est else None,
        unit=est.unit if est else short,
        how=est.how if est else "",
        reason=reason,
        runs_to_decide=need,
        rule_alone=alone,
        fails_if=claim.fails_if,
        kind=claim.kind,
        reading_of=reading_of,
    )


def judge_all(claims: Sequence[Claim], records: Records) -> list[Verdict]:
    """Every claim judged, each followed by its other readings; ids must be distinct."""
    out = []
    for c in claims:
        out.append(judge(c, records))
        out += [judge(r, records, reading_of=c.id) for r in c.readings]
    ids = [v.id for v in out]
    if len(set(ids)) != len(ids):
        repeated = sorted({i for i in ids if ids.count(i) > 1})
        raise ValueError(f"claim ids {repeated} repeat; valid: distinct ids")
    return out


def _field(v: Verdict | dict[str, Any], name: str) -> Any:
    return v.get(name) if isinstance(v, dict) else getattr(v, name)


def primary(
    verdicts: Sequence[Verdict | dict[str, Any]], kind: str | None = None
) -> list[Verdict | dict[str, Any]]:
    """The verdicts that count: primary readings, of ``kind`` when given (records written
    before readings and kinds existed count as primary paper claims)."""
    return [
        v
        for v in verdicts
        if not _field(v, "reading_of") and (kind is None or (_field(v, "kind") or "paper") == kind)
    ]


def counts(verdicts: Sequence[Verdict | dict[str, Any]]) -> dict[str, int]:
    """How many primary verdicts of each kind, in :data:`VERDICTS` order (other readings are
    not counted)."""
    names = [_field(v, "verdict") for v in primary(verdicts)]
    return {k: names.count(k) for k in VERDICTS}


def differs_alone(verdicts: Sequence[Verdict | dict[str, Any]]) -> dict[str, int]:
    """What the rule alone gives for the primary "setting differs" verdicts."""
    names = [
        _field(v, "rule_alone") or "inconclusive"
        for v in primary(verdicts)
        if _field(v, "verdict") == "setting differs"
    ]
    return {k: names.count(k) for k in VERDICTS[:3] if names.count(k)}


def tally_text(verdicts: Sequence[Verdict | dict[str, Any]]) -> str:
    """ "3 reproduced, 1 setting differs (rule alone: 1 not reproduced)" over primary verdicts."""
    parts = []
    for k, n in counts(verdicts).items():
        if not n:
            continue
        alone = differs_alone(verdicts) if k == "setting differs" else {}
        split = ", ".join(f"{m} {a}" for a, m in alone.items())
        parts.append(f"{n} {k}" + (f" (rule alone: {split})" if split else ""))
    return ", ".join(parts)


def claims_text(verdicts: Sequence[Verdict]) -> str:
    """The claims table for the terminal: under each claim's row, its sentence (wrapped), so a
    reader of the terminal alone knows what was judged; other readings are indented under their
    claim; each verdict's reason in full below the table."""
    rows = [
        [("  " if v.reading_of else "") + v.id, v.paper_value or "-", v.ours, v.rule, v.verdict]
        for v in verdicts
    ]
    headers = ("claim", "paper", "ours [95% interval]", "rule", "verdict")
    lines = text_table(headers, rows).splitlines()
    table = lines[:2]
    for v, line in zip(verdicts, lines[2:], strict=True):
        table.append(line)
        if not v.reading_of:
            said = v.text if v.text.startswith('"') else f'"{v.text}"'
            table += textwrap.wrap(said, 100, initial_indent="    ", subsequent_indent="     ")
    why = "\n".join(f"  {v.id}: {v.reason}" for v in verdicts if v.reason)
    n = len(primary(verdicts))
    readings = len(verdicts) - n
    other = f"; {readings} other readings shown, not counted" if readings else ""
    return "\n".join(table) + f"\nwhy:\n{why}\nclaims: {tally_text(verdicts)} (of {n}{other})"


# Estimators: each returns an Estimate with a 95% interval.


def exact(value: float, how: str = "exact (no sampling error)") -> Estimate:
    """A value that carries no sampling error (an eigenvalue, a count fixed by the design)."""
    return Estimate(float(value), float(value), float(value), 1, "computations", how)


def select(records: Records, kind: str | None = None, **where: Any) -> Records:
    """The records of type ``kind`` whose fields equal ``where``; none is Inconclusive."""
    out = [
        r
        for r in records
        if (kind is None or r.get("type") == kind) and all(r.get(k) == v for k, v in where.items())
    ]
    if not out:
        raise Inconclusive(f"no {kind or ''} record with {where or 'any fields'} yet")
    return out


def t_quantile(q: float, df: float) -> float:
    """Student t's ``q`` quantile with ``df`` degrees of freedom: the special function behind
    scipy's ``stats.t.ppf``, the same bits without its argument handling (2 us, not 85 us;
    judging calls it in every trial of a design and every bootstrap of a measure)."""
    from scipy import special

    return float(special.stdtrit(df, q))


def mean_interval(values: Sequence[float], unit: str = "runs") -> Estimate:
    """The mean and its t interval."""
    v = np.asarray(values, dtype=float)
    if v.size < 2:
        point = float(v[0]) if v.size else None
        raise Inconclusive(f"{v.size} {unit}: a mean's interval needs at least 2", point, unit)
    m, se = float(v.mean()), float(v.std(ddof=1) / math.sqrt(v.size))
    h = t_quantile(0.5 + CONFIDENCE / 2, v.size - 1) * se
    return Estimate(m, m - h, m + h, int(v.size), unit, "mean, t interval")


def geometric_mean(values: Sequence[float], unit: str = "settings") -> Estimate:
    """The geometric mean of positive values and its t interval (on the log scale)."""
    e = mean_interval(np.log(np.asarray(values, dtype=float)), unit)
    v, lo, hi = (math.exp(x) for x in (e.value, e.low, e.high))
    return Estimate(v, lo, hi, e.n, unit, "geometric mean, t interval")


def per_step_count(values: Sequence[float], steps: int, k: int = 1) -> Estimate:
    """The mean of a per-step count over runs, at the Bonferroni share (1 - CONFIDENCE) / k of
    the level (one of a claim's k settings): a t interval over runs, or for one run of
    ``steps`` steps the interval of a Poisson count's mean, +-z sqrt(m / steps)."""
    from scipy import stats

    v = np.asarray(values, dtype=float)
    tail = (1 - CONFIDENCE) / (2 * k)
    if v.size > 1:
        h = float(t_quantile(1 - tail, v.size - 1) * v.std(ddof=1) / np.sqrt(v.size))
        n, unit = int(v.size), "runs"
    else:
        n, unit = steps, "steps"
        h = float(stats.norm.ppf(1 - tail) * np.sqrt(v[0] / n))
    m = float(v.mean())
    return Estimate(m, m - h, m + h, n, unit, "mean" + (f", Bonferroni over {k}" if k > 1 else ""))


def proportion(k: int, n: int, unit: str = "draws") -> Estimate:
    """A rate k / n with its Clopper-Pearson interval."""
    if n <= 0:
        raise Inconclusive(f"no {unit} to count yet")
    lo, hi = clopper_pearson(k, n, 1 - CONFIDENCE)
    return Estimate(k / n, float(lo), float(hi), int(n), unit, "Clopper-Pearson")


def worst_proportion(
    k: Sequence[int], n: Sequence[int], scale: Sequence[float], unit: str = "draws"
) -> Estimate:
    """The largest k_i / n_i * scale_i over several settings, with intervals that cover all
    of them at once (Clopper-Pearson at a Bonferroni share of the level)."""
    k_, n_, s_ = (np.asarray(x, dtype=float) for x in (k, n, scale))
    if k_.size == 0:
        raise Inconclusive(f"no {unit} to count yet")
    lo, hi = clopper_pearson(k_, n_, (1 - CONFIDENCE) / k_.size)
    how = f"worst of {k_.size}, Clopper-Pearson, Bonferroni"
    value = float(np.max(k_ / n_ * s_))
    return Estimate(value, float(np.max(lo * s_)), float(np.max(hi * s_)), int(n_.min()), unit, how)


def sum_of_differences(pairs: Sequence[tuple[Sequence[float], Sequence[float]]]) -> Estimate:
    """sum over strata of mean(a) - mean(b), a and b independent runs; a t interval with the
    fewest runs' degrees of freedom."""
    if not pairs:
        raise Inconclusive("no runs to compare yet")
    n = min(min(len(a), len(b)) for a, b in pairs)
    value = float(sum(np.mean(a) - np.mean(b) for a, b in pairs))
    if n < 2:
        raise Inconclusive(
            f"{n} run of a side gives no interval; at least 2 each would", value, "runs"
        )
    var = sum(np.var(a, ddof=1) / len(a) + np.var(b, ddof=1) / len(b) for a, b in pairs)
    h = float(t_quantile(0.5 + CONFIDENCE / 2, n - 1) * math.sqrt(var))
    return Estimate(value, value - h, value + h, n, "runs", "difference of means, t interval")


def bootstrap(
    groups: Sequence[Any],
    statistic: Callable[[Sequence[Any]], float],
    unit: str = "runs",
    seed: int = 0,
) -> Estimate:
    """``statistic(groups)`` with a percentile bootstrap over the independent ``groups``; fewer
    than :data:`MIN_BOOTSTRAP` groups give no interval worth the name (Inconclusive)."""
    groups = list(groups)
    value = float(statistic(groups)) if groups else None
    if len(groups) < MIN_BOOTSTRAP:
        raise Inconclusive(
            f"{len(groups)} {unit}: a bootstrap interval needs at least {MIN_BOOTSTRAP}",
            value,
            unit,
        )
    rng = np.random.default_rng(seed)
    stats = []
    for _ in range(BOOTSTRAP):
        pick = rng.integers(0, len(groups), len(groups))
        stats.append(float(statistic([groups[i] for i in pick])))
    s = np.asarray(stats)
    s = s[np.isfinite(s)]
    if s.size < BOOTSTRAP // 2:
        raise Inconclusive(f"the statistic is not finite on most resamples of the {unit}", value)
    lo, hi = np.quantile(s, [(1 - CONFIDENCE) / 2, (1 + CONFIDENCE) / 2])
    assert value is not None
    return Estimate(value, float(lo), float(hi), len(groups), unit, "bootstrap, percentile")


def ratio_of_means(a: Sequence[float], b: Sequence[float], unit: str = "runs") -> Estimate:
    """mean(a) / mean(b) of two independent positive samples: a t interval of the log ratio
    by the delta method, with min(n_a, n_b) - 1 degrees of freedom (wide for few runs)."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.size == 0 or y.size == 0:
        raise Inconclusive(f"no {unit} of one side yet")
    mx, my = x.mean(), y.mean()
    if min(x.size, y.size) < 2:
        raise Inconclusive(
            f"one side has {min(x.size, y.size)} of the {unit}: no interval; 2 each would give one",
            float(mx / my) if my else None,
            unit=unit,
        )
    if mx <= 0 or my <= 0:
        raise ValueError("a ratio of means needs positive means")
    se = math.sqrt(x.var(ddof=1) / (x.size * mx**2) + y.var(ddof=1) / (y.size * my**2))
    h = t_quantile(0.5 + CONFIDENCE / 2, min(x.size, y.size) - 1) * se
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
    h = t_quantile(0.5 + CONFIDENCE / 2, lx.size - 2) * fit.stderr
    return Estimate(fit.slope, fit.slope - h, fit.slope + h, int(lx.size), unit, "OLS slope")
