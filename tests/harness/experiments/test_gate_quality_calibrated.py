"""Gate quality calls a gate calibrated only when the seeds can tell: the upper end of its
false-failure rate's 99.9% interval is at most NARROW times alpha; a wider interval that holds
alpha is "too few seeds to tell", and a rate the seeds already reject is "miscalibrated"."""

from __future__ import annotations

from typing import Any

import pytest

from harness.experiments.gate_quality import (
    CALIBRATED,
    MISCALIBRATED,
    NARROW,
    TOO_FEW,
    GateQuality,
    calibration_word,
    rates,
)

ALPHA = 0.05


def _records(p_values: list[float], gate: str = "chi-square") -> list[dict[str, Any]]:
    rows = [
        {"gate": gate, "p_value": p, "passed": p >= ALPHA, "multiple_testing": True, "seed": s}
        for s, p in enumerate(p_values)
    ]
    return [{"type": "ffr", "family": "f", "algorithm": "a", "rows": rows}]


def _uniform(seeds: int) -> list[float]:
    """P-values spread evenly over (0, 1): a gate failing alpha of the seeds, rounded down."""
    return [(s + 0.5) / seeds for s in range(seeds)]


def _word_in_table(records: list[dict[str, Any]]) -> str:
    experiment = GateQuality()
    by_family = experiment.tables(experiment.config("quick"), records)[0]
    (row,) = by_family["rows"]
    return row[-1]["text"]


@pytest.mark.parametrize(
    ("p_values", "word"),
    [
        (_uniform(500), CALIBRATED),  # 25 of 500: the interval ends at 0.090 <= 0.1
        (_uniform(5), TOO_FEW),  # 0 of 5: the interval holds alpha, and rates up to 0.78
        (_uniform(200), TOO_FEW),  # 10 of 200: up to 0.12, still above 2 alpha
        ([0.001] * 20 + [0.5] * 80, MISCALIBRATED),  # 20 of 100: alpha lies below the interval
    ],
)
def test_a_gate_is_called_calibrated_only_when_its_interval_is_narrow(
    p_values: list[float], word: str
) -> None:
    ((_, g),) = rates(_records(p_values), ALPHA, ("family", "gate"))
    assert calibration_word(g, ALPHA) == word
    # The rule as stated: calibrate's test passes, and the interval ends by NARROW alpha.
    narrow = g.interval[1] <= NARROW * ALPHA
    assert (word == CALIBRATED) == (g.calibrated and narrow)
    assert (word == TOO_FEW) == (g.calibrated and not narrow)
    assert _word_in_table(_records(p_values)) == word


def test_five_seeds_never_say_calibrated_even_when_calibrate_accepts() -> None:
    """The quick level's five seeds: calibrate's own test holds, the report does not claim it."""
    ((_, g),) = rates(_records(_uniform(5)), ALPHA, ("family", "gate"))
    assert g.calibrated and g.interval[1] > NARROW * ALPHA
    word = _word_in_table(_records(_uniform(5)))
    assert word == "too few seeds to tell" and "calibrated" not in word
