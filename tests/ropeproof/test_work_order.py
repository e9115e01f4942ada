"""The seconds that order check's work: read from this machine's last run over the shipped ones, merged
task by task, ignored when unreadable; and the shipped table names only tasks that exist."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ropeproof import _work_order as work_order
from ropeproof._work_order import HISTORY, SHIPPED, expected_seconds, record_seconds


def test_this_machines_seconds_override_the_shipped_ones_task_by_task(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shipped = tmp_path / "shipped.json"
    shipped.write_text(json.dumps({"quick": {"claim:a": 5.0, "claim:b": 1.0}, "full": {"claim:a": 50.0}}))
    monkeypatch.setattr(work_order, "SHIPPED", shipped)
    cache = tmp_path / "cache"
    assert expected_seconds(cache, quick=True) == {"claim:a": 5.0, "claim:b": 1.0}  # no history yet
    record_seconds(cache, True, {"claim:b": 7.25, "figure:f": 0.5})
    assert expected_seconds(cache, quick=True) == {"claim:a": 5.0, "claim:b": 7.25, "figure:f": 0.5}
    assert expected_seconds(cache, quick=False) == {"claim:a": 50.0}  # the other kind is untouched
    record_seconds(cache, True, {"claim:a": 0.1})  # a later run of some tasks keeps the others' seconds
    assert json.loads((cache / HISTORY).read_text())["quick"] == {
        "claim:a": 0.1,
        "claim:b": 7.25,
        "figure:f": 0.5,
    }
    # a damaged history, or values that are not seconds, are ignored rather than trusted
    (cache / HISTORY).write_text('{"quick": {"claim:a": -1, "claim:b": "x", "claim:c": NaN, "claim:d": 2}}')
    assert expected_seconds(cache, quick=True) == {"claim:a": 5.0, "claim:b": 1.0, "claim:d": 2.0}
    (cache / HISTORY).write_text("not json")
    assert expected_seconds(cache, quick=True) == {"claim:a": 5.0, "claim:b": 1.0}
    record_seconds(cache, True, {"claim:e": 3.0})  # and replaced by the next run's
    assert expected_seconds(cache, quick=True)["claim:e"] == 3.0
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    record_seconds(blocked, True, {"claim:a": 1.0})  # a cache directory that cannot be written: nothing
    assert blocked.read_text() == ""


def test_the_shipped_seconds_name_only_claims_and_figures_that_exist() -> None:
    from ropeproof.claims import registered_claims
    from ropeproof.paper_figures import figure_names

    if not SHIPPED.exists():
        pytest.skip("no shipped seconds yet")
    table = json.loads(SHIPPED.read_text())
    known = {f"claim:{c.id}" for c in registered_claims()} | {f"figure:{n}" for n in figure_names()}
    assert set(table) == {"quick", "full"}
    for kind, seconds in table.items():
        assert seconds, kind
        assert set(seconds) <= known, sorted(set(seconds) - known)
        assert all(isinstance(v, float | int) and v >= 0 for v in seconds.values())
