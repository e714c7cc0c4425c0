"""Continuous spin model: PGITS and PGDA against a long Gibbs-ITS reference (003, Sec. 4.2).
Each compared chain is planned once the reference's record is on disk, and gets it as input.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

import numpy as np

import harness.experiments.claims as cl
from harness.experiments.claims import Claim
from harness.experiments.continuous_spin.run import (
    ContinuousSpinConfig,
    RunSetting,
    continuous_spin_grid,
    kernels,
    run_chain,
)
from harness.experiments.framework import Column, Experiment, task
from harness.experiments.plots import Line, group, line_figure
from harness.tasks import Records, Task

WHERE = "003 Sec. 4.2"
Measure = Callable[[Records], cl.Estimate]
Stat = Callable[[dict[str, Any]], float]


def _count(label: str, field: str, k: int = 1) -> Measure:
    """The mean count per iteration of ``label``'s runs, at the Bonferroni share 0.05 / k
    (:func:`claims.per_step_count`)."""

    def measure(rs: Records) -> cl.Estimate:
        runs = cl.select(rs, "chain", label=label)
        return cl.per_step_count([r[field] for r in runs], runs[0]["n_steps"], k)

    return measure


def _pick(parts: dict[str, Measure], key: Callable[[cl.Estimate], float], scale: float) -> Measure:
    def measure(rs: Records) -> cl.Estimate:
        ests = {a: f(rs).scaled(1 / scale) for a, f in parts.items()}
        name, e = max(ests.items(), key=lambda kv: key(kv[1]))
        how = e.how + (f"; {name} decides" if len(ests) > 1 else "")
        return cl.Estimate(e.value, e.low, e.high, e.n, e.unit, how)

    return measure


def _farthest(parts: dict[str, Measure], scale: float = 1.0) -> Measure:
    """One rule over several settings: the one whose value / scale lies farthest from 1 (log)."""
    return _pick(parts, lambda e: abs(np.log(e.value)), scale)


def _least(parts: dict[str, Measure]) -> Measure:
    """One rule over several settings: the smallest value (all must lie above the band's edge)."""
    return _pick(parts, lambda e: -e.value, 1.0)


def _final_kl(r: dict[str, Any]) -> float:
    return float(r["sym_kl"][-1])


def _curve(r: dict[str, Any]) -> float:
    """Geometric mean sym KL over the checkpoints from one sweep (n_vars iterations) on."""
    kl = [v for t, v in zip(r["iterations"], r["sym_kl"], strict=True) if t >= r["n_vars"]]
    return float(np.exp(np.mean(np.log(kl))))


def _ratio(num: str, den: str, of: Stat | None = None, k: int = 1) -> Measure:
    """mean of(num) / mean of(den) over runs, at the Bonferroni share 0.05 / k (delta method on
    the log ratio); of None: the sym KL at the sampler time the faster run of either side ends
    at, interpolated on log-log axes."""
    from scipy import stats

    def measure(rs: Records) -> cl.Estimate:
        a, b = cl.select(rs, "chain", label=num), cl.select(rs, "chain", label=den)
        t = np.log(min(float(r["sampler_s"][-1]) for r in a + b))

        def at(r: dict[str, Any]) -> float:
            s, kl = np.asarray(r["sampler_s"], dtype=float), np.log(r["sym_kl"])
            return float(np.exp(np.interp(t, np.log(s[s > 0]), kl[s > 0])))

        e = cl.ratio_of_means([(of or at)(r) for r in a], [(of or at)(r) for r in b])
        if k == 1:
            return e
        n = min(len(a), len(b))
        wider = float(stats.t.ppf(1 - (1 - cl.CONFIDENCE) / (2 * k), n - 1))
        wider /= float(stats.t.ppf(0.5 + cl.CONFIDENCE / 2, n - 1))
        lo, hi = (e.value * (x / e.value) ** wider for x in (e.low, e.high))
        return cl.Estimate(e.value, lo, hi, e.n, e.unit, f"{e.how}, Bonferroni over {k}")

    return measure


def _rejection(envelope: str) -> Measure:
    """Expected proposals per acceptance at the priced states of the Gibbs-ITS chains: a t
    interval over runs, or for one run over 10 consecutive blocks of its states."""

    def measure(rs: Records) -> cl.Estimate:
        runs = cl.select(rs, "chain", label="gibbs-its")
        values = [r["rejection_proposals"][envelope] for r in runs]
        if len(runs) > 1:
            return cl.mean_interval([float(np.mean(v)) for v in values])
        blocks = np.array_split(np.asarray(values[0], dtype=float), 10)
        return cl.mean_interval([float(b.mean()) for b in blocks], "blocks of states")

    return measure


class ContinuousSpin(Experiment[ContinuousSpinConfig]):
    """20x20 continuous spin, lam = L^2, m = 3, k = 10; PGITS and PGDA against a long Gibbs-ITS run
    by symmetric KL, and factors per iteration."""

    replicates = ("replicates",)

    paper = "003_07f92522b9b1c588.txt, Sec. 4.2 (Fig. 1c, 2c)"
    summary = "Continuous spin 20x20: PGITS and PGDA vs a long Gibbs-ITS run (symmetric KL)"
    title = "Continuous spin model: symmetric KL of Gibbs-ITS, PGITS and PGDA"
    columns = (
        Column("sampler", lambda r: r.get("label", "reference")),
        Column("run", "replicate"),
        Column("iterations", "n_steps"),
        Column("us / iter", lambda r: 1e6 * np.max(r["sampler_s"]) / r["n_steps"], ".3g"),
        Column("distinct factors / iter", "factors_per_iter", ".4g"),
        Column("draws B / iter", "draws_per_iter", ".4g"),
        Column("kept draws / iter", "kept_per_iter", ".4g"),
        Column("factor evaluations / iter", "evals_per_iter", ".4g"),
        Column("accept rate", "accept_rate", ".3g"),
        Column("final sym KL", lambda r: r["sym_kl"][-1] if "sym_kl" in r else None, ".3g"),
        Column("floor (iid)", lambda r: r["floor"][-1] if "floor" in r else None, ".3g"),
        Column("halves' sym KL / 4", lambda r: r.get("split_half_kl", math.nan) / 4, ".3g"),
        Column("wall s", "wall_s", ".4g"),
    )

    def plan(self, config: ContinuousSpinConfig, records: Records, part: str) -> list[Task]:
        ref = RunSetting(config, "gibbs-its", -1, config.reference_steps, config.reference_burn_in)
        tasks = [task(config, ref.key, run_chain, ref, None, label="reference gibbs-its")]
        reference = next((r for r in records if r.get("key") == ref.key), None)
        if reference is None:
            return tasks
        return tasks + [
            task(config, s.key, run_chain, s, reference, label=f"{a} rep {i}")
            for a in config.algorithms
            for i in range(config.replicates)
            for s in (RunSetting(config, a, i, config.n_steps),)
        ]

    def warm(self) -> None:
        params = {"gibbs-its": {"m": 3}, "pgits": {"lam": 2.0, "m": 3}}
        params["pgda"] = {"lam": 2.0, "m": 3, "k": 10}
        for name, kernel in kernels().items():
            kernel(continuous_spin_grid(2), 3, np.random.default_rng(0), **params[name])

    def givens(self, config: ContinuousSpinConfig) -> tuple[cl.Given, ...]:
        return (
            cl.Given(
                "L of the model",
                WHERE,
                "13.71",
                "taken from the paper",
                "003 does not state A_ij; its scale (0.4) was chosen to give this L",
            ),
            cl.Given(
                "Poisson-Gibbs evaluates only a fraction of Gibbs's factors (Fig. 1c)",
                WHERE,
                '"with only a fraction of factors"',
                "by construction",
                "lambda + L = L^2 + L bounds the expected count (003 Sec. 2): about 202 of a "
                "variable's 399 factors at L = 13.71",
            ),
        )

    def claims(self, config: ContinuousSpinConfig) -> tuple[Claim, ...]:
        pgs = tuple(a for a in ("pgits", "pgda") if a in config.algorithms) or ("pgits", "pgda")
        k = len(pgs)
        # "the average number of evaluated factors": 003's Alg. 2 evaluates the factors of S =
        # {phi | s_phi > 0}, so the literal reading counts distinct factors; the Poisson draws B
        # and the kept sum of s_phi are other readings. Both Poisson-Gibbs samplers, one rule
        # on the one farthest from 190 (within 1.25x, a reported mean count), Bonferroni.
        text = (
            '"On this task, the average number of evaluated factors per iteration of '
            'Poisson-Gibbs is 190."'
        )
        what = {
            "factors": "distinct factors (|S| of Alg. 2; 003 names no count)",
            "draws": "Poisson draws B",
        }
        what["kept"] = "kept draws (sum of s_phi)"

        def count(cid: str, field: str, labels: tuple[str, ...]) -> Claim:
            parts = {a: _count(a, f"{field}_per_iter", len(labels)) for a in labels}
            return Claim(
                cid,
                WHERE,
                text,
                f"{what[field]} per iteration / 190, "
                + (f"the farthest from 1 of {', '.join(labels)}" if len(labels) > 1 else cid[8:]),
                cl.within_factor(1.0, 1.25),
                _farthest(parts, 190.0),
                "190",
                fails_if="a count more than 1.25x from 190: possible, the count follows our "
                "A_ij (003 does not state it) and our Poisson draws",
            )

        rows = [count(f"factors-{a}", "factors", (a,)) for a in pgs]
        others = [count(f"factors-{r}", r, pgs) for r in ("draws", "kept")]
        factors = dataclasses.replace(count("factors", "factors", pgs), readings=(*others, *rows))
        fig1c = f"{WHERE}, Fig. 1c"
        comparable = Claim(
            "fig1c-comparable",
            fig1c,
            '"Observe that our methods achieve comparable performance to Gibbs sampling with only '
            'a fraction of factors." (the fraction: a given)',
            f"final sym KL / gibbs-its's, the farthest from 1 of {', '.join(pgs)}",
            cl.within_factor(1.0, 2.0),  # "comparable": within 2x
            _farthest({a: _ratio(a, "gibbs-its", _final_kl, k) for a in pgs}),
            fails_if="a final sym KL more than 2x from Gibbs-ITS's: possible, Thm. 4 allows "
            "PGDA (and PGITS) a smaller gap, and m = 3 costs acceptance",
        )
        faster = Claim(
            "fig2c-faster-at-equal-time",
            f"{WHERE}, Fig. 2c",
            '"Similar to the previous section, the two Poisson-Gibbs methods are faster than '
            'plain Gibbs sampling."',
            f"sym KL at equal sampler time, gibbs-its / each of {', '.join(pgs)}, the smallest",
            cl.above(1.0),  # "A beats B": B/A's interval lies above 1, for both
            _least({a: _ratio("gibbs-its", a, None, k) for a in pgs}),
            fails_if="Gibbs-ITS at or below a Poisson-Gibbs sampler's sym KL at equal time: "
            "possible, Poisson-Gibbs pays for its Poisson draws on top of its energy evaluations",
        )
        pgda_first = Claim(
            "fig1c-pgda-faster-than-pgits",
            fig1c,
            '"Also notice that PGDA converges faster than PGITS given the same degree of '
            'polynomial."',
            "geometric mean sym KL from one sweep on, pgits / pgda",
            cl.above(1.0),  # "A converges faster than B": B/A's interval lies above 1
            _ratio("pgits", "pgda", _curve),
            fails_if="PGITS's curve at or below PGDA's: possible, both use m = 3 and reach "
            "similar acceptance, so either may come out ahead",
        )
        # The paper's rejection proposes w g, g uniform on [0, 1], "w is a constant tuned for
        # best performance": the literal reading is one constant, the least valid one, e^L.
        # Our kernel's own envelope (each site's sum of M_phi) is another reading.
        said = (
            '"For rejection sampling, the average steps needed for a sample to be accepted is '
            'greater than 300" (proposal w g, "w is a constant tuned for best performance").'
        )
        on = "at the states of our Gibbs-ITS chains (second half), over sites"
        rejection = Claim(
            "rejection-over-300",
            WHERE,
            said,
            f"expected proposals per acceptance with w = e^L (the least constant valid at every "
            f"state), {on}",
            cl.above(300.0),
            _rejection("constant"),
            "> 300",
            fails_if="300 or fewer: possible, a tight envelope needs few proposals where the "
            "conditional is flat, as in most of this model's states",
            readings=(
                Claim(
                    "rejection-over-300-per-site",
                    WHERE,
                    "The same sentence, read with each site's own envelope, its sum of M_phi.",
                    "expected proposals per acceptance with w = e^(the site's sum of M_phi), " + on,
                    cl.above(300.0),
                    _rejection("per_site"),
                    "> 300",
                    fails_if="300 or fewer proposals per acceptance",
                ),
            ),
        )
        return (factors, comparable, faster, pgda_first, rejection)

    def figures(self, config: ContinuousSpinConfig, records: Records) -> list[dict[str, Any]]:
        ref = next((r for r in records if r.get("type") == "reference"), None)
        chains = [r for r in records if r.get("type") == "chain"]
        if ref is None or not chains:
            return []
        figs, first = [], chains[0]
        for x, xlabel in (("iterations", "iterations"), ("sampler_s", "sampler time (s)")):
            lines = []
            for a in config.algorithms:
                if recs := [r for r in chains if r["label"] == a]:
                    xs, kl = (np.mean([r[f] for r in recs], axis=0) for f in (x, "sym_kl"))
                    lines.append(Line(f"{a} ({len(recs)} runs)", xs, kl))
            if x == "iterations":  # the floor depends on the iteration count alone
                lines.append(Line("floor (iid)", first[x], first["floor"], None, "#999", "--"))
            x0 = np.asarray(lines[0].x)
            span, noise = (x0[x0 > 0].min(), x0.max()), [ref["split_half_kl"] / 4] * 2
            lines.append(Line("reference noise", span, noise, None, "#999", ":"))
            figs.append((f"sym KL vs {xlabel}", line_figure(lines, xlabel, "symmetric KL")))
        caption = (
            "Per variable, the symmetric KL sum_b (p_b - q_b) log(p_b / q_b) between the "
            f"running histogram p ({config.n_bins} bins on [0, 1], 0.5 pseudo-counts each) and "
            f"that of a {ref['n_steps']:.3g}-iteration Gibbs-ITS reference; mean over variables "
            "and runs. Dashed: 2 (n_bins - 1) n_vars (1/T + 1/R), the floor for independent "
            "update values (MCMC correlation raises it); dotted: the reference's own share, "
            "its halves' sym KL / 4. Time: the Numba sampler calls alone."
        )
        return [group("Symmetric KL divergence", caption, *figs)]
