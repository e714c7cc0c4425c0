"""Deliberately broken Poisson-Gibbs samplers: negative controls for the invariance gate (003).

Each declares the exact transition matrix of its own bug, as a correct plugin would declare its
kernel; the invariance gate must reject it. Loaded with
``harness verify --plugin tests/plugins/broken_gibbs.py``.
"""

import numpy as np

import harness
from harness.spec import Check, Param
from implementations.minibatch_gibbs.exact import poisson_gibbs_matrix

LAM = Param("lam", 10.0, low=0.0, low_inclusive=False)


def _local(target, x, i):
    """phi(x with x_i = v) for phi in A[i] (rows) and v (columns), and the bounds M."""
    start, stop = int(target.adj_indptr[i]), int(target.adj_indptr[i + 1])
    rows, Ms = [], []
    for slot in range(start, stop):
        f, other = int(target.adj_factors[slot]), int(x[target.adj_other[slot]])
        table = target.tables[f]
        rows.append(table[:, other] if target.adj_pos[slot] == 0 else table[other, :])
        Ms.append(float(target.M[f]))
    return np.array(rows), np.array(Ms)


def _chain(target, n_steps, rng, lam, with_phi_rate, with_multiplicity):
    x = np.zeros(target.n_vars, dtype=np.int64)
    values = np.empty((n_steps, target.n_vars), dtype=np.int64)
    evals = 0
    for t in range(n_steps):
        i = int(rng.integers(0, target.n_vars))
        phis, M = _local(target, x, i)
        rates = lam * M / target.L + (phis[:, x[i]] if with_phi_rate else 0.0)
        s = rng.poisson(rates)
        if not with_multiplicity:
            s = (s > 0).astype(float)
        energy = (s[:, None] * np.log1p(target.L * phis / (lam * M[:, None]))).sum(axis=0)
        p = np.exp(energy - energy.max())
        x[i] = int(np.searchsorted(np.cumsum(p), rng.random() * p.sum(), side="right"))
        values[t] = x
        evals += phis.size
    return harness.Chain(values, evals)


def no_phi_rate(target, n_steps, rng, x0=None, lam=10.0):
    """Bug: s_phi ~ Poisson(lam M / L), without its phi(x) part."""
    return _chain(target, n_steps, rng, lam, False, True)


def no_multiplicity(target, n_steps, rng, x0=None, lam=10.0):
    """Bug: the minibatch energy sums log1p(...) once per factor, not s_phi times."""
    return _chain(target, n_steps, rng, lam, True, False)


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
