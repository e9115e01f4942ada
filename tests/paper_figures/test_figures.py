"""Figures from a notebook: functions return a Figure and touch no global state; saving is a
separate, deterministic step."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import matplotlib
import pytest
from matplotlib.figure import Figure

from ropeproof.machinery._errors import InputError
from ropeproof.paper_figures import default_formats, figure_names, figures, make_all
from ropeproof.paper_figures._accuracy import accuracy_figure
from ropeproof.paper_figures._discrepancy import fitted_slope, theory_figure
from ropeproof.paper_figures._geometry import geometry_figure
from ropeproof.paper_figures._many_plane import letter_code_rows
from ropeproof.paper_figures._style import STYLE, FigureResult, rows_csv, save_figure


def test_figure_functions_leave_rcparams_and_backend_alone() -> None:
    before = dict(matplotlib.rcParams)
    backend = matplotlib.get_backend()
    result = geometry_figure()
    assert isinstance(result, FigureResult) and isinstance(result.figure, Figure)
    assert result.rows and result.caption
    assert dict(matplotlib.rcParams) == before and matplotlib.get_backend() == backend
    png = result._repr_png_()  # what a notebook displays
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert dict(matplotlib.rcParams) == before


def test_a_notebook_session_keeps_its_backend() -> None:
    # in a fresh interpreter nothing selects a backend or imports pyplot behind the user's back
    code = (
        "import matplotlib, sys\n"
        "from ropeproof.paper_figures._discrepancy import theory_figure\n"
        "theory_figure()\n"
        "print('matplotlib.pyplot' in sys.modules, matplotlib.rcParams['font.size'])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", str(matplotlib.rcParamsDefault["font.size"])]


def test_the_style_applies_inside_the_figure() -> None:
    fig = theory_figure().figure
    title = fig.axes[0].title
    assert title.get_fontsize() == 10  # axes.titlesize in ropeproof.mplstyle, not the default 12
    assert "axes.titlesize: 10" in STYLE.read_text()


@pytest.mark.e2e  # the slowest end-to-end runs: CI's second pass (-m e2e)
def test_saving_is_deterministic_and_complete(tmp_path: Path) -> None:
    a = make_all(tmp_path / "a", quick=True, only=["a_theory_bounds", "e_geometry"], formats=["pdf", "png"])
    b = make_all(tmp_path / "b", quick=True, only=["a_theory_bounds", "e_geometry"], formats=["png", "pdf"])
    for name in a:
        assert [p.suffix for p in a[name]] == [".png", ".pdf", ".csv", ".txt"]
        for pa, pb in zip(a[name], b[name], strict=True):
            assert pa.read_bytes() == pb.read_bytes(), pa.name
    result = geometry_figure()
    paths = save_figure(result, tmp_path / "c")
    assert paths[2].read_text() == rows_csv(result.rows)
    assert not list((tmp_path / "c").glob(".*"))  # no temporary files left behind


def _inside_canvas(fig: Figure) -> bool:
    """Whether everything drawn on ``fig`` (its tight bounding box) lies on its canvas (to 0.01 inch)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    drawn, canvas = fig.get_tightbbox(FigureCanvasAgg(fig).get_renderer()), fig.bbox_inches
    return bool(drawn.x0 >= canvas.x0 - 0.01 and drawn.y0 >= canvas.y0 - 0.01) and bool(
        drawn.x1 <= canvas.x1 + 0.01 and drawn.y1 <= canvas.y1 + 0.01
    )


def test_figures_are_laid_out_once_and_fit_their_canvas(tmp_path: Path) -> None:
    """Figures are saved without a tight bounding box (a second layout and draw per file): the
    constrained layout keeps every label, title and legend on the canvas, the figure is laid out once
    for all its formats, and its layout engine is given back."""
    for result in (theory_figure(), geometry_figure()):
        fig = result.figure
        engine = fig.get_layout_engine()
        assert type(engine).__name__ == "ConstrainedLayoutEngine"
        save_figure(result, tmp_path / result.name, ("png", "pdf"))
        assert fig.get_layout_engine() is engine and _inside_canvas(fig)
    planted = theory_figure().figure
    planted.axes[0].text(1.5, 0.5, "outside", transform=planted.axes[0].transAxes)
    assert not _inside_canvas(planted)


def test_registry_and_errors() -> None:
    assert figure_names() == list(figures())
    assert {"a_theory_bounds", "ps_plane", "many_plane_margin"} <= set(figure_names())
    with pytest.raises(InputError, match="unknown figures"):
        make_all(Path("unused"), only=["nosuch"])


def test_plotted_data_helpers() -> None:
    import numpy as np

    n = np.array([10.0, 100.0, 1000.0])
    assert fitted_slope(n, 3.0 / n**2) == pytest.approx(-2.0, abs=1e-12)
    accuracy = accuracy_figure(quick=True)
    rows = accuracy.rows
    assert {r["dtype"] for r in rows} == {"float64", "float32", "bfloat16"}
    assert all(r["accuracy"] == 1.0 for r in rows if r["dtype"] == "float64" and r["n"] == 2)
    z = 1.959963984540054  # the 97.5% normal quantile: Wilson's 95% interval written out
    for r in rows:  # every sampled accuracy carries its count and interval
        k, m = r["correct"], r["inputs"]
        assert m == 16 and r["accuracy"] == k / m
        centre, half = (k + z * z / 2) / (m + z * z), z * math.sqrt(k * (m - k) / m + z * z / 4) / (m + z * z)
        assert (r["ci_low"], r["ci_high"]) == pytest.approx((centre - half, centre + half), abs=1e-12)
    assert "16 per head and length" in accuracy.caption and "lengths 2, 8, 32, 128" in accuracy.caption
    assert any(r["accuracy"] < 1 for r in rows)  # the bands and the dotted verticals have something to show
    alphabet = [r for r in letter_code_rows() if r["panel"] == "alphabet"]
    for r in alphabet:  # one-plane code at theta = 0: margin 2 sin(pi/|ALPH|)^2 exactly
        assert r["one_plane"] == pytest.approx(r["closed_form"], rel=1e-12)
        assert r["orthogonal"] == pytest.approx(1.0, abs=1e-12)


def test_figures_needing_transformers_are_left_out_without_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the hf extra, check draws every figure but the three that run the shipped trained
    checkpoints (they would raise the error naming the extra)."""
    import importlib.util

    from ropeproof.paper_figures import NEEDS_HF, available_figure_names

    assert set(figure_names()) >= NEEDS_HF
    assert available_figure_names() == figure_names()  # the test environment has the hf extra
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "transformers" else real(name, *a)
    )
    assert available_figure_names() == [n for n in figure_names() if n not in NEEDS_HF]


def test_quick_figures_default_to_png_and_formats_are_checked(tmp_path: Path) -> None:
    quick = make_all(tmp_path / "q", quick=True, only=["d_softmax_scale"])
    assert [p.name for p in quick["d_softmax_scale"]] == [
        "d_softmax_scale.png",
        "d_softmax_scale.csv",
        "d_softmax_scale.caption.txt",
    ]
    assert default_formats(quick=True) == ("png",) and default_formats(quick=False) == ("png", "pdf")
    for bad in (["svg"], [], "png"):
        with pytest.raises(InputError, match="formats="):
            save_figure(geometry_figure(), tmp_path / "bad", formats=bad)
    assert not (tmp_path / "bad").exists() or not any((tmp_path / "bad").iterdir())


def test_the_per_frequency_preview_scores_and_states_its_own_counts() -> None:
    """The quick preview scores fewer inputs and permutations than the full figure, and its caption gives
    the counts its rows were computed with."""
    from ropeproof.machinery._result_store import ResultStore
    from ropeproof.paper_figures._ps_plane import PER_FREQUENCY_QUICK, per_frequency_figure

    result = per_frequency_figure(quick=True, store=ResultStore())
    assert {(r["n_inputs"], r["n_samples"]) for r in result.rows} == {(32, 64)}
    assert PER_FREQUENCY_QUICK == {"n_inputs": 32, "n_samples": 64}
    assert "on 32 inputs of 17 tokens" in result.caption and "over 64 random key" in result.caption
    assert len(result.rows) == 2 * 32  # two input distributions, one row per plane of head_dim 64


def test_full_reaches_only_the_figures_that_take_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """``full`` is passed to the figures of FULL_FIGURES (which then draw the rows no verdict reads) and
    to no other figure, whose signature has no such argument."""
    import ropeproof.paper_figures as pf
    from ropeproof.machinery._result_store import ResultStore

    seen: list[tuple[str, dict]] = []

    def fake(name: str):  # type: ignore[no-untyped-def]
        def draw(quick: bool, store: ResultStore | None = None, **kwargs):  # type: ignore[no-untyped-def]
            seen.append((name, kwargs))
            return pf.FigureResult(name, None, [], "")

        return draw

    import inspect

    real = pf.figures()
    assert all("full" in inspect.signature(real[n]).parameters for n in pf.FULL_FIGURES)
    assert "full" not in inspect.signature(real["e_geometry"]).parameters
    monkeypatch.setattr(pf, "figures", lambda: {n: fake(n) for n in ("training_length", "e_geometry")})
    for name in ("training_length", "e_geometry"):
        pf.draw_figure(name, False, ResultStore(), full=True)
        pf.draw_figure(name, False, ResultStore())
    assert seen == [
        ("training_length", {"full": True}),
        ("training_length", {}),
        ("e_geometry", {}),
        ("e_geometry", {}),
    ]
