"""Minibatched Gibbs sampling on discrete factor graphs (003_07f92522b9b1c588.txt, Sec. 1-2).

``MINIBATCH_GIBBS_FAMILY`` is collected by ``implementations.FAMILIES``. Specs with an exact
transition matrix on tiny graphs (``exact.py``) declare it, so verification checks pi P = pi and
detailed balance, and the spectral gap against 003's Thm. 1 or 2 where they apply. ``gibbs``
declares exact Gibbs steps (``conditional_steps``), so every step is tested against its kernel
row on every graph; the minibatch and MH-corrected samplers draw from other laws per step. The
continuous-variable samplers are listed in ``continuous.CONTINUOUS_FAMILY``.
"""

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from harness.gates.mcmc import spectral_gap
from harness.spec import AlgorithmSpec, Param
from implementations.minibatch_gibbs import exact, fast, reference
from implementations.shared.spec import family_spec, implemented

__all__ = ["LAM", "LAM2", "LAM_GLOBAL", "MINIBATCH_GIBBS_FAMILY", "THIN"]

LAM = Param(
    "lam",
    10.0,
    low=0.0,
    low_inclusive=False,
    doc="minibatch size parameter: s_phi ~ Poisson(lam M_phi / L + phi(x)); Thm. 1 needs >= 2L",
)

LAM_GLOBAL = Param(
    "lam",
    10.0,
    low=0.0,
    low_inclusive=False,
    doc="expected global minibatch size: s_phi ~ Poisson(lam M_phi / Psi); paper: Theta(Psi^2)",
)

LAM2 = Param(
    "lam2",
    100.0,
    low=0.0,
    low_inclusive=False,
    doc="expected size of the second (global, MH-correction) minibatch; 003 needed 1e4 L^2",
)

THIN = Param(
    "thin",
    1,
    kind=int,
    low=1,
    doc="keep every thin-th state; a stored state costs n copies, so thin ~ n keeps a step "
    "O(lam + L) (the per-step costs in extras are kept for every step)",
)


def _gibbs_kernel(target: Any, params: Mapping[str, Any]) -> tuple[np.ndarray, float]:
    return exact.gibbs_matrix(target), 0.0


def _truncated(build: Any) -> Any:
    def kernel(target: Any, params: Mapping[str, Any]) -> tuple[np.ndarray, float]:
        k = build(target, params["lam"])
        return k.P, k.truncation_bound

    return kernel


def _thm1(target: Any, params: Mapping[str, Any]) -> tuple[float, str] | None:
    """003, Thm. 1: gap >= exp(-4 L^2 / lam) gap(Gibbs) when lam >= 2L."""
    lam, L = params["lam"], target.L
    if lam < 2.0 * L:
        return None
    gap = spectral_gap(exact.gibbs_matrix(target), target.pmf)
    return math.exp(-4.0 * L * L / lam) * gap, "003 Thm. 1: exp(-4 L^2 / lam) gap(Gibbs)"


def _thm2(target: Any, params: Mapping[str, Any]) -> tuple[float, str] | None:
    """003, Thm. 2: gap >= 0.5 exp(-L^2 / (lam + L)) gap(MH with the same proposal)."""
    lam, L = params["lam"], target.L
    gap = spectral_gap(exact.metropolis_matrix(target), target.pmf)
    return 0.5 * math.exp(-L * L / (lam + L)) * gap, "003 Thm. 2: 0.5 exp(-L^2/(lam+L)) gap(MH)"


#: Every sampler here runs single-site chains on a discrete factor graph, one chain per call.
_spec = family_spec(
    "minibatch_gibbs",
    fast.KERNELS,
    guarantee="mcmc",
    target_kinds=("factor-graph",),
    entry="run_chain",
    splittable=False,
)

MINIBATCH_GIBBS_FAMILY: list[AlgorithmSpec] = [
    _spec(
        name="gibbs",
        paper="003_07f92522b9b1c588.txt, Sec. 1.1, Alg. 1",
        implementations=implemented(reference.gibbs, fast.gibbs),
        params=(THIN,),
        summary="Random-scan Gibbs: all of A[i] at every value; D |A[i]| evaluations per step.",
        exact_kernel=_gibbs_kernel,
        parts={"gibbs_matrix": exact.gibbs_matrix},
        # Each step draws x_i from its exact conditional, so every step is tested against its
        # kernel row (harness/gates/gibbs_steps.py), on the Potts grid too.
        conditional_steps=True,
    ),
    _spec(
        name="poisson-gibbs",
        paper="003_07f92522b9b1c588.txt, Sec. 2, Alg. 2, Thm. 1, Statement 1",
        implementations=implemented(reference.poisson_gibbs, fast.poisson_gibbs),
        params=(LAM, THIN),
        summary=(
            "Poisson-minibatching Gibbs: s_phi ~ Poisson(lam M/L + phi(x)) in expected "
            "O(lam + L), then the minibatch conditional; no MH step."
        ),
        exact_kernel=_truncated(exact.poisson_gibbs_matrix),
        gap_bound=_thm1,
        # The exact kernel at a chosen Poisson tail, for studies of the gap itself.
        parts={"poisson_gibbs_matrix": exact.poisson_gibbs_matrix},
    ),
    _spec(
        name="poisson-mh",
        paper="003_07f92522b9b1c588.txt, Sec. 2 (Poisson-MH, supplement), Thm. 2",
        implementations=implemented(reference.poisson_mh, fast.poisson_mh),
        params=(LAM, THIN),
        summary=(
            "Exact. Poisson-MH, single site: v uniform over the other D - 1 values, accepted on "
            "the Poisson-minibatch energy U_s (s_phi ~ Poisson(lam M/L + phi(x)) on A[i]); "
            "B + 2|S| evaluations per step."
        ),
        exact_kernel=_truncated(exact.poisson_mh_matrix),
        gap_bound=_thm2,
        # metropolis_matrix: Thm. 2's comparison chain, plain MH with the same proposal.
        parts={
            "poisson_mh_matrix": exact.poisson_mh_matrix,
            "metropolis_matrix": exact.metropolis_matrix,
        },
    ),
    _spec(
        name="min-gibbs",
        paper="003_07f92522b9b1c588.txt, Table 1 (MIN-Gibbs of De Sa et al. 2018)",
        implementations=implemented(reference.min_gibbs, fast.min_gibbs),
        params=(LAM_GLOBAL, THIN),
        summary=(
            "Exact (unbiased: the exp-unbiased log estimator is stored with the state). MIN-Gibbs: "
            "a fresh global minibatch of expected size lam for each of the D - 1 other values; "
            "about (D - 1) lam evaluations per step."
        ),
        # The stored estimate is drawn from its tilted law, not from a fresh estimate at x0.
        auxiliary_state=True,
    ),
    _spec(
        name="mgpmh",
        paper="003_07f92522b9b1c588.txt, Table 1 (MGPMH of De Sa et al. 2018)",
        implementations=implemented(reference.mgpmh, fast.mgpmh),
        params=(LAM, THIN),
        summary=(
            "Exact (MH-corrected). MGPMH: Gibbs-like proposal from a local minibatch "
            "s_phi ~ Poisson(lam M/L), then MH with the exact U(y) - U(x) over A[i]; "
            "D |S| + 2 |A[i]| evaluations per step."
        ),
        exact_kernel=_truncated(exact.mgpmh_matrix),
    ),
    _spec(
        name="double-min-gibbs",
        paper="003_07f92522b9b1c588.txt, Table 1, Sec. 4.1 (DoubleMIN-Gibbs of De Sa et al. 2018)",
        implementations=implemented(reference.double_min_gibbs, fast.double_min_gibbs),
        params=(LAM, LAM2, THIN),
        summary=(
            "Exact (pseudo-marginal MH). DoubleMIN-Gibbs: MGPMH's proposal (lam), then a second, "
            "global minibatch of expected size lam2 estimates U(y) for the MH step; "
            "D |S| + (second minibatch) evaluations per step."
        ),
        # The stored estimate is drawn from its tilted law, not from a fresh estimate at x0.
        auxiliary_state=True,
    ),
]
