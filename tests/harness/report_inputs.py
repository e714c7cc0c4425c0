"""Small real inputs for the report tests: a verification run, asv results, pytest-benchmark."""

from __future__ import annotations

from pathlib import Path

from harness.verify.config import RunConfig
from harness.verify.runner import verify

DATA = Path(__file__).parent / "data"
ASV_RESULTS = DATA / "asv_results"
PYTEST_BENCHMARK = DATA / "pytest_benchmark.json"


def small_run(tmp_path: Path, algorithms: tuple[str, ...] = ("truncated-gumbel",)) -> Path:
    out = tmp_path / "run"
    config = RunConfig(algorithms=algorithms, impls=("reference", "numba"))
    verify(config, out, workers=1, progress=False)
    return out


def small_real_inputs(tmp_path: Path) -> list[Path]:
    """A verification run of truncated-gumbel (seconds) and the recorded asv and benchmark files."""
    return [small_run(tmp_path), ASV_RESULTS, PYTEST_BENCHMARK]
