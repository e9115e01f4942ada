"""A check report in a notebook."""

from __future__ import annotations

import torch

from ropeproof._report import write_report
from ropeproof._report_markdown import render_markdown
from ropeproof._report_view import ReportView
from ropeproof.claims import CheckContext, Claim, Outcome, run_claim

CTX = CheckContext(torch.device("cpu"), torch.float64)


def _results():
    good = Claim("a.ok", "Holds.", "ref", {}, lambda c: Outcome.judge(True, {"m": 0.5}, "m"))
    bad = Claim("a.bad", "Fails.", "ref", {}, lambda c: Outcome.judge(False, {"m": -1.0}, "m", {"n": 2}))
    return [run_claim(good, CTX), run_claim(bad, CTX)]


def test_views_of_fresh_and_saved_reports(tmp_path) -> None:
    view = ReportView.from_results(_results(), CTX)
    assert view._repr_markdown_() == render_markdown(view.report)
    rows = view.rows()
    assert [(r["id"], r["origin"], r["verdict"], r["status"], r["value"]) for r in rows] == [
        ("a.ok", "user", "holds", "expected holds, got holds", 0.5),  # claims of a test: yours
        ("a.bad", "user", "violated", "expected holds, got violated", -1.0),
    ]
    assert view.title() == "ropeproof check (float64, cpu): holds: 1, violated: 1"
    html = view._repr_html_()
    assert html.count("<tr>") == 3 and "a.bad" in html
    write_report(_results(), CTX, tmp_path)
    for source in (tmp_path, tmp_path / "report.json"):
        assert [r["id"] for r in ReportView.load(source).rows()] == ["a.ok", "a.bad"]
    assert list(view.to_pandas()["verdict"]) == ["holds", "violated"]
