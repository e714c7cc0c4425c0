"""A sampler that never returns, compiled: the time budget's negative control.

``harness verify --plugin tests/plugins/looping_sampler.py --task-timeout 5`` must stop it
and record a failed "runs" verdict; ``looping-gumbel`` loops only on problems with more than
five states, so the same run also has cases that finish.
"""

import numpy as np
from numba import njit

import harness


@njit
def _spin(D: int) -> int:  # pragma: no cover - compiled
    k = 0
    while D > 5:  # a compiled loop never returns to the interpreter: no signal can stop it
        k = (k + 1) % 7
    return k


def gumbel_or_spin(target, n, rng):
    """Gumbel-max on problems of at most five states; spins forever on larger ones."""
    logp = np.cumsum(target.log_factors, axis=1)[:, -1] + target.log_f0
    _spin(logp.size)
    D, N = target.log_factors.shape
    noise = -np.log(rng.standard_exponential((n, D)))
    return harness.Draws(np.argmax(logp + noise, axis=1), n * N * D)


harness.register(
    harness.AlgorithmSpec(
        name="looping-gumbel",
        family="negative-controls",
        paper="negative control",
        guarantee="exact",
        target_kinds=("discrete",),
        implementations={"reference": gumbel_or_spin},
        summary=gumbel_or_spin.__doc__ or "",
    )
)
