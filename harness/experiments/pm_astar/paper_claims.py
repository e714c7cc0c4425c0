"""004's claims on pm-astar's records (004_b270422b62f00607.txt, Sec. 3 and 5), and the numbers
our run takes from 004 or meets by construction.

One sentence is one claim: "outperforms baselines" is judged on the worst baseline, "constantly"
on the worst clutter dimension (t intervals at a Bonferroni share of the level), with each
baseline and setting as a reading below it. Where 004 leaves a reading open, the primary one is
picked by a principle stated where it is made; the others are readings, shown and not counted."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np
from scipy import stats

from harness.experiments import claims as cl
from harness.experiments.pm_astar import (
    ASTAR,
    ASTAR_OF,
    MH,
    NOBOUND,
    PM,
    SGD_ASTAR,
    SGD_ORDER,
    SGD_PROBLEMS,
    TRAJ,
    PMConfig,
    seconds_per_expansion,
    settings,
)
from harness.targets.pm_examples import SPIKE_HALF_WIDTH, SPIKE_LOG_HEIGHT, SPIKE_SHARE
from harness.tasks import Records

# "A beats B" -> the interval of A - B lies above 0; an exact sampler's KS p-value is uniform,
# so p >= 0.01 keeps it (a 1% false rejection).
BEATS, KS = cl.above(0.0, "A - B > 0"), cl.above(0.01, "p >= 0.01")
CHEAPER = cl.above(1.0, "ratio > 1")
#: "similar": within 1.25x, the margin the harness gives every mean count (003's factors,
#: 002's queries), fixed before any run.
SIMILAR = cl.within_factor(1.0, 1.25)
FIG2A = "004 Sec. 5.1, Fig. 2a"
#: Our draws run to their exact stops, so every histogram follows the target; 004 states no
#: horizon for Fig. 2a, so its "performance" can only differ in the cost of a draw.
COST = "likelihood evaluations per exact draw (our draws run to their exact stops, so every "
COST += "histogram follows the target; 004 states no horizon for Fig. 2a)"
DATA = "on the 13 sets' (dim, n): ringnorm, twonorm and waveform from their generators (Breiman "
DATA += "1996), the other ten synthetic stand-ins, not 004's data"
EXACT_BOUND = "A* on a true bound (ours), not 004's SGD estimate"
#: figure -> (section, problem, PM-A*'s estimator, the record field compared, 004's words, the
#: data's difference, whether 004 plots it against time). 004 Sec. 5.3 names the trajectory
#: estimator for Fig. 3 and 4a, the prior for 4b; Sec. 5.2 names none: the prior, which needs
#: only what A* needs (Q), is our primary there.
FIGURES = {
    "2b": ("5.2", "counter", PM, "final", "PM-A* outperforms baselines significantly", "", False),
    "3": ("5.3.1", "clutter", TRAJ, "final", "Alg. 1 outperforms A* sampling constantly", "", True),
    "4a": ("5.3.2", "logistic", TRAJ, "final", "PM-A* outperforms all baselines", DATA, True),
    "4b": ("5.3.2", "logistic", PM, "loglik", "", DATA, False),
}
#: Fig. 4b's: 004's text says only this of MH (Sec. 1 and 5.3.2).
FIG4B = (
    'Sec. 1: "We empirically compare our method with popular baselines of A* sampling and '
    'Metropolis-Hastings algorithm. Experiments show that our algorithm works well."; Sec. '
    '5.3.2: "We compare the likelihoods in Fig. 4(b)."'
)
SLUG = {ASTAR: "astar", SGD_ASTAR: "astar-sgd", SGD_ORDER: "astar-sgd-order"}
SLUG |= {NOBOUND: "nobound", MH: "mh"}
Gap = Callable[[Records, float], cl.Estimate]


def _ks(records: Records, label: str) -> cl.Estimate:
    return cl.exact(cl.select(records, "mixture", label=label)[0]["ks_p"], "KS test")


def _cost(records: Records, num: str, den: str) -> cl.Estimate:
    """Likelihoods per exact draw, ``num``'s over ``den``'s: a normal interval of the log ratio
    from the draws' spread (the delta method; thousands of independent draws a search)."""
    a, b = (cl.select(records, "mixture", label=lb)[0] for lb in (num, den))
    r = a["evals_per_draw"] / b["evals_per_draw"]
    if "evals_sd_per_draw" not in a or "evals_sd_per_draw" not in b:
        raise cl.Inconclusive("these records keep no per-draw spread (an older run)", r)
    cv2 = [(x["evals_sd_per_draw"] / x["evals_per_draw"]) ** 2 / x["draws"] for x in (a, b)]
    se = math.sqrt(sum(cv2))
    h = float(stats.norm.ppf(0.5 + cl.CONFIDENCE / 2)) * se
    n = min(a["draws"], b["draws"])
    return cl.Estimate(r, r * math.exp(-h), r * math.exp(h), n, "draws", "log ratio, delta method")


def _sum_gap(pairs: list[tuple[list[float], list[float]]], confidence: float) -> cl.Estimate:
    """cl.sum_of_differences at ``confidence``."""
    est = cl.sum_of_differences(pairs)
    if confidence == cl.CONFIDENCE:
        return est
    t = [stats.t.ppf(0.5 + p / 2, est.n - 1) for p in (cl.CONFIDENCE, confidence)]
    h = (est.high - est.value) * t[1] / t[0]
    return cl.Estimate(est.value, est.value - h, est.value + h, est.n, est.unit, est.how)


def _gap(c: PMConfig, fig: str, cases: list[dict], b: str) -> Gap:
    """PM-A* minus ``b`` in ``fig``: the means over runs after the horizon, summed over
    ``cases``; against time (Fig. 3, 4a), at the faster search's horizon time."""
    _, problem, a, field, *_, timed = FIGURES[fig]
    bound = next((k for k, lb in ASTAR_OF.items() if lb == b), "exact")
    ran = problem not in SGD_PROBLEMS or bound in c.astar_bounds

    def measure(rs: Records, confidence: float = cl.CONFIDENCE) -> cl.Estimate:
        if not ran:
            why = f"{b} is not run at these settings (astar_bounds = {c.astar_bounds!r})"
            raise cl.Inconclusive(why)
        pairs = [
            [cl.select(rs, problem=problem, args=args, label=lb)[0] for lb in (a, b)]
            for args in cases
        ]
        est = _sum_gap([(ra[field], rb[field]) for ra, rb in pairs], confidence)
        if not timed:
            return est
        slower = sum(seconds_per_expansion(ra) for ra, _ in pairs) / sum(
            seconds_per_expansion(rb) for _, rb in pairs
        )
        if (slower <= 1 and est.low > 0) or (slower >= 1 and est.high < 0):
            return est
        if all("at_checkpoints" in r for pair in pairs for r in pair):
            return _sum_gap([_equal_time(ra, rb) for ra, rb in pairs], confidence)
        n = pairs[0][0]["horizon"]
        k = [max(1, min(n, int(n / r))) for r in (slower, 1 / slower)]  # at equal time
        point = sum(ra["mean_trace"][k[0] - 1] - rb["mean_trace"][k[1] - 1] for ra, rb in pairs)
        why = f"{a} takes {slower:.2g}x {b}'s time an expansion; its gap at equal expansions, "
        why += f"{est.text()}, holds at equal time only above 0 for the faster search or below 0 "
        raise cl.Inconclusive(why + "for the slower (the records keep no per-run traces)", point)

    return measure


def _equal_time(a: dict[str, Any], b: dict[str, Any]) -> tuple[list[float], list[float]]:
    """Both searches' per-run best values at the faster one's horizon time: the faster at its
    horizon, the slower at the checkpoint nearest the expansions it makes in that time (a
    stopped search holds its final value)."""

    def at(r: dict[str, Any], share: float) -> list[float]:
        if share >= 1.0:
            return list(r["final"])
        ks = np.asarray(r["checkpoints"])
        j = int(np.argmin(np.abs(ks - share * r["horizon"])))
        return [row[j] for row in r["at_checkpoints"]]

    ta, tb = seconds_per_expansion(a), seconds_per_expansion(b)
    return at(a, tb / ta), at(b, ta / tb)


def _worst(gaps: dict[str, Gap]) -> Callable[[Records], cl.Estimate]:
    """The smallest of several gaps, each with a t interval at a Bonferroni share of the level,
    so that the interval of the smallest covers it at 95%. A gap with no records leaves it
    inconclusive, unless another one already lies below 0 (then the claim fails whatever the
    missing one gives)."""
    level = 1.0 - (1.0 - cl.CONFIDENCE) / len(gaps)

    def measure(rs: Records) -> cl.Estimate:
        got, missing = [], []
        for name, gap in gaps.items():
            try:
                got.append(gap(rs, level))
            except cl.Inconclusive as exc:
                missing.append(f"{name}: {exc}")
        if missing and not any(e.high < 0 for e in got):
            raise cl.Inconclusive("; ".join(missing), min((e.value for e in got), default=None))
        how = f"worst of {len(gaps)}, t intervals at {level:.4g} each (Bonferroni)"
        if missing:
            how += f"; not measured: {'; '.join(missing)}"
        lo, hi, v = (min(getattr(e, k) for e in got) for k in ("low", "high", "value"))
        return cl.Estimate(v, lo, hi, min(e.n for e in got), "runs", how)

    return measure


def _what(c: PMConfig, fig: str, b: str, cases: list[dict]) -> str:
    _, problem, a, field, _, data, timed = FIGURES[fig]
    what = "log-likelihood of the returned sample" if field == "loglik" else "best Gumbel value"
    total = f"sum over {len(cases)} data sets of the " if len(cases) > 1 else ""
    H = getattr(c, problem + "_horizon")
    mh = f" (MH: {2 * H} steps, as many likelihoods)" if b == MH else ""
    out = f"{total}mean {what} after {H} expansions{mh}, {a} - {b}"
    out += f" ({EXACT_BOUND})" if b == ASTAR and problem in SGD_PROBLEMS else ""
    out += f", {data}" if data else ""
    if timed:  # the best value never falls: a search run for less time finds no more
        out += " (004 plots time: where the faster search trails, at equal time, the slower "
        out += "one's runs at the checkpoint nearest its share of that time)"
    return out


def _fails(b: str) -> str:
    return f"PM-A*'s mean at or below {b}'s: possible, as either search may find the best first"


def _one(
    c: PMConfig, fig: str, cid: str, cases: list[dict], b: str, on: str = "", text: str = ""
) -> cl.Claim:
    """A reading: PM-A* against ``b`` alone, on ``cases`` (all summed)."""
    sec, *_, words, _, _ = FIGURES[fig]
    text = text or f'"{words}." (004 Sec. {sec}, Fig. {fig})'
    return cl.Claim(
        cid,
        f"004 Sec. {sec}, Fig. {fig}",
        f"{text} Against {b}{on}.",
        _what(c, fig, b, cases),
        BEATS,
        _gap(c, fig, cases, b),
        fails_if=_fails(b),
    )


def _all(
    c: PMConfig, fig: str, cid: str, parts: dict[str, tuple[list[dict], str]], readings: list
) -> cl.Claim:
    """004's sentence over several baselines or settings: the worst of them."""
    sec, *_, words, _, _ = FIGURES[fig]
    names = ", ".join(parts)
    cases, b = next(iter(parts.values()))
    one = len({bb for _, bb in parts.values()}) == 1
    each = _what(c, fig, b if one else "the baseline", cases)
    quantity = f"the smallest over {names} of the {each}"
    gaps = {name: _gap(c, fig, cs, bb) for name, (cs, bb) in parts.items()}
    return cl.Claim(
        cid,
        f"004 Sec. {sec}, Fig. {fig}",
        f'"{words}." (004 Sec. {sec}, Fig. {fig})',
        quantity,
        BEATS,
        _worst(gaps),
        fails_if=f"PM-A*'s mean at or below that of one of {names}: possible, as either "
        "search may find the best first",
        readings=tuple(readings),
    )


def mixture_claims() -> list[cl.Claim]:
    """Fig. 2a: correctness, and the cost against A* and A* without a bound. Sec. 5.1 names no
    estimator: the prior, which needs only what A* needs, is primary; the trajectory a reading."""
    said = {
        "exact": '"We first verify the correctness of Alg. 1 on a greenhouse experiment."',
        "similar-astar": '"From Fig. 2(a), Alg. 1 has a similar performance to A* sampling"',
        "cheaper": '"... and outperforms the A* sampling without a bound function."',
    }
    fails = {
        "exact": "p < 0.01: possible, as a search that stops early or picks wrongly draws off "
        "the target",
        "similar-astar": f"the ratio outside {SIMILAR.low:.3g} to {SIMILAR.high:.3g}: possible, "
        "as A* stops on its regions' bounds and PM-A* on the global one",
        "cheaper": "the ratio at or below 1: possible, as PM-A*'s estimates may steer it to the "
        "wrong regions",
    }
    out = []
    for kind, text in said.items():
        pair = []
        for lb, slug in ((PM, "pm"), (TRAJ, "pm-trajectory")):
            if kind == "exact":
                q, rule = f"KS p of {lb}'s draws against the quadrature CDF", KS
                m = partial(_ks, label=lb)
            else:
                other, rule = (ASTAR, SIMILAR) if kind == "similar-astar" else (NOBOUND, CHEAPER)
                q, m = f"{COST}, {other} / {lb}", partial(_cost, num=other, den=lb)
            cid = f"fig2a-{slug}-{kind}"
            pair.append(cl.Claim(cid, FIG2A, text, q, rule, m, fails_if=fails[kind]))
        out.append(dataclasses.replace(pair[0], readings=(pair[1],)))
    return out


def trace_claims(c: PMConfig) -> list[cl.Claim]:
    """Fig. 2b, 3, 4a and 4b. 004's A* in Sec. 5.3 runs on SGD's estimate of the bound ("we
    exploit the standard stochastic gradient descent (SGD) algorithm to calculate the bound
    function"): that A* is primary in Fig. 3 and 4a, at our SGD setting (004 tunes SGD and gives
    none); A* on a true bound, and SGD without its stop, are readings."""
    st, out = settings(c), []
    sgd = [ASTAR_OF[b] for b in c.astar_bounds if b != "exact"]
    counter = st["counter"]
    each = [_one(c, "2b", f"fig2b-above-{SLUG[b]}", counter, b) for b in (ASTAR, NOBOUND)]
    out.append(
        _all(c, "2b", "fig2b-above-baselines", {b: (counter, b) for b in (ASTAR, NOBOUND)}, each)
    )
    clutter = {f"D = {a['D']}": ([a], SGD_ASTAR) for a in st["clutter"]}
    each = [
        _one(c, "3", f"fig3-D{a['D']}-above-{SLUG[b]}", [a], b, f", D = {a['D']}")
        for b in (*sgd, ASTAR)
        for a in st["clutter"]
    ]
    out.append(_all(c, "3", "fig3-above-astar", clutter, each))
    logistic = st["logistic"]
    base = {b: (logistic, b) for b in (SGD_ASTAR, NOBOUND)}
    each = [
        _one(c, "4a", f"fig4a-sum-above-{SLUG[b]}", logistic, b) for b in (*sgd, ASTAR, NOBOUND)
    ]
    out.append(_all(c, "4a", "fig4a-above-baselines", base, each))
    # 004 sums Fig. 4a over the data sets and does not say whether 4b does: the sum, the only
    # aggregate it states, is primary; each set is a reading.
    each = [
        _one(c, "4b", f"fig4b-{a['set']}-above-mh", [a], MH, f", {a['set']}", FIG4B)
        for a in logistic
    ]
    head = _one(c, "4b", "fig4b-sum-above-mh", logistic, MH, "", FIG4B)
    out.append(dataclasses.replace(head, readings=tuple(each)))
    return out


def paper_givens() -> tuple[cl.Given, ...]:
    height = f"{SPIKE_LOG_HEIGHT:.0f}"
    return (
        cl.Given(
            '"A* sampling has a poor performance on this example"',
            "004 Sec. 3, Fig. 1(c)",
            "poor",
            "by construction",
            f"A*'s D(S) on any box that covers the spike carries its log height ({height} on "
            f"our reading), far above every other box's, until the box is narrower than the "
            f"spike ({2 * SPIKE_HALF_WIDTH:.0e}), finer than splits in Q's coordinates resolve "
            "in doubles near 0: A* keeps splitting boxes around x = 0",
        ),
        cl.Given(
            '"G_P(S) being high for such S is with probability only about 0.00001"',
            "004 Sec. 3",
            "about 0.00001",
            "by construction",
            f"the spike holds {SPIKE_SHARE:g} of p's mass on our reading, as on 004's",
        ),
        cl.Given(
            "Fig. 4's data: 13 sets, dim 2 to 60, n 24 to 7400",
            "004 Sec. 5.3.2, Appendix C",
            "each set's (dim, n)",
            "taken from the paper",
            "each set's dim and n; ringnorm, twonorm and waveform drawn from their generators "
            "(Breiman 1996; waveform as class 1 vs classes 2 + 3, our reading), the other ten "
            "synthetic stand-ins whose points are ours",
        ),
    )
