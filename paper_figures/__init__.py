"""Regenerate the paper figures from the library, with the plotted data saved beside each plot.

:data:`FIGURES` maps a figure name to ``make(out_dir, quick) -> list[Path]``; :func:`make_all` runs
them. Each writes ``NAME.png``, ``NAME.pdf``, ``NAME.csv`` (the exact data plotted) and
``NAME.caption.txt`` (see :mod:`paper_figures.style`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

FigureMaker = Callable[[Path, bool], list[Path]]


def _figures() -> dict[str, FigureMaker]:
    from paper_figures import accuracy, discrepancy, geometry, ps_plane

    figures: dict[str, FigureMaker] = {
        "a_theory_bounds": discrepancy.make_theory_figure,
        "b_loglog_discrepancy": discrepancy.make_loglog_figure,
        "c_accuracy": accuracy.make_accuracy_figure,
        "d_softmax_scale": discrepancy.make_softmax_scale_figure,
        "e_geometry": geometry.make_geometry_figure,
        "ps_plane": lambda out, quick: ps_plane.make_ps_plane_figure(out),
        "per_frequency": lambda out, quick: ps_plane.make_per_frequency_figure(out),
    }
    try:
        from paper_figures import many_plane
    except ImportError:  # the many-plane figures are optional until that module lands
        return figures
    figures.update(getattr(many_plane, "FIGURES", {}))
    return figures


def figure_names() -> list[str]:
    return list(_figures())


def make_all(out_dir: Path, quick: bool = False, only: list[str] | None = None) -> dict[str, list[Path]]:
    """Make every figure (or those named in ``only``) under ``out_dir``."""
    figures = _figures()
    unknown = sorted(set(only or []) - set(figures))
    if unknown:
        from verify.errors import InputError

        raise InputError(f"unknown figures {unknown}; accepted: {sorted(figures)}")
    return {name: make(Path(out_dir), quick) for name, make in figures.items() if not only or name in only}
