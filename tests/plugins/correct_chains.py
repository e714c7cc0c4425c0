"""Correct chains written outside the families, for measuring the false-failure rate of the gates
that no registered algorithm meets: the moment gates, ks-thinned and ess on a 1-D posterior held
to exactness (every registered posterior chain is approximate).

    harness calibrate --plugin tests/plugins/correct_chains.py --algorithm correct-rw-mh \\
        --problem studentt-posterior-N500 --seeds 500 --n 20000
"""

import numpy as np

import harness


def rw_mh(target, n_steps, rng, x0=None, step=2.0):
    """Random-walk Metropolis with a Normal(0, (step * sd)^2) proposal: exact for pi."""
    x = target.mean if x0 is None else float(x0)
    lp = float(target.log_posterior(np.array([x]))[0])
    scale = step * target.sd
    out = np.empty(n_steps)
    for t in range(n_steps):
        y = x + scale * rng.standard_normal()
        ly = float(target.log_posterior(np.array([y]))[0])
        if np.log(rng.random()) < ly - lp:
            x, lp = y, ly
        out[t] = x
    return harness.Chain(out, 2 * target.N * n_steps)


harness.register(
    harness.AlgorithmSpec(
        name="correct-rw-mh",
        family="control",
        paper="textbook random-walk Metropolis (not a paper's algorithm)",
        guarantee="mcmc",
        entry="run_chain",
        target_kinds=("posterior-1d",),
        implementations={"reference": rw_mh},
        splittable=False,
        summary=rw_mh.__doc__,
    )
)
