"""Streamed sweep files, shards and their exact merge (issue 13, item 4)."""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import random
import stat
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ropeproof._cli import main
from ropeproof.machinery._errors import InputError, OutputError
from ropeproof.verify.measure.exact._sweep import iter_index_sweep
from ropeproof.verify.sweep_runs._sweep_files import (
    SweepHeader,
    SweepSummary,
    atomic_output,
    merge_jsonl,
    parse_shard,
    read_jsonl,
    shard_lengths,
    write_rows,
)

SWEEPS = [
    ["index", "--theta", "0.866", "--lengths", "2:5000:7"],
    ["index", "--theta", "1e-6", "--lengths", "3:4000"],
    ["retrieval", "--alphabet", "8", "--theta", "0.0027", "--lengths", "2:3000:5"],
    ["retrieval", "--alphabet", "3", "--theta", "0.9", "--lengths", "2:60"],
]


@pytest.mark.parametrize("argv", SWEEPS)
def test_merged_shards_equal_the_unsharded_file(argv: list[str], tmp_path: Path) -> None:
    full = tmp_path / "full.jsonl"
    assert main(["sweep", *argv, "--jsonl", "--device", "cpu", "--out", str(full)]) == 0
    parts = []
    for k in (1, 2, 3):
        part = tmp_path / f"part{k}.jsonl"
        assert (
            main(["sweep", *argv, "--jsonl", "--device", "cpu", "--shard", f"{k}/3", "--out", str(part)]) == 0
        )
        parts.append(str(part))
    random.Random(0).shuffle(parts)  # the order on the command line does not matter
    merged = tmp_path / "merged.jsonl"
    assert main(["sweep", "merge", *parts, "--out", str(merged)]) == 0
    assert merged.read_bytes() == full.read_bytes()
    header, lines, summary = read_jsonl(merged)
    rows = [json.loads(line) for line in lines]
    assert summary.rows == len(rows) and rows[0]["n"] == header.first_n and rows[-1]["n"] == header.last_n
    start, stop, step = (int(x) for x in (argv[argv.index("--lengths") + 1] + ":1").split(":")[:3])
    assert [r["n"] for r in rows] == sorted({*range(start, stop + 1, step), stop})  # B itself, always
    counts = {q: sum(r.rows.values()) for q, r in summary.readings.items()}
    assert counts == {q: len(rows) for q in ("gap_sup", "gap_inf", "margin_inf")}


def test_json_and_jsonl_hold_the_same_rows(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["sweep", "retrieval", "--theta", "0.0027", "--lengths", "2:400:3", "--device", "cpu"]
    assert main([*argv, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert main([*argv, "--jsonl", "--out", str(tmp_path / "r.jsonl")]) == 0
    _h, lines, summary = read_jsonl(tmp_path / "r.jsonl")
    assert doc["rows"] == [json.loads(x) for x in lines]
    assert doc["summary"] == summary.to_dict()
    assert doc["lengths"] == [2, 400, 3] and doc["shard"] is None


def test_merge_refuses_what_does_not_belong_together(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["sweep", "index", "--lengths", "2:300", "--jsonl", "--device", "cpu"]
    for k in (1, 2):
        main([*base, "--theta", "0.5", "--shard", f"{k}/2", "--out", str(tmp_path / f"a{k}.jsonl")])
    main([*base, "--theta", "0.6", "--shard", "2/2", "--out", str(tmp_path / "b2.jsonl")])
    capsys.readouterr()
    cases = [
        ([tmp_path / "a1.jsonl"], "every shard exactly once"),
        ([tmp_path / "a1.jsonl", tmp_path / "b2.jsonl"], "different sweeps"),
        ([tmp_path / "a1.jsonl", tmp_path / "a1.jsonl"], "do not tile"),
    ]
    truncated = tmp_path / "t.jsonl"
    truncated.write_text((tmp_path / "a2.jsonl").read_text().rsplit("\n", 2)[0] + "\n")
    cases.append(([tmp_path / "a1.jsonl", truncated], "not a complete sweep"))
    for files, message in cases:
        assert main(["sweep", "merge", *map(str, files), "--out", str(tmp_path / "m.jsonl")]) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1 and err.startswith("ropeproof sweep: error:")
    assert not (tmp_path / "m.jsonl").exists()


@settings(max_examples=80)
@given(start=st.integers(2, 50), span=st.integers(0, 300), step=st.integers(1, 7), count=st.integers(1, 12))
def test_shards_tile_the_lengths(start: int, span: int, step: int, count: int) -> None:
    """The shards tile A, A + STEP, ... <= B and B itself (when the steps miss it), in order."""
    stop = start + span
    selected = sorted({*range(start, stop + 1, step), stop})
    if count > len(selected):
        with pytest.raises(InputError, match="only"):
            shard_lengths(start, stop, step, (1, count))
        return
    covered = []
    for k in range(1, count + 1):
        a, b = shard_lengths(start, stop, step, (k, count))
        covered.extend(n for n in selected if a <= n <= b)
    assert covered == selected and shard_lengths(start, stop, step, None) == (start, stop)


def test_parse_shard() -> None:
    assert parse_shard("3/8") == (3, 8)
    for bad in ("0/3", "4/3", "a/b", "3", "1/2/3"):
        with pytest.raises(InputError, match="shard"):
            parse_shard(bad)


def test_atomic_output_leaves_nothing_behind_on_failure(tmp_path: Path) -> None:
    target = tmp_path / "x.jsonl"
    header = SweepHeader("index", {"theta": 0.5}, "float64", "b", (2, 50, 1), None, 2, 50)

    def failing():
        yield from iter_index_sweep(0.5, 2, 20)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt), atomic_output(target) as out:
        write_rows(out, header, failing(), True)
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(OutputError, match="does not exist"):
        atomic_output(tmp_path / "nowhere" / "x.jsonl")
    with pytest.raises(OutputError, match="directory"):
        atomic_output(tmp_path)


def test_summaries_add_up() -> None:
    header = SweepHeader("index", {"theta": 0.866}, "float64", "b", (2, 400, 1), None, 2, 400)
    whole = write_rows(io.StringIO(), header, iter_index_sweep(0.866, 2, 400), True)
    a = write_rows(io.StringIO(), header, iter_index_sweep(0.866, 2, 150), True)
    b = write_rows(io.StringIO(), header, iter_index_sweep(0.866, 151, 400), True)
    a.add(b)
    assert a.to_dict() == whole.to_dict() == SweepSummary.from_dict(whole.to_dict()).to_dict()
    assert whole.readings["gap_sup"].first_violation_n == 4


def test_merge_needs_files() -> None:
    with pytest.raises(InputError, match="at least one"):
        merge_jsonl([], io.StringIO())


# ------------------------------------------------------------------ merge verifies, not trusts (issue 22)


def _shards(tmp_path: Path, count: int = 3) -> tuple[list[Path], Path]:
    argv = ["sweep", "index", "--theta", "0.866", "--lengths", "2:400:3", "--jsonl", "--device", "cpu"]
    full = tmp_path / "full.jsonl"
    assert main([*argv, "--out", str(full)]) == 0
    parts = []
    for k in range(1, count + 1):
        part = tmp_path / f"p{k}.jsonl"
        assert main([*argv, "--shard", f"{k}/{count}", "--out", str(part)]) == 0
        parts.append(part)
    return parts, full


def _redigested(head: str, rows: list[str], tail: dict) -> str:
    """The file with the check's SHA-256 rewritten to match (header line, row lines, summary)."""
    content = head + "".join(rows) + json.dumps(tail["summary"], allow_nan=False)
    tail["check"]["sha256"] = hashlib.sha256(content.encode()).hexdigest()
    return head + "".join(rows) + json.dumps(tail) + "\n"


def _edit_rows(path: Path, edit, redigest: bool = False) -> None:
    """Apply ``edit`` to the row lines; with ``redigest`` also rewrite the check's SHA-256 to match, so
    only the recount of the summary or the rows' own numbers can catch the change."""
    lines = path.read_text().splitlines(keepends=True)
    rows = edit(lines[1:-1])
    if redigest:
        path.write_text(_redigested(lines[0], rows, json.loads(lines[-1])))
    else:
        path.write_text(lines[0] + "".join(rows) + lines[-1])


def _refused(parts: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], message: str) -> None:
    out = tmp_path / "merged.jsonl"
    capsys.readouterr()
    assert main(["sweep", "merge", *map(str, parts), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert message in err, err
    assert err.count("\n") == 1 and err.startswith("ropeproof sweep: error:")
    assert not out.exists()


def _swap(rows: list[str]) -> list[str]:
    return [rows[1], rows[0], *rows[2:]]


def _alter(rows: list[str]) -> list[str]:
    row = json.loads(rows[0])
    row["bound_status"] = "violated" if row["bound_status"] != "violated" else "holds"
    return [json.dumps(row) + "\n", *rows[1:]]


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda rows: rows[:5] + rows[6:], "expected n="),  # a row deleted in the middle
        (lambda rows: rows[:-1], "rows end at"),  # the last row deleted
        (lambda rows: rows[:5] + rows[4:], "duplicated or out of order"),
        (_swap, "expected n=2"),  # reordered
        (_alter, "SHA-256"),  # a status changed
        (lambda rows: [rows[0].replace('"gap_sup": ', '"gap_sup": 1', 1), *rows[1:]], "SHA-256"),
    ],
)
def test_merge_refuses_a_tampered_shard(edit, message, tmp_path: Path, capsys) -> None:
    parts, _full = _shards(tmp_path)
    _edit_rows(parts[1] if message != "expected n=2" else parts[0], edit)
    _refused(parts, tmp_path, capsys, message)


def _to_tight(rows: list[str]) -> list[str]:
    """The first ``holds`` row of gap_sup made ``tight-holds``: consistent with its numbers and its
    ``bound_holds``, so only the recount catches it."""
    out = list(rows)
    for i, line in enumerate(out):
        row = json.loads(line)
        if row["bound_status"] == "holds":
            row["bound_status"] = "tight-holds"
            out[i] = json.dumps(row) + "\n"
            return out
    raise AssertionError("no holds row")


def test_merge_recounts_the_summary_from_the_rows(tmp_path: Path, capsys) -> None:
    """A status changed and the digest rewritten to match: the recount still refuses."""
    parts, _full = _shards(tmp_path)
    _edit_rows(parts[0], _to_tight, redigest=True)
    _refused(parts, tmp_path, capsys, "summary counts")


def test_merge_refuses_a_summary_that_disagrees_with_the_rows(tmp_path: Path, capsys) -> None:
    parts, full = _shards(tmp_path)
    lines = parts[2].read_text().splitlines(keepends=True)
    tail = json.loads(lines[-1])
    tail["summary"]["rows"] += 1
    parts[2].write_text("".join(lines[:-1]) + json.dumps(tail) + "\n")
    _refused(parts, tmp_path, capsys, "but its check says")
    # the untouched shards still merge to the unsharded file
    (tmp_path / "again").mkdir()
    parts, full = _shards(tmp_path / "again")
    assert main(["sweep", "merge", *map(str, parts), "--out", str(tmp_path / "m.jsonl")]) == 0
    assert (tmp_path / "m.jsonl").read_bytes() == full.read_bytes()
    _h, lines_, summary = read_jsonl(tmp_path / "m.jsonl")
    assert summary.rows == len(list(lines_))


@pytest.mark.parametrize("version", [1, 2])
def test_merge_refuses_files_of_the_previous_format(version: int, tmp_path: Path, capsys) -> None:
    parts, _full = _shards(tmp_path, 2)
    lines = parts[0].read_text().splitlines(keepends=True)
    head = json.loads(lines[0])
    head["version"] = version
    parts[0].write_text(json.dumps(head) + "\n" + "".join(lines[1:]))
    _refused(parts, tmp_path, capsys, f"older ropeproof (sweep format v{version}")


# ------------------ header and summary under the digest, statuses against numbers, no NaN (issue 32, case 5)


def _edit_file(path: Path, edit, redigest: bool = False) -> None:
    """``edit(header, rows, tail)`` on the parsed file (rows as dicts), written back; with
    ``redigest`` the check's SHA-256 is rewritten to match."""
    lines = path.read_text().splitlines(keepends=True)
    head, rows, tail = json.loads(lines[0]), [json.loads(x) for x in lines[1:-1]], json.loads(lines[-1])
    edit(head, rows, tail)
    head_line, row_lines = json.dumps(head) + "\n", [json.dumps(r) + "\n" for r in rows]
    if redigest:
        path.write_text(_redigested(head_line, row_lines, tail))
    else:
        path.write_text(head_line + "".join(row_lines) + json.dumps(tail) + "\n")


def _first(rows: list[dict], status: str) -> dict:
    return next(r for r in rows if r["bound_status"] == status)


@pytest.mark.parametrize(
    "edit",
    [
        lambda h, r, t: h["params"].__setitem__("theta", 0.5),  # in every shard: they still agree
        lambda h, r, t: h.__setitem__("bound", "anything"),
        lambda h, r, t: t["summary"]["readings"]["gap_sup"].__setitem__("refined_rows", 7),
        lambda h, r, t: t["summary"]["readings"]["gap_inf"].__setitem__("identity", "none"),
        lambda h, r, t: t["summary"]["readings"]["margin_inf"].__setitem__("undecided_reasons", {"x": 0}),
        lambda h, r, t: t["summary"]["readings"]["gap_sup"].__setitem__("verdict", "holds"),
    ],
)
def test_the_digest_covers_the_header_and_the_summary(edit, tmp_path: Path, capsys) -> None:
    """Every field of a shard is under its SHA-256: a header parameter changed in every shard alike
    (so the shards still agree) merged into a file about another angle before."""
    parts, _full = _shards(tmp_path, 2)
    for part in parts:
        _edit_file(part, edit)
    _refused(parts, tmp_path, capsys, "SHA-256 of its header, rows and summary differs")


def _violated_below(h: dict, rows: list[dict], t: dict) -> None:
    row = _first(rows, "violated")
    row["gap_sup"] = row["bound"] / 2


def _holds_above(h: dict, rows: list[dict], t: dict) -> None:
    row = _first(rows, "violated")
    row["bound_status"], row["bound_holds"] = "holds", True
    counts = t["summary"]["readings"]["gap_sup"]["rows"]
    counts["violated"] -= 1
    counts["holds"] = counts.get("holds", 0) + 1
    t["summary"]["readings"]["gap_sup"]["identity"] = None  # the numbers alone decide gap_sup now
    for r in rows:
        if r["bound_status"] == "holds-equal":
            r["bound_status"] = "tight-equal"
    counts["tight-equal"] = counts.pop("holds-equal", 0)


def _holds_column(h: dict, rows: list[dict], t: dict) -> None:
    _first(rows, "violated")["bound_holds"] = True


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (_violated_below, "bound_status is 'violated' but gap_sup = "),
        (_holds_above, "bound_status is 'holds' without an identity but gap_sup = "),
        (_holds_column, "bound_holds is True but bound_status is 'violated'"),
    ],
)
def test_statuses_are_checked_against_their_numbers(edit, message, tmp_path: Path, capsys) -> None:
    """The digest rewritten to match: a status its row's numbers contradict is still refused."""
    parts, _full = _shards(tmp_path, 2)
    _edit_file(parts[0], edit, redigest=True)
    _refused(parts, tmp_path, capsys, message)


@pytest.mark.parametrize("where", ["row", "summary", "header"])
def test_nan_and_infinity_are_refused(where: str, tmp_path: Path, capsys) -> None:
    """``json`` reads NaN and Infinity; ropeproof writes non-finite numbers as null, so a file holding
    them was not written by it (an Infinity count stopped the merge with an internal error)."""
    parts, _full = _shards(tmp_path, 2)

    def edit(h: dict, rows: list[dict], t: dict) -> None:
        if where == "row":
            rows[3]["gap_inf"] = math.nan
        elif where == "summary":
            t["summary"]["readings"]["gap_sup"]["enclosure_contradictions"] = math.inf
        else:
            h["params"]["theta"] = -math.inf

    _edit_file(parts[1], edit, redigest=False)
    _refused(parts, tmp_path, capsys, "is not a value ropeproof writes")


def test_summary_counts_must_be_integers(tmp_path: Path, capsys) -> None:
    parts, _full = _shards(tmp_path, 2)
    _edit_file(parts[1], lambda h, r, t: t["summary"]["readings"]["gap_sup"].__setitem__("refined_rows", 0.5))
    _refused(parts, tmp_path, capsys, "refined_rows must be an integer")


# ----------------------------------------------------------------- --out follows check's rule (issue 22)

ARGV = ["sweep", "index", "--theta", "0.5", "--lengths", "2:20", "--jsonl"]


def _one_line_refusal(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err


def test_out_refuses_an_existing_file_without_force(tmp_path: Path, capsys) -> None:
    target = tmp_path / "r.jsonl"
    target.write_text("keep me")
    _one_line_refusal(capsys, [*ARGV, "--out", str(target)], "exists; pass --force")
    assert target.read_text() == "keep me"
    assert main([*ARGV, "--out", str(target), "--force"]) == 0
    assert target.read_text().startswith('{"format": "ropeproof-sweep"')
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.jsonl"]  # no temporary file left


def test_out_never_writes_through_or_replaces_a_symlink(tmp_path: Path, capsys) -> None:
    real = tmp_path / "real.jsonl"
    real.write_text("keep me")
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    broken = tmp_path / "broken.jsonl"
    broken.symlink_to(tmp_path / "nowhere.jsonl")
    for path in (link, broken):
        for force in ([], ["--force"]):
            _one_line_refusal(capsys, [*ARGV, "--out", str(path), *force], "is a symbolic link")
    assert link.is_symlink() and broken.is_symlink() and real.read_text() == "keep me"
    assert not (tmp_path / "nowhere.jsonl").exists()


def test_out_refuses_a_fifo_and_a_device_node(tmp_path: Path, capsys) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for force in ([], ["--force"]):
        _one_line_refusal(capsys, [*ARGV, "--out", str(fifo), *force], "is a FIFO, not a regular file")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    if os.geteuid() != 0:
        pytest.skip("a device node needs root")
    node = tmp_path / "null"
    os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # /dev/null's numbers
    for force in ([], ["--force"]):
        _one_line_refusal(capsys, [*ARGV, "--out", str(node), *force], "is a character device")
    assert stat.S_ISCHR(os.lstat(node).st_mode)


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_out_mode_follows_the_umask(umask: int, mode: int, tmp_path: Path) -> None:
    old = os.umask(umask)
    try:
        assert main([*ARGV, "--out", str(tmp_path / "r.jsonl")]) == 0
        assert main(["sweep", "merge", str(tmp_path / "r.jsonl"), "--out", str(tmp_path / "m.jsonl")]) == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "r.jsonl").st_mode) == mode
    assert stat.S_IMODE(os.stat(tmp_path / "m.jsonl").st_mode) == mode
