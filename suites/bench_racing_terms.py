"""asv benchmark of racing on likelihood terms computed from data (000_26bed7cc1ef3ab92.txt,
Alg. 1 against exact Gumbel-max, Eq. 2): Racing-Normal and exact Gumbel-max (Numba) per draw
at D = 10, N = 1e5, and the ratio of the race's wall-clock speedup to its evaluation saving
(limit 0.7). `harness speed --racing` prints the same ratio, with precomputed matrices beside."""

from __future__ import annotations

import time

import numpy as np

import suites  # noqa: F401  (sets NUMBA_CACHE_DIR before anything imports numba)


def _setup(model: str):
    from harness.registry import build_registry
    from harness.targets.likelihood_terms import logistic_candidates, studentt_candidates

    reg = build_registry()
    build = logistic_candidates if model == "logistic" else studentt_candidates
    target = build(100_000, 10, 10, 1000.0 if model == "logistic" else 300.0, 3)
    race, exact = reg.get("racing-normal"), reg.get("gumbel-max")
    return target, race, exact


class RacingOnComputedTerms:
    params = (["logistic", "student-t"], ["racing-normal", "gumbel-max"])
    param_names = ["model", "sampler"]
    timeout = 300

    def setup(self, model: str, sampler: str) -> None:
        from harness.spec import sample

        self.target, race, exact = _setup(model)
        self.spec = race if sampler == "racing-normal" else exact
        self.sample = sample
        self.draws = 20 if sampler == "racing-normal" else 2
        self.sample(self.spec, "numba", self.target, 2, np.random.default_rng(0))

    def time_draws(self, model: str, sampler: str) -> None:
        self.sample(self.spec, "numba", self.target, self.draws, np.random.default_rng(1))


class RacingSpeedupOverSaving:
    """speedup / saving, measured side by side in one process (median of 5 alternations)."""

    params = ["logistic", "student-t"]
    param_names = ["model"]
    timeout = 600
    unit = "ratio"

    def setup(self, model: str) -> None:
        from harness.spec import sample

        self.target, self.race, self.exact = _setup(model)
        self.sample = sample
        for spec in (self.race, self.exact):
            sample(spec, "numba", self.target, 2, np.random.default_rng(0))

    def track_speedup_over_saving(self, model: str) -> float:
        t = self.target
        race_t, exact_t, evals, draws = [], [], 0, 0
        for r in range(5):
            t0 = time.perf_counter()
            got = self.sample(self.race, "numba", t, 20, np.random.default_rng(r))
            race_t.append((time.perf_counter() - t0) / 20)
            evals, draws = evals + got.evals, draws + 20
            t0 = time.perf_counter()
            self.sample(self.exact, "numba", t, 3, np.random.default_rng(r))
            exact_t.append((time.perf_counter() - t0) / 3)
        saving = t.N * t.D / (evals / draws)
        return float(np.median(exact_t) / np.median(race_t) / saving)
