"""Notebook tables: markdown, HTML, pandas (optional), on sweep tables and head sweeps."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from ropeproof.verify.measure._display import (
    MAX_DISPLAY_ROWS,
    TableDisplay,
    format_cell,
    html_table,
    markdown_table,
)
from ropeproof.verify.measure.exact._sweep import sweep_index


class _Rows(TableDisplay):
    def __init__(self, rows):
        self._rows = rows

    def rows(self):
        return self._rows


def test_cells_and_escaping() -> None:
    assert format_cell(None) == "" and format_cell(float("nan")) == ""
    assert format_cell(1 / 3) == "0.333333" and format_cell(True) == "True" and format_cell(7) == "7"
    rows = [{"a": "x|y", "b": "<b>", "c": None}]
    md = markdown_table(rows, "T")
    assert md.splitlines() == ["**T**", "", "| a | b | c |", "|---|---|---|", "| x\\|y | <b> |  |"]
    h = html_table(rows, "T<")
    assert "<caption>T&lt;</caption>" in h and "<td>&lt;b&gt;</td>" in h and "<b>" not in h
    assert markdown_table([]) == "(no rows)" and "(no rows)" in html_table([])


def test_long_tables_are_cut_in_the_middle() -> None:
    rows = [{"n": i} for i in range(200)]
    md = markdown_table(rows).splitlines()
    assert len(md) == 2 + MAX_DISPLAY_ROWS + 1 and "| ... |" in md
    assert md[2] == "| 0 |" and md[-1] == "| 199 |"


def test_sweep_table_renders_and_converts() -> None:
    table = sweep_index(0.5, 12)
    md = table._repr_markdown_()
    assert (
        md.startswith("**index {'theta': 0.5}, float64; bound:") and md.count("\n| ") == 12
    )  # header + 11 rows
    assert "<table>" in table._repr_html_() and table._repr_html_().count("<tr>") == 12
    df = table.to_pandas()
    assert list(df["n"]) == list(range(2, 13))
    assert np.array_equal(df["margin_inf"].to_numpy(), table.columns["margin_inf"])


def test_to_pandas_without_pandas_says_how_to_install(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas now raises ImportError
    with pytest.raises(ImportError, match=r"ropeproof\[notebook\]"):
        _Rows([{"a": 1}]).to_pandas()
