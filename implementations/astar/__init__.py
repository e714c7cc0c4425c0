"""A* sampling and its baselines (001_78ff986a3d316097.txt) on box densities phi = i + o
(``harness.targets.box_density``)."""

from collections.abc import Mapping
from typing import Any

from harness.spec import AlgorithmSpec, Check, Param
from implementations.astar import fast, reference

#: Rejection with one global bound only where it accepts often (clutter's global bound is loose
#: by a factor of about e^20: rejection would run for days there).
REJECTION_PROBLEMS = ("peaky-exponential-a10",)

#: Drill-down needs a 1-D target whose o is unimodal with a declared mode.
DRILL_DOWN_PROBLEMS = ("peaky-exponential-a10",)


def _check_unimodal(target: Any, params: Mapping[str, Any]) -> None:
    if target.d != 1 or target.mode is None:
        raise ValueError(
            f"target {target.name!r} (d = {target.d}, mode = {target.mode}) is invalid for "
            "astar-drill-down; valid: a 1-D box density declaring the mode of its unimodal o "
            "(box_density(..., mode=...))"
        )


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
        name="astar-drill-down",
        family="astar",
        paper="001_78ff986a3d316097.txt, Sec. 4 (drill down)",
        guarantee="exact",
        target_kinds=("box-density",),
        implementations={"reference": reference.drill_down, "numba": fast.drill_down},
        summary="A* for a unimodal o in 1-D: every split prunes the child away from the mode, "
        "so the search keeps one box and no queue (a binary search for the peak).",
        checks=(Check(problems=DRILL_DOWN_PROBLEMS),),
        kernels=(fast.drill_down_kernel,),
        target_check=_check_unimodal,
    ),
    AlgorithmSpec(
        name="os-star",
        family="astar",
        paper="001_78ff986a3d316097.txt, Sec. 5 and 6.4 (OS*, piecewise-constant bounds)",
        guarantee="exact",
        target_kinds=("box-density",),
        implementations={"reference": reference.os_star, "numba": fast.os_star},
        params=(
            Param(
                "strategy",
                1,
                int,
                choices=reference.OS_STAR_STRATEGIES,
                doc="refinement after a rejection: 1 splits the proposed piece at the rejected "
                "point, 2 splits the piece of largest proposal mass at its median",
            ),
        ),
        summary="Adaptive rejection with piecewise-constant bounds: pick a piece by "
        "nu(B) exp(M(B)), accept by exp(o - M), refine on rejection; the pieces reset per draw.",
        checks=(Check(), Check({"strategy": 2}, problems=("peaky-exponential-a10",))),
        kernels=(fast.os_star_kernel,),
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
