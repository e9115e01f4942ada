"""User claims from files, modules and entry points; selection by id; where each claim comes from."""

from __future__ import annotations

import json
import os
import sys
import types
from importlib import metadata
from pathlib import Path

import pytest

from ropeproof._cli import main
from ropeproof.claims import USER_CLAIMS, CheckContext, ClaimSet, Outcome, registered_claims
from ropeproof.claims import _loading as loading
from ropeproof.claims._loading import (
    ENTRY_POINT_GROUP,
    ClaimLoadError,
    claim_source,
    entry_point_claims,
    gather_claims,
    load_claims,
    select_claims,
)

EXAMPLE = Path(__file__).resolve().parents[2] / "data" / "example_claims.py"
EXAMPLE_IDS = ["example.two-plane-index-correct", "example.second-plane-widens-margin"]


@pytest.fixture(autouse=True)
def _clean_registry():
    """Loading a file registers its claims in the process-wide USER_CLAIMS: undo it after each test."""
    before = {c.id for c in USER_CLAIMS}
    modules = set(sys.modules)
    yield
    for c in list(USER_CLAIMS):
        if c.id not in before:
            USER_CLAIMS.remove(c.id)
    for name in set(sys.modules) - modules:
        if name.startswith(("ropeproof_user_claims.", "rp_test_")):
            del sys.modules[name]
    loading._SOURCES.clear()


def _set(topic: str, *ids: str) -> ClaimSet:
    s = ClaimSet(topic)
    for i in ids:
        s.claim(id=i, statement=f"{i} holds.", reference="test")(lambda ctx: Outcome("holds"))
    return s


def test_check_runs_only_the_example_claims(tmp_path, capsys) -> None:
    """The issue's done criterion: --claims FILE --only 'example.*' runs just those claims."""
    out = tmp_path / "report"
    argv = ["check", "--claims", str(EXAMPLE), "--only", "example.*", "--no-figures", "--no-progress"]
    assert main([*argv, "--jobs", "1", "--out", str(out)]) == 0  # one process (test_check_pool.py: two)
    report = json.loads((out / "report.json").read_text())
    assert [c["id"] for c in report["claims"]] == EXAMPLE_IDS
    assert [c["verdict"] for c in report["claims"]] == ["holds", "holds"]
    assert "2 claims checked" in capsys.readouterr().out


def test_list_names_each_claims_module(capsys) -> None:
    assert (
        main(["check", "--claims", str(EXAMPLE), "--list", "--only", "example.*", "--only", "thm3.2.*"]) == 0
    )
    lines = capsys.readouterr().out.splitlines()
    example = [ln for ln in lines if ln.startswith("example.")]
    assert len(example) == 2 and all(str(EXAMPLE) in ln for ln in example)
    builtin = [ln for ln in lines if ln.startswith("thm3.2.")]
    assert builtin and all("ropeproof.claims._thm32" in ln for ln in builtin)
    assert len(lines) == len(example) + len(builtin)  # --only keeps nothing else


def test_skip_and_only_are_globs() -> None:
    claims = list(_set("t", "a.one", "a.two", "b.one"))
    assert [c.id for c in select_claims(claims, ["a.*"])] == ["a.one", "a.two"]
    assert [c.id for c in select_claims(claims, [], ["*.one"])] == ["a.two"]
    assert [c.id for c in select_claims(claims, ["a.*", "b.*"], ["a.two"])] == ["a.one", "b.one"]
    assert select_claims(claims) == claims
    with pytest.raises(ClaimLoadError, match="matches no claim id"):
        select_claims(claims, ["c.*"])


def test_a_file_loads_once_per_process() -> None:
    first = load_claims(EXAMPLE)
    assert [c.id for c in first] == EXAMPLE_IDS
    assert [c.id for c in load_claims(str(EXAMPLE))] == EXAMPLE_IDS  # not re-executed, not duplicated
    assert all(claim_source(c) == str(EXAMPLE) for c in first)
    assert first[0].check(CheckContext(device=None, dtype=None)).verdict == "holds"  # type: ignore[arg-type]


def test_a_module_by_name_and_its_claim_sets(tmp_path, monkeypatch) -> None:
    (tmp_path / "rp_test_claims_mod.py").write_text(
        "from ropeproof.claims import ClaimSet, Outcome\n"
        "CLAIMS = ClaimSet('mine')\n"
        "@CLAIMS.claim(id='mod.one', statement='One.', reference='here')\n"
        "def _(ctx):\n    return Outcome('holds')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    claims = load_claims("rp_test_claims_mod")
    assert [c.id for c in claims] == ["mod.one"] and claim_source(claims[0]) == "rp_test_claims_mod"
    every = gather_claims(registered_claims(), ["rp_test_claims_mod"], entry_points=False)
    assert every[-1].id == "mod.one" and len(every) == len(registered_claims()) + 1


def test_a_file_imports_its_siblings_and_its_settings_do_not_outlive_the_import(tmp_path) -> None:
    """Issue 33: --claims F did not put F's directory on sys.path (a sibling module failed to import).
    Issue 32: what a file sets at import (mpmath precision, an environment variable the toolkit reads)
    reached the built-in claims; loaded in-process, it is put back after the import."""
    import mpmath

    (tmp_path / "rp_test_sibling.py").write_text("N = 5\n")
    (tmp_path / "mine_with_sibling.py").write_text(
        "import os\nimport mpmath\nimport rp_test_sibling\n"
        "mpmath.mp.prec = 12\nos.environ['ROPEPROOF_MEMORY_LIMIT'] = '1'\n"
        "from ropeproof.claims import Outcome, claim\n"
        "@claim(id='sib.one', statement='N = {n}', reference='here', params={'n': rp_test_sibling.N})\n"
        "def _(ctx):\n    return Outcome('holds')\n"
    )
    path, limit, prec = list(sys.path), os.environ.get("ROPEPROOF_MEMORY_LIMIT"), mpmath.mp.prec
    claims = load_claims(tmp_path / "mine_with_sibling.py")
    assert [c.statement_for(False) for c in claims] == ["N = 5"]
    assert sys.path == path and str(tmp_path) not in sys.path  # on it while loading only
    assert prec != 12 and mpmath.mp.prec == prec and os.environ.get("ROPEPROOF_MEMORY_LIMIT") == limit
    del sys.modules["rp_test_sibling"]


def test_entry_points(monkeypatch) -> None:
    module = types.ModuleType("rp_test_plugin")
    module.CLAIMS = _set("plugin", "plug.a")  # type: ignore[attr-defined]
    module.make = lambda: [*_set("plugin2", "plug.b")]  # type: ignore[attr-defined]
    module.bad = 3  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "rp_test_plugin", module)

    def points(*values: str) -> list[metadata.EntryPoint]:
        return [metadata.EntryPoint(f"p{i}", v, ENTRY_POINT_GROUP) for i, v in enumerate(values)]

    monkeypatch.setattr(
        loading, "_entry_points", lambda: points("rp_test_plugin:CLAIMS", "rp_test_plugin:make")
    )
    claims = entry_point_claims()
    assert [c.id for c in claims] == ["plug.a", "plug.b"]
    assert claim_source(claims[0]) == "entry point p0 (rp_test_plugin:CLAIMS)"
    assert [c.id for c in gather_claims([], [])] == ["plug.a", "plug.b"]
    assert gather_claims([], [], entry_points=False) == []
    monkeypatch.setattr(loading, "_entry_points", lambda: points("rp_test_plugin"))
    assert [c.id for c in entry_point_claims()] == ["plug.a"]  # a module: its ClaimSets
    monkeypatch.setattr(loading, "_entry_points", lambda: points("rp_test_plugin:bad"))
    with pytest.raises(ClaimLoadError, match="must name a module, a ClaimSet"):
        entry_point_claims()
    monkeypatch.setattr(loading, "_entry_points", lambda: points("rp_test_missing_mod:x"))
    with pytest.raises(ClaimLoadError, match="ModuleNotFoundError"):
        entry_point_claims()


def test_duplicate_ids_across_sources_are_refused() -> None:
    a, b = _set("a", "same.id"), _set("b", "same.id")
    with pytest.raises(ClaimLoadError, match=r"'same\.id' is defined twice"):
        gather_claims([*a, *b], entry_points=False)
    assert len(gather_claims([*a, *a], entry_points=False)) == 1  # the same claim reached twice


def test_load_errors_are_one_line_and_exit_2(tmp_path, capsys) -> None:
    broken = tmp_path / "broken_claims.py"
    broken.write_text("raise RuntimeError('boom')\n")
    with pytest.raises(ClaimLoadError, match="RuntimeError: boom"):
        load_claims(broken)
    with pytest.raises(ClaimLoadError, match="no such file"):
        load_claims(tmp_path / "missing.py")
    with pytest.raises(ClaimLoadError, match="no importable module"):
        load_claims("rp_test_no_such_module")
    assert main(["check", "--claims", str(broken), "--list"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("ropeproof check: error: --claims") and "\n" not in err


def test_no_plugins_skips_a_broken_entry_point(monkeypatch, capsys) -> None:
    broken = [metadata.EntryPoint("broken", "rp_test_missing_mod:x", ENTRY_POINT_GROUP)]
    monkeypatch.setattr(loading, "_entry_points", lambda: broken)
    assert main(["check", "--list", "--only", "rope.*"]) == 2
    assert "--no-plugins skips entry points" in capsys.readouterr().err
    assert main(["check", "--list", "--only", "rope.*", "--no-plugins"]) == 0
    assert capsys.readouterr().out.startswith("rope.")
