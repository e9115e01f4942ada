"""The sharded certified Index check equals the unsharded one (issue 13, item 4)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import mpmath
import numpy as np
import pytest

from ropeproof._cli import main
from ropeproof.machinery._errors import InputError
from ropeproof.verify.measure.exact._certified import (
    MAX_OFFSET,
    _index_bound_enclosure,
    certified_index,
    enclose_index_gaps,
)
from ropeproof.verify.sweep_runs._certified_shards import (
    GapRecords,
    enclose_gap_records,
    judge_records,
    merge_gap_records,
    offsets_for,
)

STATUS = ("holds", "holds-equal", "violated", "undecided")


@pytest.mark.parametrize("theta", [0.866, 1e-3, 2.0944, 1e6])
@pytest.mark.parametrize("term", ["min", "one-minus-cos", "pi2-over-2n2"])
def test_merged_records_judge_like_the_unsharded_check(theta: float, term: str) -> None:
    n = 1200
    whole = enclose_gap_records([theta], None, 1, n - 1, chunk=300)
    parts = [enclose_gap_records([theta], None, *offsets_for(n, (k, 5)), m_last=n - 1) for k in range(1, 6)]
    merged = merge_gap_records(parts[::-1])
    assert (merged.lo_m, merged.lo_v, merged.hi_m, merged.hi_v) == (
        whole.lo_m,
        whole.lo_v,
        whole.hi_m,
        whole.hi_v,
    )
    got = judge_records(merged, n, term)
    want = certified_index(theta, n, term=term)
    for q in ("margin_inf", "gap_sup"):
        c = want.comparisons[q]
        assert c.detail["refined_rows"] == 0  # no refinement, so the statuses are comparable row for row
        assert {s: got.readings[q].counts.get(s, 0) for s in STATUS} == {s: c.count(s) for s in STATUS}
        v = c.violated_n
        assert got.readings[q].first_violation_n == (int(v[0]) if v.size else None)


def test_records_round_trip_exactly() -> None:
    rec = enclose_gap_records([0.0027], None, 1, 500)
    back = GapRecords.from_json(rec.to_json())
    back.seconds = rec.seconds  # stored rounded to milliseconds
    assert back == rec
    with pytest.raises(InputError, match="not a ropeproof-gap-records"):
        GapRecords.from_json('{"format": "other"}')


def test_merge_and_judge_refuse_bad_parts() -> None:
    a = enclose_gap_records([0.5], None, 1, 100)
    b = enclose_gap_records([0.5], None, 102, 200)
    with pytest.raises(InputError, match="do not tile"):
        merge_gap_records([a, b])
    with pytest.raises(InputError, match="different checks"):
        merge_gap_records([a, enclose_gap_records([0.6], None, 101, 200)])
    with pytest.raises(InputError, match=r"need 1\.\.199"):
        judge_records(a, 200)
    with pytest.raises(InputError, match="one-plane"):
        judge_records(enclose_gap_records([0.5, 0.1], None, 1, 10), 11)


def test_cli_shards_merge_to_the_unsharded_verdict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["sweep", "certified-index", "--theta", "0.866", "--lengths", "2:2500"]
    files = []
    for k in (1, 2, 3, 4):
        files.append(str(tmp_path / f"r{k}.json"))
        assert main([*base, "--shard", f"{k}/4", "--out", files[-1]]) == 0
    assert main(["sweep", "merge", *files[::-1]]) == 0
    merged = json.loads(capsys.readouterr().out)
    assert main(base) == 0
    whole = json.loads(capsys.readouterr().out)
    assert merged == whole and "shard_seconds" not in whole  # no timings: the same bytes every run
    direct = certified_index(0.866, 2500).comparisons["margin_inf"]
    assert whole["readings"]["margin_inf"]["rows"] == {s: direct.count(s) for s in STATUS}
    assert main([*base[:-1], "3:2500"]) == 2


# ------------------------------------------------ records are verified before they are merged (issue 22)


def _records_file(tmp_path: Path, edit) -> list[str]:
    """Two shard files of n <= 600, the second edited by ``edit(doc)`` (a dict; its sha256 dropped
    unless ``edit`` keeps it), as command-line arguments."""
    paths = []
    for k in (1, 2):
        rec = enclose_gap_records([0.866], None, *offsets_for(600, (k, 2)), m_last=599)
        doc = json.loads(rec.to_json())
        if k == 2:
            doc.pop("sha256")
            edit(doc)
        path = tmp_path / f"rec{k}.json"
        path.write_text(json.dumps(doc))
        paths.append(str(path))
    return paths


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d["hi_v"].__setitem__(0, "inf"), "finite"),
        (lambda d: d["lo_v"].__setitem__(-1, "nan"), "finite"),
        (lambda d: d["lo_v"].__setitem__(0, "-inf"), "finite"),
        (lambda d: d["lo_v"].__setitem__(0, (-1.0).hex()), ">= 0"),
        (lambda d: d["hi_v"].reverse(), "strictly decrease"),
        (lambda d: d["lo_m"].reverse(), "increase"),
        (lambda d: d["lo_v"].__setitem__(0, (9.0).hex()), "above the upper end"),
        (lambda d: d["hi_m"].__setitem__(0, d["m_start"] + 1), "start at m_start"),
    ],
)
def test_merge_refuses_records_with_bad_enclosures(edit, message, tmp_path: Path, capsys) -> None:
    paths = _records_file(tmp_path, edit)
    assert main(["sweep", "merge", *paths]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err


def test_merge_refuses_altered_records(tmp_path: Path, capsys) -> None:
    """A lower end lowered (still a valid-looking enclosure, so only the digest shows it) is refused."""
    rec = enclose_gap_records([0.866], None, 1, 599)
    doc = json.loads(rec.to_json())
    doc["lo_v"][-1] = (rec.lo_v[-1] / 2).hex()
    (tmp_path / "r.json").write_text(json.dumps(doc))
    assert main(["sweep", "merge", str(tmp_path / "r.json")]) == 2
    assert "SHA-256" in capsys.readouterr().err
    with pytest.raises(InputError, match="finite"):
        merge_gap_records([GapRecords([0.5], [1.0], 80, 1, 3, [1], [0.1], [1], [math.nan])])


# ------------------------------ a missing shard, a missing digest, the previous format (issue 32, case 3)


def test_merge_refuses_three_shards_of_four(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Shards 1..3 of 4 tile m = 1..1874 and were judged as a check of n <= 1875; every records file now
    names the whole check's range, so any set short of all four is refused, the last one included."""
    base = ["sweep", "certified-index", "--theta", "0.866", "--lengths", "2:2500"]
    files = [str(tmp_path / f"r{k}.json") for k in (1, 2, 3, 4)]
    for k, f in enumerate(files, 1):
        assert main([*base, "--shard", f"{k}/4", "--out", f]) == 0
    assert json.loads(Path(files[0]).read_text())["m_last"] == 2499
    for subset in (files[:3], files[1:], files[:2] + files[3:]):
        assert main(["sweep", "merge", *subset]) == 2
        err = capsys.readouterr().err
        assert ("a shard is missing" in err or "do not tile" in err) and err.count("\n") == 1, err
    # a last shard that tiles on but belongs to a check of n <= 2001
    parts = [GapRecords.from_json(Path(f).read_text()) for f in files[:3]]
    with pytest.raises(InputError, match=r"different lengths \(last offsets \[2000, 2499\]\)"):
        merge_gap_records([*parts, enclose_gap_records([0.866], None, 1875, 2000, m_last=2000)])
    assert main(["sweep", "merge", *files]) == 0


def test_merge_refuses_a_file_without_its_digest(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = json.loads(enclose_gap_records([0.866], None, 1, 599).to_json())
    del doc["sha256"]
    (tmp_path / "r.json").write_text(json.dumps(doc))
    assert main(["sweep", "merge", str(tmp_path / "r.json")]) == 2
    err = capsys.readouterr().err
    assert "no sha256" in err and err.count("\n") == 1, err
    doc["version"] = 1  # the previous format (no m_last, digest optional) is refused by name
    del doc["m_last"]
    (tmp_path / "r.json").write_text(json.dumps(doc))
    assert main(["sweep", "merge", str(tmp_path / "r.json")]) == 2
    assert "version 1" in capsys.readouterr().err


def test_m_last_is_checked() -> None:
    with pytest.raises(InputError, match="m_last = 50"):
        enclose_gap_records([0.5], None, 1, 100, m_last=50)
    with pytest.raises(InputError, match="m_last = 50"):
        GapRecords([0.5], [1.0], 80, 1, 100, [1], [0.1], [1], [0.2], m_last=50).validate()


# ------------------------------------------- offsets past 2^26: the 10^9 recipe's shards (issue 28, item 6)

BILLION_LAST = offsets_for(10**9, (1000, 1000))


def test_offsets_past_2_26_are_enclosed() -> None:
    """Arb reduces m theta exactly at a precision that grows with m: the enclosures stay ulp-wide
    and contain mpmath's value at 400 bits, up to the largest offset."""
    assert BILLION_LAST == (999_000_000, 999_999_999)
    for theta in (0.866, 1e-3, 1e6):
        for m in (2**26 - 1, 2**26, 2**26 + 1, 999_999_999, 2**40 + 3, MAX_OFFSET):
            lo, hi = enclose_index_gaps([theta], [1.0], m, first_m=m)
            with mpmath.workprec(400):
                exact = 2 * mpmath.sin(m * mpmath.mpf(theta) / 2) ** 2
            assert lo[0] <= exact <= hi[0] and hi[0] - lo[0] <= 4e-16 * hi[0], (theta, m)
    with pytest.raises(InputError, match="2\\^53 - 2"):
        enclose_gap_records([0.5], None, MAX_OFFSET, MAX_OFFSET + 1)


def test_bound_enclosure_past_2_26() -> None:
    """pi^2 / (2 n^2) with n^2 no longer exact in float64: the enclosure still holds it."""
    n = np.array([2**26 - 1, 2**26, 2**26 + 1, 94906267, 10**9, 2**53 - 1])
    lo, hi, _ = _index_bound_enclosure(0.866, n, 80)
    with mpmath.workprec(300):
        for i, nn in enumerate(n.tolist()):
            exact = min(2 * mpmath.sin(mpmath.mpf(0.866) / 2) ** 2, mpmath.pi**2 / (2 * mpmath.mpf(nn) ** 2))
            assert lo[i] <= exact <= hi[i], nn


def _check_records_against_mpmath(rec: GapRecords, theta: float) -> None:
    rec.validate()
    with mpmath.workprec(400):
        for m, v in [*zip(rec.lo_m, rec.lo_v, strict=True)][-4:]:
            assert v <= 2 * mpmath.sin(m * mpmath.mpf(theta) / 2) ** 2, m
        for m, v in [*zip(rec.hi_m, rec.hi_v, strict=True)][-4:]:
            assert v >= 2 * mpmath.sin(m * mpmath.mpf(theta) / 2) ** 2, m


def test_top_of_the_last_billion_shard() -> None:
    """The top 2^13 offsets of the last shard of the README's 10^9 recipe (the whole shard, 10^6
    offsets, is the slow test below)."""
    rec = enclose_gap_records([0.866], None, BILLION_LAST[1] - 2**13 + 1, BILLION_LAST[1])
    _check_records_against_mpmath(rec, 0.866)
    assert GapRecords.from_json(rec.to_json()).hi_v == rec.hi_v


@pytest.mark.slow
def test_last_shard_of_the_billion_recipe(tmp_path: Path) -> None:
    """The README's recipe, shard 1000 of 1000: offsets 999,000,000 .. 999,999,999 (~5 s)."""
    out = tmp_path / "rec_1000.json"
    argv = ["sweep", "certified-index", "--theta", "0.866", "--lengths", "2:1000000000"]
    assert main([*argv, "--shard", "1000/1000", "--out", str(out)]) == 0
    rec = GapRecords.from_json(out.read_text())
    assert (rec.m_start, rec.m_stop) == BILLION_LAST
    _check_records_against_mpmath(rec, 0.866)
