"""The errata figures (docs/theory.md section 9): one per correction, each plotting the exact quantity, the
statement as reported under both readings of n and the corrected statement, with the rows it plots."""

from __future__ import annotations

from matplotlib.figure import Figure

from ropeproof.paper_figures import figure_names
from ropeproof.paper_figures._errata import FIGURES, index_best_theta_figure, retrieval_margin_figure


def test_one_figure_per_correction_is_registered() -> None:
    from ropeproof.claims import registered_corrections

    assert len(FIGURES) == len(registered_corrections())
    assert set(FIGURES) <= set(figure_names())


def test_the_figures_plot_what_the_corrections_compute() -> None:
    import torch

    from ropeproof.claims import CheckContext, registered_corrections
    from ropeproof.claims._corrections import run_correction
    from ropeproof.machinery._result_store import ResultStore

    store = ResultStore()  # the best-angle figure and its correction: one computation between them
    best = index_best_theta_figure(quick=True, store=store)
    correction = next(c for c in registered_corrections() if c.id == "thm3.2.index.best-theta")
    run_correction(correction, CheckContext(torch.device("cpu"), torch.float64, quick=True, store=store))
    computed = store.computation_counts()
    assert [computed[k] for k in computed if k.startswith("errata.index-best-theta")] == [1], computed
    assert isinstance(best.figure, Figure) and len(best.figure.axes) == 2
    assert best.name == "errata_index_best_theta" and "docs/theory.md section 9" in best.caption
    assert {"series", "n", "exact", "reported", "reported_offset", "corrected"} == set(best.rows[0])
    # the best angle: the corrected value is the exact optimum, about four times [A]'s term at n = 100
    last = best.rows[-1]
    assert last["n"] == 100 and abs(last["exact"] - last["corrected"]) < 1e-15
    assert 3.99 < last["corrected"] / last["reported"] < 4
    retrieval = retrieval_margin_figure(quick=True)
    series = {r["series"] for r in retrieval.rows}
    assert series == {"theta = 0.0027", "theta = 0"}
    assert all(r["exact"] <= r["corrected"] + 1e-14 for r in retrieval.rows)  # the bound holds
    assert any(r["exact"] > r["reported"] for r in retrieval.rows)  # [A]'s does not
