"""The HTML report: self-contained, escaped, and honest about partial runs."""

import json
import re
import textwrap

import pytest

from harness.report.page import write_report
from harness.store import RECORDS
from harness.verify.config import RunConfig
from harness.verify.runner import verify
from tests.harness.report_inputs import ASV_RESULTS, PYTEST_BENCHMARK, small_real_inputs

EVIL = "<script>alert(1)</script>"


def test_report_inlines_svg_loads_nothing_and_escapes_plugin_names(tmp_path):
    plugin = tmp_path / "evil.py"
    plugin.write_text(
        textwrap.dedent(
            f"""
            import harness
            from harness.spec import Check
            from implementations.gumbel import reference
            harness.register(harness.AlgorithmSpec(
                {EVIL!r}, "x", "p", "exact", ("discrete",),
                {{"reference": reference.gumbel_max}},
                checks=(Check(problems=("synthetic-normal-D10-N200",)),)))
            """
        )
    )
    config = RunConfig(algorithms=(EVIL,), impls=("reference",), plugins=(str(plugin),))
    verify(config, tmp_path / "run", workers=1, progress=False)
    html = write_report([tmp_path / "run"], tmp_path / "r.html").read_text()
    assert EVIL not in html and "&lt;script&gt;" in html
    assert "<svg" in html and "<img" not in html
    assert not re.search(r"(src|href)\s*=\s*[\"']?(https?:)?//", html)
    assert "<script" not in html


def test_partial_run_still_renders_and_says_so(tmp_path):
    config = RunConfig(algorithms=("truncated-gumbel",), impls=("reference", "numba"))
    out = tmp_path / "run"
    verify(config, out, workers=1, progress=False)
    lines = (out / RECORDS).read_text().splitlines(keepends=True)
    first = json.loads(lines[0])["task_lines"]  # keep the first whole task only
    (out / RECORDS).write_text("".join(lines[:first]))
    (out / "summary.json").unlink()
    html = write_report([out], tmp_path / "partial.html").read_text()
    assert "incomplete" in html and "truncated-gumbel" in html


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_report_has_all_six_sections_from_small_real_results(tmp_path):
    html = write_report(small_real_inputs(tmp_path), tmp_path / "r.html").read_text()
    text = _text(html)
    for heading in (
        "1. Verdict summary",
        "2-3. Paper experiments",
        "4. Reference against Numba",
        "5. Timings by machine and commit",
        "6. Provenance",
    ):
        assert heading in text
    # Section 4: both recorded pairs, with an interquartile range.
    assert "IQR range" in text and "poisson-gibbs" in text
    # Section 5: the two machines side by side, and their ratio column.
    assert "laptop-a" in text and "ci-runner-b" in text
    assert "ci-runner-b / ci-runner-b" not in text and "laptop-a / ci-runner-b" in text
    assert "Draw.time_draw(gumbel-max, numba)" in text
    # Every figure is inline SVG; nothing is fetched: no src, no external href, no CSS url().
    assert html.count("<svg") >= 3 and "<img" not in html
    assert not re.search(r"\ssrc\s*=", html)
    assert all(h.startswith("#") for h in re.findall(r'href="([^"]*)"', html))
    assert all(u.startswith("#") for u in re.findall(r"url\(([^)]*)\)", html))  # SVG clip ids
    assert "@import" not in html and "<script" not in html
    # Partial: no experiment directory was given, and the page says so in one collapsed line.
    folded = re.search(
        r'<details class="not-run"[^>]*><summary>(.*?)</summary>(.*?)</details>', html, re.S
    )
    assert folded and "Not in this report: " in folded.group(1) and "\n" not in folded.group(1)
    assert "paper experiments" in folded.group(1)
    assert "Paper experiments not included" in folded.group(2)


def test_speedups_use_side_by_side_medians_and_quartiles():
    from harness.speed.timings import load_pytest_benchmark, speedups

    rows = {s.algorithm: s for s in speedups([load_pytest_benchmark(PYTEST_BENCHMARK)])}
    assert set(rows) == {"gumbel-max", "poisson-gibbs"}
    s = rows["poisson-gibbs"]
    assert s.speedup == pytest.approx(s.reference_median / s.numba_median)
    assert s.low <= s.speedup <= s.high
    assert s.speedup > 1.0  # the compiled chain beats the pure-Python one


def test_asv_results_merge_machines_and_commits():
    from harness.speed.timings import load_asv

    got = load_asv([ASV_RESULTS])
    assert set(got.machines) == {"laptop-a", "ci-runner-b"}
    assert len({p.commit for p in got.points}) == 2
    kinds = {p.kind for p in got.points}
    assert kinds == {"time", "track"}
    # One folder per machine merges the same way as one folder holding both.
    split = load_asv([ASV_RESULTS / "laptop-a", ASV_RESULTS / "ci-runner-b"])
    assert sorted(split.points, key=str) == sorted(got.points, key=str)


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda d: d / "nope", "does not exist"),
        (lambda d: (d / "x.txt").write_text("hi") and d / "x.txt", "none of"),
        (lambda d: (d / "b.json").write_text("{}") and d / "b.json", "none of"),
    ],
)
def test_report_rejects_unknown_inputs_before_writing(tmp_path, make, match):
    bad = make(tmp_path)
    out = tmp_path / "r.html"
    with pytest.raises(ValueError, match=match):
        write_report([bad], out)
    assert not out.exists()


def test_numeric_columns_and_their_headers_align_right(tmp_path):
    from harness.display import cell, table
    from harness.report.glance import numeric_columns

    t = table(
        "t",
        ["name", "n", "ratio", "mixed", "tagged"],
        [
            [cell("a"), cell("12"), cell("3/4"), cell("1.5"), cell("x [1, 2]", "num")],
            [cell("b"), cell("-"), cell("1e-05"), cell("about 2"), cell("-", "num")],
        ],
    )
    assert numeric_columns(t) == [False, True, True, False, True]
    html = write_report(small_real_inputs(tmp_path), tmp_path / "r.html").read_text()
    # Every header over a column of numbers aligns right like its cells, and the CSS says so.
    assert re.search(r"th\.num, td\.num \{ text-align: right;", html)
    tables = re.findall(r'<div class="scroll"><table>(.*?)</table>', html, re.S)
    assert len(tables) >= 3
    for body in tables:
        rows = re.findall(r"<tr>(.*?)</tr>", body, re.S)
        heads = re.findall(r"<th( class=\"num\")?>", rows[0])
        for k, head in enumerate(heads):
            cells = [re.findall(r'<td class="([^"]*)"', r)[k : k + 1] for r in rows[1:]]
            classes = [c[0].split() for c in cells if c]
            if classes and all("num" in c for c in classes):
                assert head, (k, rows[0][:200])


def test_an_experiment_section_states_the_wall_time_of_the_calls_that_ran_it(tmp_path):
    from harness.store import WALL
    from tests.harness.experiments.tiny import tiny_potts

    first = tiny_potts(tmp_path / "potts")
    assert tiny_potts(tmp_path / "potts").ran == 0  # a resume adds no call
    (call,) = json.loads((tmp_path / "potts" / WALL).read_text())
    assert call["tasks"] == first.ran and 0 < call["wall_s"] <= first.wall_s
    text = _text(write_report([tmp_path / "potts"], tmp_path / "r.html").read_text())
    want = f"{call['wall_s']:.0f} s of wall time over 1 harness reproduce call that ran {first.ran}"
    assert want in text
