"""ropeproof._task_cache: a rerun that recomputes nothing redraws nothing, writes what the first run wrote
byte for byte, and takes nothing from the cache that is not as recorded."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
import torch

from ropeproof import _task_cache as task_cache
from ropeproof._report import without_timings
from ropeproof._task_cache import (
    claim_key,
    figure_key,
    recorded_claim,
    recorded_figure,
    replayed_claim,
    replayed_figure,
)
from ropeproof.claims._registry import CheckContext, Claim
from ropeproof.machinery._result_cache import ResultCache
from ropeproof.machinery._result_store import ResultStore, data_product
from ropeproof.verify.measure._outcome import Outcome

CALLS: list[str] = []


HERE = __name__ + ":"
"""Products defined outside the package carry their module in their keys."""


@data_product("test.task-rows")
def ROWS(store: ResultStore, n: int) -> list[int]:
    CALLS.append(f"rows {n}")
    return list(range(n))


def _check(ctx: CheckContext) -> Outcome:
    CALLS.append("check")
    rows = ctx.store.get(ROWS, n=ctx.params["n"])
    return Outcome.judge(sum(rows) < 100, {"total": sum(rows)}, key_figure="total")


_check.__module__ = "ropeproof.claims.test_task_cache"  # a claim of the toolkit's: only those are kept
CLAIM = Claim("test.rows-sum", "The rows of {n} sum below 100.", "here", {"n": 5}, _check)


@pytest.fixture(autouse=True)
def _clear() -> None:
    CALLS.clear()


def _ctx(tmp_path: Path, run: str, version: str = "v1", **kw: Any) -> CheckContext:
    store = ResultStore(tmp_path / run, cache=ResultCache(tmp_path / "cache", version=version))
    return CheckContext(torch.device("cpu"), torch.float64, quick=True, store=store, **kw)


def test_a_kept_claim_is_given_back_without_running_with_the_values_it_read(tmp_path: Path) -> None:
    first = recorded_claim(CLAIM, _ctx(tmp_path, "a"))
    assert first.outcome.verdict == "holds" and CALLS == ["check", "rows 5"]
    CALLS.clear()
    again = _ctx(tmp_path, "b")
    second = replayed_claim(CLAIM, again)
    assert second is not None and CALLS == []
    assert second.outcome == first.outcome and second.claim is CLAIM and second.quick
    # the value it read is in the new run's store, the file byte for byte the first run's
    assert again.store.from_cache == [HERE + 'test.task-rows{"n":5}']
    assert [p.read_bytes() for p in sorted((tmp_path / "b").glob("*.json"))] == [
        p.read_bytes() for p in sorted((tmp_path / "a").glob("*.json"))
    ]


def test_another_code_version_or_setting_or_claim_of_yours_is_run_again(tmp_path: Path) -> None:
    recorded_claim(CLAIM, _ctx(tmp_path, "a"))
    assert replayed_claim(CLAIM, _ctx(tmp_path, "b", version="v2")) is None
    assert replayed_claim(CLAIM, dataclasses.replace(_ctx(tmp_path, "c"), quick=False)) is None
    assert replayed_claim(CLAIM, dataclasses.replace(_ctx(tmp_path, "d"), dtype=torch.float32)) is None
    assert replayed_claim(CLAIM, _ctx(tmp_path, "e", certified=True)) is None
    assert replayed_claim(CLAIM, _ctx(tmp_path, "f")) is not None

    def yours(ctx: CheckContext) -> Outcome:
        CALLS.append("yours")
        return Outcome("holds")

    mine = dataclasses.replace(CLAIM, id="mine.claim", check=yours)
    assert not mine.builtin
    recorded_claim(mine, _ctx(tmp_path, "g"))
    assert replayed_claim(mine, _ctx(tmp_path, "h")) is None  # the code version does not cover your code


def test_a_changed_value_read_or_altered_bytes_are_a_miss(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path, "a")
    recorded_claim(CLAIM, ctx)
    cache = ctx.store.cache
    assert cache is not None
    key = HERE + 'test.task-rows{"n":5}'
    kept = cache.get_text(key)
    assert kept is not None
    # the value it read was computed again differently (or altered): its digest differs
    cache.put_text(key, kept.replace("[0,1,2,3,4]", "[0,1,2,3,5]"))
    assert replayed_claim(CLAIM, _ctx(tmp_path, "b")) is None
    cache.put_text(key, kept)
    assert replayed_claim(CLAIM, _ctx(tmp_path, "c")) is not None
    # the kept outcome's bytes altered in the cache: a miss, never a source
    record = json.loads(cache.get_text(task_cache.RECORD + claim_key(CLAIM, ctx)) or "{}")
    path = cache.file(record["outcome"])
    assert path is not None
    path.write_bytes(path.read_bytes()[:-1] + b"\x00")
    assert replayed_claim(CLAIM, _ctx(tmp_path, "d")) is None
    # a record of another task under this one's key: a miss
    cache.put_text(task_cache.RECORD + claim_key(CLAIM, ctx), json.dumps({**record, "task": "claim{}"}))
    assert replayed_claim(CLAIM, _ctx(tmp_path, "e")) is None


def test_an_error_is_not_kept(tmp_path: Path) -> None:
    def broken(ctx: CheckContext) -> Outcome:
        raise RuntimeError("boom")

    broken.__module__ = _check.__module__
    claim = dataclasses.replace(CLAIM, id="test.broken", check=broken)
    assert recorded_claim(claim, _ctx(tmp_path, "a")).outcome.verdict == "error"
    assert replayed_claim(claim, _ctx(tmp_path, "b")) is None


FIGURE = "errata_remark31_readout"


def test_a_kept_figure_is_given_back_byte_for_byte_without_drawing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _ctx(tmp_path, "a").store
    drawn = recorded_figure(FIGURE, True, store, tmp_path / "a-figures", ("png",))
    assert [p.suffix for p in drawn] == [".png", ".csv", ".txt"]
    monkeypatch.setattr("ropeproof.paper_figures.draw_figure", _no_drawing)
    again = _ctx(tmp_path, "b").store
    given = replayed_figure(FIGURE, True, ("png",), again, tmp_path / "b-figures")
    assert given is not None and [p.name for p in given] == [p.name for p in drawn]
    assert [p.read_bytes() for p in given] == [p.read_bytes() for p in drawn]
    # the values the figure read are copied into the new run's store, byte for byte
    assert again.from_cache and _values(tmp_path / "b") == _values(tmp_path / "a")
    # another format, quick or code version is another figure
    assert replayed_figure(FIGURE, True, ("png", "pdf"), _ctx(tmp_path, "c").store, tmp_path / "c") is None
    assert replayed_figure(FIGURE, False, ("png",), _ctx(tmp_path, "d").store, tmp_path / "d") is None
    other = _ctx(tmp_path, "e", version="v2").store
    assert replayed_figure(FIGURE, True, ("png",), other, tmp_path / "e") is None
    # an altered file in the cache: a miss, and nothing of the figure is left in the output
    cache = store.cache
    assert cache is not None
    record = json.loads(cache.get_text(task_cache.RECORD + figure_key(FIGURE, True, ("png",))) or "{}")
    csv = cache.file(record["files"][1][1])
    assert csv is not None
    csv.write_bytes(csv.read_bytes() + b"\n")
    assert replayed_figure(FIGURE, True, ("png",), _ctx(tmp_path, "f").store, tmp_path / "f") is None
    assert list((tmp_path / "f").iterdir()) == []


def _values(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.glob("*.json"))}


def _no_drawing(*args: Any, **kw: Any) -> Any:
    raise AssertionError("a figure was drawn")


ONLY = ["--only", "remark3.1.*"]
"""Three quick claims, one figure (errata_remark31_readout) and one correction: a small whole check."""


def _check_cli(tmp_path: Path, out: str, *extra: str) -> dict[str, Any]:
    from ropeproof._cli import main

    argv = ["check", "--quick", *ONLY, "--jobs", "1", "--no-progress", "--cache-dir", str(tmp_path / "cache")]
    assert main([*argv, *extra, "--out", str(tmp_path / out)]) == 0
    return json.loads((tmp_path / out / "report.json").read_text())


def _comparable(report: dict[str, Any]) -> dict[str, Any]:
    out = without_timings(report)
    out["run"].pop("computations")
    out["run"].pop("command")  # --out differs
    return out


def _tree(directory: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()
    }


def test_an_unchanged_rerun_computes_nothing_draws_nothing_and_writes_the_same_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = _check_cli(tmp_path, "a")
    assert first["run"]["computations"]["tasks_from_cache"] == 0
    ran: list[str] = []
    monkeypatch.setattr("ropeproof.paper_figures.draw_figure", _no_drawing)
    monkeypatch.setattr("ropeproof.claims._registry.run_claim", lambda c, ctx: ran.append(c.id))
    monkeypatch.setattr("ropeproof.claims._corrections.run_correction", lambda c, ctx: ran.append(c.id))
    second = _check_cli(tmp_path, "b")
    assert ran == []
    done = second["run"]["computations"]
    tasks = len(first["claims"]) + len(first["figures"]) + len(first["corrections"])
    assert done["values"] == 0 and done["tasks_from_cache"] == tasks
    assert first["figures"] and _comparable(second) == _comparable(first)
    before, after = ((tmp_path / run / "report.md").read_text().splitlines() for run in "ab")
    assert before[:2] + before[3:] == after[:2] + after[3:]  # the header line aside (time, command)
    for part in ("figures", "store"):  # the figures, and the values a saved report draws from
        assert _tree(tmp_path / "a" / part) == _tree(tmp_path / "b" / part)


def test_a_figure_altered_in_the_cache_is_drawn_again_and_the_rest_given_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = _check_cli(tmp_path, "a")
    (name,) = first["figures"]
    cache = ResultCache(tmp_path / "cache")
    record = json.loads(cache.get_text(task_cache.RECORD + figure_key(name, True, ("png",))) or "{}")
    png = cache.file(record["files"][0][1])
    assert png is not None
    png.write_bytes(png.read_bytes()[::-1])
    drawn: list[str] = []
    from ropeproof import paper_figures

    real = paper_figures.draw_figure
    monkeypatch.setattr(
        "ropeproof.paper_figures.draw_figure", lambda n, *a, **k: drawn.append(n) or real(n, *a, **k)
    )
    second = _check_cli(tmp_path, "b")
    assert drawn == [name]
    given_back = second["run"]["computations"]["tasks_from_cache"]
    assert given_back == len(first["claims"]) + len(first["corrections"])
    assert _tree(tmp_path / "a" / "figures") == _tree(tmp_path / "b" / "figures")
    # and drawing it again kept it anew: a third run draws nothing
    drawn.clear()
    _check_cli(tmp_path, "c")
    assert drawn == []


def test_no_cache_neither_reads_nor_keeps(tmp_path: Path) -> None:
    uncached = _check_cli(tmp_path, "a", "--no-cache")
    cached = _check_cli(tmp_path, "b")  # nothing was kept by the first
    assert cached["run"]["computations"]["tasks_from_cache"] == 0
    fresh = _check_cli(tmp_path, "c", "--no-cache")  # nor is what the second kept read
    for report in (uncached, fresh):
        assert report["run"]["computations"]["tasks_from_cache"] == 0
        assert report["run"]["computations"]["values"] == cached["run"]["computations"]["values"]
