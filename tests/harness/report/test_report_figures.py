"""The report's figures read right: zeros on a log axis are drawn at a marked floor, legends
sit off the data, captions hold no unformatted placeholder, and the GPU panel's caption names
the colours its figure uses.

Figures are caught as matplotlib objects where the code would turn them into SVG, so the
checks read the drawn artists (Line2D data, window extents after a draw), not the SVG text.
"""

from __future__ import annotations

import html
import re
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.collections import Collection
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle
from matplotlib.transforms import Bbox

import harness.figures
import harness.report.hardware
import harness.report.page
import harness.report.timings
from harness.experiments.plots import Line, line_figure
from harness.report.page import write_report
from harness.verify.config import RunConfig
from harness.verify.runner import verify
from tests.conftest import ROOT
from tests.harness.report_inputs import ASV_RESULTS, PYTEST_BENCHMARK

RECORDED_GPU = ROOT / "bench" / "results" / "nvidia-h200"


@pytest.fixture
def drawn(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Figure]]:
    """The figures the report code draws, kept open instead of written as SVG."""
    figures: list[Figure] = []

    def keep(fig: Figure) -> str:
        figures.append(fig)
        return "<svg></svg>"

    modules = (
        harness.figures,
        harness.report.page,
        harness.report.hardware,
        harness.report.timings,
    )
    for module in modules:
        for name in ("inline_svg", "_svg"):
            if hasattr(module, name):
                monkeypatch.setattr(module, name, keep)
    yield figures
    for fig in figures:
        plt.close(fig)


# --- zeros on a log axis -------------------------------------------------------------------


def _racing_records() -> list[dict[str, Any]]:
    """Error rates of racing-normal at four deltas, the two smallest with no error at all."""
    out = []
    for delta, errors in ((1e-3, 0), (3e-3, 0), (1e-2, 7), (3e-2, 25)):
        rate = errors / 1000
        out.append(
            {
                "algorithm": "racing-normal",
                "distribution": "normal",
                "sigma": 1.0,
                "delta": delta,
                "error_rate": rate,
                "ci_low": max(rate - 0.004, 0.0),
                "ci_high": rate + 0.004,
                "reward_proportion": 0.2,
            }
        )
    return out


def test_an_error_rate_figure_draws_zero_errors_at_a_marked_floor(drawn: list[Figure]) -> None:
    from harness.experiments.racing_synthetic import _sigma_figures

    _sigma_figures(_racing_records(), 1.0)
    ax = drawn[0].axes[0]
    assert ax.get_yscale() == "log"
    # An error-bar series: its label is on the container, its points on the container's line.
    (bars,) = [c for c in ax.containers if c.get_label() == "racing-normal, normal"]
    series = bars.lines[0]
    x, y = (np.asarray(v, dtype=float) for v in series.get_data())
    # Every delta is drawn, the zero-error ones too, at one floor below the data.
    assert list(x) == [1e-3, 3e-3, 1e-2, 3e-2]
    floor = y[0]
    assert y[1] == floor and 0 < floor < min(0.007, 1e-3)
    (mark,) = [ln for ln in ax.lines if ln.get_label() == "0 errors (drawn at floor)"]
    assert set(np.asarray(mark.get_ydata(), dtype=float)) == {floor}
    assert mark.get_linestyle() == "--"
    assert ax.get_ylim()[0] < floor  # the floor is inside the axes, not on their edge
    assert "0 errors (drawn at floor)" in [t.get_text() for t in ax.get_legend().get_texts()]


def test_a_log_figure_without_zeros_has_no_floor(drawn: list[Figure]) -> None:
    line_figure([Line("a", [1, 2, 3], [0.1, 0.2, 0.3])], "x", "y")
    ax = drawn[0].axes[0]
    assert [ln.get_label() for ln in ax.lines] == ["a"]


# --- legends off the data ------------------------------------------------------------------


def _data_points(ax: Any) -> np.ndarray:
    """Display coordinates of every data point drawn in ``ax``: line vertices and markers,
    inside the axes (the rest is clipped away, never drawn)."""
    pts = [np.empty((0, 2))]
    for artist in ax.get_children():
        if not artist.get_visible():
            continue
        if isinstance(artist, Line2D):
            xy = np.asarray(artist.get_xydata(), dtype=float)
            pts.append(artist.get_transform().transform(xy))
        elif isinstance(artist, Collection):
            offsets = np.asarray(artist.get_offsets(), dtype=float)
            if offsets.size:
                pts.append(artist.get_offset_transform().transform(offsets))
            else:
                pts += [artist.get_transform().transform(p.vertices) for p in artist.get_paths()]
    out = np.concatenate(pts)
    box = ax.get_window_extent()
    keep = np.all(np.isfinite(out), axis=1)
    keep &= (out[:, 0] >= box.x0) & (out[:, 0] <= box.x1)
    keep &= (out[:, 1] >= box.y0) & (out[:, 1] <= box.y1)
    return out[keep]


def _bars(ax: Any) -> list[Bbox]:
    """The drawn part (inside the axes) of each bar of ``ax``."""
    out = []
    for patch in ax.patches:
        if isinstance(patch, Rectangle) and patch.get_visible():
            drawn = Bbox.intersection(patch.get_window_extent(), ax.get_window_extent())
            if drawn is not None and drawn.width > 0 and drawn.height > 0:
                out.append(drawn)
    return out


def legend_problems(fig: Figure) -> list[str]:
    """Each axes whose legend box holds a data point, or overlaps a bar, one line each."""
    fig.canvas.draw()
    out = []
    for ax in fig.axes:
        legend = ax.get_legend()
        if legend is None:
            continue
        box = legend.get_window_extent()
        pts = _data_points(ax)
        inside = (
            (pts[:, 0] > box.x0)
            & (pts[:, 0] < box.x1)
            & (pts[:, 1] > box.y0)
            & (pts[:, 1] < box.y1)
        )
        bars = [b for b in _bars(ax) if b.overlaps(box)]
        if inside.any() or bars:
            where = ax.get_title() or ax.get_xlabel()
            out.append(f"{where}: {int(inside.sum())} points, {len(bars)} bars under the legend")
    return out


def _crowded_lines() -> list[Line]:
    """Lines through every corner and the middle of the axes: no corner is free."""
    x = np.logspace(-2, 2, 60)
    lines = [Line("y = x", x, x), Line("y = 1/x", x, 1 / x)]
    lines += [Line(f"y = {c:g}", x, np.full_like(x, c)) for c in (1e-2, 1e-1, 1.0, 10.0, 100.0)]
    return lines


def test_a_line_figure_legend_covers_no_data(drawn: list[Figure]) -> None:
    line_figure(_crowded_lines(), "x", "y")
    (fig,) = drawn
    assert legend_problems(fig) == []


def _saving_rows(k: int) -> list[dict[str, Any]]:
    """GPU cells where racing's saving (dots) spans the axis, the largest at the bottom."""
    return [
        {
            "kind": "precomputed",
            "D": 10,
            "N": 10**4,
            "saving": 10.0 ** (i / 2),
            "needed_saving_1core": 10.0 ** ((k - i) / 3),
        }
        for i in range(k)
    ]


def test_the_gpu_panel_legend_covers_no_data(drawn: list[Figure]) -> None:
    harness.report.hardware.saving_figure(_saving_rows(8))
    (fig,) = drawn
    assert legend_problems(fig) == []


def test_the_asv_history_legends_cover_no_data(drawn: list[Figure]) -> None:
    from harness.speed.timings import load_asv

    assert harness.report.timings.history_figures(load_asv([ASV_RESULTS]))
    assert drawn and all(legend_problems(fig) == [] for fig in drawn)


def test_the_legend_check_sees_a_legend_on_the_data() -> None:
    """Negative control: a legend placed on the lines is found."""
    fig, ax = plt.subplots()
    for ln in _crowded_lines():
        ax.plot(ln.x, ln.y, label=ln.label)
    ax.set(xscale="log", yscale="log")
    ax.legend(loc="center")
    try:
        assert legend_problems(fig)
    finally:
        plt.close(fig)


# --- captions ------------------------------------------------------------------------------


#: The GPU panel's colours (hex, as the SVG writes them) by the names a caption gives them.
COLOURS = {"#2e7d32": "green", "#c62828": "red", "#bbbbbb": "grey"}


def _colours_named(caption: str) -> set[str]:
    return {name for name in COLOURS.values() if re.search(rf"\b{name}\b", caption)}


def _colours_drawn(svg: str) -> set[str]:
    return {COLOURS[h] for h in re.findall(r"fill: ?(#[0-9a-f]{6})", svg) if h in COLOURS}


def test_the_recorded_gpu_panel_caption_names_the_colours_it_draws() -> None:
    from harness.report.hardware import hardware_section, is_hardware, load_hardware

    files = [load_hardware(p) for p in sorted(RECORDED_GPU.glob("*.json")) if is_hardware(p)]
    (figure,) = hardware_section(files)["figures"]
    drawn = _colours_drawn(figure["svg"])
    assert drawn and _colours_named(figure["title"]) == drawn, (figure["title"], drawn)


@pytest.mark.parametrize("wins", [0, 3, 8])
def test_the_gpu_panel_caption_names_the_colours_of_each_outcome(wins: int) -> None:
    from harness.report.hardware import saving_caption, saving_figure

    hw = harness.report.hardware
    assert {h: n for n, h in (hw.WINS, hw.LOSES, hw.NEEDED)} == COLOURS
    rows = _saving_rows(8)
    for i, r in enumerate(rows):  # racing beats the GPU in the first ``wins`` cells only
        r["needed_saving_1core"] = r["saving"] / 2 if i < wins else r["saving"] * 2
    drawn = _colours_drawn(saving_figure(rows))
    assert {"grey"} < drawn and _colours_named(saving_caption("here", rows)) == drawn


PLUGIN = textwrap.dedent(
    """
    import harness
    from harness.spec import Check
    from implementations.gumbel import reference
    harness.register(harness.AlgorithmSpec(
        "caption-gumbel", "x", "p", "exact", ("discrete",),
        {"reference": reference.gumbel_max},
        checks=(Check(problems=("synthetic-normal-D10-N200",)),)))
    """
)


def _captions(page: str) -> list[str]:
    """Every figure caption of the page, and the caption under each group of figures."""
    found = re.findall(r"<figcaption>(.*?)</figcaption>", page, re.S)
    found += re.findall(r"</figure>\s*<p class=\"note\">(.*?)</p>", page, re.S)
    return [" ".join(html.unescape(re.sub(r"<[^>]+>", " ", c)).split()) for c in found]


def test_no_caption_of_a_full_report_holds_a_placeholder_nor_legend_covers_data(
    tmp_path: Path, drawn: list[Figure]
) -> None:
    from tests.harness.experiments.tiny import tiny_potts

    plugin = tmp_path / "caption_plugin.py"
    plugin.write_text(PLUGIN)
    config = RunConfig(("caption-gumbel",), ("reference",), plugins=(str(plugin),))
    verify(config, tmp_path / "run", workers=1, progress=False)
    tiny_potts(tmp_path / "potts")
    inputs = [tmp_path / "run", tmp_path / "potts", ASV_RESULTS, PYTEST_BENCHMARK]
    inputs += [p for p in sorted(RECORDED_GPU.glob("*.json"))]
    page = write_report(inputs, tmp_path / "report.html").read_text()
    captions = _captions(page)
    # The pmf figure of the plugin's case, the GPU panel, the Potts figures, asv history.
    assert any(c.startswith("caption-gumbel on synthetic-normal-D10-N200") for c in captions)
    assert any("beats the GPU" in c for c in captions) and len(captions) > 6, captions
    assert [c for c in captions if "{" in c or "}" in c] == []
    # Every figure of the page: the pmf against its draws, ECDF bands, Potts, asv, the GPU.
    assert len(drawn) > 6
    assert [p for fig in drawn for p in legend_problems(fig)] == []
