"""Fuzzed public surface: every input gets a result or a one-line ValueError, never another
exception (a traceback) and never a hang.

Hypothesis draws the inputs: numbers from every corner (NaN, +-inf, 0, negatives, huge), the
wrong types, empty and ragged arrays. Each test's run counts its inputs in ``COUNTS`` (printed
by ``pytest -s`` at the end of the module) so the totals in the issue note are measured.
"""

from __future__ import annotations

import math
import os
from collections import Counter
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

COUNTS: Counter[str] = Counter()
#: Inputs per entry point: 60 in `make test`, 500 in `make test-full` (HYPOTHESIS_PROFILE=full).
EXAMPLES = 500 if os.environ.get("HYPOTHESIS_PROFILE") == "full" else 60
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    derandomize=True,
)

numbers = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-(10**6), 10**6),
    st.sampled_from([0, 1, 2, -1, 0.5, 1e-300, 1e300, math.nan, math.inf, -math.inf]),
)
anything = st.one_of(
    numbers, st.none(), st.booleans(), st.text(max_size=5), st.lists(numbers, max_size=3)
)
small_ints = st.one_of(st.integers(-3, 12), st.sampled_from([0.5, math.nan, "3", None, True]))


def arrays(max_dims: int = 2) -> st.SearchStrategy[Any]:
    shapes = st.lists(st.integers(0, 5), min_size=1, max_size=max_dims)
    return shapes.flatmap(
        lambda shape: st.lists(numbers, min_size=math.prod(shape), max_size=math.prod(shape)).map(
            lambda v: np.array(v, dtype=float).reshape(shape)
        )
    )


def refused_or_built(what: str, build: Any) -> None:
    """The property: ``build()`` returns, or raises a ValueError whose text is one line."""
    COUNTS[what] += 1
    try:
        build()
    except ValueError as exc:
        assert str(exc).strip(), f"{what}: an empty error message"
        assert "\n" not in str(exc).strip(), f"{what}: a multi-line error: {exc}"


@pytest.mark.timeout(300)
@FUZZ
@given(lo=arrays(1), hi=arrays(1), scale=numbers, mode=st.one_of(st.none(), numbers))
def test_box_density(lo: Any, hi: Any, scale: Any, mode: Any) -> None:
    from harness.targets.box_density import box_density

    def log_lik(x: np.ndarray, data: np.ndarray) -> float:
        return -scale * float(x[0] * x[0])

    def bound(lo: np.ndarray, hi: np.ndarray, data: np.ndarray) -> float:
        return 0.0 if scale >= 0 else math.inf

    proposal = [("uniform",)] * max(np.size(lo), 1)
    refused_or_built(
        "box_density",
        lambda: box_density(
            lo, hi, proposal, log_lik, bound, np.zeros(1), mode=mode, compiles=False
        ),
    )


@pytest.mark.timeout(300)
@FUZZ
@given(log_factors=arrays(2), log_f0=st.one_of(st.none(), arrays(1)))
def test_discrete_factor_target(log_factors: Any, log_f0: Any) -> None:
    from harness.targets.discrete import DiscreteFactorTarget

    refused_or_built("DiscreteFactorTarget", lambda: DiscreteFactorTarget(log_factors, log_f0).pmf)


@pytest.mark.timeout(300)
@FUZZ
@given(D=small_ints, N=small_ints, dist=anything, sigma=numbers)
def test_synthetic_rewards(D: Any, N: Any, dist: Any, sigma: Any) -> None:
    from harness.targets.discrete import synthetic_rewards

    refused_or_built(
        "synthetic_rewards",
        lambda: synthetic_rewards(D, N, dist, sigma, np.random.default_rng(0)),
    )


@pytest.mark.timeout(300)
@FUZZ
@given(phi=anything, b=anything)
def test_truncated_gumbel_target(phi: Any, b: Any) -> None:
    from harness.targets.continuous import TruncatedGumbelTarget

    refused_or_built("TruncatedGumbelTarget", lambda: TruncatedGumbelTarget(phi, b))


@pytest.mark.timeout(300)
@FUZZ
@given(model=anything, X=arrays(2), y=arrays(1), theta=arrays(2), nu=numbers)
def test_likelihood_target(model: Any, X: Any, y: Any, theta: Any, nu: Any) -> None:
    from harness.targets.likelihood_terms import LikelihoodTarget

    refused_or_built(
        "LikelihoodTarget",
        lambda: LikelihoodTarget(model if model else "logistic", X, y, theta, nu=nu).pmf,
    )


@pytest.mark.timeout(300)
@FUZZ
@given(A=arrays(2), beta=numbers, D=small_ints)
def test_potts_target(A: Any, beta: Any, D: Any) -> None:
    from harness.targets.factor_graph import potts_target

    refused_or_built("potts_target", lambda: potts_target(A, beta, D))


@pytest.mark.timeout(300)
@FUZZ
@given(n=small_ints, D=small_ints, edge_prob=numbers, max_M=numbers)
def test_random_factor_graph(n: Any, D: Any, edge_prob: Any, max_M: Any) -> None:
    from harness.targets.factor_graph import random_factor_graph

    refused_or_built(
        "random_factor_graph",
        lambda: random_factor_graph(n, D, np.random.default_rng(0), edge_prob, max_M),
    )


@pytest.mark.timeout(300)
@FUZZ
@given(N=small_ints, theta=numbers, nu=numbers)
def test_studentt_posterior(N: Any, theta: Any, nu: Any) -> None:
    from harness.targets.posterior import studentt_posterior

    refused_or_built(
        "studentt_posterior", lambda: studentt_posterior(N, theta, nu, np.random.default_rng(0))
    )


@pytest.mark.timeout(300)
@FUZZ
@given(
    X=arrays(2),
    t=arrays(1),
    model=st.sampled_from(["logistic", "robust", "softmax", "x"]),
    prior_sd=numbers,
    nu=numbers,
)
def test_glm_posterior(X: Any, t: Any, model: str, prior_sd: Any, nu: Any) -> None:
    from harness.targets.glm import glm_posterior

    refused_or_built("glm_posterior", lambda: glm_posterior(X, t, model, "untuned", prior_sd, nu))


@pytest.mark.timeout(300)
@FUZZ
@given(N=small_ints, bound=anything, seed=small_ints)
def test_gaussian_mean_and_robust_regression(N: Any, bound: Any, seed: Any) -> None:
    from harness.targets.gaussian_mean import gaussian_mean
    from harness.targets.robust_regression import robust_regression

    refused_or_built("gaussian_mean", lambda: gaussian_mean(N, bound, seed))
    refused_or_built("robust_regression", lambda: robust_regression(2, N, bound, seed))


@pytest.mark.timeout(300)
@FUZZ
@given(a=numbers, D=small_ints, seed=small_ints)
def test_peaky_and_clutter(a: Any, D: Any, seed: Any) -> None:
    from harness.targets.box_density import clutter, peaky_exponential

    refused_or_built("peaky_exponential", lambda: peaky_exponential(a))
    refused_or_built("clutter", lambda: clutter(D, seed))


@pytest.mark.timeout(300)
@FUZZ
@given(name=anything, kind=anything, levels=anything, draws=anything)
def test_register_problem(name: Any, kind: Any, levels: Any, draws: Any) -> None:
    from harness.registry import checked_problem

    refused_or_built(
        "register_problem", lambda: checked_problem(name, kind, lambda: None, levels, draws)
    )


@pytest.mark.timeout(300)
@FUZZ
@given(alpha=anything, seed=anything, timeout=anything, n=small_ints, pmf=arrays(1), delta=anything)
def test_pytest_checks_arguments(
    alpha: Any, seed: Any, timeout: Any, n: Any, pmf: Any, delta: Any
) -> None:
    from harness.testing import Checker, CheckFailed

    def build() -> None:
        checker = Checker(alpha=alpha, seed=seed, timeout=timeout if timeout else None)
        k = max(np.size(pmf), 1)
        sampler = lambda size, rng: rng.integers(0, k, size)  # noqa: E731
        try:
            checker.exact(sampler, pmf=pmf, n=n)
            checker.approximate(sampler, pmf=pmf, delta=delta, n=n)
        except CheckFailed:
            pass  # a verdict, not a crash

    refused_or_built("pytest checks", build)


#: One invalid value per option: each must exit 2 with one line, whatever else is on the line.
BAD_OPTIONS = {
    "verify": [
        ("--level", "huge"),
        ("--seed", "-3"),
        ("--seed", "x"),
        ("--alpha", "2"),
        ("--alpha", "nan"),
        ("--impl", "cuda9"),
        ("--workers", "0"),
        ("--scheduler", "yarn"),
        ("--task-timeout", "-1"),
        ("--task-timeout", "nan"),
        ("--algorithm", "no-such"),
        ("--plugin", "no_such_module"),
        ("--reference", "half"),
    ],
    "reproduce": [
        ("--level", "huge"),
        ("--seed", "-1"),
        ("--part", "nope"),
        ("--workers", "-2"),
        ("--task-timeout", "0"),
        ("--scheduler", "local:x"),
    ],
    "calibrate": [
        ("--seeds", "3"),
        ("--n", "0"),
        ("--alpha", "1"),
        ("--impl", "gpu"),
        ("--problem", "nope"),
        ("--param", "=1"),
        ("--factor", "1"),
        ("--error", "0.7"),
    ],
    "draw": [("--log-weights", "0,nan"), ("--n", "-1"), ("--log-weights", ""), ("--seed", "-1")],
}
GOOD_OPTIONS = {
    "verify": [
        ("--level", "quick"),
        ("--seed", "4"),
        ("--impl", "numba"),
        ("--algorithm", "gumbel-max"),
        ("--workers", "1"),
        ("--no-progress", None),
    ],
    "reproduce": [("--level", "quick"), ("--seed", "2"), ("--no-progress", None)],
    "calibrate": [("--seeds", "20"), ("--n", "100"), ("--impl", "numba")],
    "draw": [("--log-weights", "0,1,2"), ("--n", "10"), ("--seed", "3")],
}
LEADS = {
    "verify": [],
    "reproduce": ["potts"],
    "calibrate": ["--algorithm", "gumbel-max"],
    "draw": ["--algorithm", "gumbel-max"],
}


@st.composite
def bad_command_lines(draw: Any) -> list[str]:
    command = draw(st.sampled_from(sorted(BAD_OPTIONS)))
    bad = draw(st.sampled_from(BAD_OPTIONS[command]))
    others = [g for g in GOOD_OPTIONS[command] if g[0] != bad[0]]  # the bad value must stand
    good = draw(st.lists(st.sampled_from(others), max_size=3, unique=True))
    options = draw(st.permutations([*good, bad]))
    argv = [command, *LEADS[command]]
    for flag, value in options:
        argv += [flag] if value is None else [flag, value]
    return argv


@pytest.mark.timeout(600)
@FUZZ
@given(argv=bad_command_lines())
def test_cli_options(argv: list[str], capsys: pytest.CaptureFixture[str], tmp_path_factory) -> None:
    from harness.cli.main import main

    COUNTS["cli"] += 1
    out = tmp_path_factory.mktemp("cli")
    if argv[0] in ("verify", "reproduce"):
        argv = [*argv, "--out", str(out / "run")]
    try:
        rc = main(argv)
    except SystemExit as exc:  # argparse's own refusals
        rc = exc.code
    err = capsys.readouterr().err
    assert rc == 2, (argv, rc, err)
    assert "Traceback" not in err, (argv, err)
    # One line, or argparse's usage and then its one error line.
    assert err.strip().splitlines()[-1].startswith(f"harness {argv[0]}: error: "), (argv, err)
    assert not (out / "run" / "records.jsonl").exists(), "work started before the refusal"


def test_zz_print_counts() -> None:
    """Last in the module: the number of inputs each entry point was given (pytest -s)."""
    print("\nfuzzed inputs:", dict(COUNTS), "total", sum(COUNTS.values()))
