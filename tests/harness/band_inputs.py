"""Report inputs with ECDF bands on both sides: a verification run where one KS gate fails and
others pass, and a calibrate --json file with a calibrated and a miscalibrated gate."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from harness.gates.ecdf_bands import ecdf_band
from harness.verify.calibration import calibrate
from harness.verify.config import RunConfig
from harness.verify.runner import verify
from tests.conftest import ROOT

PLANTED = str(ROOT / "tests" / "plugins" / "planted_gumbel.py")
#: A rejection sampler that returns b after 3 tries: its KS gate fails (p ~ 1e-15).
FAILING = "planted-trunc-gumbel-rejection-cap"


def band_run(tmp_path: Path) -> Path:
    """truncated-gumbel (every KS gate passes) beside the planted bug (its KS gate fails)."""
    out = tmp_path / "band-run"
    config = RunConfig(("truncated-gumbel", FAILING), ("reference",), plugins=(PLANTED,))
    verify(config, out, workers=1, progress=False)
    return out


def calibration_json(tmp_path: Path) -> Path:
    """A real calibrate result of gumbel-max, with a copy of its chi-square gate whose p-values
    are made too small (p^2: twice the false failures), judged as calibrate would."""
    result = calibrate("gumbel-max", problem="synthetic-normal-D10-N200", seeds=20, n=300)
    gate = dict(result["gates"]["chi-square"])
    p = np.random.default_rng(0).random(400) ** 2
    band = ecdf_band(p, "chi-square (made up)")
    gate.update(
        gate="chi-square (made up)",
        trials=400,
        failed=int(np.sum(p < 0.05)),
        rate=float(np.mean(p < 0.05)),
        calibrated=False,
        ecdf=band.to_dict(),
        ecdf_exits=int(band.exits().size),
        decision_text="reject: rate above 0.075 (made up)",
    )
    result["gates"][gate["gate"]] = gate
    result["calibrated"] = False
    path = tmp_path / "calibration.json"
    path.write_text(json.dumps(result))
    return path
