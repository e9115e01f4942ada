"""How a claim result looks in a notebook (``ClaimResult._repr_markdown_`` / ``_repr_html_``).

A result shows its id, verdict (and whether it was certified), the statement, the reference, the
expectation, the measured figures and, for a violation, the counterexample. The whole report's view
is :class:`ropeproof._report_view.ReportView`.
"""

from __future__ import annotations

import html
import json
from typing import Any

from ropeproof.verify.measure._display import format_cell

ClaimResult = Any
"""A :class:`ropeproof.claims._registry.ClaimResult` (``claim``, ``outcome``, ``seconds``); not imported,
since the registry's ``_repr_*`` methods import this module."""


def _text(value: Any) -> str:
    if isinstance(value, str | float | int | bool) or value is None:
        return format_cell(value)
    try:
        text = json.dumps(value, default=str)
    except (TypeError, ValueError):
        text = str(value)
    return text if len(text) <= 200 else text[:197] + "..."


def verdict_text(result: ClaimResult) -> str:
    """``holds``, ``violated``, ... with `` (certified)`` when the outcome was proved by intervals."""
    return result.outcome.verdict + (" (certified)" if result.outcome.certified else "")


def result_markdown(result: ClaimResult) -> str:
    """One claim result as markdown: a heading line, the statement, and a figures table."""
    c, o = result.claim, result.outcome
    lines = [
        f"**`{c.id}`: {verdict_text(result)}** ({result.status}; {result.seconds:.2f} s)",
        "",
        f"{c.statement_for(result.quick)} *({c.reference})*",
    ]
    if o.figures:
        lines += ["", "| figure | value |", "|---|---|"]
        for name, value in o.figures.items():
            mark = " (key)" if name == o.key_figure else ""
            cell = _text(value).replace("|", "\\|")
            lines.append(f"| {name}{mark} | {cell} |")
    if o.counterexample is not None:
        lines += ["", f"Counterexample: `{_text(o.counterexample)}`"]
    if o.verdict == "error":
        lines += ["", "```", o.detail.strip().splitlines()[0] if o.detail.strip() else "", "```"]
    return "\n".join(lines)


def result_html(result: ClaimResult) -> str:
    """One claim result as HTML (every field escaped)."""
    c, o = result.claim, result.outcome
    e = html.escape
    parts = [
        f"<p><b><code>{e(c.id)}</code>: {e(verdict_text(result))}</b> ({e(result.status)}; "
        f"{result.seconds:.2f} s)<br>{e(c.statement_for(result.quick))} <i>({e(c.reference)})</i></p>"
    ]
    if o.figures:
        rows = "".join(
            f"<tr><td>{e(name)}{' (key)' if name == o.key_figure else ''}</td><td>{e(_text(v))}</td></tr>"
            for name, v in o.figures.items()
        )
        parts.append(
            f"<table><thead><tr><th>figure</th><th>value</th></tr></thead><tbody>{rows}</tbody></table>"
        )
    if o.counterexample is not None:
        parts.append(f"<p>Counterexample: <code>{e(_text(o.counterexample))}</code></p>")
    return "".join(parts)
