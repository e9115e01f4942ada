"""report.json identifies its format; report.md renders every claim."""

from __future__ import annotations

import json
import math
from pathlib import Path

import torch

from ropeproof._json_values import jsonable
from ropeproof._report import REPORT_FORMAT, REPORT_VERSION, report_dict, write_report
from ropeproof.claims._registry import CheckContext, Claim, Outcome, run_claim


def test_report_carries_format_and_version(tmp_path: Path) -> None:
    ctx = CheckContext(torch.device("cpu"), torch.float64, quick=True)
    c = Claim("t.ok", "Holds.", "here", {"n": 3}, lambda ctx: Outcome.judge(True, {"v": 1.5}, "v"))
    results = [run_claim(c, ctx)]
    doc = report_dict(results, ctx)
    assert (doc["format"], doc["version"]) == (REPORT_FORMAT, REPORT_VERSION) == ("ropeproof-report", 4)
    write_report(results, ctx, tmp_path)
    on_disk = json.loads((tmp_path / "report.json").read_text())
    assert on_disk["claims"][0]["id"] == "t.ok" and on_disk["counts"] == {"holds": 1}
    assert "t.ok" in (tmp_path / "report.md").read_text()


def test_long_cells_are_cut_with_a_pointer_to_the_full_value(tmp_path: Path) -> None:
    """Issue 12: counterexample cells were cut at 160 characters with no way to the full value."""
    from ropeproof._report_markdown import CELL_LIMIT

    ctx = CheckContext(torch.device("cpu"), torch.float64, quick=True)
    long_input = {"tokens": [f"token{i}" for i in range(80)]}
    c = Claim(
        "t.long",
        "Fails.",
        "here",
        {},
        lambda ctx: Outcome.judge(False, {"v": 2.0}, "v", counterexample=long_input),
        expected="violated",
    )
    write_report([run_claim(c, ctx)], ctx, tmp_path)
    md = (tmp_path / "report.md").read_text()
    row = next(line for line in md.splitlines() if line.startswith("|") and "t.long" in line)
    cell = next(part for part in row.split("|") if "token0" in part)
    kept, pointer = cell.strip().split(" ... ")
    assert len(kept) <= CELL_LIMIT and pointer == "(full counterexample: [below](#full-t-long))"
    assert '<a id="full-t-long"></a>' in md and '"token79"' in md  # the full value, below the table


def test_values_become_json_data() -> None:
    import numpy as np

    value = {1: (np.float64(0.5), np.arange(2)), "x": [float("nan"), np.bool_(True), None]}
    assert jsonable(value) == {"1": [0.5, [0, 1]], "x": ["nan", True, None]}
    assert json.loads(json.dumps(jsonable(value))) == jsonable(value)


def test_sampled_accuracies_get_a_table_with_their_intervals(tmp_path: Path) -> None:
    """A claim whose figures hold per-row sampled accuracies (correct, count, 95% interval) shows them as a
    table under its finding in report.md and the README section, intervals rounded outward."""
    from ropeproof._findings_page import render_readme_findings
    from ropeproof._report_markdown import interval_table
    from ropeproof.verify.measure._statistics import proportion_interval

    lo, hi = proportion_interval(97, 100).bounds
    rows = {
        "number-seed0": {"1": {"correct": 97, "count": 100, "accuracy": 0.97, "ci_low": lo, "ci_high": hi}},
        "letter-seed0": {
            "2": {"correct": 100, "count": 100, "accuracy": 1.0, "ci_low": 0.963, "ci_high": 1.0}
        },
    }
    table = interval_table({**rows, "worst_ci_low": lo})
    assert table[1:3] == ["| | 1 | 2 |", "|---|---|---|"]
    assert table[3] == "| number-seed0 | 97/100 [0.9154, 0.9898] |  |"  # floor and ceiling at 4 decimals
    assert table[4] == "| letter-seed0 |  | 100/100 [0.9630, 1.0000] |"
    assert math.floor(lo * 1e4) / 1e4 == 0.9154 and math.ceil(hi * 1e4) / 1e4 == 0.9898
    assert interval_table({"v": 1.5}) == [] and interval_table({"x": {"1": {"correct": 1}}}) == []

    ctx = CheckContext(torch.device("cpu"), torch.float64, quick=True)
    c = Claim("t.acc", "Learns.", "here", {}, lambda ctx: Outcome.judge(True, {**rows, "worst": lo}, "worst"))
    write_report([run_claim(c, ctx)], ctx, tmp_path)
    assert table[3] in (tmp_path / "report.md").read_text().splitlines()
    report = json.loads((tmp_path / "report.json").read_text())
    for claim in report["claims"]:
        claim["section"], claim["origin"] = "Paper", "builtin"  # the README lists the toolkit's claims
    assert table[4] in render_readme_findings(report).splitlines()
