"""asv benchmark of PM-A*'s selection step (004_b270422b62f00607.txt Sec. 4.3): one pick of the
next region from m truncated Gumbels, by the balanced tree (O(log m): draw, delete, re-insert)
and by drawing all m (the linear scan). `harness speed --pm-selection` prints the same ratios
measured side by side."""

from __future__ import annotations

import numpy as np

import suites  # noqa: F401  (sets NUMBA_CACHE_DIR before anything imports numba)

PICKS = 200


class PMSelection:
    params = ([100, 1000, 10_000, 100_000], ["tree", "linear"])
    param_names = ["m", "method"]
    timeout = 300

    def setup(self, m: int, method: str) -> None:
        from implementations.astar import pm_fast

        self.fast = pm_fast
        self.rng = np.random.default_rng(m)
        self.a = self.rng.normal(0.0, 1.5, m)
        self.b = self.a + self.rng.normal(0.5, 1.5, m)
        self.tree = pm_fast.tree.tree_new(m)
        fl, it, meta, free, stack = self.tree
        for j in range(m):
            pm_fast.tree.tree_insert(
                fl,
                it,
                meta,
                free,
                stack,
                self.b[j],
                self.a[j],
                self.a[j] - self.b[j],
                self.rng.random(),
                j,
            )
        pm_fast.tree_pick_loop(*self.tree, 2, self.rng)
        pm_fast.linear_pick_loop(self.a.copy(), self.b.copy(), 1, self.rng)
        self.picks = PICKS

    def time_pick(self, m: int, method: str) -> None:
        if method == "tree":
            self.fast.tree_pick_loop(*self.tree, self.picks, self.rng)
        else:
            self.fast.linear_pick_loop(self.a, self.b, self.picks, self.rng)
