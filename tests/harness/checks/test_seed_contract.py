"""The seed contract (harness/checks/seed_contract.py): same seed, same output; another seed,
another; n/2 + n/2 = n where the spec says so. A sampler that ignores its ``rng`` fails verify
at the default level; every built-in family's samplers keep it."""

import numpy as np
import pytest

import harness
from harness.checks.seed_contract import seed_determinism, tie_probability
from harness.registry import build_registry
from harness.spec import rerun_for
from harness.targets.discrete import DiscreteFactorTarget
from harness.tasks import SeedKey
from tests.conftest import ROOT, distinct_settings
from tests.conftest import harness_here as _harness

OUTPUTS = str(ROOT / "tests" / "plugins" / "broken_outputs.py")


KEY = SeedKey.from_crc32(0, "a case", 0)


@pytest.fixture(scope="module")
def plugins():
    registry = build_registry([OUTPUTS])
    return registry, registry.build_target("synthetic-normal-D10-N200")


def _gate(registry, target, name, n=20_000, splits=True):
    rerun = rerun_for(registry.get(name), "reference", {})
    return seed_determinism(lambda m, g: rerun(target, m, g), target, KEY, n, splits, 1e-4)


@pytest.mark.parametrize(
    ("name", "clause"),
    [
        ("broken-own-rng", "with the same seed differ in values"),
        ("broken-fixed-seed", "calls with different seeds returned identical output"),
        ("broken-column-noise", "32 + 32 draws from one Generator differ from 64 draws"),
    ],
)
def test_each_clause_fails_its_negative_control(plugins, name, clause):
    registry, target = plugins
    result = _gate(registry, target, name)
    assert result.gate == "seed-determinism" and not result.passed
    assert clause in result.detail and "\n" not in result.detail
    control = _gate(registry, target, "broken-numba-slip")  # the correct sampler beside it
    assert control.passed, control.detail
    assert "same seed, same output" in control.detail and "32 + 32 draws = 64" in control.detail


def test_the_halves_clause_applies_only_where_the_spec_declares_it(plugins):
    registry, target = plugins
    assert _gate(registry, target, "broken-column-noise", splits=False).passed
    astar = build_registry().get("astar")
    assert astar.splits({}) and not astar.splits({"reuse": True})  # keeps_state on `reuse`
    assert not build_registry().get("gibbs").splits({})  # chains never split


def test_a_tie_counts_only_where_the_law_makes_it_improbable():
    one_point = DiscreteFactorTarget(np.array([[0.0], [-800.0]]), None, name="one-point")
    assert tie_probability(one_point, 10_000) == pytest.approx(1.0)

    def constant(m, rng):  # a correct sampler of a one-point law: the same states every seed
        rng.random(m)
        return harness.Draws(np.zeros(m, dtype=np.int64), m)

    assert seed_determinism(constant, one_point, KEY, 1000, True, 1e-4).passed


@pytest.mark.parametrize(
    ("algorithm", "problem"),
    [
        ("gumbel-max", "synthetic-normal-D10-N200"),
        ("racing-normal", "race-normal-D10-N1000-s1e-3"),
        ("astar", "clutter-D1"),
        ("gibbs", "fg-random-n4-D2"),
        ("flymc-mh", "logistic-N100-D2-map"),
    ],
)
def test_built_in_samplers_keep_the_seed_contract(algorithm, problem):
    registry = build_registry()
    spec, target = registry.get(algorithm), registry.build_target(problem)
    # A chain's steps cost a Python loop in the reference (FlyMC: ~1 ms each), and the
    # contract's clauses need no long chain: a different seed differs within a few steps.
    n = 2_000 if spec.entry == "run_chain" else 20_000
    applicable = [c for c in spec.checks if c.applies_to(problem, target.kind)]
    for check in distinct_settings(spec, applicable):
        for impl in ("reference", "numba"):
            rerun = rerun_for(spec, impl, check.params)
            result = seed_determinism(
                lambda m, g, r=rerun: r(target, m, g),
                target,
                KEY,
                n,
                spec.splits(check.params),
                1e-4,
            )
            assert result.passed, (impl, dict(check.params), result.detail)


def test_a_sampler_that_ignores_its_rng_fails_verify_at_the_default_level(tmp_path):
    out = _harness(
        *("verify", "--plugin", OUTPUTS, "--algorithm", "broken-own-rng"),
        *("--out", str(tmp_path / "r"), "--no-progress"),
    )
    assert out.returncode == 1, out.stdout + out.stderr
    assert "FAILED seed-determinism: broken-own-rng [reference]" in out.stdout
    assert "no np.random.default_rng() or global state inside" in out.stdout
    assert "Traceback" not in out.stdout + out.stderr
