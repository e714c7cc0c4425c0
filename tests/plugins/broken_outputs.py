"""Samplers that break a contract rather than a law: the negative controls of the ``contract``,
``seed-determinism`` and whole-stream ``agreement`` gates (DESIGN.md, Contracts).

Each is a correct Gumbel-max sampler (or truncated Gumbel) with one mistake a user could make:
draws returned as floats, one draw short, two columns, a plain list, a NaN, the ``rng``
argument ignored, a fixed seed inside, noise drawn in an order that n/2 + n/2 draws cannot
repeat, and a "Numba" twin that slips at draw 10777 of 20000, past any prefix. Each runs on one
problem, so its verification takes seconds.

Loaded with ``harness verify --plugin tests/plugins/broken_outputs.py``.
"""

import numpy as np

import harness
from harness.spec import Check

DISCRETE = "synthetic-normal-D10-N200"
CONTINUOUS = "truncgumbel-phi0-b1"
#: Where the twin of ``broken-numba-slip`` first differs from its reference.
SLIP_AT = 10_777


def _logp(target):
    return np.cumsum(target.log_factors, axis=1)[:, -1] + target.log_f0


def _argmax(target, n, noise):
    D, N = target.log_factors.shape
    return harness.Draws(np.argmax(_logp(target) + noise, axis=1), n * N * D)


def gumbel_max(target, n, rng):
    """Correct: argmax of log p~ plus Gumbel noise, one row of D a draw."""
    return _argmax(target, n, -np.log(rng.standard_exponential((n, target.D))))


def float_states(target, n, rng):
    """Bug: the states come back as floats, shifted by 0.25."""
    draws = gumbel_max(target, n, rng)
    return harness.Draws(draws.values + 0.25, draws.evals)


def one_short(target, n, rng):
    """Bug: an off-by-one loop bound returns n - 1 draws."""
    return gumbel_max(target, n - 1, rng)


def two_columns(target, n, rng):
    """Bug: the state and its log weight stacked, shape (n, 2)."""
    draws = gumbel_max(target, n, rng)
    return harness.Draws(np.stack([draws.values, draws.values], axis=1), draws.evals)


def plain_list(target, n, rng):
    """Bug: the draws as a Python list."""
    draws = gumbel_max(target, n, rng)
    return harness.Draws(draws.values.tolist(), draws.evals)


def own_rng(target, n, rng):
    """Bug: draws from a Generator of its own, ignoring ``rng``."""
    return gumbel_max(target, n, np.random.default_rng())


def fixed_seed(target, n, rng):
    """Bug: a seed fixed inside, so every run repeats one stream."""
    return gumbel_max(target, n, np.random.default_rng(12345))


def column_noise(target, n, rng):
    """Bug for a splittable spec: the noise drawn column by column, so n/2 + n/2 draws read
    the stream in another order than n draws (each draw's law is still right)."""
    return _argmax(target, n, -np.log(rng.standard_exponential((target.D, n))).T)


def trunc_gumbel_nan(target, n, rng):
    """Bug: TruncGumbel(phi, b) by inversion, with a NaN at draw n // 2 (a log of 0)."""
    e = rng.standard_exponential(n)
    values = target.phi - np.logaddexp(np.log(e), target.phi - target.b)
    values[n // 2] = np.nan
    return harness.Draws(values, 0)


def slipped_twin(target, n, rng):
    """Bug in the fast twin only: draw 10777 comes out one state higher."""
    draws = gumbel_max(target, n, rng)
    values = np.array(draws.values)
    if n > SLIP_AT:
        values[SLIP_AT] = (values[SLIP_AT] + 1) % target.D
    return harness.Draws(values, draws.evals)


for name, fn, problem in (
    ("broken-float-states", float_states, DISCRETE),
    ("broken-one-short", one_short, DISCRETE),
    ("broken-two-columns", two_columns, DISCRETE),
    ("broken-plain-list", plain_list, DISCRETE),
    ("broken-own-rng", own_rng, DISCRETE),
    ("broken-fixed-seed", fixed_seed, DISCRETE),
    ("broken-column-noise", column_noise, DISCRETE),
    ("broken-nan", trunc_gumbel_nan, CONTINUOUS),
):
    harness.register(
        harness.AlgorithmSpec(
            name=name,
            family="broken-outputs",
            paper="-",
            guarantee="exact",
            target_kinds=("continuous-1d",) if problem == CONTINUOUS else ("discrete",),
            implementations={"reference": fn},
            checks=(Check(problems=(problem,)),),
        )
    )

harness.register(
    harness.AlgorithmSpec(
        name="broken-numba-slip",
        family="broken-outputs",
        paper="-",
        guarantee="exact",
        target_kinds=("discrete",),
        implementations={"reference": gumbel_max, "numba": slipped_twin},
        checks=(Check(problems=(DISCRETE,)),),
    )
)
