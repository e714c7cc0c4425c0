"""What the A* sampling experiments of 001_78ff986a3d316097.txt, Sec. 6 share: costs of exact
sampling.

Each of them measures likelihood and bound evaluations per exact sample, for some samplers on
some box densities, beside the paper's numbers. :mod:`.cells` holds a cell (a sampler, its
parameters and a target; its task and records) and the config, :mod:`.figures` the report's
tables and cost curves. The experiments themselves are the packages ``astar_drill_down``
(Sec. 6.1, Fig. 2a), ``astar_clutter`` (Sec. 6.1), ``astar_bounds`` (Sec. 6.2, Fig. 2b),
``astar_intervals`` (Sec. 6.3, Fig. 2c) and ``astar_robust`` (Sec. 6.4, Fig. 3).
"""
