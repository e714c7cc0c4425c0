"""The experiment framework's own parts: declared configs, decision rules, estimators."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass

import numpy as np
import pytest

from harness.declare import Config, Declared, from_manifest, param, settings_rows
from harness.experiments.claims import (
    Claim,
    Estimate,
    Inconclusive,
    Rule,
    above,
    below,
    between,
    bootstrap,
    claims_text,
    counts,
    judge,
    loglog_slope,
    mean_interval,
    proportion,
    ratio_of_means,
    within_factor,
)


def est(value: float, low: float, high: float, n: int = 10) -> Estimate:
    return Estimate(value, low, high, n)


@pytest.mark.parametrize(
    ("rule", "inside", "outside", "straddle"),
    [
        (within_factor(900.0, 1.5), est(800, 700, 950), est(155, 140, 170), est(580, 500, 700)),
        (above(1.0), est(2.0, 1.5, 2.5), est(0.5, 0.4, 0.6), est(1.1, 0.9, 1.3)),
        (below(0.05), est(0.01, 0.0, 0.02), est(0.2, 0.1, 0.3), est(0.05, 0.04, 0.06)),
        (between(0.4, 0.6), est(0.5, 0.45, 0.55), est(0.3, 0.25, 0.35), est(0.6, 0.55, 0.65)),
    ],
)
def test_every_rule_decides_both_ways_and_says_what_would_decide(
    rule: Rule, inside: Estimate, outside: Estimate, straddle: Estimate
) -> None:
    assert rule.outcome(inside)[0] == "reproduced"
    assert rule.outcome(outside)[0] == "not reproduced"
    verdict, reason, need = rule.outcome(straddle)
    assert verdict == "inconclusive" and "straddles" in reason
    if straddle.value not in (rule.low, rule.high):
        assert need is not None and need > straddle.n
        assert f"about {need - straddle.n} more runs ({need} in all)" in reason


def test_runs_to_decide_follow_the_square_root_law() -> None:
    # Half-width 0.2 at n = 10, value 0.1 from the edge: (0.2 / 0.1)^2 * 10 = 40 runs.
    assert above(1.0).outcome(est(1.1, 0.9, 1.3))[2] == 40


def test_a_rule_band_must_be_ordered_and_a_log_band_positive() -> None:
    with pytest.raises(ValueError, match="band"):
        Rule(2.0, 1.0)
    with pytest.raises(ValueError, match="band"):
        Rule(0.0, 1.0, log=True)


def _claim(measure, differs: str = "") -> Claim:
    return Claim("c", "000 Sec. 1", "A claim.", "a ratio", above(1.0), measure, "3", differs)


def test_judge_keeps_the_rules_outcome_when_the_setting_differs() -> None:
    v = judge(_claim(lambda rs: est(2.0, 1.5, 2.5), differs="simulated data"), [])
    assert v.verdict == "setting differs"
    assert "simulated data" in v.reason and "the rule alone: reproduced" in v.reason
    assert (v.value, v.low, v.high, v.n) == (2.0, 1.5, 2.5, 10)


def test_a_measure_that_cannot_measure_is_inconclusive_with_its_reason() -> None:
    def one_run(records):
        raise Inconclusive("one run gives no interval; 3 would")

    assert judge(_claim(one_run), []).reason == "one run gives no interval; 3 would"
    v = judge(_claim(lambda rs: rs[0]["x"]), [])
    assert v.verdict == "inconclusive" and "cannot measure" in v.reason
    nan = judge(_claim(lambda rs: est(math.nan, math.nan, math.nan)), [])
    assert nan.verdict == "inconclusive"


def test_counts_and_the_text_table_name_every_verdict() -> None:
    vs = [judge(_claim(lambda rs, v=v: est(v, v - 0.1, v + 0.1)), []) for v in (2.0, 0.5, 1.0)]
    assert counts(vs) == {
        "reproduced": 1,
        "not reproduced": 1,
        "inconclusive": 1,
        "setting differs": 0,
    }
    assert "claims: 1 reproduced, 1 not reproduced, 1 inconclusive (of 3)" in claims_text(vs)
    assert json.loads(json.dumps([v.to_dict() for v in vs]))[0]["verdict"] == "reproduced"


def test_estimators_give_intervals_that_cover_and_refuse_too_few_units() -> None:
    rng = np.random.default_rng(0)
    m = mean_interval(rng.normal(3.0, 1.0, 400))
    assert m.low < 3.0 < m.high and m.n == 400
    r = ratio_of_means(rng.normal(6.0, 0.5, 50), rng.normal(2.0, 0.2, 50))
    assert r.low < 3.0 < r.high
    p = proportion(30, 1000)
    assert p is not None and p.low < 0.03 < p.high
    x = np.geomspace(1, 1e4, 9)
    s = loglog_slope(x, 2.0 * x**0.5 * np.exp(rng.normal(0, 0.05, x.size)))
    assert s.low < 0.5 < s.high
    b = bootstrap(list(rng.normal(1.0, 0.1, 30)), np.mean)
    assert b.low < 1.0 < b.high
    for few in (
        lambda: mean_interval([1.0]),
        lambda: ratio_of_means([1.0], [1.0, 2.0]),
        lambda: bootstrap([1.0, 2.0], np.mean),
        lambda: loglog_slope([1, 2], [1, 2]),
    ):
        with pytest.raises(Inconclusive):
            few()


@dataclass(frozen=True)
class Line(Declared):
    name: str
    n: int = param(low=1)
    lam: float | None = param(None, low=0.0, high=math.inf, open=True)

    def describe(self) -> str:
        return f"{self.name}: n = {self.n}"


@dataclass(frozen=True, kw_only=True)
class ToyConfig(Config):
    experiment = "toy"
    n: int = param(low=1, quick=10, full=100, doc="draws")
    deltas: tuple[float, ...] = param((0.1,), low=0.0, high=1.0, open=True, doc="deltas")
    kind: str = param("a", choices=("a", "b"))
    lines: tuple[Line, ...] = param((Line("x", 1),), doc="line")


def test_a_declared_config_checks_coerces_and_names_the_bad_parameter() -> None:
    c = ToyConfig.for_level("quick", seed=4)
    assert (c.level, c.seed, c.n, c.deltas) == ("quick", 4, 10, (0.1,))
    assert ToyConfig.for_level("full").n == 100
    assert ToyConfig.for_level("quick", n=12.0).n == 12
    bad = [
        ({"n": 0}, "'n' = 0 is invalid; valid: an integer in [1, inf)"),
        ({"n": 1.5}, "'n' = 1.5 is invalid"),
        ({"n": True}, "'n' = True is invalid"),
        ({"deltas": (0.1, 1.0)}, "'deltas[1]' = 1.0 is invalid"),
        ({"deltas": ()}, "'deltas' = () is invalid; valid: a non-empty tuple"),
        ({"kind": "c"}, "'kind' = 'c' is invalid; valid: one of 'a', 'b'"),
        ({"lines": ("x",)}, "'lines[0]' = 'x' is invalid; valid: a Line"),
        ({"seed": -1}, "'seed' = -1 is invalid"),
    ]
    for change, message in bad:
        with pytest.raises(ValueError, match=re.escape(message)):
            ToyConfig.for_level("quick", **change)
    with pytest.raises(ValueError, match="'level' = 'huge' is invalid"):
        ToyConfig(level="huge", seed=0, n=1)
    with pytest.raises(ValueError, match=r"'lam' = -1.0 is invalid"):
        Line("y", 2, -1.0)
    with pytest.raises(ValueError, match="level"):
        ToyConfig.for_level("medium")


def test_the_manifest_round_trips_through_json_nested_settings_included() -> None:
    c = ToyConfig.for_level("quick", lines=(Line("x", 1), Line("y", 2, 0.5)), notes=("hi",))
    data = json.loads(json.dumps(c.manifest()))
    assert data["experiment"] == "toy"
    assert from_manifest(ToyConfig, data) == c


def test_settings_rows_come_from_the_documented_parameters() -> None:
    rows = settings_rows(ToyConfig.for_level("quick", lines=(Line("x", 1), Line("y", 2))))
    assert rows == [
        ("level", "quick"),
        ("seed", "0"),
        ("draws", "10"),
        ("deltas", "0.1"),
        ("line 1", "x: n = 1"),
        ("line 2", "y: n = 2"),
    ]
