"""Specs of the continuous-state samplers (003_07f92522b9b1c588.txt, Sec. 3, 4.2 and 4.3).

They run on any :class:`ContinuousFactorGraphTarget`: bilinear factors (Sec. 4.2's spin model) or
the typed factors of the truncated Gaussian mixture (Sec. 4.3), through one factor function.

``CONTINUOUS_FAMILY`` is not registered anywhere yet: the continuous verification problems and
gates come later. All six are exact Markov kernels for pi (``guarantee="mcmc"``): rejection draws
the conditional exactly, and the Chebyshev samplers are MH-corrected (003 Alg. 3's final step;
for Gibbs-ITS / Gibbs-DA we add the same correction with the full local energy).
"""

import math
from types import MappingProxyType

from harness.spec import AlgorithmSpec, Param
from implementations.minibatch_gibbs import continuous_fast as fast
from implementations.minibatch_gibbs import continuous_reference as reference

__all__ = ["CONTINUOUS_FAMILY", "ENVELOPE", "K_DEGREE", "LAM", "MAX_PROPOSALS", "M_DEGREE"]

KIND = "factor-graph-continuous"
PAPER = "003_07f92522b9b1c588.txt"

LAM = Param(
    "lam",
    10.0,
    low=0.0,
    low_inclusive=False,
    doc="minibatch size parameter: s_phi ~ Poisson(lam M_phi / L + phi(x)); 003 Sec. 4.2 uses L^2",
)
M_DEGREE = Param(
    "m",
    3,
    kind=int,
    low=1,
    high=reference.MAX_DEGREE,
    doc="degree of the Chebyshev interpolant built from m + 1 energy evaluations (003: 3)",
)
K_DEGREE = Param(
    "k",
    10,
    kind=int,
    low=1,
    high=reference.MAX_DEGREE,
    doc="degree of the second interpolant, of exp(energy interpolant), in PGDA (003: 10)",
)

MAX_PROPOSALS = Param(
    "max_proposals",
    0,
    kind=int,
    low=0,
    high=10**9,
    doc="003 Sec. 4.3's fixed budget: give up after this many proposals and keep x(i) (the chain "
    "is then not exact; extras['accepted'] says which steps accepted); 0: no cap",
)
ENVELOPE = Param(
    "envelope",
    math.inf,
    high=math.inf,
    doc="log w of 003 Sec. 4.2-4.3's tuned proposal w g: accept with min(1, exp(E(v) - log w)), "
    "biased where log w < E; inf: the exact bound E_max",
)
#: Away from their defaults the rejection steps are not exact Gibbs steps; the checks run the
#: defaults.
_BUDGET = (MAX_PROPOSALS, ENVELOPE)
#: The Chebyshev interpolant the ITS and DA steps build (first-kind points, Clenshaw).
INTERPOLANT = MappingProxyType(
    {
        "cheb_plan": reference.cheb_plan,
        "cheb_coefficients": reference.cheb_coefficients,
        "clenshaw": reference.clenshaw,
    }
)

_ROWS = (
    ("gibbs-rejection", "gibbs_rejection", _BUDGET, "Sec. 4.2 baseline",
     "Random-scan Gibbs; the conditional drawn exactly by rejection against exp(sum M_phi)."),
    ("pg-rejection", "pg_rejection", (LAM, *_BUDGET), "Sec. 3, 4.2 baseline, Statement 1",
     "Poisson-Gibbs; the minibatch conditional drawn exactly by rejection."),
    ("gibbs-its", "gibbs_its", (M_DEGREE,), "Sec. 4.2 (Gibbs-ITS)",
     "Gibbs with FITS: degree-m interpolant of exp(E), bisection on its CDF, MH correction."),
    ("pgits", "pgits", (LAM, M_DEGREE), "Sec. 3 (PGITS)",
     "Poisson-Gibbs with FITS on the minibatch energy; MH-corrected; m + 3 energy evaluations."),
    ("gibbs-da", "gibbs_da", (M_DEGREE, K_DEGREE), "Sec. 4.2 (Gibbs-DA), Alg. 3",
     "Gibbs with the double Chebyshev approximation of Alg. 3 on the full local energy."),
    ("pgda", "pgda", (LAM, M_DEGREE, K_DEGREE), "Sec. 3, Alg. 3, Thm. 4",
     "PGDA: degree-m energy interpolant, degree-k interpolant of its exp, ITS, MH correction."),
)  # fmt: skip

CONTINUOUS_FAMILY: list[AlgorithmSpec] = [
    AlgorithmSpec(
        name=name,
        family="minibatch_gibbs",
        paper=f"{PAPER}, {where}",
        guarantee="mcmc",
        target_kinds=(KIND,),
        implementations={"reference": getattr(reference, fn), "numba": getattr(fast, fn)},
        params=params,
        entry="run_chain",
        summary=summary,
        splittable=False,
        kernels=fast.KERNELS,
        # Rejection against the exact envelope draws the conditional exactly, one site a step.
        conditional_steps=name == "gibbs-rejection",
        parts=INTERPOLANT if M_DEGREE in params else {},
    )
    for name, fn, params, where, summary in _ROWS
]
