"""Which box-target functions Numba caches on disk: the built-in targets' own, not a user's."""

import math

import numpy as np

from harness.targets.box_density import peaky_log_lik
from harness.targets.box_probes import compiled


def _user_log_lik(x, data):
    return -math.log1p(x[0] * x[0])


def _cached(dispatcher) -> bool:
    # Numba gives a dispatcher made with cache=False a NullCache.
    return type(dispatcher._cache).__name__ != "NullCache"


def test_a_built_in_function_is_cached_and_a_users_compiles_in_each_process():
    assert _cached(compiled(peaky_log_lik))
    assert not _cached(compiled(_user_log_lik))
    namespace: dict = {}
    exec("def log_lik(x, data):\n    return -x[0]\n", namespace)  # no file Numba could cache by
    from_exec = compiled(namespace["log_lik"])
    assert not _cached(from_exec)
    assert from_exec(np.array([2.0]), np.zeros((1, 1))) == -2.0
    assert compiled(from_exec) is from_exec  # an already compiled function is used as it is
