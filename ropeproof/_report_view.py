"""A check report in a notebook: :class:`ReportView` renders a report as markdown or HTML and turns
its claims into rows (``to_pandas()`` when pandas is installed).

``ReportView.from_results(results, ctx)`` wraps fresh results (:func:`ropeproof._report.report_dict`);
``ReportView.load(path)`` reads a ``report.json`` that ``ropeproof check`` wrote. The markdown is
``report.md``'s (:func:`ropeproof._report_markdown.render_markdown`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ropeproof._report import check_report_format, report_dict
from ropeproof._report_markdown import render_markdown
from ropeproof.claims import CheckContext, ClaimResult
from ropeproof.verify.measure._display import TableDisplay, html_table


class ReportView(TableDisplay):
    """A report dict (``report.json``'s content) with notebook views."""

    def __init__(self, report: dict[str, Any]) -> None:
        self.report = report

    @classmethod
    def from_results(cls, results: Sequence[ClaimResult], ctx: CheckContext) -> ReportView:
        return cls(report_dict(results, ctx))

    @classmethod
    def load(cls, path: str | Path) -> ReportView:
        """Read ``path`` (a ``report.json`` or the directory holding it); an :class:`InputError` for a
        file of another format or of a version this ropeproof does not read
        (:func:`~ropeproof._report.check_report_format`)."""
        p = Path(path)
        file = p / "report.json" if p.is_dir() else p
        report = json.loads(file.read_text())
        check_report_format(report, str(file))
        return cls(report)

    def rows(self) -> list[dict[str, Any]]:
        """One row per claim: id, origin (``builtin``, or ``user`` for your claims), verdict (certified or
        not), expected, status, key figure and its value."""
        out = []
        for c in self.report["claims"]:
            key = c.get("key_figure")
            out.append(
                {
                    "id": c["id"],
                    "origin": c.get("origin", "builtin"),
                    "verdict": c["verdict"] + (" (certified)" if c.get("certified") else ""),
                    "expected": c["expected"],
                    "status": c.get("status", ""),
                    "key_figure": key or "",
                    "value": c["figures"].get(key) if key else None,
                    "seconds": c["seconds"],
                }
            )
        return out

    def title(self) -> str:
        counts = ", ".join(f"{k}: {v}" for k, v in sorted(self.report["counts"].items()))
        flags = self.report["run"]["flags"]
        return f"ropeproof check ({flags['dtype']}, {flags['device']}): {counts}"

    def _repr_markdown_(self) -> str:
        return render_markdown(self.report)

    def _repr_html_(self) -> str:
        return html_table(self.rows(), self.title())
