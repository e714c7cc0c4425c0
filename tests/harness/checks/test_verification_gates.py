"""The gates of approximate samplers and chains, each beside a negative control."""

import numpy as np
import pytest

from harness.checks.cases import gates_for
from harness.checks.chains import chain_gates
from harness.checks.draws import pull_bounds
from harness.checks.gate_sets import GATE_SETS, gate_set
from harness.gates.result import GateContext
from harness.spec import Chain, Draws, rerun_for, sample


def _by_gate(results):
    return {r.gate: r for r in results}


def test_pull_bounds_pass_within_prop_2_and_fail_beyond(registry, small_discrete):
    N, D = small_discrete.N, small_discrete.D
    ok = Draws(np.zeros(3, int), 6, {"max_pulls": np.array([N, 1, 2]), "draw_evals": np.ones(3)})
    assert pull_bounds(ok, small_discrete, 1e-3).passed
    over = Draws(np.zeros(2, int), 0, {"max_pulls": np.array([N + 1, 1]), "draw_evals": [1, 1]})
    assert not pull_bounds(over, small_discrete, 1e-3).passed
    costly = Draws(np.zeros(1, int), 0, {"max_pulls": [N], "draw_evals": [N * D + 1]})
    assert not pull_bounds(costly, small_discrete, 1e-3).passed


def test_error_rate_gate_reads_the_exact_answer_and_catches_a_wrong_one(registry, small_discrete):
    spec = registry.get("racing-normal")
    n = 20_000
    exact = np.random.default_rng(0).integers(0, small_discrete.D, n)
    good = Draws(exact.copy(), 1, {"exact": exact})
    bad_values = exact.copy()
    bad_values[: n // 10] = (bad_values[: n // 10] + 1) % small_discrete.D  # 10% wrong
    bad = Draws(bad_values, 1, {"exact": exact})
    params = {"delta": 0.05, "exact_answer": True}
    assert _by_gate(gates_for(spec, small_discrete, good, 1e-4, params))["error-rate"].passed
    failed = _by_gate(gates_for(spec, small_discrete, bad, 1e-4, params))["error-rate"]
    assert not failed.passed and not failed.escalate_when_failed


def _chain(target, values, accepted=None, exact=None):
    extras = {} if accepted is None else {"accepted": accepted, "exact_accept": exact}
    return Chain(np.asarray(values, dtype=float), 10 * len(values), extras)


def test_chain_gates_pass_iid_posterior_draws_and_reject_shifted_ones(registry, small_posterior):
    spec = registry.get("racing-mh")
    rng = np.random.default_rng(1)
    grid = np.linspace(
        small_posterior.mean - 8 * small_posterior.sd,
        small_posterior.mean + 8 * small_posterior.sd,
        4001,
    )
    draws = np.interp(rng.random(8000), small_posterior.cdf(grid), grid)
    same = np.ones(8000, dtype=bool)
    params = {"delta": 0.01, "exact_answer": True}
    good = _by_gate(
        chain_gates(spec, small_posterior, _chain(small_posterior, draws, same, same), 1e-4, params)
    )
    assert good["ess"].passed and good["stationary-bias"].passed and good["decision-error"].passed
    shifted = draws + 2 * small_posterior.sd
    bad = _by_gate(
        chain_gates(
            spec, small_posterior, _chain(small_posterior, shifted, same, same), 1e-4, params
        )
    )
    assert not bad["stationary-bias"].passed  # bias ~0.7 >> delta * tau ~0.01
    wrong = same.copy()
    wrong[::10] = False  # 10% of decisions differ from the exact MH test
    worse = _by_gate(
        chain_gates(
            spec, small_posterior, _chain(small_posterior, draws, same, wrong), 1e-4, params
        )
    )
    assert not worse["decision-error"].passed
    stuck = _by_gate(
        chain_gates(
            spec,
            small_posterior,
            _chain(small_posterior, np.repeat(draws[:40], 200), same, same),
            1e-4,
            params,
        )
    )
    assert not stuck["ess"].passed and stuck["ess"].escalate_when_failed  # re-run longer


def test_a_chain_without_decisions_is_held_to_exactness(registry, small_posterior):
    spec = registry.get("racing-mh")
    rng = np.random.default_rng(2)
    shifted = small_posterior.mean + small_posterior.sd * (rng.standard_normal(8000) + 0.5)
    gates = _by_gate(chain_gates(spec, small_posterior, _chain(small_posterior, shifted), 1e-4, {}))
    assert "stationary-bias" not in gates and "decision-error" not in gates
    assert gates["ks-thinned"].p_value < 1e-6


def test_gate_sets_come_from_one_table_keyed_by_target_kind(registry, small_discrete):
    assert set(GATE_SETS) == {
        "box-density",
        "discrete",
        "discrete-ragged",
        "discrete-likelihood",
        "continuous-1d",
        "posterior-1d",
        "factor-graph",
        "factor-graph-continuous",
        "glm-posterior",
    }
    assert gate_set(registry.get("racing-mh"), "posterior-1d") is chain_gates
    draws = Draws(np.random.default_rng(0).integers(0, small_discrete.D, 5000), 0)
    exact = [g.gate for g in gates_for(registry.get("gumbel-max"), small_discrete, draws, 1e-3)]
    assert exact[0] == "chi-square"


def test_a_kind_without_gates_names_itself_and_the_known_kinds(registry):
    unknown = type("Odd", (), {"kind": "odd-kind"})()
    with pytest.raises(NotImplementedError, match=r"'odd-kind'; known kinds: discrete, "):
        gates_for(registry.get("gumbel-max"), unknown, Draws(np.zeros(3), 0), 1e-3)
    with pytest.raises(
        NotImplementedError, match=r"Markov chains .* kind 'discrete'.*posterior-1d"
    ):
        gate_set(registry.get("racing-mh"), "discrete")


def test_approximate_draws_are_tested_for_independence(registry, small_discrete):
    """Draws of one call that share randomness keep every error rate; the runs of their errors
    show it (error-independence), and consecutive values are tested as for exact samplers."""
    spec = registry.get("racing-normal")
    params = {"delta": 0.05, "exact_answer": True}
    rng = np.random.default_rng(2)
    n = 20_000
    exact = rng.choice(small_discrete.D, n, p=small_discrete.pmf)
    wrong = (exact + 1) % small_discrete.D

    def gates(errors):
        draws = Draws(np.where(errors, wrong, exact), 1, {"exact": exact})
        return _by_gate(gates_for(spec, small_discrete, draws, 1e-4, params))

    good = gates(rng.random(n) < 0.02)
    assert {"pair-independence", "error-independence"} <= set(good)
    assert good["error-independence"].passed and good["error-rate"].passed
    bad = gates(np.repeat(rng.random(n // 2) < 0.02, 2))  # the errors of a pair come together
    assert bad["error-rate"].passed and bad["tv"].passed
    assert not bad["error-independence"].passed


def test_declared_gibbs_steps_get_the_per_step_gates(registry, small_factor_graph):
    spec = registry.get("gibbs")
    assert spec.conditional_steps and spec.conditional_error == 0.0

    def gates(spec, **params):
        chain = sample(spec, "numba", small_factor_graph, 5000, np.random.default_rng(3), **params)
        # Gates across kinds (exact-start) may rerun the sampler: give them the means to.
        context = GateContext(rerun_for(spec, "numba", params), np.random.default_rng(4))
        return _by_gate(gates_for(spec, small_factor_graph, chain, 1e-4, params, context))

    found = gates(spec)
    assert found["gibbs-step-pit"].passed and found["gibbs-step-energy"].passed
    # A thinned chain has no single steps to test; a chain of a spec without Gibbs steps neither.
    assert "gibbs-step-pit" not in gates(spec, thin=2)
    assert "gibbs-step-pit" not in gates(registry.get("poisson-gibbs"))


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "gates"),
    [
        ("planted-racing-normal-early-final", {"error-rate"}),
        ("planted-racing-normal-paired-orders", {"error-independence"}),
        ("planted-gibbs-warm", {"gibbs-step-energy", "gibbs-step-pit"}),
    ],
)
def test_the_planted_slips_are_caught_at_the_quick_level(tmp_path, name, gates):
    """`harness verify --plugin tests/plugins/planted_slips.py --algorithm NAME --impl
    reference --level quick`, in process: each slip fails the gates its docstring names, and
    none of the older gates of its kind (a cross-kind supplement may catch it as well)."""
    from pathlib import Path

    from harness.verify.config import RunConfig
    from harness.verify.runner import verify

    plugin = str(Path(__file__).resolve().parents[2] / "plugins" / "planted_slips.py")
    config = RunConfig((name,), ("reference",), "quick", 0, plugins=(plugin,))
    done = verify(config, tmp_path / "run", workers=1, progress=False, scheduler="inprocess")
    failed = {v["gate"] for v in done["verdicts"] if v["verdict"] == "fail"}
    assert gates <= failed, failed
    old = {"error-rate", "tv", "pull-bounds", "chi-square-thinned", "moment-marginals"}
    old |= {"transition-consistency", "invariance", "ess"}
    assert not (failed - gates) & old, failed
