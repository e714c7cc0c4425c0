"""Paper experiments: targets, algorithms and metrics combined as in a paper's figure.

One package per experiment (``harness/experiments/<name>/``) holds only what is its own; the
framework (:mod:`harness.experiments.framework`) runs, resumes and frames it. The table below is
explicit: an experiment exists when it is listed here, not because some module was imported.
The CLI's help, ``make run``'s list and the README's table follow it (a test checks them).
"""

from __future__ import annotations

from harness.experiments.framework import Experiment
from harness.experiments.legacy import Legacy, new_or_legacy
from harness.experiments.potts import Potts

EXPERIMENTS: tuple[Experiment, ...] = (
    new_or_legacy(
        name="racing-synthetic",
        paper="000_26bed7cc1ef3ab92.txt, Fig. 1",
        summary="lil'UCB, Racing-EBS, Racing-Normal: error rate and rewards sampled vs delta",
        help="D states, N rewards per state drawn from Normal(0,1), Uniform[0,1] or "
        "LogNormal(0,2), rescaled to a fixed pmf and reward variance sigma^2; lil-ucb, "
        "racing-ebs and racing-normal draw n samples per delta in {0.001, ..., 0.1}, each "
        "checked against the exact argmax under the same Gumbel noise; a benchmark times "
        "racing-normal against exact gumbel-max. quick: D=10, N=1e4, n=2000 (minutes); full: "
        "the paper's sizes (about a day on one core). --part errors|speed.",
        package="harness.experiments.racing_synthetic",
        cls="RacingSynthetic",
    ),
    new_or_legacy(
        name="racing-arch",
        paper="000_26bed7cc1ef3ab92.txt, Sec. 5.2",
        summary="ARCH model selection on simulated returns: Racing-Normal Gibbs + racing MH",
        help="SIMULATED ARCH(10) returns with t_5 innovations (the paper's index data are not "
        "available): Carlin & Chib model choice over q in {5, ..., 30}; exact Gibbs + MALA "
        "against Racing-Normal Gibbs + SGLD corrected by racing MH. quick: N=3000, 3 chains x "
        "4000 sweeps; full: N=13000, 5 chains x 1e5.",
        package="harness.experiments.racing_arch",
        cls="RacingArch",
    ),
    Potts(),
    new_or_legacy(
        name="minibatch-gap",
        paper="003_07f92522b9b1c588.txt, Thm. 1 and Thm. 2",
        summary="Exact spectral gaps of Poisson-Gibbs / Poisson-MH against the theorems' bounds",
        help="exact spectral gaps on tiny graphs over a lam grid against the theorems' bounds, "
        "and gaps estimated from chains on a Potts grid. --part exact|chains.",
        package="harness.experiments.minibatch_gap",
        cls="MinibatchGap",
    ),
    new_or_legacy(
        name="continuous-spin",
        paper="003_07f92522b9b1c588.txt, Sec. 4.2 (Fig. 1c, 2c)",
        summary="Continuous spin 20x20: PGITS and PGDA vs a long Gibbs-ITS run (symmetric KL)",
        help="20x20 continuous spin, L = 13.71, lam = L^2, m = 3, k = 10; PGITS and PGDA "
        "against a long Gibbs-ITS run by symmetric KL, factors per iteration vs 190.",
        package="harness.experiments.continuous_spin",
        cls="ContinuousSpin",
    ),
    new_or_legacy(
        name="gaussian-mixture",
        paper="003_07f92522b9b1c588.txt, Sec. 4.3 (Fig. 3)",
        summary="Truncated Gaussian mixture: PGITS, PGDA, Gibbs-rejection densities vs exact",
        help="truncated 2-D Gaussian mixture posterior on [-6, 6]^2, the likelihood tempered so "
        "that L = 1581.14; lam = 500, m = 20, k = 25; PGITS, PGDA and Gibbs with rejection "
        "against the exact posterior on a grid, factors per iteration vs 1802. quick: N = 1e4 "
        "data; full: the paper's N = 1e6 (hours).",
        package="harness.experiments.gaussian_mixture",
        cls="GaussianMixture",
    ),
    new_or_legacy(
        name="astar-drill-down",
        paper="001_78ff986a3d316097.txt, Sec. 6.1 (Fig. 2a)",
        summary="A* drill-down vs rejection on exp(-x)/(1+x)^a: evaluations per sample vs a",
        help="p(x) proportional to exp(-x)/(1+x)^a, proposal Exp(1), a log-spaced over [1, 1e6], "
        "1000 exact samples per a by astar-drill-down and by rejection (quick: rejection up to "
        "a = 1e4; full: to 1e6), with rejection's expected cost 1/Z from quadrature.",
        package="harness.experiments.astar_drill_down",
        cls="AstarDrillDown",
    ),
    new_or_legacy(
        name="astar-clutter",
        paper="001_78ff986a3d316097.txt, Sec. 6.1 (clutter)",
        summary="A* and OS* on the clutter posterior, D = 1..4: evaluations per sample",
        help="clutter problem (20 points, half in [-5,-3]^D, half in [2,4]^D; prior N(0, 2^2 I) "
        "as the proposal; constant per-point bounds), D = 1..4, A* against OS* (strategy 1); "
        "quick: 10 data sets x 10 samples a D; full: 100 x 10. Paper: about 900 likelihood "
        "evaluations at D = 3, 4000 at D = 4; OS* 16-40% more.",
        package="harness.experiments.astar_clutter",
        cls="AstarClutter",
    ),
    new_or_legacy(
        name="astar-bounds",
        paper="001_78ff986a3d316097.txt, Sec. 6.2 (Fig. 2b)",
        summary="A* with constant, linear and tight bounds on a Gaussian mean as N grows",
        help="the mean of a 1-D Gaussian from N observations (prior as the proposal), N in "
        "1..1e4; A* with constant, linear and tight (quadratic) bounds: likelihood and bound "
        "evaluations per sample. quick: 5 data sets x 20 samples a point; full: 10 x 100. "
        "Paper: linear about 3x tight, constant O(sqrt N) x.",
        package="harness.experiments.astar_bounds",
        cls="AstarBounds",
    ),
    new_or_legacy(
        name="astar-intervals",
        paper="001_78ff986a3d316097.txt, Sec. 6.3 (Fig. 2c)",
        summary="A* and OS* with mpmath interval bounds on five nonlinear regressions",
        help="five nonlinear regression models of Fig. 2c (our prior ranges; N = 3 synthetic "
        "points), bounds by mpmath interval arithmetic, reference samplers: A* against "
        "rejection's expected cost over noise levels, and OS* against A* at sigma = 0.3 "
        "(cost = liks + 2 x bounds). quick: 3 instances x 5 samples; full: 20 x 50 (hours).",
        package="harness.experiments.astar_intervals",
        cls="AstarIntervals",
    ),
    new_or_legacy(
        name="astar-robust",
        paper="001_78ff986a3d316097.txt, Sec. 6.4 (Fig. 3)",
        summary="A* vs OS* on robust Cauchy regression; 200 samples with reused bounds; slice",
        help="robust (Cauchy) regression with bimodal posterior (data as in the paper), D = 2, "
        "N = 250, per-point linear/quadratic bounds, cost = liks + (D+1) x bounds: A* with "
        "extra draws per node against OS* (both strategies) refining on a share p of "
        "rejections, single samples and 200 samples with reused bounds; a random-direction "
        "slice sampler at 10x A*'s budget counts mode switches. quick: 3 + 2 data sets; "
        "full: 20 + 5, slice at D = 2 and 3.",
        package="harness.experiments.astar_robust",
        cls="AstarRobust",
    ),
    new_or_legacy(
        name="flymc-table1",
        paper="002_3c1996bf78df7865.txt, Table 1",
        summary="FlyMC vs regular MCMC: queries per iteration, ESS per 1000 iterations, speedup",
        help="logistic regression (random-walk MH), softmax (MALA) and robust Student-t "
        "regression (slice sampling), each as regular MCMC, untuned FlyMC and MAP-tuned FlyMC "
        "(q_db = 0.01) from theta_MAP with Laplace-scaled steps; synthetic prior-predictive "
        "data at the paper's sizes (robust N = 1e5 quick, 1.8e6 full) and scikit-learn's "
        "digits 7 vs 9 (real). quick: 1500-4000 iterations a chain (minutes); full: ten times "
        "as many (hours). --part scaling times one iteration as N grows to 1e6.",
        package="harness.experiments.flymc_table1",
        cls="FlymcTable1",
    ),
    new_or_legacy(
        name="pm-astar",
        paper="004_b270422b62f00607.txt, Sec. 5 (Fig. 2a, 2b, 3, 4)",
        summary="PM-A* vs A* and A* without a bound: mixture, counter-example, clutter, "
        "logistic regression",
        help="PM-A* (prior Monte-Carlo estimator), A* (per-region bounds) and A* without a "
        "bound: exact draws on the 1-D mixture N(-2,1) + 2 N(2,1) under Q = N(0,2) (Fig. 2a); "
        "the best Gumbel value against expansions on the Sec. 3 counter-example (Fig. 2b), "
        "against time on clutter at D = 5, 15, 20 (Fig. 3) and on Bayesian logistic regression "
        "with a Gamma(1, 1) precision on synthetic data of the 13 sets' sizes, with MH from "
        "the prior (Fig. 4). quick: 5 data sets, 5-20 runs, short horizons (minutes); full: 100 "
        "runs, all 13 sets. --part mixture|counter|clutter|logistic.",
        package="harness.experiments.pm_astar",
        cls="PmAstar",
    ),
    new_or_legacy(
        name="gate-quality",
        paper="the harness's own gates (no paper)",
        summary="Both error rates of every gate: false failures on correct samplers, planted "
        "bugs caught",
        help="every registered algorithm over many seeds (each seed one of the cases `harness "
        "verify --level quick` runs), each gate's rejection rate at alpha = 0.05 with a 99.9% "
        "interval and the uniformity of its p-values; then `harness verify` on every planted "
        "bug in tests/plugins/planted_*.py. quick: 60 seeds, bugs at the default level; full: "
        "500 seeds, bugs at both levels. --part false-failures|catch.",
        package="harness.experiments.gate_quality",
        cls="GateQuality",
    ),
)


def experiment_names() -> list[str]:
    return [e.name for e in EXPERIMENTS]


def get_experiment(name: str) -> Experiment:
    """The experiment called ``name``; ValueError naming it and the valid ones otherwise."""
    for e in EXPERIMENTS:
        if e.name == name:
            return e
    raise ValueError(f"unknown experiment {name!r}; valid: {', '.join(experiment_names())}")
