"""The HTML report: self-contained, escaped, and honest about partial runs."""

import re
import textwrap

from harness.report import write_report
from harness.results import RECORDS
from harness.runner import RunConfig, verify

EVIL = "<script>alert(1)</script>"


def test_report_inlines_svg_loads_nothing_and_escapes_plugin_names(tmp_path):
    plugin = tmp_path / "evil.py"
    plugin.write_text(
        textwrap.dedent(
            f"""
            import harness
            from implementations.gumbel import reference
            harness.register(harness.AlgorithmSpec(
                {EVIL!r}, "x", "p", "exact", ("discrete",),
                {{"reference": reference.gumbel_max}}))
            """
        )
    )
    config = RunConfig(
        algorithms=(EVIL, "gumbel-max"), impls=("reference",), plugins=(str(plugin),)
    )
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
    (out / RECORDS).write_text("".join(lines[:1]))
    (out / "summary.json").unlink()
    html = write_report([out], tmp_path / "partial.html").read_text()
    assert "incomplete" in html and "truncated-gumbel" in html
