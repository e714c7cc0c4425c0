"""A* sampling and its baselines (001_78ff986a3d316097.txt) on box densities phi = i + o
(``harness.targets.box_density``)."""

from collections.abc import Mapping
from typing import Any

from harness.spec import Agreement, AlgorithmSpec, Check, Param
from implementations.astar import audit_fast, fast, pm_fast, pm_reference, reference
from implementations.shared.spec import family_spec, implemented

#: Rejection with one global bound only where it accepts often (clutter's global bound is loose
#: by a factor of about e^20: rejection would run for days there).
REJECTION_PROBLEMS = ("peaky-exponential-a10",)

#: Drill-down needs a 1-D target whose o is unimodal with a declared mode.
DRILL_DOWN_PROBLEMS = ("peaky-exponential-a10",)

#: The 1-D problems, where each variant's check costs a few seconds of reference draws (A* on
#: clutter-D2 costs several milliseconds a draw there).
BOX_PROBLEMS_1D = ("peaky-exponential-a10", "clutter-D1")

#: extra_draws is a Poisson mean: each expansion costs about that many likelihood evaluations.
MAX_EXTRA_DRAWS = 1000.0

#: Where an exact stop on the one bound of the whole box comes in reasonable time (clutter's
#: global bound is loose by about e^20; there PM-A* is checked with per-region bounds).
GLOBAL_STOP_PROBLEMS = ("peaky-exponential-a10", "pm-mixture")
CLUTTER_PROBLEMS = ("clutter-D1", "clutter-D2")

_HORIZON = Param(
    "horizon",
    0,
    int,
    low=0,
    high=10**9,
    doc="004 Sec. 5: stop after this many expansions even before the exact stop, as the "
    "paper's experiments do (best Gumbel value per expansion in extras['trace']); the draw is "
    "then NOT exact. 0: run to the exact stop",
)


_AUDIT = Param(
    "audit",
    False,
    bool,
    doc="run-to-completion audit (implementations/astar/audit.py): after each draw's stop, "
    "continue its search from the frontier with the target's bound M(B) and a Generator of its "
    "own until nothing left can beat the result (at most audit.AUDIT_CAP expansions). "
    "extras['audit_changed'] says per draw whether the answer changed (never, after an exact "
    "stop), with 'audit_capped', 'audit_gumbel' and the continuation's 'audit_evals' and "
    "'audit_bound_evals' (not in evals). Draws, costs and the Generator's state are those of "
    "audit=False",
)
_REPORT = Param(
    "report_bounds",
    False,
    bool,
    doc="report the bounds the search used (audit.py): extras['bound_gap'] per draw, the largest "
    "(o(x) - M) / (1 + |M|) over the points it evaluated against the bound it held for the "
    "point's region, and per bound it computed 'bound_draw', 'bound_lo', 'bound_hi', 'bound_m'",
)


#: OS*'s parameters.
_STRATEGY = Param(
    "strategy",
    1,
    int,
    choices=reference.OS_STAR_STRATEGIES,
    doc="refinement after a rejection (001 Sec. 6.4): 1 splits the proposed piece "
    "at the rejected point, 2 splits the piece of largest proposal mass nu(B) at its "
    "median, 3 is 2 read with OS*'s own envelope mass nu(B) exp(M(B)) (001 does not "
    "say which proposal 'largest probability under the proposal' means), 4 is 3 "
    "split at a fresh point X ~ nu(. | B) (001 Sec. 6 splits at a sampled point)",
)
_REFINE_PROB = Param(
    "refine_prob",
    1.0,
    float,
    low=0.0,
    high=1.0,
    low_inclusive=False,
    doc="001 Sec. 6.4, Fig. 3: refine after a rejection only with this probability "
    "(1 down to 0.1 in the paper), trading bound evaluations for likelihood "
    "evaluations (clutter-D1 at 0.3: about 14 -> 31 likelihood and 26 -> 19 bound "
    "evaluations a draw); 1 refines on every rejection",
)
_OS_REUSE = Param(
    "reuse",
    False,
    bool,
    doc="001 Sec. 4 and 6.4 (Fig. 3 right): the refined pieces persist across the n "
    "draws of one call instead of resetting per draw (exact and independent draws "
    "either way: any envelope M_j >= o is a valid proposal). clutter-D1 over 500 "
    "draws: about 14 -> 1.3 likelihood and 26 -> 0.6 bound evaluations a draw. "
    "Calls do not share the pieces, so n/2 + n/2 draws cost more than n",
    keeps_state=True,
)


def _check_gradient(target: Any, params: Mapping[str, Any]) -> None:
    if params.get("estimator") == "trajectory" and target.log_lik_grad is None:
        raise ValueError(
            f"estimator = 'trajectory' is invalid on target {target.name!r}, which has no "
            "log_lik_grad; valid: 'prior', or a box density built with "
            "box_density(..., log_lik_grad=...)"
        )


def _check_unimodal(target: Any, params: Mapping[str, Any]) -> None:
    if target.d != 1 or target.mode is None:
        raise ValueError(
            f"target {target.name!r} (d = {target.d}, mode = {target.mode}) is invalid for "
            "astar-drill-down; valid: a 1-D box density declaring the mode of its unimodal o "
            "(box_density(..., mode=...))"
        )


_spec = family_spec("astar", guarantee="exact", target_kinds=("box-density",))


def _in_pm_search(
    name: str, where: str, summary: str, problems: tuple[str, ...], **fields: Any
) -> AlgorithmSpec:
    """A selection rule of PM-A*'s search with no parameters of its own (004): its entry of
    the same name in both builds, with a horizon, the audit and the bound report."""
    entry = name.replace("-", "_")
    return _spec(
        name=name,
        paper=f"004_b270422b62f00607.txt, {where}",
        implementations=implemented(getattr(pm_reference, entry), getattr(pm_fast, entry)),
        params=(_HORIZON, _AUDIT, _REPORT),
        summary=summary,
        checks=(Check(problems=problems),),
        kernels=(pm_fast.pm_search_kernel, audit_fast.complete_all),
        **fields,
    )


#: PM-A*'s Python search costs about 1 ms a draw (a heap of regions and a tree of truncated
#: Gumbels per draw): the whole 2e4-draw stream of its seven cases took over two minutes of a
#: verify run. Beside the Numba twin the reference runs its first 2000 draws by default;
#: `harness verify --reference full` compares every draw.
SLOW_PM_REFERENCE = Agreement(
    reference_draws=2000,
    reference_reason="the pure-Python PM-A* search costs about 1 ms a draw; --reference full "
    "compares all",
)

ASTAR_FAMILY: list[AlgorithmSpec] = [
    _spec(
        name="astar",
        paper="001_78ff986a3d316097.txt, Alg. 2",
        implementations=implemented(reference.astar, fast.astar),
        params=(
            Param(
                "extra_draws",
                0.0,
                float,
                low=0.0,
                high=MAX_EXTRA_DRAWS,
                doc="001 Sec. 4, second variant: a popped node draws 1 + Poisson(extra_draws) "
                "pairs (G, X) of its box, each further one the box's next-largest Gumbel at a "
                "fresh X (one more likelihood evaluation), stopping once LB beats G + M(box); "
                "its children are truncated below the last G drawn. Better lower bounds prune "
                "more, so fewer bound evaluations are spent (clutter-D1: about 11 -> 19 -> 37 "
                "likelihood and 19 -> 17 -> 14 bound evaluations a draw at 0, 1, 4). Fig. 3 of "
                "001 uses 1/p - 1 for p from 1 down to 0.1; 0 is Alg. 2",
            ),
            Param(
                "reuse",
                False,
                bool,
                doc="001 Sec. 4, first variant: the boxes every search splits, with their "
                "bounds, persist across the n draws of one call, and each search runs on a "
                "fresh Gumbel process over that partition (exact and independent draws; only "
                "the cost depends on the earlier draws). clutter-D1 over 500 draws: about 11 "
                "-> 1.1 likelihood and 19 -> 1.5 bound evaluations a draw. Calls do not share "
                "the partition, so n/2 + n/2 draws cost more than n",
                keeps_state=True,
            ),
            _AUDIT,
            _REPORT,
        ),
        summary="A* search over the top-down Gumbel process of the proposal, guided by the "
        "bounds M(B) >= o on boxes; returns the exact sample and its Gumbel(log Z) maximum.",
        checks=(
            Check(),
            Check({"extra_draws": 1.0}, problems=("clutter-D1",)),
            Check({"reuse": True}, problems=BOX_PROBLEMS_1D),
            Check({"extra_draws": 1.0, "reuse": True}, problems=("clutter-D1",)),
        ),
        kernels=(fast.astar_kernel, audit_fast.complete_all),
    ),
    _spec(
        name="astar-drill-down",
        paper="001_78ff986a3d316097.txt, Sec. 4 (drill down)",
        implementations=implemented(reference.drill_down, fast.drill_down),
        params=(_AUDIT, _REPORT),
        summary="A* for a unimodal o in 1-D: every split prunes the child away from the mode, "
        "so the search keeps one box and no queue (a binary search for the peak).",
        checks=(Check(problems=DRILL_DOWN_PROBLEMS),),
        kernels=(fast.drill_down_kernel, audit_fast.complete_all),
        target_check=_check_unimodal,
    ),
    _spec(
        name="os-star",
        paper="001_78ff986a3d316097.txt, Sec. 5 and 6.4 (OS*, piecewise-constant bounds)",
        implementations=implemented(reference.os_star, fast.os_star),
        params=(_STRATEGY, _REFINE_PROB, _OS_REUSE, _REPORT),
        summary="Adaptive rejection with piecewise-constant bounds: pick a piece by "
        "nu(B) exp(M(B)), accept by exp(o - M), refine on rejection; the pieces reset per draw "
        "unless reused.",
        checks=(
            Check(),
            Check({"strategy": 2}, problems=("peaky-exponential-a10",)),
            Check({"strategy": 3}, problems=("peaky-exponential-a10",)),
            Check({"strategy": 4}, problems=("peaky-exponential-a10",)),
            Check({"refine_prob": 0.3}, problems=("clutter-D1",)),
            Check({"reuse": True}, problems=BOX_PROBLEMS_1D),
        ),
        kernels=(fast.os_star_kernel,),
    ),
    _spec(
        name="pm-astar",
        paper="004_b270422b62f00607.txt, Alg. 1 (Sec. 4.2-4.3, Eq. 3-8)",
        implementations=implemented(pm_reference.pm_astar, pm_fast.pm_astar),
        params=(
            Param(
                "particles",
                1,
                int,
                low=1,
                high=1000,
                doc="draws x ~ Q(. | S) in a region's prior Monte-Carlo estimate of its Gumbel "
                "value (Eq. 3), the region's own point first: each one after it costs a "
                "likelihood evaluation",
            ),
            _HORIZON,
            Param(
                "stop_bound",
                "global",
                str,
                choices=pm_reference.STOP_BOUNDS,
                doc="the bound of the exact stop (selection never uses it): 'global', the one "
                "bound of the whole box; 'regions', each new region's own (one bound "
                "evaluation a region, a far earlier stop where the global bound is loose)",
            ),
            Param(
                "estimator",
                "prior",
                str,
                choices=pm_reference.ESTIMATORS,
                doc="the Monte-Carlo estimate of a region's Gumbel value (Eq. 3): 'prior', "
                "draws from Q(. | S) (Sec. 5.3.2's fair setting); 'trajectory', the `particles` "
                "points of a normalised gradient ascent on o from x(S) inside S, weighted by "
                "the proposal's density (Sec. 5.3; needs the target's log_lik_grad; each step "
                "costs a gradient and a likelihood evaluation)",
            ),
            Param(
                "step",
                0.1,
                float,
                low=0.0,
                high=1e6,
                low_inclusive=False,
                doc="the trajectory's step length in x's units (004 tunes its SGD for A*'s "
                "bounds and does not say how)",
            ),
            _AUDIT,
            _REPORT,
        ),
        summary="A* sampling that picks the next region by probability matching: the chance "
        "that its Monte-Carlo estimate of the region's Gumbel value is the largest, drawn in "
        "O(log m) from a balanced tree of truncated Gumbels; exact once the best value beats "
        "every region's bound.",
        checks=(
            Check(skip=CLUTTER_PROBLEMS),
            Check({"stop_bound": "regions"}, problems=CLUTTER_PROBLEMS),
            Check({"particles": 3}, problems=("pm-mixture",)),
            Check({"estimator": "trajectory", "particles": 4}, problems=("pm-mixture",)),
            Check(
                {"estimator": "trajectory", "particles": 4, "stop_bound": "regions"},
                problems=("clutter-D1",),
            ),
        ),
        kernels=(pm_fast.pm_search_kernel, audit_fast.complete_all),
        target_check=_check_gradient,
        agreement=SLOW_PM_REFERENCE,
    ),
    _in_pm_search(
        "astar-nobound",
        "Alg. 3 (Appx. D)",
        "A* sampling without a bound: expand the region with the largest Gumbel; exact once the "
        "best value beats that Gumbel plus the one bound of the whole box (rejection sampling's "
        "cost).",
        GLOBAL_STOP_PROBLEMS,
    ),
    _in_pm_search(
        "astar-pm-search",
        "Sec. 5 (A* of 001 Alg. 2 as the baseline)",
        "A* sampling run by PM-A*'s search, the baseline 004's figures time: expand the region "
        "with the largest bound; exact once the best value beats every region's own bound.",
        ("pm-mixture", "clutter-D1"),
        agreement=SLOW_PM_REFERENCE,
    ),
    _spec(
        name="rejection",
        paper="001_78ff986a3d316097.txt, Sec. 5",
        implementations=implemented(reference.rejection, fast.rejection),
        params=(_REPORT,),
        summary="Rejection sampling from the proposal with the global bound M(box): the "
        "baseline whose cost A* with a constant bound equals.",
        checks=(Check(problems=REJECTION_PROBLEMS),),
        kernels=(fast.rejection_kernel,),
    ),
]
