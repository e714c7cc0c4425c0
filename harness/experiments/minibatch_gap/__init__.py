"""Spectral gaps of Poisson-Gibbs and Poisson-MH against 003_07f92522b9b1c588.txt, Thm. 1-2.

Two kinds of records, one task each:

- ``exact`` (:mod:`.exact_gaps`): one (tiny graph, lam) setting: the exact spectral gaps of
  Gibbs, Poisson-Gibbs, MH and Poisson-MH, their ratios against Thm. 1's and Thm. 2's bounds,
  and how far the Poisson truncation of the exact matrices can move the gaps;
- ``chain`` (:mod:`.chains`): one (graph, algorithm, lam) chain from the Numba sampler: the
  decay of the autocorrelation of slow observables as gap estimates (exact ones beside them on
  tiny graphs).
"""

from __future__ import annotations

from harness.experiments.minibatch_gap.plan import PARTS, plan
from harness.experiments.minibatch_gap.report import report, summary
from harness.experiments.minibatch_gap.settings import config_for_level, config_from_manifest

__all__ = ["PARTS", "config_for_level", "config_from_manifest", "plan", "report", "summary"]
