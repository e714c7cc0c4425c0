"""The report in a real browser: headless Chromium opens it from file://, logs nothing, renders.

Chromium is Debian's ``chromium`` package (``.ci/run`` installs it). Without it the test skips,
unless ``SAMPLER_HARNESS_REQUIRE_BROWSER=1`` (set by ``.ci/run``) makes a missing browser a
failure, so CI cannot pass by skipping.
"""

from __future__ import annotations

import os
import re
import shutil
import time
from pathlib import Path

import pytest

from harness.report.page import write_report
from tests.conftest import run_command
from tests.harness.report_inputs import small_real_inputs

#: Load budget (the issue's 2 s), measured as report time minus an empty page's time, so that
#: the browser's own start-up is not charged to the report.
LOAD_BUDGET_S = 2.0
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def chromium() -> str | None:
    for name in (os.environ.get("CHROMIUM", ""), "chromium", "chromium-browser", "google-chrome"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def headless(browser: str, profile: Path, width: int, height: int, *flags: str) -> list[str]:
    """Headless Chromium's command line with its own profile folder; ``flags`` end with what
    to do (``--screenshot=...`` or ``--dump-dom``) and the page's URI."""
    return [
        browser,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--no-first-run",
        f"--user-data-dir={profile}",
        f"--window-size={width},{height}",
        *flags,
    ]


def render(browser: str, page: Path, shot: Path) -> tuple[float, list[str]]:
    """Screenshot ``page``; returns the wall time and the console lines Chromium logged."""
    profile = shot.parent / ("profile-" + shot.stem)
    logging = ("--enable-logging=stderr", "--v=0")
    args = headless(
        browser, profile, 1280, 2400, *logging, f"--screenshot={shot}", page.resolve().as_uri()
    )
    t0 = time.perf_counter()
    done = run_command(args, timeout=120)
    wall = time.perf_counter() - t0
    assert done.returncode == 0, done.stderr[-2000:]
    console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line]
    return wall, console


@pytest.fixture(scope="module")
def browser() -> str:
    found = chromium()
    if found is None:
        if os.environ.get("SAMPLER_HARNESS_REQUIRE_BROWSER") == "1":
            pytest.fail("headless Chromium is required here (apt-get install chromium)")
        pytest.skip("no chromium on PATH (Debian: apt-get install chromium)")
    return found


def test_report_opens_from_file_without_console_errors_and_is_screenshotted(browser, tmp_path):
    report = write_report(small_real_inputs(tmp_path), tmp_path / "report.html")
    blank = tmp_path / "blank.html"
    blank.write_text("<!doctype html><title>blank</title><p>blank</p>", encoding="utf-8")
    blank_s, _ = render(browser, blank, tmp_path / "blank.png")
    wall_s, console = render(browser, report, tmp_path / "report.png")
    # No script is in the page, so any console line at all is an error or a blocked load.
    assert console == []
    shot = (tmp_path / "report.png").read_bytes()
    assert shot.startswith(PNG_MAGIC) and len(shot) > 20_000  # a rendered page, not a blank one
    assert wall_s - blank_s < LOAD_BUDGET_S, f"report {wall_s:.2f} s vs blank {blank_s:.2f} s"
    keep = os.environ.get("SAMPLER_HARNESS_SCREENSHOT")
    if keep:
        shutil.copyfile(tmp_path / "report.png", keep)


def test_browser_check_catches_a_page_that_logs_errors(browser, tmp_path):
    """Negative control: the console check is not blind."""
    page = tmp_path / "bad.html"
    page.write_text("<!doctype html><p>x</p><script>undefinedFunction()</script>", encoding="utf-8")
    _, console = render(browser, page, tmp_path / "bad.png")
    assert any("undefinedFunction" in line for line in console)


#: The issue's budget for the report of a full default run (`make run`).
MAX_REPORT_BYTES = 5 * 2**20


def test_a_full_run_report_is_small_and_opens_fast(browser, tmp_path):
    """Point SAMPLER_HARNESS_REPORT at the report of `make run` (reports/latest/report.html)."""
    given = os.environ.get("SAMPLER_HARNESS_REPORT")
    if not given:
        pytest.skip("set SAMPLER_HARNESS_REPORT to a report written by `make run`")
    report = Path(given)
    assert report.stat().st_size < MAX_REPORT_BYTES
    blank = tmp_path / "blank.html"
    blank.write_text("<!doctype html><title>blank</title><p>blank</p>", encoding="utf-8")
    blank_s, _ = render(browser, blank, tmp_path / "blank.png")
    wall_s, console = render(browser, report, tmp_path / "full.png")
    assert console == []
    assert wall_s - blank_s < LOAD_BUDGET_S, f"report {wall_s:.2f} s vs blank {blank_s:.2f} s"


def _first_screen_experiment():
    """The template experiment with claims of every kind the first screen counts: a paper
    claim judged, one whose setting differs (its rule alone: not reproduced), another reading
    of a claim (not counted) and a harness claim."""
    import dataclasses

    from harness.experiments.claims import within_factor
    from tests.docs.test_template_experiment import T

    @dataclasses.dataclass(frozen=True, kw_only=True)
    class ScreenConfig(T.GumbelMaxConfig):
        experiment = "first-screen"

    class Screen(T.TemplateGumbelMax, T.Experiment[ScreenConfig]):
        """The template with claims of every kind."""

        def claims(self, config):
            (top,) = super().claims(config)
            twice = within_factor(2.0, 1.02)  # the frequency is p, never 2p: not reproduced
            other = dataclasses.replace(top, id="top-twice-reading", rule=twice)
            return (
                dataclasses.replace(top, readings=(other,)),
                dataclasses.replace(top, id="top-twice", rule=twice, differs="another target"),
                dataclasses.replace(top, id="gate-claim", kind="harness"),
            )

    return Screen(), ScreenConfig.for_level("quick", seed=0)


def test_the_claims_count_is_the_first_thing_under_the_title(browser, tmp_path, monkeypatch):
    """The report's first screen counts the paper claims by verdict, the rule-alone split of
    "setting differs" and the harness's own claims apart, with a link to each experiment;
    checked on the DOM Chromium builds from two tiny experiment runs."""
    import harness.experiments
    from tests.harness.experiments.tiny import run_tiny, tiny_potts

    tiny_potts(tmp_path / "potts")
    screen, config = _first_screen_experiment()
    monkeypatch.setattr(
        harness.experiments, "EXPERIMENTS", (*harness.experiments.EXPERIMENTS, screen)
    )
    run_tiny(screen, config, tmp_path / "screen")
    report = write_report([tmp_path / "potts", tmp_path / "screen"], tmp_path / "report.html")
    done = run_command(
        headless(
            browser, tmp_path / "profile", 1280, 2400, "--dump-dom", report.resolve().as_uri()
        ),
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    dom = done.stdout
    title = dom.index("<h1>")
    count = dom.index('id="claims-count"')
    assert title < count < dom.index("<nav>") and "Paper claims: " in dom
    assert 'href="#exp-potts"' in dom and 'id="exp-potts"' in dom
    screen_line = re.search(r'id="paper-claims">Paper claims:(.*?)</span>', dom, re.S)
    assert screen_line is not None
    text = " ".join(screen_line.group(1).split())
    assert "setting differs (rule alone: " in text and "1 not reproduced)" in text, text
    harness_line = re.search(r'id="harness-claims">(.*?)</span>', dom, re.S)
    assert harness_line is not None and "Harness claims (gate quality): 1 " in harness_line.group(1)
    assert "of 1." in harness_line.group(1)
    # The reading is shown in the section and not counted: "first-screen" has two primaries.
    assert "another reading of top-frequency" in dom
    line = re.search(r'href="#exp-first-screen">first-screen</a>:([^<]*)', dom)
    assert line is not None and "1 setting differs" in line.group(1), line


#: The red of the marks where an ECDF difference leaves its band (harness.figures.EXIT_COLOUR).
EXIT_RGB = (0xB0, 0x00, 0x20)


def _red_pixels(png: Path) -> int:
    """Pixels within a few levels of the exit marks' red (antialiased edges aside)."""
    import matplotlib.image

    rgb = matplotlib.image.imread(png)[..., :3] * 255
    return int((abs(rgb - EXIT_RGB).max(axis=-1) <= 6).sum())


def test_a_passing_and_a_failing_ecdf_band_render_and_the_failure_is_marked(browser, tmp_path):
    """Chromium builds both band figures of a real run (a planted KS bug beside a correct
    sampler) and paints them: the failing one's exit marks are in its DOM and on screen in red,
    the passing one has neither."""
    from tests.harness.band_inputs import FAILING, band_run

    report = write_report([band_run(tmp_path)], tmp_path / "report.html")
    done = run_command(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--dump-dom",
            report.resolve().as_uri(),
        ],
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    figures = re.findall(
        r'<figure class="ecdf-band (pass|fail)" data-exits="(\d+)">(.*?)</figure>',
        done.stdout,
        re.S,
    )
    failing = [f for f in figures if f[0] == "fail"]
    passing = [f for f in figures if f[0] == "pass"]
    assert len(failing) == 1 and FAILING in failing[0][2] and passing
    for verdict, exits, body in (failing[0], passing[0]):
        assert "<svg" in body and "</svg>" in body and "<path" in body
        assert ('id="ecdf-exits-' in body) == (verdict == "fail") == (int(exits) > 0)
    # Painted, not only parsed: each figure alone in a page, screenshotted.
    red = {}
    for verdict, _, body in (failing[0], passing[0]):
        page = tmp_path / f"{verdict}.html"
        page.write_text(f'<!doctype html><meta charset="utf-8"><figure>{body}</figure>')
        render(browser, page, tmp_path / f"{verdict}.png")
        red[verdict] = _red_pixels(tmp_path / f"{verdict}.png")
    assert red["fail"] > 50 and red["pass"] == 0, red
