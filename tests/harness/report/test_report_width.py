"""The report fits a 1280 px wide window: no sideways scroll, and the verdict grid shows whole.

The report is of a run as wide as a full one: every built-in algorithm, with the gates real
runs report for its guarantee, on problems with long names, and some failures (their first
screen table is the widest thing above the grid). Chromium lays out a copy of the page with a
probe script appended (the report itself has none) that writes the widths into the DOM.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

from harness.registry import builtin_specs
from harness.report.page import write_report
from tests.conftest import run_command
from tests.harness.report import test_report_browser

#: The browser tests' fixture: the path of headless Chromium (a skip, or in CI a failure, without).
browser = test_report_browser.browser

VIEWPORT = (1280, 800)
#: The gates full runs report for each guarantee.
GATES = {
    "exact": (
        "agreement bound-validity chi-square contract ks ks-gumbel-max ks-process "
        "pair-independence prefix-agreement runs seed-determinism"
    ).split(),
    "mcmc": (
        "agreement chi-square-thinned conditional-pit contract coverage ess exact-start-bright "
        "exact-start-chi-square exact-start-ks exact-start-moments gibbs-step-energy "
        "gibbs-step-pit invariance ks-marginals marginal-symmetry moment-marginals "
        "prefix-agreement seed-determinism spectral-gap transition-consistency z-conditional"
    ).split(),
    "approximate": (
        "contract decision-error error-independence error-rate ess ks-thinned moment-mean "
        "moment-variance pair-independence pull-bounds seed-determinism stationary-bias tv"
    ).split(),
}
PROBLEMS = ("synthetic-normal-D10-N200", "race-normal-D1000-N100000-s1e-4-with-a-long-name")
CONFIG = {
    "alpha": 1e-4,
    "escalation": {"factor": 4, "inconclusive": 1000.0, "stages": 3},
    "impls": ["reference", "numba"],
    "level": "quick",
    "plugins": [],
    "seed": 0,
}


def wide_run(out: Path) -> Path:
    """A run's summary with every built-in algorithm x implementation x gate x problem."""
    verdicts: list[dict[str, Any]] = []
    for spec in builtin_specs():
        for impl in ("reference", "numba", "reference-vs-numba"):
            for gate in GATES[spec.guarantee]:
                if (gate == "agreement") != (impl == "reference-vs-numba"):
                    continue
                for problem in PROBLEMS:
                    fail = len(verdicts) % 53 == 52
                    verdicts.append(
                        {
                            "algorithm": spec.name,
                            "impl": impl,
                            "problem": problem,
                            "gate": gate,
                            "guarantee": spec.guarantee,
                            "params": {"delta": 0.01, "exact_answer": True},
                            "verdict": "fail" if fail else "pass",
                            "inconclusive": False,
                            "n": 20000,
                            "statistic": 0.5,
                            "p_value": 1e-9 if fail else 0.4,
                            "adjusted_p": 1e-8 if fail else 0.9,
                            "detectable": 0.02,
                            "detectable_measure": "sup |F - F0|",
                            "evals_per_draw": 151.5,
                            "stage": 0,
                            "detail": "the statistic against its null distribution " * 4,
                        }
                    )
    out.mkdir(parents=True)
    config = {**CONFIG, "algorithms": [s.name for s in builtin_specs()]}
    summary = {
        "config": config,
        "provenance": {"commit": "0" * 40, "machine": "vm", "python": "3.12"},
        "verdicts": verdicts,
        "passed": False,
        "cases": [],
    }
    (out / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    (out / "records.jsonl").write_text("", encoding="utf-8")
    return out


#: Widths of the page, of the verdict grid (the first table of section 1) and of the box that
#: scrolls it sideways, if any; and what reaches past the window's right edge.
PROBE = """
<script>
(function () {
  const doc = document.scrollingElement;
  const grid = document.querySelector("#verdicts ~ table, #verdicts ~ div table");
  let holder = grid ? grid.parentElement : null;  // the grid's own scroller, if it has one
  while (holder && holder !== document.body &&
         !["auto", "scroll"].includes(getComputedStyle(holder).overflowX)) {
    holder = holder.parentElement;
  }
  if (holder === document.body) holder = null;
  const wide = [];
  for (const el of document.body.querySelectorAll("*")) {
    const r = el.getBoundingClientRect();
    if (r.width > 0 && r.right > window.innerWidth) wide.push(el.tagName + "." + el.className);
  }
  const out = {viewport: window.innerWidth, page: [doc.scrollWidth, doc.clientWidth],
               grid: grid ? [grid.scrollWidth, grid.clientWidth] : null,
               holder: holder ? [holder.scrollWidth, holder.clientWidth] : null,
               rows: grid ? grid.querySelectorAll("tr").length : 0, wide: wide.slice(0, 10)};
  const pre = document.createElement("pre");
  pre.id = "probe-out";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>
"""


def widths(chrome: str, page: Path, tmp: Path) -> dict[str, Any]:
    probed = tmp / f"probed-{page.name}"
    probed.write_text(page.read_text().replace("</body>", PROBE + "</body>"), encoding="utf-8")
    dump = ("--dump-dom", probed.resolve().as_uri())
    args = test_report_browser.headless(chrome, tmp / "profile-width", *VIEWPORT, *dump)
    done = run_command(args, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    found = re.search(r'<pre id="probe-out">(.*?)</pre>', done.stdout, re.S)
    assert found, "the probe wrote nothing"
    return json.loads(html.unescape(found.group(1)))


def test_the_verdict_grid_of_a_full_run_fits_a_1280_px_window(browser: str, tmp_path: Path):
    report = write_report([wide_run(tmp_path / "run")], tmp_path / "report.html")
    seen = widths(browser, report, tmp_path)
    assert seen["viewport"] == VIEWPORT[0], seen
    assert seen["page"][0] <= VIEWPORT[0], seen  # no sideways scroll anywhere on the page
    assert seen["grid"] is not None and seen["rows"] > len(builtin_specs()), seen
    assert seen["grid"][0] <= seen["grid"][1], seen  # the grid shows whole, with no scroller
    assert seen["holder"] is None or seen["holder"][0] <= seen["holder"][1], seen
    assert seen["wide"] == [], seen
