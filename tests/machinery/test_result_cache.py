"""Results kept across runs: ropeproof.machinery._result_cache, and the store reading it."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ropeproof.machinery._errors import InputError
from ropeproof.machinery._result_cache import (
    DATABASE,
    MISSING,
    ResultCache,
    cache_info,
    code_version,
    default_cache_dir,
    package_files,
)
from ropeproof.machinery._result_store import ResultStore, data_product, object_product

CALLS: list[str] = []


@data_product("test.cached-rows")
def ROWS(store: ResultStore, n: int) -> list[int]:
    CALLS.append(f"rows {n}")
    return list(range(n))


@object_product("test.cached-object")
def OBJECT(store: ResultStore, n: int) -> dict[str, Any]:
    CALLS.append(f"object {n}")
    offset = 10 * n
    return {"n": n, "shift": lambda i: i + offset}  # a closure: pickled with cloudpickle


@object_product("test.cached-model", shared=False)
def MODEL(store: ResultStore) -> str:
    CALLS.append("model")
    return "loaded"


@pytest.fixture(autouse=True)
def _clear() -> None:
    CALLS.clear()


def test_a_second_run_reads_what_the_first_computed(tmp_path: Path) -> None:
    cache = ResultCache(tmp_path / "cache", version="v1")
    first = ResultStore(tmp_path / "run1", cache=cache)
    assert first.get(ROWS, n=3) == [0, 1, 2] and first.get(OBJECT, n=2)["shift"](1) == 21
    first.get(MODEL)
    assert CALLS == ["rows 3", "object 2", "model"]
    CALLS.clear()
    second = ResultStore(tmp_path / "run2", cache=ResultCache(tmp_path / "cache", version="v1"))
    assert second.get(ROWS, n=3) == [0, 1, 2] and second.get(OBJECT, n=2)["shift"](1) == 21
    second.get(MODEL)
    assert CALLS == ["model"]  # a loaded checkpoint is per process, never cached
    here = f"{__name__}:"  # a product defined outside the package: its module is part of its keys
    assert sorted(second.from_cache) == [here + 'test.cached-object{"n":2}', here + 'test.cached-rows{"n":3}']
    assert second.computed == [here + "test.cached-model{}"]
    # the run's own directory holds the value as if computed: a saved report reads it
    saved = json.loads(next((tmp_path / "run2").glob("test.cached-rows-*.json")).read_text())
    assert saved["value"] == [0, 1, 2]
    assert sum(second.computation_counts(".from-cache").values()) == 2


def test_another_code_version_computes_anew(tmp_path: Path) -> None:
    ResultStore(cache=ResultCache(tmp_path, version="v1")).get(ROWS, n=4)
    other = ResultStore(cache=ResultCache(tmp_path, version="v2"))
    other.get(ROWS, n=4)
    assert CALLS == ["rows 4", "rows 4"] and other.from_cache == []
    assert ResultCache(tmp_path, version="v1").get_object("nothing") is MISSING


def test_a_store_without_a_cache_or_that_may_not_compute_never_reads_one(tmp_path: Path) -> None:
    cache = ResultCache(tmp_path / "cache", version="v1")
    ResultStore(cache=cache).get(ROWS, n=5)
    ResultStore().get(ROWS, n=5)
    assert CALLS == ["rows 5", "rows 5"]
    (tmp_path / "saved").mkdir()
    assert ResultStore.saved(tmp_path / "saved").cache is None


def test_the_code_version_covers_the_code_and_the_shipped_data() -> None:
    files = package_files()
    names = {f.name for f in files}
    assert {"_result_cache.py", "_rope.py", "_cli.py", "model.safetensors", "best_known.json"} <= names
    assert len(code_version()) == 64 and code_version() == code_version()


def test_the_cache_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ROPEPROOF_CACHE_DIR", str(tmp_path / "mine"))
    assert default_cache_dir() == tmp_path / "mine"
    monkeypatch.delenv("ROPEPROOF_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "ropeproof"
    (tmp_path / "file").write_text("")
    with pytest.raises(InputError, match="is not a directory"):
        ResultCache(tmp_path / "file")


def test_an_unchanged_second_check_computes_nothing_that_went_through_the_store(tmp_path: Path) -> None:
    from ropeproof._cli import main

    argv = ["check", "--quick", "--only", "thm3.2.index.pi2-over-2n2.*", "--jobs", "1", "--no-progress"]
    argv += ["--no-figures"]
    argv += ["--cache-dir", str(tmp_path / "cache")]
    from ropeproof._report import without_timings
    from ropeproof._work_order import HISTORY

    assert main([*argv, "--out", str(tmp_path / "a")]) == 0
    timings = (tmp_path / "cache" / HISTORY).read_text()
    assert main([*argv, "--out", str(tmp_path / "b")]) == 0
    # the run that read every value keeps the seconds of the run that computed them, which order the next
    assert (tmp_path / "cache" / HISTORY).read_text() == timings
    before = {f: f.stat().st_mtime_ns for f in (tmp_path / "cache").rglob("*")}
    assert main([*argv, "--no-cache", "--out", str(tmp_path / "c")]) == 0
    # --no-cache touches nothing in the cache directory, timings.json included
    assert {f: f.stat().st_mtime_ns for f in (tmp_path / "cache").rglob("*")} == before

    # every entry corrupted (one byte flipped): a miss, never a value; the verdicts are --no-cache's
    with sqlite3.connect(tmp_path / "cache" / DATABASE) as db:
        for rowid, value in list(db.execute("SELECT rowid, value FROM Cache WHERE value IS NOT NULL")):
            flipped = bytes(value[:-1]) + bytes([value[-1] ^ 1])
            db.execute("UPDATE Cache SET value = ? WHERE rowid = ?", (flipped, rowid))
    assert main([*argv, "--out", str(tmp_path / "d")]) == 0
    runs = {k: without_timings(json.loads((tmp_path / k / "report.json").read_text())) for k in "abcd"}
    assert runs["d"]["run"]["computations"]["from_cache"] == 0
    assert runs["d"]["claims"] == runs["c"]["claims"]
    first, second, fresh = (runs[k]["run"]["computations"] for k in "abc")
    assert first["values"] > 0 and first["from_cache"] == 0
    # the second gives back every claim and correction (ropeproof._task_cache) and the data values they read
    assert second["values"] == 0
    assert second["tasks_from_cache"] == len(runs["a"]["claims"]) + len(runs["a"]["corrections"])
    saved = sorted(p.name for p in (tmp_path / "a" / "store").glob("*.json"))
    assert second["from_cache"] == len(saved)
    assert sorted(p.name for p in (tmp_path / "b" / "store").glob("*.json")) == saved
    assert fresh["values"] == first["values"] and fresh["from_cache"] == fresh["tasks_from_cache"] == 0
    assert runs["a"]["claims"] == runs["b"]["claims"] == runs["c"]["claims"]


def test_a_file_is_kept_per_code_version_in_a_file_of_the_cache_s_own(tmp_path: Path) -> None:
    cache = ResultCache(tmp_path, version="v1")
    data = bytes(range(256)) * 300  # above diskcache's inline size: a file either way
    cache.put_file("k", data)
    cache.put_file("small", b"x")
    path, small = cache.file("k"), cache.file("small")
    assert path is not None and path.is_file() and path.read_bytes() == data
    assert path.resolve().is_relative_to(tmp_path.resolve())
    assert small is not None and small.read_bytes() == b"x"  # kept as a file however small
    assert cache.file("other") is None and ResultCache(tmp_path, version="v2").file("k") is None


# ------------------------------------------------------------------ a damaged cache is a miss, never a source


def _rows(directory: Path) -> list[tuple[int, bytes]]:
    with sqlite3.connect(directory / DATABASE) as db:
        return [
            (r, bytes(v)) for r, v in db.execute("SELECT rowid, value FROM Cache WHERE value IS NOT NULL")
        ]


def _replace(directory: Path, rowid: int, value: bytes) -> None:
    with sqlite3.connect(directory / DATABASE) as db:
        db.execute("UPDATE Cache SET value = ? WHERE rowid = ?", (value, rowid))


def test_an_entry_replaced_by_another_valid_value_is_a_miss(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    import pickle

    cache_dir = tmp_path / "cache"
    ResultStore(tmp_path / "r1", cache=ResultCache(cache_dir, version="v1")).get(OBJECT, n=1)
    ((rowid, stored),) = _rows(cache_dir)
    # a valid pickle of another value in place of the entry: not read (the digest covers the bytes)
    _replace(cache_dir, rowid, pickle.dumps({"n": 99}))
    CALLS.clear()
    store = ResultStore(tmp_path / "r2", cache=ResultCache(cache_dir, version="v1"))
    assert store.get(OBJECT, n=1)["n"] == 1 and CALLS == ["object 1"] and store.from_cache == []
    assert "did not match its digest" in capsys.readouterr().err
    # the entry was replaced: the next run reads it
    CALLS.clear()
    third = ResultStore(tmp_path / "r3", cache=ResultCache(cache_dir, version="v1"))
    assert third.get(OBJECT, n=1)["n"] == 1 and CALLS == []
    # an entry sealed for one key is not read for another
    ResultStore(tmp_path / "r4", cache=ResultCache(cache_dir, version="v1")).get(OBJECT, n=2)
    rows = dict(_rows(cache_dir))
    other = next(r for r, v in rows.items() if v != stored)
    _replace(cache_dir, other, stored)
    CALLS.clear()
    assert ResultStore(tmp_path / "r5", cache=ResultCache(cache_dir, version="v1")).get(OBJECT, n=2)["n"] == 2
    assert CALLS == ["object 2"]


def test_a_truncated_entry_is_a_miss(tmp_path: Path) -> None:
    ResultStore(cache=ResultCache(tmp_path, version="v1")).get(ROWS, n=6)
    ((rowid, stored),) = _rows(tmp_path)
    _replace(tmp_path, rowid, stored[: len(stored) // 2])
    CALLS.clear()
    assert ResultStore(cache=ResultCache(tmp_path, version="v1")).get(ROWS, n=6) == list(range(6))
    assert CALLS == ["rows 6"]


@pytest.mark.parametrize("damage", ["garbage", "directory", "empty"])
def test_a_damaged_database_is_replaced_or_skipped_never_an_error(tmp_path: Path, damage: str) -> None:
    ResultStore(cache=ResultCache(tmp_path, version="v1")).get(ROWS, n=3)
    database = tmp_path / DATABASE
    database.unlink()
    if damage == "garbage":
        database.write_bytes(b"not a database " * 400)
    elif damage == "directory":
        database.mkdir()
    else:
        database.write_bytes(b"")
    CALLS.clear()
    cache = ResultCache(tmp_path, version="v1")
    assert ResultStore(cache=cache).get(ROWS, n=3) == [0, 1, 2] and CALLS == ["rows 3"]
    if damage != "directory":  # a damaged file is replaced by a working database
        CALLS.clear()
        assert ResultStore(cache=ResultCache(tmp_path, version="v1")).get(ROWS, n=3) == [0, 1, 2]
        assert CALLS == []
    assert cache_info(tmp_path)["directory"] == str(tmp_path)


def test_cache_info_and_clear(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from ropeproof._cli import main
    from ropeproof.commands import _cache as cache_command

    ResultStore(cache=ResultCache(tmp_path, version="v1")).get(ROWS, n=3)
    (tmp_path / "timings.json").write_text("{}")
    (tmp_path / "mine.txt").write_text("kept")
    info = cache_info(tmp_path)
    assert info["entries"] == 1 and info["bytes"] > 0 and info["exists"]
    assert main(["cache", "clear", "--cache-dir", str(tmp_path)]) == 0
    assert cache_info(tmp_path)["entries"] == 0 and not (tmp_path / "timings.json").exists()
    assert (tmp_path / "mine.txt").read_text() == "kept"
    assert main(["cache", "info", "--cache-dir", str(tmp_path / "none")]) == 0
    assert not (tmp_path / "none").exists()
    out = capsys.readouterr().out
    assert f"directory: {tmp_path / 'none'} (does not exist yet)" in out and "entries: 0" in out
    assert cache_command.register is not None


@settings(max_examples=12, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2), st.binary(max_size=8)), min_size=1, max_size=4)
)
def test_fuzz_corrupted_entries_never_change_a_value(edits: list[tuple[int, int, bytes]]) -> None:
    """Entries corrupted at random (bytes flipped, truncated, replaced): every value read through the
    cache equals the value computed without one."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        first = ResultStore(directory / "r1", cache=ResultCache(directory / "cache", version="v1"))
        for n in (1, 2):
            first.get(ROWS, n=n), first.get(OBJECT, n=n)
        rows = _rows(directory / "cache")
        for which, how, junk in edits:
            rowid, value = rows[which % len(rows)]
            if how == 0:
                i = len(value) // 2
                value = value[:i] + bytes([value[i] ^ 1]) + value[i + 1 :]
            elif how == 1:
                value = value[: len(value) // 3]
            else:
                value = junk
            _replace(directory / "cache", rowid, value)
        store = ResultStore(directory / "r2", cache=ResultCache(directory / "cache", version="v1"))
        for n in (1, 2):
            assert store.get(ROWS, n=n) == list(range(n))
            obj = store.get(OBJECT, n=n)
            assert obj["n"] == n and obj["shift"](1) == 10 * n + 1
