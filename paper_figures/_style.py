"""The figures' style and output, without global state.

Every figure function draws inside :func:`styled` (``matplotlib.rc_context`` with
``ropeproof.mplstyle``) on a :class:`matplotlib.figure.Figure` made by :func:`subplots` (no pyplot,
no backend switch) and returns a :class:`FigureResult`. :func:`save_figure` writes it as a PNG and a
PDF (or the :data:`FORMATS` asked for), the CSV of the plotted data and a caption, deterministically
(no timestamps or software tags).
"""

from __future__ import annotations

import csv
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ParamSpec

import matplotlib
from matplotlib.figure import Figure

from ropeproof.machinery._atomic_output import atomic_path
from ropeproof.machinery._errors import InputError
from ropeproof.paper_figures._tick_labels import plain_log_labels

STYLE = Path(__file__).with_name("ropeproof.mplstyle")
"""The style file applied to every figure."""

COLORS = {
    "index": "#1f77b4",
    "retrieval": "#d62728",
    "retrieval0": "#ff7f0e",
    "reflexive": "#2ca02c",
    "bound": "#333333",
    "random": "#7f7f7f",
}
"""One colour per construction, shared by every figure."""

P = ParamSpec("P")

FORMATS = ("png", "pdf")
"""The image formats :func:`save_figure` can write, in the order it writes them."""


def check_formats(formats: Sequence[str]) -> tuple[str, ...]:
    """``formats`` in :data:`FORMATS` order, without repeats; :class:`InputError` naming the
    parameter when one is unknown or none is given."""
    unknown = sorted(set(formats) - set(FORMATS))
    if unknown or not formats or isinstance(formats, str):
        raise InputError(
            f"formats={formats!r} must be a non-empty list of image formats from {list(FORMATS)}"
        )
    return tuple(f for f in FORMATS if f in formats)


@dataclass
class FigureResult:
    """A drawn figure: its file stem ``name``, the ``figure``, the exact ``rows`` plotted, a ``caption``.

    In a notebook the figure displays itself (``_repr_png_``); :func:`save_figure` writes the files.
    """

    name: str
    figure: Figure
    rows: list[dict[str, Any]]
    caption: str

    def _repr_png_(self) -> bytes:
        import io

        buf = io.BytesIO()
        with matplotlib.rc_context(fname=str(STYLE)):
            self.figure.savefig(buf, format="png")
        return buf.getvalue()


def styled(draw: Callable[P, FigureResult]) -> Callable[P, FigureResult]:
    """Run a figure function inside the project's ``rc_context`` (rcParams are restored after); its log
    axes' tick labels are then plain text (:func:`~ropeproof.paper_figures._tick_labels.plain_log_labels`)."""

    @functools.wraps(draw)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> FigureResult:
        with matplotlib.rc_context(fname=str(STYLE)):
            result = draw(*args, **kwargs)
            plain_log_labels(result.figure)
            return result

    return wrapper


def subplots(
    nrows: int = 1,
    ncols: int = 1,
    *,
    figsize: tuple[float, float],
    layout: str = "constrained",
    **kwargs: Any,
) -> tuple[Figure, Any]:
    """``(figure, axes)`` like ``pyplot.subplots``, on a detached :class:`Figure` (no pyplot state), laid
    out by ``layout`` (default ``"constrained"``: every label, title and legend inside the figure, so
    :func:`save_figure` needs no tight bounding box, which costs a second layout and draw per file)."""
    fig = Figure(figsize=figsize, layout=layout)
    return fig, fig.subplots(nrows, ncols, **kwargs)


def _cell(v: Any) -> Any:
    if isinstance(v, float):
        return f"{v:.12g}"
    if v is None:
        return ""
    return v


def _atomic_write(
    path: Path, write: Callable[[Path], None], replace: bool = True, option: str = "--out"
) -> None:
    """``write(tmp)`` to a temporary path moved onto ``path`` when it succeeds
    (:func:`ropeproof.machinery._atomic_output.atomic_path`; ``replace=False``: created exclusively, an
    :class:`~ropeproof.machinery._errors.OutputError` naming ``option`` if ``path`` exists by then)."""
    with atomic_path(path, replace=replace, option=option) as tmp:
        write(tmp)


_SAVE_OPTIONS: dict[str, dict[str, Any]] = {
    "png": {"dpi": 150, "metadata": {"Software": None}},
    "pdf": {"metadata": {"CreationDate": None, "ModDate": None, "Producer": None, "Creator": None}},
}


def save_figure(
    result: FigureResult,
    out_dir: Path,
    formats: Sequence[str] = FORMATS,
    *,
    replace: bool = True,
    option: str = "--out",
) -> list[Path]:
    """Write ``NAME.png`` and ``NAME.pdf`` (those of them in ``formats``), ``NAME.csv`` (the plotted
    rows) and ``NAME.caption.txt``; return the paths in that order. The figure is laid out once, by its
    layout engine as the first image is drawn; the other formats reuse those positions (the engine is
    put back afterwards). ``replace=False`` creates each file
    exclusively (one that appeared meanwhile, another run's, is refused naming ``option``)."""
    chosen = check_formats(formats)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    name, fig = result.name, result.figure
    images = [out_dir / f"{name}.{fmt}" for fmt in chosen]
    engine = fig.get_layout_engine()
    try:
        with matplotlib.rc_context(fname=str(STYLE)):
            for fmt, path in zip(chosen, images, strict=True):
                _atomic_write(
                    path, lambda p, fmt=fmt: fig.savefig(p, format=fmt, **_SAVE_OPTIONS[fmt]), replace, option
                )
                if engine is not None:  # laid out by the first file: the others keep its positions
                    fig.set_layout_engine("none")
    finally:
        if engine is not None:
            fig.set_layout_engine(engine)
    csv_path = out_dir / f"{name}.csv"
    _atomic_write(csv_path, lambda p: p.write_text(rows_csv(result.rows)), replace, option)
    cap = out_dir / f"{name}.caption.txt"
    _atomic_write(cap, lambda p: p.write_text(result.caption.strip() + "\n"), replace, option)
    return [*images, csv_path, cap]


def rows_csv(rows: Sequence[dict[str, Any]]) -> str:
    """The rows as CSV text, as :func:`save_figure` writes them."""
    import io

    fields: list[str] = []
    for row in rows:
        fields += [k for k in row if k not in fields]
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: _cell(row.get(k)) for k in fields})
    return buf.getvalue()
