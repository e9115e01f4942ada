"""The multi-hop figures: registered, drawn from the study and the per-layer scores, with their rows."""

from __future__ import annotations

from pathlib import Path

from ropeproof.machinery._result_store import ResultStore
from ropeproof.paper_figures import figure_names
from ropeproof.paper_figures._multihop import length_figure, length_rows, ps_figure, ps_rows
from ropeproof.paper_figures._style import save_figure


def test_figures_draw_save_and_carry_their_rows(tmp_path: Path) -> None:
    assert {"multihop_length", "multihop_ps_layers"} <= set(figure_names())
    store = ResultStore()
    fig = length_figure(quick=True, store=store)
    rows, summary = length_rows(quick=True, store=store)  # the same study, computed once
    assert store.computed == ['multihop.standard-length-study{"quick":true}']
    assert fig.rows == rows and "certified horizon" in fig.caption
    assert {r["setting"] for r in rows} == set(summary)
    assert all(r["accuracy"] == 1.0 for r in rows if r["n"] <= r["certified_horizon"])
    assert any(not r["grid"] for r in rows)  # the lengths probed for exact first failures
    assert all(r["accuracy_ci"][0] <= r["accuracy"] <= r["accuracy_ci"][1] for r in rows)
    ps = ps_figure(quick=True, store=store)
    assert ps.rows == ps_rows(quick=True, store=store)
    assert sum(k.startswith("figure.multihop-ps-layers") for k in store.computed) == 1
    assert {(r["task"], r["reflexive"]) for r in ps.rows} == {
        ("number", "positional"),
        ("number", "symbolic"),
        ("letter", "positional"),
        ("letter", "symbolic"),
    }
    assert all(r["label"] == "positional" for r in ps.rows if r["kind"] == "index")
    assert all(r["label"] == "symbolic" for r in ps.rows if r["kind"] == "retrieval")
    for result in (fig, ps):
        paths = save_figure(result, tmp_path)
        assert sorted(p.suffix for p in paths) == [".csv", ".pdf", ".png", ".txt"]
