"""Claims a sceptic would sign: every claim can fail, one reading counts, runs to decide follow
the interval's own shape, and the paper's and the harness's claims are counted apart."""

from __future__ import annotations

import pytest

from harness.experiments import EXPERIMENTS
from harness.experiments.claims import (
    Claim,
    Estimate,
    Given,
    above,
    below,
    claims_text,
    counts,
    differs_alone,
    judge_all,
    primary,
    tally_text,
    within_factor,
)
from harness.spec import LEVELS


def _claim(cid: str, value: float, low: float, high: float, **kw) -> Claim:
    est = Estimate(value, low, high, 10, kw.pop("unit", "runs"))
    return Claim(cid, "000 Sec. 1", "A claim.", "a ratio", above(1.0), lambda rs: est, **kw)


def unfalsifiable(claims: tuple[Claim, ...]) -> list[str]:
    """The ids of claims that do not say, in one line, what would have made them fail."""
    return [
        c.id
        for c in claims
        if not c.fails_if.strip() or "\n" in c.fails_if or c.kind not in ("paper", "harness")
    ]


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("experiment", EXPERIMENTS, ids=lambda e: e.name)
def test_every_claim_says_what_would_have_made_it_fail(experiment, level: str) -> None:
    claims = experiment.claims(experiment.config(level))
    assert claims, f"{experiment.name} declares no claims"
    assert unfalsifiable(claims) == [], f"{experiment.name}: claims without fails_if"
    assert all(g.basis for g in experiment.givens(experiment.config(level)))


def test_the_falsifiability_check_rejects_a_claim_without_its_field() -> None:
    # Negative control: a claim with no fails_if, or a two-line one, is caught.
    bad = (_claim("a", 2, 1.5, 2.5), _claim("b", 2, 1.5, 2.5, fails_if="x\ny"))
    good = (_claim("c", 2, 1.5, 2.5, fails_if="our ratio lies below 1"),)
    assert unfalsifiable(bad + good) == ["a", "b"]


def test_runs_to_decide_use_the_side_of_the_interval_that_crosses_the_edge() -> None:
    # A skewed interval: the value 1.2 is 0.2 above the edge 1, the lower half is 0.4 wide and
    # the upper 0.05. The lower side crosses: (0.4 / 0.2)^2 * 10 = 40 in all, 30 more.
    _, reason, need = above(1.0).outcome(Estimate(1.2, 0.8, 1.25, 10, "data sets"))
    assert need == 40 and "about 30 more data sets (40 in all)" in reason
    assert "(reproduced, if our value holds)" in reason
    # The symmetric 1 / sqrt(n) rule would have said (0.225 / 0.2)^2 * 10 = 13, fewer than 30.
    _, reason, need = below(1.0).outcome(Estimate(1.2, 0.8, 1.25, 10, "runs"))
    assert need == 40 and "(not reproduced, if our value holds)" in reason


def test_a_value_on_the_edge_is_undecidable_and_fixed_units_are_not_extrapolated() -> None:
    _, reason, need = above(1.0).outcome(Estimate(1.01, 0.8, 1.25, 10, "runs"))
    assert need is None and "undecidable at any size near this value" in reason
    _, reason, need = within_factor(4.0, 1.5).outcome(Estimate(5.0, 3.0, 8.0, 4, "settings"))
    assert need is None and "more of them cannot be added" in reason


def test_other_readings_are_judged_and_shown_but_not_counted() -> None:
    other = _claim("x-weighted", 0.5, 0.4, 0.6, fails_if="f")
    claims = (_claim("x", 2, 1.5, 2.5, fails_if="f", readings=(other,)),)
    vs = judge_all(claims, [])
    assert [(v.id, v.reading_of) for v in vs] == [("x", None), ("x-weighted", "x")]
    assert [v.verdict for v in vs] == ["reproduced", "not reproduced"]
    assert counts(vs)["not reproduced"] == 0 and counts(vs)["reproduced"] == 1
    text = claims_text(vs)
    assert "  x-weighted" in text and "1 other readings shown, not counted" in text
    # The claim's sentence sits under its row; a reading's row carries none of its own.
    lines = text.splitlines()
    row = next(i for i, line in enumerate(lines) if line.startswith("x "))
    assert lines[row + 1] == f'    "{claims[0].text}"'
    assert lines[row + 2].startswith("  x-weighted")
    with pytest.raises(ValueError, match="repeat"):
        judge_all((*claims, _claim("x-weighted", 2, 1.5, 2.5, fails_if="f")), [])


def test_setting_differs_keeps_what_the_rule_alone_gives_and_kinds_count_apart() -> None:
    vs = judge_all(
        (
            _claim("a", 0.5, 0.4, 0.6, fails_if="f", differs="another data set"),
            _claim("b", 2, 1.5, 2.5, fails_if="f", differs="another data set"),
            _claim("c", 2, 1.5, 2.5, fails_if="f", kind="harness"),
        ),
        [],
    )
    assert [v.rule_alone for v in vs] == ["not reproduced", "reproduced", "reproduced"]
    assert differs_alone(vs) == {"reproduced": 1, "not reproduced": 1}
    assert tally_text(primary(vs, "paper")) == (
        "2 setting differs (rule alone: 1 reproduced, 1 not reproduced)"
    )
    assert [v.id for v in primary(vs, "harness")] == ["c"]
    with pytest.raises(ValueError, match="kind"):
        _claim("d", 2, 1.5, 2.5, kind="mine")
    with pytest.raises(ValueError, match="basis"):
        Given("N", "002 Table 1", "12214", "assumed")
