"""asv benchmarks across hardware: exact Gumbel-max draws (000_26bed7cc1ef3ab92.txt, Sec. 2.1,
Eq. 2), the Numba build on all cores against the ``cuda`` build with its data on the device, on
a precomputed log-factor matrix and on logistic terms computed from data; and steps of regular
random-walk MH on a logistic posterior (002_3c1996bf78df7865.txt, Table 1's baseline), Numba
on one core against the ``cuda`` build summing every step's N terms on the device. Where a machine
cannot run a key (no CUDA device), ``setup`` raises NotImplementedError and asv shows the
benchmark skipped; results from a GPU machine merge with the CPU machines' by machine name
(docs/benchmarks.md)."""

from __future__ import annotations

import suites  # noqa: F401  (sets NUMBA_CACHE_DIR before anything imports numba)

SIZES = ["100x100000", "1000x100000"]
STEPS_PER_CALL = 20


class ExactDrawAcrossHardware:
    params = (["numba", "cuda"], ["precomputed", "computed"], SIZES)
    param_names = ["impl", "rewards", "size"]
    timeout = 300

    def setup(self, impl: str, rewards: str, size: str) -> None:
        from harness.devices import runnable
        from harness.speed.hardware import DRAWS_PER_CALL, cell_target, draw_function

        if impl not in runnable():
            raise NotImplementedError(f"this machine cannot run the {impl!r} key")
        D, N = (int(v) for v in size.split("x"))
        self.draw = draw_function(impl, cell_target(rewards, D, N))
        self.n = DRAWS_PER_CALL
        self.draw(2, 0)  # compile, upload, warm

    def time_draws(self, impl: str, rewards: str, size: str) -> None:
        self.draw(self.n, 1)


class MCMCStepAcrossHardware:
    params = (["numba", "cuda"], ["10000", "1000000"])
    param_names = ["impl", "N"]
    timeout = 300

    def setup(self, impl: str, N: str) -> None:
        from harness.devices import runnable
        from harness.registry import build_registry
        from harness.speed.hardware_mcmc import chain_call, mcmc_target

        if impl not in runnable():
            raise NotImplementedError(f"this machine cannot run the {impl!r} key")
        self.run = chain_call(build_registry().get("rwmh"), impl, mcmc_target(int(N)))
        self.run(2, 0)  # compile, upload, warm

    def time_steps(self, impl: str, N: str) -> None:
        self.run(STEPS_PER_CALL, 1)
