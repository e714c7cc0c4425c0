"""Gate quality's p-value bands: every miscalibrated gate plotted and marked, a few others."""

from __future__ import annotations

import numpy as np

from harness.experiments.gate_quality import PASSING_BANDS, GateQuality


def _records(p_by_gate: dict[str, np.ndarray]) -> list[dict]:
    rows = [
        {"gate": gate, "p_value": float(p), "passed": True, "multiple_testing": True, "seed": s}
        for gate, ps in p_by_gate.items()
        for s, p in enumerate(ps)
    ]
    return [{"type": "ffr", "family": "f", "algorithm": "a", "rows": rows}]


def test_a_miscalibrated_gate_is_plotted_first_and_marked() -> None:
    rng = np.random.default_rng(0)
    gates = {f"ok-{k}": rng.random(500) for k in range(6)}
    gates["chi-square"] = rng.random(500) ** 1.6  # too many small p-values
    experiment = GateQuality()
    (group,) = experiment.figures(experiment.config("quick"), _records(gates))
    figures = group["figures"]
    assert figures[0]["cls"] == "ecdf-band fail" and "chi-square" in figures[0]["title"]
    assert 'id="ecdf-exits-' in figures[0]["svg"]
    passing = figures[1:]
    assert len(passing) == PASSING_BANDS
    assert all(f["cls"] == "ecdf-band pass" and "ecdf-exits" not in f["svg"] for f in passing)


def test_no_p_values_no_figures() -> None:
    experiment = GateQuality()
    assert experiment.figures(experiment.config("quick"), []) == []
