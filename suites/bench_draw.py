"""asv suites generated from the registry: algorithm x implementation, steady state.

Numba kernels are compiled and warmed in ``setup`` so ``time_`` measures steady state only.
"""

import numpy as np

from harness.registry import build_registry
from harness.spec import sample
from harness.targets.continuous import TruncatedGumbelTarget
from harness.targets.discrete import synthetic_rewards

REGISTRY = build_registry()
NAMES = [s.name for s in REGISTRY]
DRAWS = 200


def _target(kind):
    if kind == "discrete":
        return synthetic_rewards(10, 1000, "normal", 1.0, np.random.default_rng(0))
    if kind == "continuous-1d":
        return TruncatedGumbelTarget(0.0, 1.0)
    raise NotImplementedError(kind)


class Draw:
    params = (NAMES, ["reference", "numba"])
    param_names = ["algorithm", "impl"]

    def setup(self, algorithm, impl):
        self.spec = REGISTRY.get(algorithm)
        if impl not in self.spec.implementations:
            raise NotImplementedError(f"{algorithm} has no {impl} implementation")
        self.target = _target(self.spec.target_kinds[0])
        sample(self.spec, impl, self.target, 2, np.random.default_rng(0))  # compile and warm

    def time_draw(self, algorithm, impl):
        sample(self.spec, impl, self.target, DRAWS, np.random.default_rng(1))

    def track_evals_per_draw(self, algorithm, impl):
        out = sample(self.spec, impl, self.target, DRAWS, np.random.default_rng(1))
        return out.evals / DRAWS
