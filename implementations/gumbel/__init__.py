"""Exact discrete sampling with Gumbel noise (000 Sec. 2; 001 Sec. 2-3)."""

from harness.spec import AlgorithmSpec, Check, Param
from harness.targets.likelihood_terms import KIND as LIKELIHOOD
from implementations.gumbel import cuda, fast, reference

_PARALLEL = Param(
    "parallel",
    False,
    kind=bool,
    doc="Numba only: sum the rows of the D x N log factors on all cores (prange); each row "
    "keeps its lane order, so the values do not change. Pays off for large N x D",
)

GUMBEL_FAMILY: list[AlgorithmSpec] = [
    AlgorithmSpec(
        name="cdf-inversion",
        family="gumbel",
        paper="000_26bed7cc1ef3ab92.txt, Sec. 2.1",
        guarantee="exact",
        target_kinds=("discrete",),
        implementations={
            "reference": reference.cdf_inversion,
            "numba": fast.cdf_inversion,
            "cuda": cuda.cdf_inversion,
        },
        params=(_PARALLEL,),
        summary="Normalise p~, then invert the CDF with one uniform; O(ND) per draw.",
        kernels=fast.KERNELS["cdf-inversion"],
    ),
    AlgorithmSpec(
        name="gumbel-max",
        family="gumbel",
        paper="000_26bed7cc1ef3ab92.txt, Sec. 2.1, Eq. 2-3",
        guarantee="exact",
        target_kinds=("discrete", LIKELIHOOD),
        implementations={
            "reference": reference.gumbel_max,
            "numba": fast.gumbel_max,
            "cuda": cuda.gumbel_max,
        },
        params=(_PARALLEL,),
        summary="argmax of log p~(i) + Gumbel(0, 1) noise; the max is Gumbel(log Z).",
        checks=(Check(), Check({"parallel": True}, problems=("synthetic-normal-D10-N200",))),
        kernels=fast.KERNELS["gumbel-max"],
    ),
    AlgorithmSpec(
        name="truncated-gumbel",
        family="gumbel",
        paper="001_78ff986a3d316097.txt, footnote 1",
        guarantee="exact",
        target_kinds=("continuous-1d",),
        implementations={
            "reference": reference.truncated_gumbel,
            "numba": fast.truncated_gumbel,
        },
        summary="TruncGumbel(phi, b) by inversion, in a form stable in both tails.",
        kernels=fast.KERNELS["truncated-gumbel"],
    ),
    AlgorithmSpec(
        name="top-down",
        family="gumbel",
        paper="001_78ff986a3d316097.txt, Alg. 1",
        guarantee="exact",
        target_kinds=("discrete",),
        implementations={"reference": reference.top_down, "numba": fast.top_down},
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
        kernels=fast.KERNELS["top-down"],
    ),
]
