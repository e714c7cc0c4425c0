"""Sampling primitives that several families use, in one module pair: ``reference.py`` (pure
NumPy and ``math``) and ``fast.py`` (their Numba twins, with the same names and signatures).

Not a family: it registers no algorithm, and ``implementations.FAMILIES`` does not list it. A
family imports only itself and this package (tests/harness/test_dependencies.py checks it).
"""
