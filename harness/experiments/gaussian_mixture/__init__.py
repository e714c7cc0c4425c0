"""Truncated Gaussian mixture: density estimates of PGITS, PGDA and Gibbs-rejection against the
exact posterior (003_07f92522b9b1c588.txt, Sec. 4.3, Fig. 3).

One ``truth`` task (the exact posterior on a grid of boxes and the rejection envelope), then,
once its record is on disk, one chain per sampler scored against it (:mod:`.run`).
"""

from __future__ import annotations

from harness.experiments.gaussian_mixture.plan import plan
from harness.experiments.gaussian_mixture.report import report, summary
from harness.experiments.gaussian_mixture.run import warm
from harness.experiments.gaussian_mixture.settings import config_for_level, config_from_manifest

__all__ = ["config_for_level", "config_from_manifest", "plan", "report", "summary", "warm"]
