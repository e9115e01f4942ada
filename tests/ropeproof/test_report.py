"""report.json identifies its format; report.md renders every claim."""

from __future__ import annotations

import json
from pathlib import Path

import torch

from ropeproof.claims.registry import CheckContext, Claim, Outcome, run_claim
from ropeproof.report import REPORT_FORMAT, REPORT_VERSION, report_dict, write_report


def test_report_carries_format_and_version(tmp_path: Path) -> None:
    ctx = CheckContext(torch.device("cpu"), torch.float64, quick=True)
    c = Claim("t.ok", "Holds.", "here", {"n": 3}, lambda ctx: Outcome.judge(True, {"v": 1.5}, "v"))
    results = [run_claim(c, ctx)]
    doc = report_dict(results, ctx)
    assert (doc["format"], doc["version"]) == (REPORT_FORMAT, REPORT_VERSION) == ("ropeproof-report", 2)
    write_report(results, ctx, tmp_path)
    on_disk = json.loads((tmp_path / "report.json").read_text())
    assert on_disk["claims"][0]["id"] == "t.ok" and on_disk["counts"] == {"holds": 1}
    assert "t.ok" in (tmp_path / "report.md").read_text()
