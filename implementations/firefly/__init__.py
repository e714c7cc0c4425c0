"""Firefly Monte Carlo (002_3c1996bf78df7865.txt) and its regular-MCMC baselines on GLM
posteriors with per-datum lower bounds (``harness.targets.glm``)."""

from harness.spec import AlgorithmSpec, Check, Param
from implementations.firefly import cuda, fast, reference
from implementations.shared.spec import implemented

#: Step sizes (MH and MALA step, slice width) that mix well on each catalog problem, measured
#: by the best worst-coordinate bulk ESS over a grid (20000 steps, both FlyMC and regular).
STEPS = {
    "logistic-N100-D2-map": {"mh": 0.6, "mala": 0.4, "slice": 4.0},
    "logistic-N100-D2-untuned": {"mh": 0.6, "mala": 0.4, "slice": 4.0},
    "softmax-N100-K2-D2-map": {"mh": 1.2, "mala": 0.3, "slice": 6.0},
    "robust-N100-D2-map": {"mh": 0.3, "mala": 0.2, "slice": 4.0},
    "logistic-N200-D10-map": {"mh": 0.3, "mala": 0.4, "slice": 3.0},
}
#: Where the explicit z update (Alg. 1's resample fraction) is verified beside the implicit one.
EXPLICIT_Z_PROBLEM = "logistic-N100-D2-untuned"
DEFAULT_STEP = {"mh": 0.3, "mala": 0.3, "slice": 4.0}
STEP_DOC = {
    "mh": "random-walk step: theta' = theta + step * N(0, I) (Alg. 1 line 6, epsilon)",
    "mala": "Langevin step s: theta' = theta + s^2/2 grad log p + s * N(0, I)",
    "slice": "slice width w: a bracket of width w placed at random around theta along a random "
    "direction, shrunk until a point lies in the slice (no stepping out, notes Sec. 6)",
}
THETA_STEP_NAMES = {"mh": "random-walk Metropolis-Hastings", "mala": "MALA", "slice": "slice"}


def _step(theta_step: str) -> Param:
    return Param(
        "step",
        DEFAULT_STEP[theta_step],
        float,
        low=0.0,
        low_inclusive=False,
        doc=STEP_DOC[theta_step],
    )


FLYMC_PARAMS = (
    Param(
        "z_update",
        "implicit",
        str,
        choices=reference.Z_UPDATES,
        doc="'implicit': the MH updates of 002's box (bright proposes dark, dark proposes "
        "bright with probability q_db, likelihoods cached from the theta step); 'explicit': "
        "Alg. 1 lines 3-5, ceil(N * resample_fraction) random data redrawn from their "
        "conditional",
    ),
    Param(
        "q_db",
        0.1,
        float,
        low=0.0,
        high=1.0,
        low_inclusive=False,
        doc="q_{d->b}, the probability that a dark point proposes to go bright (implicit "
        "updates; the authors' code default 0.1). Each proposal costs one likelihood query",
    ),
    Param(
        "resample_fraction",
        0.1,
        float,
        low=0.0,
        high=1.0,
        low_inclusive=False,
        doc="Alg. 1's RESAMPLEFRACTION: the share of N data redrawn per iteration (explicit "
        "updates)",
    ),
    Param(
        "theta_fixed",
        False,
        bool,
        doc="hold theta at x0, draw z from its conditional there (N queries) and run only the z "
        "updates; extras bright_steps and darkenings per datum (the z-conditional gate)",
    ),
)


def _checks(theta_step: str, flymc: bool) -> tuple[Check, ...]:
    checks = [Check({"step": steps[theta_step]}, problems=(name,)) for name, steps in STEPS.items()]
    if flymc:
        explicit = {"step": STEPS[EXPLICIT_Z_PROBLEM][theta_step], "z_update": "explicit"}
        checks.append(Check(explicit, problems=(EXPLICIT_Z_PROBLEM,)))
    # Targets the table does not know (a plugin's) run at the defaults.
    checks.append(Check(kinds=("glm-posterior",), skip=tuple(STEPS)))
    return tuple(checks)


def _spec(
    name: str, theta_step: str, impl_name: str, flymc: bool, device: bool = False
) -> AlgorithmSpec:
    """FlyMC with ``theta_step`` on the joint of theta and z, or (``flymc`` False) the same
    step on the exact posterior; both run through the one chain kernel."""
    step = THETA_STEP_NAMES[theta_step]
    if flymc:
        paper = "002_3c1996bf78df7865.txt, Alg. 1 and the implicit z updates (box)"
        summary = (
            f"Firefly Monte Carlo with {step} theta steps on the joint of theta and the "
            "bright/dark variables z: only bright data are evaluated, the product of all bounds "
            "is collapsed to O(D^2); exact for the posterior."
        )
    else:
        paper = "002_3c1996bf78df7865.txt, Table 1 (regular MCMC)"
        summary = (
            f"Regular {step} on the exact posterior: every new theta reads all N likelihood "
            "terms (the baseline of 002, Table 1)."
        )
    return AlgorithmSpec(
        name=name,
        family="firefly",
        paper=paper,
        guarantee="mcmc",
        target_kinds=("glm-posterior",),
        implementations=implemented(
            getattr(reference, impl_name),
            getattr(fast, impl_name),
            getattr(cuda, impl_name) if device else None,
        ),
        params=(_step(theta_step), *(FLYMC_PARAMS if flymc else ())),
        entry="run_chain",
        summary=summary,
        splittable=False,
        checks=_checks(theta_step, flymc),
        kernels=(fast.chain_kernel,),
    )


FIREFLY_FAMILY: list[AlgorithmSpec] = [
    _spec("flymc-mh", "mh", "flymc_mh", flymc=True),
    _spec("flymc-mala", "mala", "flymc_mala", flymc=True),
    _spec("flymc-slice", "slice", "flymc_slice", flymc=True),
    # The device build: every new theta's N terms summed on a CUDA device (firefly/cuda.py).
    _spec("rwmh", "mh", "rwmh", flymc=False, device=True),
    _spec("mala", "mala", "mala", flymc=False),
    _spec("slice", "slice", "slice_sampler", flymc=False),
]
