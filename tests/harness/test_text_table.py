"""The one text-table helper, and the tables built on it."""

import pytest

from harness.display import text_table
from harness.speed.ratios import format_degree_scaling, format_speed


def test_columns_are_as_wide_as_their_content_and_aligned_per_column():
    table = text_table(["name", "n", "note"], [["a", "12345", "x"], ["long name", "7", ""]], "lrl")
    assert table.splitlines() == [
        "name           n  note",
        "---------  -----  ----",
        "a          12345  x",
        "long name      7",
    ]


def test_left_alignment_by_default_and_a_custom_separator():
    assert text_table(["a", "b"], [["xy", "z"]], sep=" | ") == "a  | b\n-- | -\nxy | z"
    assert text_table(["only"], []) == "only\n----"


@pytest.mark.parametrize(
    ("rows", "align", "match"),
    [
        ([["a"]], "ll", "row 0 has 1 cells"),
        ([["a", 1]], "ll", "cells formatted as strings"),
        ([["a", "b"]], "lc", "align = 'lc'"),
        ([["a", "b"]], "l", "align = 'l'"),
    ],
)
def test_bad_tables_are_refused(rows, align, match):
    with pytest.raises(ValueError, match=match):
        text_table(["h1", "h2"], rows, align)


def test_speed_tables_keep_their_columns_and_number_formats():
    speed = {
        "rows": [
            {
                "algorithm": "gumbel-max",
                "D": 10,
                "N": 100000,
                "reference_s_per_draw": 1.234e-3,
                "numba_s_per_draw": 2.5e-5,
                "ratio_median": 49.36,
                "ratio_iqr": [40.1, 55.2],
            }
        ]
    }
    header, rule, row = format_speed(speed).splitlines()
    assert header.split("  ")[0] == "algorithm" and header.endswith("ratio  IQR")
    assert set(rule) == {"-", " "}
    assert row.split("  ")[0] == "gumbel-max" and row.endswith("49.4  [40.1, 55.2]")
    assert row.split()[1:5] == ["10", "100000", "1.234e-03", "2.500e-05"]
    step = {
        "algorithm": "poisson-gibbs",
        "degree": 1000,
        "L": 2.0,
        "graph_mb": 120.34,
        "s_per_step": 2.2e-6,
        "factors_per_step": 5.5,
        "time_vs_smallest_degree": 1.834,
        "limit": 1.5,
    }
    scaling = {"rows": [step], "limit": 1.5}
    lines = format_degree_scaling(scaling).splitlines()
    assert lines[0].endswith("factors/step  time vs smallest  limit")
    assert lines[2].split() == [
        "poisson-gibbs", "1000", "2.00", "120.3", "2.20", "5.5", "1.83", "1.5"
    ]  # fmt: skip
    assert lines[3].startswith("poisson-gibbs at degree 1000 / degree 1000: 1.83 (OVER")
    two = {"rows": [dict(step, degree=20, time_vs_smallest_degree=1.0), step], "limit": 1.5}
    last = format_degree_scaling(two).splitlines()[-1]
    assert last.startswith("poisson-gibbs at degree 1000 / degree 20: 1.83 (OVER")
