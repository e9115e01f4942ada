"""Results kept across runs: ropeproof.machinery._result_cache, and the store reading it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ropeproof.machinery._errors import InputError
from ropeproof.machinery._result_cache import (
    MISSING,
    ResultCache,
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
    assert sorted(second.from_cache) == ['test.cached-object{"n":2}', 'test.cached-rows{"n":3}']
    assert second.computed == ["test.cached-model{}"]
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
    assert main([*argv, "--no-cache", "--out", str(tmp_path / "c")]) == 0

    runs = {k: without_timings(json.loads((tmp_path / k / "report.json").read_text())) for k in "abc"}
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
