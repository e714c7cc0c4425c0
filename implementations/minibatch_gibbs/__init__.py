"""Minibatched Gibbs sampling on discrete factor graphs (003_07f92522b9b1c588.txt, Sec. 1-2).

``MINIBATCH_GIBBS_FAMILY`` is defined here but not yet collected by ``implementations.FAMILIES``:
the verification problems and gates for factor graphs come with a later issue.
"""

from harness.spec import AlgorithmSpec, Param
from implementations.minibatch_gibbs import fast, reference

__all__ = ["LAM", "MINIBATCH_GIBBS_FAMILY"]

LAM = Param(
    "lam",
    10.0,
    low=0.0,
    low_inclusive=False,
    doc="minibatch size parameter: s_phi ~ Poisson(lam M_phi / L + phi(x)); Thm. 1 needs >= 2L",
)

MINIBATCH_GIBBS_FAMILY: list[AlgorithmSpec] = [
    AlgorithmSpec(
        name="gibbs",
        family="minibatch_gibbs",
        paper="003_07f92522b9b1c588.txt, Sec. 1.1, Alg. 1",
        guarantee="mcmc",
        target_kinds=("factor-graph",),
        implementations={"reference": reference.gibbs, "numba": fast.gibbs},
        entry="run_chain",
        summary="Random-scan Gibbs: all of A[i] at every value; D |A[i]| evaluations per step.",
        splittable=False,
        kernels=(fast.KERNELS[0],),
    ),
    AlgorithmSpec(
        name="poisson-gibbs",
        family="minibatch_gibbs",
        paper="003_07f92522b9b1c588.txt, Sec. 2, Alg. 2, Thm. 1, Statement 1",
        guarantee="mcmc",
        target_kinds=("factor-graph",),
        implementations={"reference": reference.poisson_gibbs, "numba": fast.poisson_gibbs},
        params=(LAM,),
        entry="run_chain",
        summary=(
            "Poisson-minibatching Gibbs: s_phi ~ Poisson(lam M/L + phi(x)) in expected "
            "O(lam + L), then the minibatch conditional; no MH step."
        ),
        splittable=False,
        kernels=(fast.KERNELS[1],),
    ),
]
