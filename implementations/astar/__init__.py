"""A* sampling and its baselines (001_78ff986a3d316097.txt) on box densities phi = i + o
(``harness.targets.box_density``)."""

from harness.spec import AlgorithmSpec, Check
from implementations.astar import fast, reference

#: Rejection with one global bound only where it accepts often (clutter's global bound is loose
#: by a factor of about e^20: rejection would run for days there).
REJECTION_PROBLEMS = ("peaky-exponential-a10",)

ASTAR_FAMILY: list[AlgorithmSpec] = [
    AlgorithmSpec(
        name="astar",
        family="astar",
        paper="001_78ff986a3d316097.txt, Alg. 2",
        guarantee="exact",
        target_kinds=("box-density",),
        implementations={"reference": reference.astar, "numba": fast.astar},
        summary="A* search over the top-down Gumbel process of the proposal, guided by the "
        "bounds M(B) >= o on boxes; returns the exact sample and its Gumbel(log Z) maximum.",
        kernels=(fast.astar_kernel,),
    ),
    AlgorithmSpec(
        name="rejection",
        family="astar",
        paper="001_78ff986a3d316097.txt, Sec. 5",
        guarantee="exact",
        target_kinds=("box-density",),
        implementations={"reference": reference.rejection, "numba": fast.rejection},
        summary="Rejection sampling from the proposal with the global bound M(box): the "
        "baseline whose cost A* with a constant bound equals.",
        checks=(Check(problems=REJECTION_PROBLEMS),),
        kernels=(fast.rejection_kernel,),
    ),
]
