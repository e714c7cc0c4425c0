"""Deliberately broken Poisson-Gibbs samplers: negative controls for the invariance gate (003).

Each declares the exact transition matrix of its own bug, as a correct plugin would declare its
kernel, and runs its chain from that matrix; the invariance gate must reject it (and the chain
gates catch the chain). Loaded with
``harness verify --plugin tests/plugins/broken_gibbs.py``.
"""

import functools

import numpy as np

import harness
from harness.spec import Check, Param
from implementations.minibatch_gibbs.exact import poisson_gibbs_matrix

LAM = Param("lam", 10.0, low=0.0, low_inclusive=False)


@functools.lru_cache(maxsize=8)
def _cumulative_kernel(target, lam, variant):
    P = poisson_gibbs_matrix(target, lam, variant=variant).P
    return np.cumsum(P, axis=1)


def _chain(target, n_steps, rng, x0, lam, variant):
    """The bug's chain run from its own exact kernel: each step draws the next state from the
    current state's row, which is the buggy move of Alg. 2 averaged over its Poisson draws s.
    So the chain has the planted bug's law, and a step costs microseconds, not a Python loop
    over factors."""
    cum = _cumulative_kernel(target, lam, variant)
    states = target.states()
    a = 0 if x0 is None else target.state_index(np.asarray(x0))
    u = rng.random(n_steps)
    index = np.empty(n_steps, dtype=np.int64)
    for t in range(n_steps):
        # Rows are truncated Poisson sums a hair under 1 (exact.py): draw within the row's mass.
        a = min(int(np.searchsorted(cum[a], u[t] * cum[a, -1], side="right")), len(states) - 1)
        index[t] = a
    return harness.Chain(states[index], n_steps)


def no_phi_rate(target, n_steps, rng, x0=None, lam=10.0):
    """Bug: s_phi ~ Poisson(lam M / L), without its phi(x) part."""
    return _chain(target, n_steps, rng, x0, lam, "no-phi-rate")


def no_multiplicity(target, n_steps, rng, x0=None, lam=10.0):
    """Bug: the minibatch energy sums log1p(...) once per factor, not s_phi times."""
    return _chain(target, n_steps, rng, x0, lam, "no-multiplicity")


def _kernel(variant):
    def exact(target, params):
        k = poisson_gibbs_matrix(target, params["lam"], variant=variant)
        return k.P, k.truncation_bound

    return exact


for name, fn, variant in (
    ("broken-pg-no-phi-rate", no_phi_rate, "no-phi-rate"),
    ("broken-pg-no-multiplicity", no_multiplicity, "no-multiplicity"),
):
    harness.register(
        harness.AlgorithmSpec(
            name=name,
            family="negative-controls",
            paper="negative control",
            guarantee="mcmc",
            entry="run_chain",
            target_kinds=("factor-graph",),
            implementations={"reference": fn},
            params=(LAM,),
            splittable=False,
            summary=fn.__doc__ or "",
            checks=(Check({"lam": 2.0}, problems=("fg-random-n4-D2",)),),
            exact_kernel=_kernel(variant),
        )
    )


def pgda_without_mh(target, n_steps, rng, x0=None, lam=4.0):
    """Bug: PGDA (003, Alg. 3) at degree k = 1 without its MH correction."""
    from implementations.minibatch_gibbs.continuous_reference import run

    return run(target, n_steps, rng, x0, "da", True, lam=lam, m=2, k=1, mh=False)


harness.register(
    harness.AlgorithmSpec(
        name="broken-pgda-no-mh",
        family="negative-controls",
        paper="negative control",
        guarantee="mcmc",
        entry="run_chain",
        target_kinds=("factor-graph-continuous",),
        implementations={"reference": pgda_without_mh},
        params=(Param("lam", 4.0, low=0.0, low_inclusive=False),),
        splittable=False,
        summary=pgda_without_mh.__doc__ or "",
        checks=(Check(problems=("cfg-tiny-n3",)),),
    )
)
