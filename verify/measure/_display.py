"""Tables for notebooks: markdown, HTML and (when pandas is installed) a ``DataFrame``.

:class:`TableDisplay` gives any object with a ``rows()`` method (a list of dicts, one per row, the
same keys in every row) and a ``title()`` the methods Jupyter looks for:

- ``_repr_markdown_()``: a title line and a markdown table;
- ``_repr_html_()``: the same as an HTML ``<table>`` (cells escaped);
- ``to_pandas()``: a ``pandas.DataFrame`` of the rows. pandas is optional (the ``notebook`` extra);
  without it ``to_pandas`` raises ``ImportError`` saying how to install it.

Floats are shown with 6 significant digits; ``None`` (a value the computation could not decide,
such as ``gap_inf`` past the horizon) as an empty cell. :func:`markdown_table` and
:func:`html_table` render any list of row dicts.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from typing import Any

MAX_DISPLAY_ROWS = 60
"""Rows shown by the notebook views; longer tables show the first and last halves and a gap row."""


def format_cell(value: Any) -> str:
    """A cell's text: floats to 6 significant digits, ``None``/NaN as empty, the rest by ``str``."""
    if value is None:
        return ""
    if isinstance(value, float):
        return "" if math.isnan(value) else f"{value:.6g}"
    return str(value)


def _shown(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any] | None]:
    if len(rows) <= MAX_DISPLAY_ROWS:
        return list(rows)
    half = MAX_DISPLAY_ROWS // 2
    return [*rows[:half], None, *rows[-half:]]


def markdown_table(rows: Sequence[dict[str, Any]], title: str = "") -> str:
    """``rows`` as a markdown table under ``title`` (bold); ``|`` in cells escaped."""
    lines = [f"**{title}**", ""] if title else []
    if not rows:
        return "\n".join([*lines, "(no rows)"])
    keys = list(rows[0])
    lines += ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    for row in _shown(rows):
        cells = ["..."] * len(keys) if row is None else [format_cell(row.get(k)) for k in keys]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines)


def html_table(rows: Sequence[dict[str, Any]], title: str = "") -> str:
    """``rows`` as an HTML table with ``title`` as its caption; every cell escaped."""
    caption = f"<caption>{html.escape(title)}</caption>" if title else ""
    if not rows:
        return f"<table>{caption}<tr><td>(no rows)</td></tr></table>"
    keys = list(rows[0])
    head = "".join(f"<th>{html.escape(k)}</th>" for k in keys)
    body = []
    for row in _shown(rows):
        cells = ["..."] * len(keys) if row is None else [format_cell(row.get(k)) for k in keys]
        body.append("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>")
    return f"<table>{caption}<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def require_pandas() -> Any:
    """The ``pandas`` module; ``ImportError`` naming the ``notebook`` extra when it is missing."""
    try:
        import pandas
    except ImportError as exc:
        raise ImportError(
            "to_pandas() needs pandas, which ropeproof does not require; install it with "
            "pip install 'ropeproof[notebook]' (or pip install pandas)"
        ) from exc
    return pandas


class TableDisplay:
    """Notebook views for a table with ``rows()`` and ``title()`` (see the module docstring)."""

    def rows(self) -> list[dict[str, Any]]:  # pragma: no cover - every subclass defines it
        raise NotImplementedError

    def title(self) -> str:
        return type(self).__name__

    def _repr_markdown_(self) -> str:
        return markdown_table(self.rows(), self.title())

    def _repr_html_(self) -> str:
        return html_table(self.rows(), self.title())

    def to_pandas(self) -> Any:
        """The rows as a ``pandas.DataFrame`` (one column per key, in order)."""
        return require_pandas().DataFrame.from_records(self.rows())
