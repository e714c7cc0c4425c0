"""The computed kind's roofline on a CUDA device: one profiled launch of the ``cuda`` key's
computed-term kernel (logistic, P = 10) and of the rwmh step's likelihood kernel, under Nsight
Compute (``ncu``), which counts the bytes read from DRAM and the fp64 instructions.

    ncu --csv --metrics <METRICS> -k regex:'computed_sums|log_lik_sums' --launch-count 3 \\
        python bench/roofline.py [D N]

The first two launches are the computed-term kernel of two Gumbel-max draws at D x N, the third
the likelihood kernel of an rwmh step at N = 1e6. bench/gpu.sh runs it and writes ncu's table
to ``roofline.csv`` beside the other GPU numbers.
"""

from __future__ import annotations

import sys


def main(D: int = 1000, N: int = 100_000) -> None:
    from harness.registry import build_registry
    from harness.speed.hardware import cell_target, draw_function
    from harness.speed.hardware_mcmc import chain_call, mcmc_target

    draw = draw_function("cuda", cell_target("computed", D, N))
    draw(1, 0)  # compile and warm; ncu's --launch-skip 1 skips this launch
    draw(1, 1)
    step = chain_call(build_registry().get("rwmh"), "cuda", mcmc_target(1_000_000))
    step(2, 0)


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
