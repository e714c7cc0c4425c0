"""A* sampling and its baselines (001_78ff986a3d316097.txt), on box densities
(``harness.targets.box_density``).

The reference implementations are here; the family registers its specs once the Numba versions
agree with them (the registry's contract tests require both).
"""
