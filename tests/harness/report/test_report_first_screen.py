"""The report's first screen in real Chromium, at a 1280 x 800 viewport and without scrolling:
a run's verdict counts and its first failure's p-value against its level are in view, and what
the report does not cover is one collapsed line.

Chromium lays out a copy of the report with a small probe script appended (the report itself
has none); the probe writes the bounding boxes of what the checks look for into the DOM, which
``--dump-dom`` returns. A screenshot at the same viewport is checked against those boxes.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest

from harness.report.glance import stage_level
from harness.report.page import write_report
from tests.conftest import run_command
from tests.harness.band_inputs import band_run
from tests.harness.report import test_report_browser

#: The browser tests' fixture: the path of headless Chromium (a skip, or in CI a failure, without).
browser = test_report_browser.browser

VIEWPORT = (1280, 800)
#: The background of a failing run's banner (the template's .banner.fail).
FAIL_BANNER_RGB = (0xFD, 0xE8, 0xEC)
#: A line of the not-run list, and at most this height (px) for its one-line summary.
NOT_RUN_LINE = "Paper experiments not included"
ONE_LINE_PX = 40

#: Finds the innermost element whose text holds every string of a list; reports boxes.
PROBE = """
<script>
(function () {
  function box(el) {
    if (!el) return null;
    const r = el.getBoundingClientRect();
    let closed = false;
    for (let a = el.parentElement; a; a = a.parentElement) {
      if (a.tagName === "DETAILS" && !a.open && el.tagName !== "SUMMARY") closed = true;
    }
    return {top: r.top, bottom: r.bottom, left: r.left, right: r.right,
            width: r.width, height: r.height, tag: el.tagName, closed: closed,
            visible: el.checkVisibility(),
            text: el.textContent.replace(/\\s+/g, " ").trim().slice(0, 300)};
  }
  function holds(el, parts) {
    const t = el.textContent.replace(/\\s+/g, " ");
    return parts.every(function (p) { return t.indexOf(p) >= 0; });
  }
  function innermost(parts) {
    const all = document.body.querySelectorAll("*");
    for (const el of all) {
      if (el.id === "probe-out" || el.tagName === "SCRIPT" || !holds(el, parts)) continue;
      if (!Array.from(el.children).some(function (c) { return holds(c, parts); })) return el;
    }
    return null;
  }
  const want = WANT;
  const out = {viewport: [window.innerWidth, window.innerHeight], found: {}};
  for (const name in want) out.found[name] = box(innermost(want[name]));
  const summary = innermost([want.not_run[0]]);
  let d = summary;
  while (d && d.tagName !== "DETAILS") d = d.parentElement;
  out.found.not_run_summary = d ? box(d.querySelector("summary")) : null;
  const pre = document.createElement("pre");
  pre.id = "probe-out";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>
"""


def _failure_text(run: Path) -> tuple[str, str]:
    """The first failed verdict's Holm-adjusted p-value and its level, as the report prints
    them (two significant digits)."""
    summary = json.loads((run / "summary.json").read_text())
    failed = sorted(
        (v for v in summary["verdicts"] if v["verdict"] == "fail"),
        key=lambda v: (v["algorithm"], v["problem"], str(v.get("params")), str(v["impl"])),
    )
    level = stage_level(summary["config"])
    assert failed and level is not None
    return f"{failed[0]['adjusted_p']:.2g}", f"{level:.2g}"


def probe(chrome: str, page: Path, want: dict[str, list[str]], tmp: Path) -> dict[str, Any]:
    """Chromium's layout of ``page`` at VIEWPORT: the box of the innermost element holding
    each ``want`` entry's strings (None where none does)."""
    probed = tmp / f"probed-{page.name}"
    script = PROBE.replace("WANT", json.dumps(want))
    probed.write_text(page.read_text().replace("</body>", script + "</body>"), encoding="utf-8")
    profile = tmp / ("profile-probe-" + page.stem)
    dump = ("--dump-dom", probed.resolve().as_uri())
    done = run_command(test_report_browser.headless(chrome, profile, *VIEWPORT, *dump), timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    found = re.search(r'<pre id="probe-out">(.*?)</pre>', done.stdout, re.S)
    assert found, "the probe wrote nothing"
    return json.loads(html.unescape(found.group(1)))


def problems(seen: dict[str, Any]) -> list[str]:
    """What the first screen gets wrong, one line each (none: it shows what it must). In view
    means within the first VIEWPORT height of the page: the layout depends on the width only
    (``--dump-dom``'s window gives the page less height than a screenshot's)."""
    width, height = VIEWPORT
    out = []
    if seen["viewport"][0] != width:
        out.append(f"viewport {seen['viewport'][0]} px wide, not {width}")
    for name in ("counts", "failure"):
        b = seen["found"][name]
        if b is None:
            out.append(f"{name}: no element shows it")
        elif not (b["width"] > 0 and 0 <= b["top"] and b["bottom"] <= height):
            out.append(f"{name}: not in view without scrolling ({b['top']:.0f}-{b['bottom']:.0f})")
        elif b["right"] > width:
            out.append(f"{name}: past the right edge ({b['right']:.0f})")
    item, summary = seen["found"]["not_run"], seen["found"]["not_run_summary"]
    if item is None:
        out.append("not_run: the page does not list what was not run")
    elif not item["closed"] or item["visible"]:
        out.append("not_run: the list is open")
    if summary is None:
        out.append("not_run: no collapsed summary line")
    elif summary["height"] > ONE_LINE_PX or summary["bottom"] > height:
        out.append(f"not_run: its summary is {summary['height']:.0f} px, not one line in view")
    return out


@pytest.fixture(scope="module")
def failing_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, list[str]]]:
    """A report of a run with one failed KS gate and most inputs missing (a pytest-like run),
    and what its first screen must show."""
    tmp = tmp_path_factory.mktemp("first-screen")
    run = band_run(tmp)
    p, level = _failure_text(run)
    summary = json.loads((run / "summary.json").read_text())
    passed = sum(v["verdict"] == "pass" for v in summary["verdicts"])
    want = {
        "counts": [f"{passed} of {len(summary['verdicts'])} verdicts pass"],
        "failure": [p, level],
        "not_run": [NOT_RUN_LINE],
    }
    return write_report([run], tmp / "report.html"), want


def _pixel(png: Path, x: float, y: float) -> tuple[int, int, int]:
    import matplotlib.image

    rgb = matplotlib.image.imread(png)[..., :3]
    assert rgb.shape[:2] == (VIEWPORT[1], VIEWPORT[0]), rgb.shape
    r, g, b = (round(255 * float(c)) for c in rgb[int(y), int(x)])
    return r, g, b


def test_the_first_screen_shows_counts_and_the_failure_and_folds_what_was_not_run(
    browser: str, failing_report: tuple[Path, dict[str, list[str]]], tmp_path: Path
) -> None:
    report, want = failing_report
    seen = probe(browser, report, want, tmp_path)
    assert problems(seen) == [], seen
    # The screenshot at the same viewport: the failing banner's red is painted where the
    # layout put the counts, beside the counts' own box.
    shot = tmp_path / "first-screen.png"
    page = tmp_path / "page.html"
    page.write_text(report.read_text(), encoding="utf-8")
    _render_at_viewport(browser, page, shot)
    counts = seen["found"]["counts"]
    x, y = counts["left"] - 4, (counts["top"] + counts["bottom"]) / 2
    assert _pixel(shot, x, y) == FAIL_BANNER_RGB


def _render_at_viewport(chrome: str, page: Path, shot: Path) -> None:
    profile = shot.parent / ("profile-" + shot.stem)
    shoot = (f"--screenshot={shot}", page.resolve().as_uri())
    done = run_command(
        test_report_browser.headless(chrome, profile, *VIEWPORT, *shoot), timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]


def test_the_first_screen_check_catches_a_pushed_down_summary_and_an_open_list(
    browser: str, failing_report: tuple[Path, dict[str, list[str]]], tmp_path: Path
) -> None:
    """Negative control: the same report with a tall block above the verdicts, and with its
    not-run list opened, fails the check."""
    report, want = failing_report
    pushed = tmp_path / "pushed.html"
    text = report.read_text()
    tall = '<div style="height: 900px">a tall block</div><div class="glance"'
    pushed.write_text(
        text.replace('<div class="glance"', tall, 1).replace(
            '<details class="not-run"', '<details open class="not-run"', 1
        ),
        encoding="utf-8",
    )
    found = problems(probe(browser, pushed, want, tmp_path))
    assert any(f.startswith("counts: not in view") for f in found), found
    assert any(f.startswith("failure: not in view") for f in found), found
    assert any(f.startswith("not_run: the list is open") for f in found), found
