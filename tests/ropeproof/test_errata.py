"""Corrections (docs/theory.md section 9): every refuted paper statement has one or an explicit reason,
`ropeproof errata` prints and writes them, `check` reports them under the findings, and a correction whose
values or status change fails --strict."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from ropeproof import claims as claims_registry
from ropeproof._cli import main
from ropeproof._errata_report import ERRATA_FORMAT, render_errata_markdown
from ropeproof.claims import (
    Approx,
    Claim,
    ClaimSet,
    Outcome,
    registered_claims,
    registered_corrections,
    registered_no_corrections,
)
from ropeproof.claims._corrections import STATUSES, Correction, is_paper_finding, uncorrected_findings
from ropeproof.verify.studies.errata._correction_data import CorrectionData, Series
from ropeproof.verify.studies.errata._proofs import PROOFS

INDEX_CORRECTIONS = ("thm3.2.index.fixed-theta", "thm3.2.index.best-theta", "thm3.2.index.largest-gap")


def test_every_paper_finding_has_a_correction_or_a_reason() -> None:
    claims = registered_claims()
    assert uncorrected_findings(claims, registered_corrections(), registered_no_corrections()) == []
    findings = {c.id for c in claims if is_paper_finding(c)}
    assert len(findings) >= 15
    corrected = {cid for c in registered_corrections() for cid in c.corrects}
    # an observation about [A]'s trained models is measured on retrained ones, never "corrected"
    assert not any(cid.startswith("training.") for cid in corrected)
    for correction in registered_corrections():  # a correction corrects findings, nothing else
        assert set(correction.corrects) <= findings, correction.id


def test_a_finding_with_neither_is_named_and_a_reason_answers_it() -> None:
    topic = ClaimSet("t")
    topic.claim("t.refuted", "A statement of [A] that fails.", "[A] Theorem 9", expected="violated")(
        lambda ctx: Outcome.judge(False, {})
    )
    claims = list(topic)
    assert uncorrected_findings(claims, [], topic.no_corrections) == ["t.refuted"]
    with pytest.raises(ValueError, match="needs a reason"):
        topic.no_correction("t.refuted", "  ")
    topic.no_correction("t.refuted", "the right statement is not known yet")
    assert uncorrected_findings(claims, [], topic.no_corrections) == []
    with pytest.raises(ValueError, match="not in 't'"):
        topic.add_correction(dataclasses.replace(registered_corrections()[0], corrects=("t.nosuch",)))


def _errata(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict]:
    code = main(["errata", "--json", *args])
    return code, json.loads(capsys.readouterr().out)


def test_errata_json_lists_every_correction_with_its_fields(capsys: pytest.CaptureFixture[str]) -> None:
    code, doc = _errata(["--quick", "--strict"], capsys)
    assert code == 0 and doc["format"] == ERRATA_FORMAT and doc["regressions"] == []
    entries = {e["id"]: e for e in doc["corrections"]}
    assert list(entries) == [c.id for c in registered_corrections()]
    for e in entries.values():
        assert {"claim", "statement", "latex", "status", "range", "witness", "rows"} <= set(e)
        assert e["status"] in STATUSES and e["established"] == e["status"], e["id"]
        assert e["claim"] == e["corrects"][0] and e["witness"] and e["statement"] and e["latex"]
        assert all(len(row) == 3 and isinstance(row[0], int) for row in e["rows"])  # [n, corrected, exact]
        assert [r[0] + 1 for r in e["offset_rows"]] == [r[0] for r in e["rows"]]
        assert all(step["status"] == "checked" or step["status"].startswith("argued") for step in e["proof"])
        assert [step["name"] for step in e["proof"]] == [s.name for s in PROOFS[e["id"]]()], e["id"]
        argued = [step["name"] for step in e["proof"] if step["method"] == "argument"]
        assert e["argued_steps"] == argued and (e["status"] == "proved") == bool(argued), e["id"]
    for cid in INDEX_CORRECTIONS:  # the Index correction: for every n under both conventions
        assert "largest offset" in entries[cid]["offset_statement"] and "every" in entries[cid]["range"]
    # no code checks how the steps combine: the composition is argued, so every correction is proved
    assert {cid: entries[cid]["status"] for cid in INDEX_CORRECTIONS} == {
        "thm3.2.index.fixed-theta": "proved",
        "thm3.2.index.best-theta": "proved",  # and every unit attains: Euclid's lemma, argued
        "thm3.2.index.largest-gap": "proved",
    }
    assert entries["thm3.2.index.fixed-theta"]["argued_steps"] == ["composition"]
    assert entries["thm3.2.index.best-theta"]["argued_steps"] == ["attaining-angles", "composition"]
    best = entries["thm3.2.index.best-theta"]
    assert best["rows"][0] == [2, 2.0, 2.0] and best["figures"]["ratio_at_max_n"] == pytest.approx(
        3.99868, rel=1e-5
    )


_COMPUTED: dict[tuple[str, bool], CorrectionData] = {}
"""What the registered corrections computed, by ``(id, quick)``, shared by the tests below that run
``errata`` several times: each run recomputes the same tables (test_errata_json_lists_every_correction
and test_a_correction_whose_values_change_fails_check_strict compute them afresh)."""


def _computed_once(c: Correction) -> Correction:
    """``c`` with its computation done once per test process: what these tests vary is the declared
    status, the pins and the output directory, which are judged on every run."""

    def compute(ctx):  # type: ignore[no-untyped-def]
        key = (c.id, ctx.quick)
        if key not in _COMPUTED:
            _COMPUTED[key] = c.compute(ctx)
        return _COMPUTED[key]

    return dataclasses.replace(c, compute=compute)


def _perturbed(correction_id: str = "", **changes) -> list[Correction]:
    """The registered corrections, each computed once per test process (:func:`_computed_once`); the one
    whose id is ``correction_id`` (none by default) has ``changes``."""
    return [
        _computed_once(dataclasses.replace(c, **changes) if c.id == correction_id else c)
        for c in registered_corrections()
    ]


def test_errata_out_writes_an_erratum(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from ropeproof.commands import _errata as errata

    monkeypatch.setattr(errata, "registered_corrections", _perturbed)  # computed once
    out = tmp_path / "errata"
    assert main(["errata", "--quick", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "thm3.2.index.best-theta" in text and "proved" in text
    doc = json.loads((out / "errata.json").read_text())
    md = (out / "errata.md").read_text()
    assert md == render_errata_markdown(
        doc, {c.id: (c.reference, c.statement_for(True)) for c in registered_claims()}
    )
    for e in doc["corrections"]:
        assert f"### `{e['id']}` ({e['status']})" in md
    assert "**As reported**" in md and "**What fails.**" in md and "**Tightness**" in md
    assert main(["errata", "--quick", "--out", str(out)]) == 2  # not empty: refused, kept
    assert (out / "errata.md").read_text() == md
    assert main(["errata", "--quick", "--out", str(out), "--force"]) == 0


def test_a_changed_status_or_pin_fails_strict(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from ropeproof.commands import _errata as errata

    monkeypatch.setattr(
        errata, "registered_corrections", lambda: _perturbed("thm3.2.retrieval.margin", status="certified")
    )
    code, doc = _errata(["--quick", "--strict"], capsys)
    assert code == 1 and doc["regressions"] == ["thm3.2.retrieval.margin"]
    entry = next(e for e in doc["corrections"] if e["id"] == "thm3.2.retrieval.margin")
    assert entry["regression"].startswith("declared certified, established proved")

    best = next(c for c in registered_corrections() if c.id == "thm3.2.index.best-theta")
    pins = {**best.pins, "ratio_at_max_n": Approx(3.9, rel=1e-9)}
    monkeypatch.setattr(errata, "registered_corrections", lambda: _perturbed(best.id, pins=pins))
    code, doc = _errata(["--quick", "--strict"], capsys)
    assert code == 1 and doc["regressions"] == [best.id]
    assert main(["errata", "--quick"]) == 0  # without --strict the run still completes


def test_a_correction_whose_values_change_fails_check_strict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Shrink the best-angle correction's corrected values by 1%: the rows no longer equal the exact
    optimum, the status 'proved' is no longer established, and check --strict fails on the correction
    although its claim still comes out as pinned."""
    from ropeproof.verify.studies.errata import _index as errata_index

    real = errata_index.index_best_theta

    def shrunk(max_n: int, certified_up_to: int) -> CorrectionData:
        data = real(max_n, certified_up_to)
        s = data.series[0]
        smaller = Series(s.label, s.n, s.exact, s.reported, s.reported_offset, 0.99 * s.corrected)
        return dataclasses.replace(data, series=[smaller])

    monkeypatch.setattr(errata_index, "index_best_theta", shrunk)  # what the run's store computes with
    chosen = [c for c in registered_claims() if c.id == "thm3.2.index.pi2-over-2n2.best-theta"]
    monkeypatch.setattr(claims_registry, "registered_claims", lambda: chosen)
    # --jobs 1: the patched correction data exist in this process only
    args = ["check", "--quick", "--strict", "--no-progress", "--no-figures", "--jobs", "1"]
    args += ["--out", str(tmp_path)]
    assert main(args) == 1
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["claims"][0]["regression"] is None
    assert report["regressions"] == ["thm3.2.index.best-theta"]
    (entry,) = report["corrections"]
    assert entry["established"] == "contradicted" and "equality holds at every row" in entry["status_basis"]


@pytest.mark.xdist_group("quick-report")  # its users on one worker: another would wait on its lock
@pytest.mark.e2e  # uses the whole `check --quick` (the suite's slowest fixture): CI's second pass
def test_check_reports_the_corrections_under_the_findings(quick_report: tuple[int, Path]) -> None:
    code, out = quick_report
    assert code == 0
    md = (out / "report.md").read_text()
    assert md.index("## Findings") < md.index("## Corrections") < md.index("## All claims")
    report = json.loads((out / "report.json").read_text())
    ids = {e["id"] for e in report["corrections"]}
    assert ids == {c.id for c in registered_corrections()} and report["no_correction"] == []
    assert all(e["established"] == e["status"] and e["regression"] is None for e in report["corrections"])
    for name in ("errata_index_best_theta", "errata_retrieval_margin", "errata_remark31_readout"):
        assert name in report["figures"]
    rows = {r["n"]: r for r in _csv(out / "figures" / "errata_index_best_theta.csv")}
    assert float(rows["100"]["corrected"]) == pytest.approx(2 * np.sin(np.pi / 100) ** 2, rel=1e-12)


def _csv(path: Path) -> list[dict[str, str]]:
    import csv

    with path.open() as f:
        return list(csv.DictReader(f))


def test_claim_layer_data_stays_thin() -> None:
    """A correction is data next to its claim: its compute is a call into the verify layer."""
    for c in registered_corrections():
        assert isinstance(c, Correction) and c.reference == "docs/theory.md section 9"
        assert c.compute.__module__.startswith("ropeproof.claims."), c.id
    assert isinstance(registered_claims()[0], Claim)
