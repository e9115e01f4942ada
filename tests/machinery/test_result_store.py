"""One run's results, computed once: ropeproof.machinery._result_store."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ropeproof.machinery._errors import InputError
from ropeproof.machinery._result_store import (
    LOCKS,
    OBJECTS,
    MissingResult,
    Product,
    ResultStore,
    data_product,
    object_product,
    result_file,
    to_json_data,
)

CALLS: list[tuple[str, dict[str, Any]]] = []


HERE = f"{__name__}:"
"""A product defined outside the package has its module in its keys."""


@data_product("test.rows")
def ROWS(store: ResultStore, n: int, scale: float = 1.0) -> list[dict[str, Any]]:
    CALLS.append(("rows", {"n": n, "scale": scale}))
    return [{"i": i, "x": scale * i, "arr": np.arange(i)} for i in range(n)]


@data_product("test.total")
def TOTAL(store: ResultStore, n: int) -> float:
    CALLS.append(("total", {"n": n}))
    return sum(r["x"] for r in store.get(ROWS, n=n))


@object_product("test.thing")
def THING(store: ResultStore, label: str) -> dict[str, Any]:
    CALLS.append(("thing", {"label": label}))
    return {"label": label}


@pytest.fixture(autouse=True)
def _clear_calls() -> None:
    CALLS.clear()


def test_each_value_is_computed_once_and_handed_out_as_a_fresh_copy() -> None:
    store = ResultStore()
    first = store.get(ROWS, n=3)
    assert first == [
        {"i": 0, "x": 0.0, "arr": []},
        {"i": 1, "x": 1.0, "arr": [0]},
        {"i": 2, "x": 2.0, "arr": [0, 1]},
    ]
    first[0]["x"] = 99.0  # the caller's copy; the store's value is untouched
    assert store.get(ROWS, n=3)[0]["x"] == 0.0
    assert store.get(TOTAL, n=3) == 3.0
    assert CALLS == [("rows", {"n": 3, "scale": 1.0}), ("total", {"n": 3})]  # TOTAL reused ROWS
    assert store.get(ROWS, n=3, scale=1.0) == store.get(ROWS, n=3)  # a default given or not: one value
    with pytest.raises(InputError, match=r"product 'test\.rows': got an unexpected keyword argument 'm'"):
        store.get(ROWS, n=3, m=3)
    store.get(ROWS, n=3, scale=2.0)  # other arguments: another value
    store.get(TOTAL, n=True)  # True is not 1 (the arguments are compared as JSON)
    assert len(CALLS) == 5 and len(store.computed) == 5
    assert ResultStore().get(ROWS, n=3)[1]["x"] == 1.0 and len(CALLS) == 6  # another store computes anew


def test_object_products_are_held_as_is_once_per_store() -> None:
    store = ResultStore()
    assert store.get(THING, label="a") is store.get(THING, label="a")
    assert store.get(THING, label="a") is not ResultStore().get(THING, label="a")
    assert [c[0] for c in CALLS] == ["thing", "thing"]


def test_a_directory_holds_every_data_value_and_a_second_store_reads_instead_of_computing(
    tmp_path: Path,
) -> None:
    store = ResultStore(tmp_path / "store")
    total = store.get(TOTAL, n=4)
    store.get(THING, label="x")  # objects stay in memory
    assert sorted(p.name for p in (tmp_path / "store").glob("*.json")) == sorted(
        [result_file(ROWS, {"n": 4}), result_file(TOTAL, {"n": 4})]
    )
    CALLS.clear()
    again = ResultStore(tmp_path / "store")
    assert again.get(TOTAL, n=4) == total and CALLS == [] and again.computed == []
    saved = ResultStore.saved(tmp_path / "store")
    assert saved.get(ROWS, n=4) == store.get(ROWS, n=4)
    here = f"{__name__}:"  # a product defined outside the package: its module is part of its keys
    assert saved.saved_keys() == sorted([here + 'test.rows{"n":4,"scale":1.0}', here + 'test.total{"n":4}'])
    with pytest.raises(MissingResult, match=r"do not hold \S*:test\.rows\{\"n\":5,\"scale\":1\.0\}"):
        saved.get(ROWS, n=5)
    with pytest.raises(MissingResult, match=r"object product 'test\.thing'"):
        saved.get(THING, label="x")
    assert CALLS == []
    store.finish_run()
    assert not (tmp_path / "store" / LOCKS).exists()


def test_a_file_of_another_value_is_refused(tmp_path: Path) -> None:
    store = ResultStore(tmp_path)
    store.get(ROWS, n=2)
    path = tmp_path / result_file(ROWS, {"n": 2})
    entry = json.loads(path.read_text())
    entry["args"] = {"n": 7}
    path.write_text(json.dumps(entry))
    with pytest.raises(InputError, match=r"holds \S*:test\.rows"):
        ResultStore(tmp_path).get(ROWS, n=2)
    path.write_text(json.dumps({"format": "something else"}))
    with pytest.raises(InputError, match="is not a ropeproof-result v1 file"):
        ResultStore(tmp_path).get(ROWS, n=2)


def test_a_truncated_or_incomplete_file_is_refused_by_name(tmp_path: Path) -> None:
    """``figures --from-report`` over a truncated store file stopped with an internal JSONDecodeError
    (issue 32, case 11): every store names the file instead."""
    ResultStore(tmp_path).get(ROWS, n=3)
    path = tmp_path / result_file(ROWS, {"n": 3})
    text = path.read_text()
    path.write_text(text[: len(text) // 2])
    for store in (ResultStore(tmp_path), ResultStore.saved(tmp_path)):
        with pytest.raises(InputError, match=r"is not a complete ropeproof-result file \(JSONDecodeError"):
            store.get(ROWS, n=3)
    entry = json.loads(text)
    del entry["value"]
    path.write_text(json.dumps(entry))
    with pytest.raises(InputError, match=r"is not a complete ropeproof-result file \(no value\)"):
        ResultStore.saved(tmp_path).get(ROWS, n=3)


def test_saved_needs_a_directory(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="is not a directory of saved results"):
        ResultStore.saved(tmp_path / "absent")
    with pytest.raises(InputError, match="needs a directory"):
        ResultStore(compute=False)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({1: "a"}, "dict key 1"),
        ([{"a": object()}], r"value\[0\]\['a'\] is a object"),
        (b"x", "bytes"),
    ],
)
def test_what_is_not_json_data_is_refused_by_place(value: Any, message: str) -> None:
    with pytest.raises(InputError, match=message):
        to_json_data(value)


def test_product_names_and_kinds_are_checked() -> None:
    with pytest.raises(InputError, match="must match"):
        Product("Bad Name", lambda store: 1)
    with pytest.raises(InputError, match="kind='file'"):
        Product("ok", lambda store: 1, "file")  # type: ignore[arg-type]


JSON_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**80), max_value=2**80),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
)
JSON_DATA = st.recursive(
    JSON_LEAVES,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=12,
)


def _same(a: Any, b: Any) -> bool:
    """Equal as data, NaN equal to NaN and -0.0 told apart from 0.0, ints from floats."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return a == b


@given(JSON_DATA)
def test_data_values_come_back_exactly_from_memory_and_from_disk(value: Any) -> None:
    product = Product("test.echo", lambda store: value)
    assert _same(ResultStore().get(product), value)


def test_data_values_come_back_exactly_from_a_saved_file(tmp_path: Path) -> None:
    value = {"x": [0.1, -0.0, float("nan"), float("inf"), 2**70, 1e-310, True, None, "é"]}
    product = Product("test.echo", lambda store: value)
    ResultStore(tmp_path).get(product)
    assert _same(ResultStore.saved(tmp_path).get(product), value)


SCRIPT = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from ropeproof.machinery._result_store import ResultStore, data_product

    directory, log = Path(sys.argv[1]), Path(sys.argv[2])

    @data_product("test.slow")
    def SLOW(store, n):
        with log.open("a") as f:
            f.write("computed\\n")
        time.sleep(1.0)
        return list(range(n))

    Path(sys.argv[3]).touch()  # ready
    while not all((directory.parent / f"ready{i}").exists() for i in (0, 1)):
        time.sleep(0.01)
    print(sum(ResultStore(directory).get(SLOW, n=10)))
    """
)


def test_two_processes_sharing_a_directory_compute_a_value_once(tmp_path: Path) -> None:
    script = tmp_path / "ask.py"
    script.write_text(SCRIPT)
    log = tmp_path / "log.txt"
    procs = [
        subprocess.Popen(
            [sys.executable, str(script), str(tmp_path / "store"), str(log), str(tmp_path / f"ready{i}")],
            stdout=subprocess.PIPE,
            text=True,
        )
        for i in (0, 1)
    ]
    outs = [p.communicate(timeout=120)[0].strip() for p in procs]
    assert [p.returncode for p in procs] == [0, 0]
    assert outs == ["45", "45"]
    assert log.read_text() == "computed\n"  # the second asker waited for the first one's file


def test_the_package_s_product_names_are_unique(package_modules: dict[str, Path]) -> None:
    """Two products of one name would share their values; every module that defines products is imported
    and its products collected (a product imported elsewhere is the same object)."""
    import importlib

    by_name: dict[str, Product[Any]] = {}
    for module, path in package_modules.items():
        if "_product(" not in path.read_text():
            continue
        for value in vars(importlib.import_module(module)).values():
            if isinstance(value, Product):
                assert by_name.setdefault(value.name, value) is value, f"two products named {value.name}"
    assert len(by_name) >= 30 and {"training.shipped-model", "figure.a-theory-bounds"} <= set(by_name)


OBJECT_SCRIPT = textwrap.dedent(
    """
    import sys, threading, time
    from pathlib import Path
    from ropeproof.machinery._result_store import ResultStore, object_product

    directory = Path(sys.argv[1])

    @object_product("test.table")
    def TABLE(store, n):
        offset = n * 10
        time.sleep(0.5)
        return {"rows": list(range(n)), "shifted": lambda i: i + offset}  # a closure: cloudpickle's job

    @object_product("test.model", shared=False)
    def MODEL(store):
        return "loaded"

    @object_product("test.lock")
    def LOCK(store):
        return threading.Lock()  # cannot be pickled: stays in its process

    Path(sys.argv[2]).touch()  # ready
    while not all((directory.parent / f"ready{i}").exists() for i in (0, 1)):
        time.sleep(0.01)
    store = ResultStore(directory)
    table = store.get(TABLE, n=4)
    store.get(MODEL)
    store.get(LOCK)
    print(table["rows"], table["shifted"](1))
    """
)


def test_two_processes_share_an_object_and_the_log_counts_each_computation(tmp_path: Path) -> None:
    """A shared object is computed by one process and loaded by the other (closures included); a
    per-process object is computed in each and left out of the log; an object that cannot be pickled is
    computed in each, and the log shows it twice. ``finish_run`` leaves only the JSON values."""
    script = tmp_path / "ask.py"
    script.write_text(OBJECT_SCRIPT)
    procs = [
        subprocess.Popen(
            [sys.executable, str(script), str(tmp_path / "store"), str(tmp_path / f"ready{i}")],
            stdout=subprocess.PIPE,
            text=True,
        )
        for i in (0, 1)
    ]
    outs = [p.communicate(timeout=120)[0].strip() for p in procs]
    assert [p.returncode for p in procs] == [0, 0]
    assert outs == ["[0, 1, 2, 3] 41", "[0, 1, 2, 3] 41"]
    store = ResultStore(tmp_path / "store")
    # products defined in a script: "__main__" is part of their keys
    assert store.computation_counts() == {'__main__:test.table{"n":4}': 1, "__main__:test.lock{}": 2}
    assert (tmp_path / "store" / OBJECTS).is_dir()
    store.finish_run()
    assert not any(p.name.startswith(".") for p in (tmp_path / "store").iterdir())
    assert store.computation_counts() == {}


def test_reading_notes_every_value_asked_nested_ones_included(tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "a")
    store.get(ROWS, n=1)  # asked before: not this task's
    with store.reading() as outer:
        store.get(TOTAL, n=2)  # computes ROWS n=2 through the store
        with store.reading() as inner:
            store.get(THING, label="x")
        store.get(TOTAL, n=2)  # held already: still read
    store.get(ROWS, n=4)  # after: not noted
    assert inner == {HERE + 'test.thing{"label":"x"}': "object"}
    assert outer == {
        HERE + 'test.total{"n":2}': "data",
        HERE + 'test.rows{"n":2,"scale":1.0}': "data",
        **inner,
    }
    text = store.held_text(HERE + 'test.total{"n":2}')
    assert text is not None and json.loads(text)["value"] == 1.0
    assert store.held_text(HERE + 'test.total{"n":9}') is None


def test_an_adopted_text_is_held_and_saved_as_if_computed(tmp_path: Path) -> None:
    first = ResultStore(tmp_path / "a")
    first.get(TOTAL, n=3)
    key = HERE + 'test.total{"n":3}'
    text = first.held_text(key)
    assert text is not None
    CALLS.clear()
    second = ResultStore(tmp_path / "b")
    second.adopt_text(key, text)
    assert second.get(TOTAL, n=3) == 3.0 and CALLS == [] and second.from_cache == [key]
    # the same file, byte for byte, where a saved run reads it
    assert (tmp_path / "b" / result_file(TOTAL, {"n": 3})).read_bytes() == (
        tmp_path / "a" / result_file(TOTAL, {"n": 3})
    ).read_bytes()
    assert ResultStore.saved(tmp_path / "b").get(TOTAL, n=3) == 3.0


def test_products_from_outside_the_package_live_in_their_own_namespace(tmp_path: Path) -> None:
    """A claims file's product may not take a name in the package's namespaces (refused, naming it), and
    a product it names like another module's is a different value: its module is part of the key, so
    nothing it computes stands for another's value in a shared store directory."""
    import ast
    import re

    from ropeproof.machinery._result_store import PACKAGE_NAMESPACES, result_key

    with pytest.raises(
        InputError, match=r"'exact.index-sweep-table' .* shadows the package's products exact"
    ):
        data_product("exact.index-sweep-table")(lambda store: 1)
    # every product of the package is in one of its namespaces (so the rule covers each one)
    root = Path(__file__).resolve().parents[2]
    names = []
    for folder in ("ropeproof", "theory", "constructions", "verify", "paper_figures"):
        for path in (root / folder).rglob("*.py"):
            calls = [n for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.Call)]
            for node in calls:
                maker = getattr(node.func, "id", "")
                if maker in ("data_product", "object_product") and isinstance(node.args[0], ast.Constant):
                    names.append(node.args[0].value)
    assert len(names) > 40 and {re.split(r"\.", n)[0] for n in names} <= set(PACKAGE_NAMESPACES)
    assert "exact.index-sweep-table" in names

    def compute(store: ResultStore, n: int) -> int:
        return n

    compute.__module__ = "ropeproof_user_claims.a_0"
    first = data_product("mine.value")(compute)
    other = Product("mine.value", lambda store, n: -n, "data")
    other_key, first_key = result_key(other, {"n": 1}), result_key(first, {"n": 1})
    assert first_key.startswith("ropeproof_user_claims.a_0:mine.value") and first_key != other_key
    store = ResultStore(tmp_path)
    assert store.get(first, n=1) == 1 and store.get(other, n=1) == -1
    assert ResultStore(tmp_path).get(first, n=1) == 1  # read back from its own file
