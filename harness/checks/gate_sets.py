"""Which gates judge a sampler: the gate set of each target kind by how the sampler samples it
(:data:`GATE_SETS`), the gates across kinds (:data:`SUPPLEMENTS`), and the ground truth each
kind's gates read from a target (:data:`GROUND_TRUTH`, checked by :func:`check_target`).

Across kinds: searches that declare ``audit``/``report_bounds`` (the A* family) get
run-to-completion and own-bound on one rerun (harness/gates/search_audit.py); MCMC kernels on
targets we can draw exactly get exact-start invariance (harness/gates/exact_start.py).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np

from harness.checks.chains import ENUMERABLE, chain_gates, factor_graph_gates
from harness.checks.draws import (
    DISCRETE_KINDS,
    approximate_gates,
    box_density_gates,
    exactness_gates,
)
from harness.gates import exact_start, search_audit
from harness.gates.continuous_chain import continuous_factor_graph_gates
from harness.gates.glm_chain import glm_posterior_gates
from harness.gates.result import GateResult, Supplement
from harness.spec import AlgorithmSpec, Draws

#: A gate set: (spec, target, draws or chain, alpha, params) -> its verdicts.
GateSet = Callable[[AlgorithmSpec, Any, Any, float, Mapping[str, Any]], list[GateResult]]


def _exact_gate_set(
    spec: AlgorithmSpec, target: Any, draws: Draws, alpha: float, params: Mapping[str, Any]
) -> list[GateResult]:
    return exactness_gates(spec, target, draws, alpha)


#: The gate sets of each target kind, by how a sampler samples it: ``"chain"`` (entry
#: ``run_chain``, whatever its guarantee), or ``"exact"`` / ``"approximate"`` (independent draws,
#: by guarantee). :func:`harness.checks.cases.gates_for` looks a sampler's gates up here and
#: nowhere else.
GATE_SETS: Mapping[str, Mapping[str, GateSet]] = MappingProxyType(
    {
        kind: MappingProxyType(by_mode)
        for kind, by_mode in {
            "discrete": {"exact": _exact_gate_set, "approximate": approximate_gates},
            "discrete-ragged": {"approximate": approximate_gates},
            "discrete-likelihood": {"exact": _exact_gate_set, "approximate": approximate_gates},
            "continuous-1d": {"exact": _exact_gate_set},
            "box-density": {"exact": box_density_gates},
            "posterior-1d": {"chain": chain_gates},
            "factor-graph": {"chain": factor_graph_gates},
            "factor-graph-continuous": {"chain": continuous_factor_graph_gates},
            "glm-posterior": {"chain": glm_posterior_gates},
        }.items()
    }
)

#: Kinds whose gate set reruns the sampler, so it takes a :class:`GateContext` as a sixth
#: argument (simulation-based calibration, the z-conditional test).
RERUN_KINDS = frozenset({"glm-posterior"})

#: Gates across target kinds, each deciding where it applies
#: (:class:`~harness.gates.result.Supplement`).
SUPPLEMENTS: tuple[Supplement, ...] = (*exact_start.SUPPLEMENTS, *search_audit.SUPPLEMENTS)


@dataclass(frozen=True)
class Truth:
    """What the gate set of a target kind reads from a target: ``attributes`` it must have,
    ``callables`` it calls, and ``small``, read only on targets small enough to enumerate
    (factor graphs: the enumerated or binned joint), with whether each is called."""

    attributes: tuple[str, ...] = ()
    callables: tuple[str, ...] = ()
    small: tuple[tuple[str, bool], ...] = ()


#: The ground truth each kind's gate set (:data:`GATE_SETS`) reads, which a plugin's problem
#: must carry (:func:`check_target`). Optional extras (``log_normaliser`` for a sampler that
#: reports ``gumbel_max``, ``N`` for pull bounds) are read only when a sampler reports them.
GROUND_TRUTH: Mapping[str, Truth] = MappingProxyType(
    {
        "discrete": Truth(("pmf", "D")),
        "discrete-ragged": Truth(("pmf", "D")),
        "discrete-likelihood": Truth(("pmf", "D")),
        "continuous-1d": Truth(callables=("cdf",)),
        "box-density": Truth(("d",), ("cdf", "marginal_cdf", "bound", "M")),
        "posterior-1d": Truth(("mean", "sd"), ("cdf",)),
        "factor-graph": Truth(("n_vars", "D", "scopes", "tables", "meta"), small=(("pmf", False),)),
        "factor-graph-continuous": Truth(
            (
                "n_vars",
                "a",
                "b",
                "scopes",
                "coefs",
                "adj_indptr",
                "adj_factors",
                "adj_other",
                "adj_pos",
            ),
            small=(("bin_probabilities", True),),
        ),
        # marginal_cdf (quadrature) where D <= 2; simulate and log_posterior for calibration
        # (any posterior that can simulate from its prior; log_lik and log_bound are read only
        # by the z-conditional test of samplers with bright/dark variables).
        "glm-posterior": Truth(
            ("D", "name"), ("log_posterior", "simulate"), small=(("marginal_cdf", True),)
        ),
    }
)


def _is_small(kind: str, target: Any) -> bool:
    """Whether the gates of ``kind`` read the enumerated (or binned) joint of ``target``."""
    from harness.gates.continuous_chain import MAX_BINNED_VARS

    if kind == "factor-graph":
        return int(target.D) ** int(target.n_vars) <= ENUMERABLE
    if kind == "glm-posterior":
        from harness.targets.glm_quadrature import MAX_QUADRATURE_D

        return int(target.D) <= MAX_QUADRATURE_D
    return kind == "factor-graph-continuous" and int(target.n_vars) <= MAX_BINNED_VARS


def missing_truth(kind: str, target: Any) -> list[str]:
    """What ``target`` lacks of the ground truth the gates of ``kind`` read (empty: nothing)."""
    truth = GROUND_TRUTH[kind]
    missing = [name for name in truth.attributes if not hasattr(target, name)]
    missing += [
        f"{name} (callable)"
        for name in truth.callables
        if not callable(getattr(target, name, None))
    ]
    if missing or not truth.small or not _is_small(kind, target):
        return missing
    return [
        f"{name} (callable)" if call else name
        for name, call in truth.small
        if not (callable(getattr(target, name, None)) if call else hasattr(target, name))
    ]


def _check_pmf(name: str, target: Any) -> None:
    """A discrete target's pmf: D finite, non-negative probabilities summing to 1."""
    pmf = np.asarray(target.pmf, dtype=np.float64)
    D = target.D
    valid = "valid: a 1-D array of D finite probabilities >= 0 summing to 1, D = len(pmf)"
    why = ""
    if pmf.ndim != 1 or pmf.size == 0:
        why = f"shape {pmf.shape}"
    elif not np.all(np.isfinite(pmf)) or np.any(pmf < 0):
        why = "a negative or non-finite entry"
    elif abs(math.fsum(pmf.tolist()) - 1.0) > 1e-9:
        why = f"sums to {math.fsum(pmf.tolist())!r}"
    elif isinstance(D, bool) or not isinstance(D, numbers.Integral) or D != pmf.size:
        why = f"D = {D!r} but pmf has {pmf.size} entries"
    if why:
        raise ValueError(f"problem {name!r}: target pmf is invalid ({why}); {valid}")


def check_target(name: str, kind: str, target: Any) -> None:
    """The target a problem called ``name`` built: of the declared ``kind``, carrying the ground
    truth the gates of that kind read (:data:`GROUND_TRUTH`). ``ValueError`` says what is off."""
    got = getattr(target, "kind", None)
    if got != kind:
        raise ValueError(
            f"problem {name!r}: build() returned a target of kind {got!r} "
            f"({type(target).__name__}); valid: a target whose .kind is the declared {kind!r}"
        )
    missing = missing_truth(kind, target)
    if missing:
        raise ValueError(
            f"problem {name!r}: the target ({type(target).__name__}) lacks the ground truth "
            f"the {kind!r} gates read: {', '.join(missing)}"
        )
    if kind in DISCRETE_KINDS:
        _check_pmf(name, target)


def sampling_mode(spec: AlgorithmSpec) -> str:
    """The key of ``spec``'s gate set within a kind: ``"chain"`` or its guarantee."""
    return "chain" if spec.entry == "run_chain" else spec.guarantee


def gate_set(spec: AlgorithmSpec, kind: str) -> GateSet:
    """The gate set for ``spec`` on targets of ``kind``; ``NotImplementedError`` (the runner
    records it as not verified) naming the kind and what is known when none applies."""
    mode = sampling_mode(spec)
    by_mode = GATE_SETS.get(kind)
    if by_mode is None:
        raise NotImplementedError(
            f"no gate set for target kind {kind!r}; known kinds: {', '.join(GATE_SETS)}"
        )
    found = by_mode.get(mode)
    if found is None:
        what = "Markov chains" if mode == "chain" else f"{mode} independent draws"
        known = [k for k, modes in GATE_SETS.items() if mode in modes]
        raise NotImplementedError(
            f"no gate set for {what} ({spec.name!r}) on target kind {kind!r}; it has gates for "
            f"{', '.join(by_mode)}; kinds with gates for {mode}: {', '.join(known) or 'none'}"
        )
    return found
