"""Streamed sweep files, shards and their exact merge (issue 13, item 4)."""

from __future__ import annotations

import io
import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ropeproof.cli import main
from ropeproof.theory.errors import InputError
from ropeproof.verify.exact.sweep import iter_index_sweep
from ropeproof.verify.exact.sweep_files import (
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


@settings(max_examples=40)
@given(start=st.integers(2, 50), rows=st.integers(1, 300), step=st.integers(1, 5), count=st.integers(1, 12))
def test_shards_tile_the_lengths(start: int, rows: int, step: int, count: int) -> None:
    stop = start + (rows - 1) * step
    if count > rows:
        with pytest.raises(InputError, match="only"):
            shard_lengths(start, stop, step, (1, count))
        return
    covered = []
    for k in range(1, count + 1):
        a, b = shard_lengths(start, stop, step, (k, count))
        covered.extend(range(a, b + 1, step))
    assert covered == list(range(start, stop + 1, step))


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
    with pytest.raises(InputError, match="does not exist"):
        atomic_output(tmp_path / "nowhere" / "x.jsonl")
    with pytest.raises(InputError, match="directory"):
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
