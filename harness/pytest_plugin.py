"""The pytest plugin (entry point ``pytest11``): the harness's gates in a user's test suite.

A test asks for the ``harness_check`` fixture and calls its checks (harness/testing.py)::

    def test_my_sampler(harness_check):
        harness_check.exact(lambda n, rng: my_sampler(weights, n, rng), pmf=softmax(weights))

The session spends one family-wise false-failure budget, ``--harness-alpha``: after collection
it counts the checks the selected tests declare (one each, or ``@pytest.mark.harness(checks=K)``)
and gives each check alpha / total (Bonferroni), which the check spends over its escalation
stages. ``--harness-seed`` fixes every check's random stream (each test's streams depend only
on the seed and the test's id, not on which other tests run). At the end the terminal shows
every verdict; ``--harness-records DIR`` also appends them to DIR/records.jsonl (one fsync'd
line per check) and rewrites DIR/summary.json after each, so an interrupted session keeps what
finished and ``harness report DIR`` reads it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from harness.testing import BAND, FACTOR, STAGES, Checker, Verdict

FIXTURE = "harness_check"
DEFAULT_ALPHA = 1e-3


@dataclass
class HarnessSession:
    """The session's budget, the checks each selected test declared, and every verdict."""

    alpha: float
    seed: int
    records: Path | None
    timeout: float | None = None
    declared: dict[str, int] = field(default_factory=dict)
    verdicts: list[tuple[str, Verdict]] = field(default_factory=list)
    started: float = field(default_factory=time.time)

    @property
    def total(self) -> int:
        return sum(self.declared.values())

    def checker(self, nodeid: str) -> Checker:
        if nodeid not in self.declared:
            raise ValueError(
                f"test {nodeid!r} was not counted in the session budget; valid: request "
                f"{FIXTURE!r} as a test argument (not through getfixturevalue)"
            )
        return Checker(
            alpha=self.alpha / self.total,
            seed=self.seed,
            label=nodeid,
            checks=self.declared[nodeid],
            on_verdict=lambda v: self.record(nodeid, v),
            timeout=self.timeout,
        )

    def record(self, nodeid: str, verdict: Verdict) -> None:
        self.verdicts.append((nodeid, verdict))
        if self.records is not None:
            from harness.store import append_task

            index = sum(1 for n, _ in self.verdicts if n == nodeid) - 1
            row = _verdict_row(nodeid, verdict, self.started)
            append_task(self.records / "records.jsonl", f"{self.started}|{nodeid}|{index}", [row])
            # Rewritten after every check, so an interrupted session still has a report.
            self.write_summary()

    def write_summary(self) -> None:
        """DIR/summary.json in the form of ``harness verify``'s (what ``harness report`` reads)."""
        from harness.store import provenance, write_json

        assert self.records is not None
        summary = {
            "config": {
                "algorithms": sorted({n for n, _ in self.verdicts}),
                "impls": ["pytest"],
                "level": "pytest",
                "seed": self.seed,
                "alpha": self.alpha,
                "plugins": [],
                "escalation": {"stages": STAGES, "factor": FACTOR, "inconclusive": BAND},
            },
            "provenance": provenance(),
            "verdicts": [_verdict_row(n, v, self.started) for n, v in self.verdicts],
            "passed": all(v.passed for _, v in self.verdicts),
        }
        write_json(self.records / "summary.json", summary)


KEY = pytest.StashKey[HarnessSession]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("harness", "sampler-harness: statistical gates for samplers")
    group.addoption(
        "--harness-alpha",
        type=float,
        default=DEFAULT_ALPHA,
        metavar="ALPHA",
        help="family-wise false-failure budget of the whole session: the chance that some "
        "check fails a correct sampler is at most ALPHA. Split evenly over the checks the "
        f"selected tests declare; each spends its share over up to {STAGES} stages of "
        f"{FACTOR}x more draws for borderline results (default {DEFAULT_ALPHA})",
    )
    group.addoption(
        "--harness-seed",
        type=int,
        default=0,
        metavar="SEED",
        help="seed of every check's random stream (integer >= 0, default 0); a test's streams "
        "depend only on SEED and its id",
    )
    group.addoption(
        "--harness-timeout",
        type=float,
        default=600.0,
        metavar="SECONDS",
        help="stop a sampler call that runs longer and fail its check naming the budget (the "
        "call runs in a forked process; default 600; 0 turns the budget off)",
    )
    group.addoption(
        "--harness-records",
        default=None,
        metavar="DIR",
        help="append every verdict to DIR/records.jsonl and write DIR/summary.json at the end "
        "(`harness report DIR` turns it into HTML)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "harness(checks=1): how many harness checks the test makes (its share of --harness-alpha)",
    )
    from harness.spec import Param
    from harness.testing import ALPHA

    alpha = _option(config, "harness_alpha", ALPHA)
    seed = _option(config, "harness_seed", Param("seed", 0, int, low=0))
    timeout = _option(config, "harness_timeout", Param("timeout", 600.0, float, low=0.0))
    records = config.getoption("harness_records")
    path = None
    if records is not None:
        path = Path(records)
        try:
            path.mkdir(parents=True, exist_ok=True)
            probe = path / ".harness-write-probe"
            probe.write_text("")
            probe.unlink()
        except OSError as exc:
            raise pytest.UsageError(
                f"--harness-records {records!r} cannot be written ({exc.strerror or exc}); "
                "valid: a directory this user can write"
            ) from None
    config.stash[KEY] = HarnessSession(alpha, seed, path, timeout or None)


def _option(config: pytest.Config, name: str, param: Any) -> Any:
    value = config.getoption(name)
    try:
        return param.check(value)
    except ValueError:
        flag = "--" + name.replace("_", "-")
        raise pytest.UsageError(
            f"{flag} {value!r} is invalid; valid: {param.range_text()}"
        ) from None


def pytest_collection_finish(session: pytest.Session) -> None:
    state = session.config.stash[KEY]
    for item in session.items:
        if FIXTURE in getattr(item, "fixturenames", ()):
            marker = item.get_closest_marker("harness")
            checks = marker.kwargs.get("checks", 1) if marker else 1
            if not isinstance(checks, int) or isinstance(checks, bool) or checks < 1:
                raise pytest.UsageError(
                    f"{item.nodeid}: harness(checks={checks!r}) is invalid; valid: an integer >= 1"
                )
            state.declared[item.nodeid] = checks


@pytest.fixture
def harness_check(request: pytest.FixtureRequest) -> Checker:
    """A :class:`harness.testing.Checker` with this test's share of ``--harness-alpha``."""
    return request.config.stash[KEY].checker(request.node.nodeid)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    state = config.stash.get(KEY, None)
    if state is None or not state.verdicts:
        return
    from harness.display import text_table

    rows = [_summary_cells(nodeid, v) for nodeid, v in state.verdicts]
    failed = sum(not v.passed for _, v in state.verdicts)
    terminalreporter.write_sep("=", "harness verdicts")
    terminalreporter.write_line(
        f"{len(rows)} checks, {failed} failed; session alpha {state.alpha:g} over "
        f"{state.total} declared checks, seed {state.seed}"
    )
    headers = ["test", "check", "gate", "verdict", "statistic", "p", "n", "detectable", "stages"]
    terminalreporter.write_line(text_table(headers, rows, align="lllllrrrr"))
    if state.records is not None:
        terminalreporter.write_line(f"records: {state.records / 'records.jsonl'}")


def _verdict_row(nodeid: str, verdict: Verdict, session: float) -> dict[str, Any]:
    """A verdict in the fields of ``harness verify``'s summary (what the report reads)."""
    return {
        **verdict.to_dict(),
        "algorithm": nodeid,
        "family": "pytest",
        "guarantee": "pytest",
        "impl": "pytest",
        "problem": verdict.name,
        "params": {},
        "adjusted_p": verdict.result.p_value,
        "session": session,
    }


def _summary_cells(nodeid: str, v: Verdict) -> list[str]:
    r = v.result
    return [
        nodeid,
        v.name,
        r.gate,
        "pass" if v.passed else "FAIL",
        f"{r.statistic:.4g}",
        "-" if r.p_value is None else f"{r.p_value:.3g}",
        str(r.n),
        "-" if r.detectable is None else f"{r.detectable:.3g}",
        f"{v.stage + 1}/{v.stages}",
    ]
