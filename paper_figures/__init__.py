"""Regenerate the paper figures from the library, with the plotted data saved beside each plot.

Every figure is a function ``NAME_figure(quick=False, store=None) -> FigureResult`` that returns a
:class:`matplotlib.figure.Figure` with the rows it plots and a caption, touching no global state
(usable from a notebook as is); :func:`~ropeproof.paper_figures._style.save_figure` writes
``NAME.png``, ``NAME.pdf``, ``NAME.csv`` and ``NAME.caption.txt``. :func:`figures` lists them by
name and :func:`make_all` draws and saves them: PNG and PDF, or only the PNG for ``quick`` figures
(:func:`default_formats`; the shortened sweeps make previews, the PDFs are for the full figures).

Your own sweeps plot with :func:`~ropeproof.paper_figures._sweeps.plot_sweeps` (any heads or
constructions, a bound, a normalisation), which returns the same :class:`FigureResult`.

What a figure plots is a data product of the run's :class:`~ropeproof.machinery._result_store.ResultStore`
(``store``; default a fresh one): the claims of ``ropeproof check`` ask the same store, so what both
need is computed once, and a store of a saved run (``ResultStore.saved(DIR/store)``, what
``ropeproof figures --from-report DIR`` opens) draws every figure again without computing anything.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ropeproof.machinery._errors import InputError
from ropeproof.machinery._lazy import lazy_exports
from ropeproof.machinery._result_store import ResultStore
from ropeproof.paper_figures._style import FORMATS, FigureResult, check_formats, save_figure

__all__ = [
    "FigureResult",
    "available_figure_names",
    "default_formats",
    "draw_figure",
    "figure_names",
    "figures",
    "make_all",
    "plot_parameter_scans",
    "plot_partial_sum_decay",
    "plot_sweeps",
    "save_figure",
]

_EXPORTS: dict[str, str] = {
    "plot_sweeps": "ropeproof.paper_figures._sweeps",
    "plot_parameter_scans": "ropeproof.paper_figures._spectra",
    "plot_partial_sum_decay": "ropeproof.paper_figures._spectra",
}
"""The public names this package loads on first use (the sweeps' plot imports torch)."""

if TYPE_CHECKING:  # pragma: no cover - the static view of _EXPORTS (tests/test_public_api.py: the same)
    from ropeproof.paper_figures._spectra import plot_parameter_scans, plot_partial_sum_decay
    from ropeproof.paper_figures._sweeps import plot_sweeps

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

FigureFunction = Callable[..., FigureResult]
"""``draw(quick, store=None) -> FigureResult``."""


def figures() -> dict[str, FigureFunction]:
    """Every figure function by name, in report order (``quick`` shortens the longest sweeps)."""
    from ropeproof.paper_figures import (
        _accuracy as accuracy,
    )
    from ropeproof.paper_figures import (
        _discrepancy as discrepancy,
    )
    from ropeproof.paper_figures import (
        _errata as errata,
    )
    from ropeproof.paper_figures import (
        _geometry as geometry,
    )
    from ropeproof.paper_figures import (
        _llm_eval as llm_eval,
    )
    from ropeproof.paper_figures import (
        _many_plane as many_plane,
    )
    from ropeproof.paper_figures import (
        _multihop as multihop,
    )
    from ropeproof.paper_figures import (
        _ps_plane as ps_plane,
    )
    from ropeproof.paper_figures import (
        _training as training,
    )

    return {
        "a_theory_bounds": discrepancy.theory_figure,
        "b_loglog_discrepancy": discrepancy.loglog_figure,
        "c_accuracy": accuracy.accuracy_figure,
        "d_softmax_scale": discrepancy.softmax_scale_figure,
        "e_geometry": geometry.geometry_figure,
        "ps_plane": ps_plane.ps_plane_figure,
        "per_frequency": ps_plane.per_frequency_figure,
        "ps_scale": ps_plane.ps_scale_figure,
        "many_plane_margin": many_plane.many_plane_figure,
        "letter_codes": many_plane.letter_codes_figure,
        "partial_induction": many_plane.partial_induction_figure,
        "multihop_length": multihop.length_figure,
        "multihop_ps_layers": multihop.ps_figure,
        "training_accuracy": training.accuracy_figure,
        "training_ps_paths": training.ps_paths_figure,
        "training_ps_final": training.ps_final_figure,
        "training_length": training.length_figure,
        "training_frequencies": training.frequencies_figure,
        "training_theory": training.theory_figure,
        **errata.FIGURES,
        "llm_eval_local": llm_eval.local_figure,
    }


NEEDS_HF = frozenset({"training_length", "training_frequencies", "training_theory", "llm_eval_local"})
"""Figures that run the shipped trained checkpoints, so they need ``transformers`` (the ``hf`` extra)."""


FULL_FIGURES = frozenset({"training_length", "training_frequencies", "training_theory"})
"""Figures that take ``full=True``: they then draw the rows no verdict reads as well (``ropeproof figures
--full``), which ``ropeproof check`` does not compute."""


def figure_names() -> list[str]:
    """The names :func:`make_all` accepts in ``only``."""
    return list(figures())


def available_figure_names() -> list[str]:
    """The figures this installation can draw: all of them with ``transformers`` installed, else all
    but :data:`NEEDS_HF` (what :func:`make_all` draws when ``only`` is not given)."""
    has_hf = importlib.util.find_spec("transformers") is not None
    return [name for name in figure_names() if has_hf or name not in NEEDS_HF]


def default_formats(quick: bool) -> tuple[str, ...]:
    """The image formats :func:`make_all` writes unless told: ``("png",)`` for the ``quick`` figures
    (previews of shortened sweeps; a PDF costs about as much again as the PNG, in matplotlib's
    layout and drawing), ``("png", "pdf")`` for the full ones."""
    return ("png",) if quick else FORMATS


def make_all(
    out_dir: Path,
    quick: bool = False,
    only: list[str] | None = None,
    formats: list[str] | tuple[str, ...] | None = None,
    store: ResultStore | None = None,
    full: bool = False,
) -> dict[str, list[Path]]:
    """Draw and save the figures named in ``only`` under ``out_dir`` (an empty list draws none; default:
    every figure this installation can draw, :func:`available_figure_names`; a figure named in ``only``
    that needs a missing extra raises the error that names the extra), in ``formats`` (default:
    :func:`default_formats`), from the results in ``store`` (default: a fresh store, shared by the
    figures drawn); ``full``: the :data:`FULL_FIGURES` with the rows no verdict reads."""
    table = figures()
    unknown = sorted(set(only or []) - set(table))
    if unknown:
        raise InputError(f"unknown figures {unknown}; accepted: {sorted(table)}")
    chosen = set(only) if only is not None else set(available_figure_names())
    fmts = default_formats(quick) if formats is None else check_formats(formats)
    store = ResultStore() if store is None else store
    return {name: save_figure(draw_figure(name, quick, store, full), Path(out_dir), fmts) for name in table
            if name in chosen}  # fmt: skip


def draw_figure(name: str, quick: bool, store: ResultStore, full: bool = False) -> FigureResult:
    """The figure ``name`` drawn from ``store`` (``full``: a :data:`FULL_FIGURES` figure with the rows no
    verdict reads); its files must be named after the figure (``--only per_frequency`` used to write
    ``ps_per_frequency.*``)."""
    table = figures()
    if name not in table:
        raise InputError(f"unknown figure {name!r}; accepted: {sorted(table)}")
    extra = {"full": True} if full and name in FULL_FIGURES else {}
    result = table[name](quick, store=store, **extra)
    if result.name != name:
        raise RuntimeError(f"figure {name!r} returned files named {result.name!r}; they must match")
    return result
