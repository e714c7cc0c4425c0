"""Statistical gates: pure functions from samples, ground truth and a budget to a verdict."""

from harness.gates.exactness import chisquare_2samp, chisquare_gof, ks_1samp, ks_2samp, pool_cells
from harness.gates.mcmc import (
    autocorrelation,
    bulk_ess,
    ess_rhat,
    invariance,
    spectral_gap,
    spectral_gap_bound,
)
from harness.gates.multiple import Escalation, holm
from harness.gates.rates import error_rate, tv_estimate
from harness.gates.result import GateResult

__all__ = [
    "Escalation",
    "GateResult",
    "autocorrelation",
    "bulk_ess",
    "chisquare_2samp",
    "chisquare_gof",
    "error_rate",
    "ess_rhat",
    "holm",
    "invariance",
    "ks_1samp",
    "ks_2samp",
    "pool_cells",
    "spectral_gap",
    "spectral_gap_bound",
    "tv_estimate",
]
