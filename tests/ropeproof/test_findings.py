"""Pinned findings: --strict fails when one flips; the findings page (docs/findings.md) matches a fresh
report; two identical runs give the same report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ropeproof._cli import main
from ropeproof._findings_page import readme_findings, render_readme_findings
from ropeproof._report import without_timings
from ropeproof.commands import _findings as findings

FINDINGS_PAGE = Path(__file__).resolve().parents[2] / "docs" / "findings.md"


@pytest.mark.xdist_group("quick-report")  # its users on one worker: another would wait on its lock
@pytest.mark.e2e  # uses the whole `check --quick` (the suite's slowest fixture): CI's second pass
def test_findings_page_matches_a_fresh_quick_report(quick_report: tuple[int, Path]) -> None:
    _code, out = quick_report
    report = json.loads((out / "report.json").read_text())
    assert readme_findings(FINDINGS_PAGE.read_text()) == render_readme_findings(report), (
        "docs/findings.md is stale: run `ropeproof check --quick --out rep && "
        "ropeproof findings rep --update docs/findings.md`"
    )


def test_flipping_a_pinned_bound_fails_strict(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the pi^2/(2 n^2) term four times larger: the pinned finding 'violated from n = 4' flips."""
    from ropeproof import claims as registry  # check reads it when a run starts
    from ropeproof.claims import _thm32 as thm32
    from ropeproof.theory import _bounds as bounds

    real = bounds.index_bound

    def inflated() -> bounds.ReportedBound:
        b = real()
        pi_term = b.terms[1]
        bigger = bounds.BoundTerm(pi_term.name, 4 * pi_term.raw, 4 * pi_term.stable)
        return bounds.ReportedBound(b.construction, (b.terms[0], bigger), b.statement)

    monkeypatch.setattr(bounds, "index_bound", inflated)  # the sweep imports it when it judges
    chosen = [thm32.CLAIMS["thm3.2.index.pi2-over-2n2.margin_inf"]]
    monkeypatch.setattr(registry, "registered_claims", lambda: chosen)
    # each run computes its tables anew in its own store: nothing memoised survives from another run;
    # --jobs 1: the patched bound exists in this process only
    args = ["check", "--quick", "--strict", "--no-progress", "--no-figures", "--jobs", "1"]
    args += ["--out", str(tmp_path)]
    assert main(args) == 1
    entry = json.loads((tmp_path / "report.json").read_text())["claims"][0]
    assert entry["regression"] == "expected violated, got holds"


@pytest.mark.xdist_group("quick-report")  # its users on one worker: another would wait on its lock
@pytest.mark.e2e  # uses the whole `check --quick` (the suite's slowest fixture): CI's second pass
def test_a_run_computes_every_value_once(quick_report: tuple[int, Path]) -> None:
    """Every result the claims and figures of ``check --quick`` ask for is computed once (the store's
    computation log; loaded checkpoints, computed once per process, are not in it)."""
    _code, out = quick_report
    computations = json.loads((out / "report.json").read_text())["run"]["computations"]
    assert computations["computed_more_than_once"] == {} and computations["values"] > 50


@pytest.mark.xdist_group("quick-report")  # its users on one worker: another would wait on its lock
@pytest.mark.e2e  # the slowest end-to-end runs: CI's second pass (-m e2e)
def test_two_runs_give_the_same_report(quick_report: tuple[int, Path], tmp_path: Path) -> None:
    _code, first = quick_report
    assert main(["check", "--quick", "--no-progress", "--no-figures", "--out", str(tmp_path)]) == 0
    a = without_timings(json.loads((first / "report.json").read_text()))
    b = without_timings(json.loads((tmp_path / "report.json").read_text()))
    assert a["claims"] == b["claims"] and a["counts"] == b["counts"]
    assert a["run"]["git_commit"] == b["run"]["git_commit"] and a["run"]["versions"] == b["run"]["versions"]


@pytest.mark.xdist_group("quick-report")  # its users on one worker: another would wait on its lock
@pytest.mark.e2e  # uses the whole `check --quick` (the suite's slowest fixture): CI's second pass
def test_findings_command_rewrites_only_the_marked_section(
    quick_report: tuple[int, Path], tmp_path: Path
) -> None:
    _code, out = quick_report
    readme = tmp_path / "README.md"
    readme.write_text("# title\n\n<!-- findings:begin -->\nSTALE-FINDINGS\n<!-- findings:end -->\n\ntail\n")
    assert main(["findings", str(out), "--update", str(readme)]) == 0
    text = readme.read_text()
    assert text.startswith("# title\n") and text.endswith("<!-- findings:end -->\n\ntail\n")
    assert "STALE-FINDINGS" not in text and "`thm3.2.index.min.gap_sup`" in text
    assert findings.run.__module__ == "ropeproof.commands._findings"


def test_findings_refuses_to_rewrite_from_a_partial_report(tmp_path: Path) -> None:
    """A report with no claims (check --skip '*') used to empty the section and exit 0; a report that
    selected claims would silently drop the others."""
    readme = tmp_path / "README.md"
    original = "# t\n<!-- findings:begin -->\nKEEP\n<!-- findings:end -->\n"
    readme.write_text(original)
    for selection, message in ((["--skip", "*"], "--skip"), (["--only", "rope.*"], "--only rope")):
        out = tmp_path / f"rep{len(message)}"
        args = ["check", "--quick", "--no-progress", "--no-figures", "--jobs", "1", *selection]
        args += ["--out", str(out)]
        assert main(args) == 0
        assert main(["findings", str(out), "--update-readme", str(readme)]) == 2
        assert readme.read_text() == original, message
    empty = json.loads((tmp_path / "rep6" / "report.json").read_text())
    empty["run"]["flags"]["skip"] = []  # a report with no claims and no recorded selection
    (tmp_path / "empty.json").write_text(json.dumps(empty))
    assert main(["findings", str(tmp_path / "empty.json"), "--update-readme", str(readme)]) == 2
    assert readme.read_text() == original


def test_findings_never_replaces_a_link_nor_reads_a_special_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # `findings --update-readme LINK` replaced the link by a regular file (its target kept the old text);
    # `--update-readme /dev/full` (or a FIFO) read until the OOM killer stopped it (--update-readme is
    # --update's former name)
    import os

    real = tmp_path / "README.md"
    original = "# t\n<!-- findings:begin -->\nKEEP\n<!-- findings:end -->\n"
    real.write_text(original)
    (tmp_path / "link.md").symlink_to(real)
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "report.json").write_text("{}")
    cases = [
        (["report.json", "--update", "link.md"], "--update link.md is a symbolic link"),
        (["report.json", "--update-readme", "fifo"], "--update fifo is a FIFO, not a regular file"),
        (["report.json", "--update", "/dev/full"], "--update /dev/full is a character device"),
        (["fifo"], "REPORT fifo is a FIFO, not a regular file; only regular files are read"),
        (["/dev/zero"], "REPORT /dev/zero is a character device"),
    ]
    monkeypatch.chdir(tmp_path)
    for argv, message in cases:
        assert main(["findings", *argv]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and message in err[0], (argv, err)
    assert (tmp_path / "link.md").is_symlink() and real.read_text() == original
    assert sorted(p.name for p in tmp_path.iterdir()) == ["README.md", "fifo", "link.md", "report.json"]


def test_findings_reads_at_most_its_limits(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "report.json").write_text(json.dumps({"claims": []}) + " " * 100)
    monkeypatch.setattr(findings, "REPORT_LIMIT", 64)
    assert main(["findings", str(tmp_path / "report.json")]) == 2
    assert "is larger than 64 B, the most read from it" in capsys.readouterr().err


def test_the_page_lists_what_only_the_full_check_judges_with_its_pins() -> None:
    from ropeproof._findings_page import full_check_only_lines
    from ropeproof.claims import registered_claims
    from ropeproof.claims._training import LAST_LAYER_VERDICTS

    everything = {c.id for c in registered_claims()}
    assert full_check_only_lines(everything) == []  # a full run skips nothing
    quick = {c.id for c in registered_claims() if c.quick}
    lines = full_check_only_lines(quick)
    listed = [line.split("`")[1].split("`")[0] for line in lines if line.startswith("- ")]
    assert listed == [c.id for c in registered_claims() if not c.quick]
    (last,) = [line for line in lines if "`training.letter-last-layer`" in line]
    assert last.startswith("- finding: violated")
    for reading, verdict in LAST_LAYER_VERDICTS.items():
        assert f"reading '{reading}' {verdict}" in last
    assert last.endswith("differs from that over the earlier seeds: descriptive.")
    assert any(line.startswith("  - no correction: An observation about [A]'s own") for line in lines)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"version": 99}, "of version 99; this ropeproof reads versions 1 to 4"),
        ({"format": "other"}, "is not a ropeproof-report"),
    ],
)
def test_findings_refuses_a_report_of_another_version(
    change: dict, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A report.json of a version this ropeproof does not know was rendered as if it were version 4
    (issue 32, case 11, for every reader of report.json)."""
    from ropeproof._report import REPORT_VERSION
    from ropeproof._report_view import ReportView
    from ropeproof.machinery._errors import InputError

    assert REPORT_VERSION == 4
    (tmp_path / "report.json").write_text(json.dumps({"format": "ropeproof-report", "version": 4, **change}))
    assert main(["findings", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err
    with pytest.raises(InputError, match=message):
        ReportView.load(tmp_path)
