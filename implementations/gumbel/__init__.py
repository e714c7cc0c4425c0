"""Exact discrete sampling with Gumbel noise (000 Sec. 2; 001 Sec. 2-3)."""

from harness.spec import AlgorithmSpec, Check, Param
from harness.targets.likelihood_terms import KIND as LIKELIHOOD
from implementations.gumbel import cuda, fast, reference
from implementations.shared.spec import family_spec, implemented

_PARALLEL = Param(
    "parallel",
    False,
    kind=bool,
    doc="Numba only: sum the rows of the D x N log factors on all cores (prange); each row "
    "keeps its lane order, so the values do not change. Pays off for large N x D",
)

_spec = family_spec("gumbel", fast.KERNELS, guarantee="exact")

GUMBEL_FAMILY: list[AlgorithmSpec] = [
    _spec(
        name="cdf-inversion",
        paper="000_26bed7cc1ef3ab92.txt, Sec. 2.1",
        target_kinds=("discrete",),
        implementations=implemented(
            reference.cdf_inversion, fast.cdf_inversion, cuda.cdf_inversion
        ),
        params=(_PARALLEL,),
        summary="Normalise p~, then invert the CDF with one uniform; O(ND) per draw.",
    ),
    _spec(
        name="gumbel-max",
        paper="000_26bed7cc1ef3ab92.txt, Sec. 2.1, Eq. 2-3",
        target_kinds=("discrete", LIKELIHOOD),
        implementations=implemented(reference.gumbel_max, fast.gumbel_max, cuda.gumbel_max),
        params=(_PARALLEL,),
        summary="argmax of log p~(i) + Gumbel(0, 1) noise; the max is Gumbel(log Z).",
        checks=(Check(), Check({"parallel": True}, problems=("synthetic-normal-D10-N200",))),
    ),
    _spec(
        name="truncated-gumbel",
        paper="001_78ff986a3d316097.txt, footnote 1",
        target_kinds=("continuous-1d",),
        implementations=implemented(reference.truncated_gumbel, fast.truncated_gumbel),
        summary="TruncGumbel(phi, b) by inversion, in a form stable in both tails.",
    ),
    _spec(
        name="top-down",
        paper="001_78ff986a3d316097.txt, Alg. 1",
        target_kinds=("discrete",),
        implementations=implemented(reference.top_down, fast.top_down),
        params=(
            Param(
                "full_process",
                False,
                kind=bool,
                doc="run the construction to the end and return all D (G_k, X_k) pairs",
            ),
        ),
        summary="Top-down construction of the discrete Gumbel process, max-first.",
        # The whole process costs O(D log D) per draw in the reference: check it where D is small.
        checks=(Check(), Check({"full_process": True}, problems=("synthetic-normal-D10-N200",))),
    ),
]
