"""One figure per corrected statement (docs/theory.md section 9): the exact quantity, the statement as
reported (with ``n`` the length and with ``n`` the largest offset) and the corrected statement, against
the sequence length. The data come from :mod:`ropeproof.verify.studies.errata`, the same products of the run's
store that ``ropeproof errata`` and ``ropeproof check`` pin (each correction is computed once per run);
each figure's data (:func:`correction_figure_data`) is a product of its own, ``figure.errata-*``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ropeproof.machinery._result_store import ResultStore, data_product
from ropeproof.paper_figures._style import COLORS, FigureResult, styled, subplots
from ropeproof.verify.studies.errata._correction_data import CorrectionData
from ropeproof.verify.studies.errata._index import (
    CERTIFIED_UP_TO,
    INDEX_BEST_THETA,
    INDEX_FIXED_THETA,
    INDEX_LARGEST_GAP,
)
from ropeproof.verify.studies.errata._partial_induction import PARTIAL_INDUCTION
from ropeproof.verify.studies.errata._readout import PERIOD, READOUT
from ropeproof.verify.studies.errata._retrieval import RETRIEVAL_LARGEST_GAP, RETRIEVAL_MARGIN

CORRECTED = "#2ca02c"
"""The corrected statement's colour in every errata figure."""
SERIES_STYLES = ("-", "--")
"""Line style of the first and second parameter setting of a correction."""


SERIES_FIELDS = ("n", "exact", "reported", "reported_offset", "corrected")
"""The arrays of a :class:`~ropeproof.verify.studies.errata._correction_data.Series` that a figure draws."""


def correction_figure_data(data: CorrectionData) -> dict[str, Any]:
    """What an errata figure draws of a correction, as JSON data: the labels, the status the computation
    establishes and each series' arrays (:data:`SERIES_FIELDS`)."""
    status, _why = data.established()
    return {
        "quantity": data.quantity,
        "reported_label": data.reported_label,
        "corrected_label": data.corrected_label,
        "status": status,
        "series": [{"label": s.label, **{k: getattr(s, k) for k in SERIES_FIELDS}} for s in data.series],
    }


@data_product("figure.errata-index-fixed-theta")
def INDEX_FIXED_THETA_DATA(store: ResultStore) -> dict[str, Any]:
    """:func:`correction_figure_data` of the correction ``thm3.2.index.fixed-theta``."""
    return correction_figure_data(store.get(INDEX_FIXED_THETA))


@data_product("figure.errata-index-best-theta")
def INDEX_BEST_THETA_DATA(store: ResultStore) -> dict[str, Any]:
    """:func:`correction_figure_data` of the best-angle correction, from the product the correction itself
    asks for (certified by branch-and-bound up to ``CERTIFIED_UP_TO``), so a run computes it once; the
    certification adds checks, not rows, so the plotted data are those of the product without it."""
    return correction_figure_data(store.get(INDEX_BEST_THETA, certified_up_to=CERTIFIED_UP_TO))


@data_product("figure.errata-index-largest-gap")
def INDEX_LARGEST_GAP_DATA(store: ResultStore) -> dict[str, Any]:
    """:func:`correction_figure_data` of the largest-gap correction of T_Index."""
    return correction_figure_data(store.get(INDEX_LARGEST_GAP))


@data_product("figure.errata-retrieval-margin")
def RETRIEVAL_MARGIN_DATA(store: ResultStore) -> dict[str, Any]:
    """:func:`correction_figure_data` of the margin correction of T_Retrieval."""
    return correction_figure_data(store.get(RETRIEVAL_MARGIN))


@data_product("figure.errata-retrieval-largest-gap")
def RETRIEVAL_LARGEST_GAP_DATA(store: ResultStore) -> dict[str, Any]:
    """:func:`correction_figure_data` of the largest-gap correction of T_Retrieval."""
    return correction_figure_data(store.get(RETRIEVAL_LARGEST_GAP))


@data_product("figure.errata-remark31-readout")
def READOUT_DATA(store: ResultStore, lengths: list[int]) -> dict[str, Any]:
    """:func:`correction_figure_data` of Remark 3.1's correction at ``lengths``."""
    return correction_figure_data(store.get(READOUT, lengths=lengths))


@data_product("figure.errata-partial-induction")
def PARTIAL_INDUCTION_DATA(store: ResultStore) -> dict[str, Any]:
    """:func:`correction_figure_data` of [B]'s partial-induction correction."""
    return correction_figure_data(store.get(PARTIAL_INDUCTION))


def _draw(
    data: dict[str, Any], stem: str, title: str, caption: str, yscale: str, ylabel: str, colour: str
) -> FigureResult:
    """Top: the exact quantity, the reported statement (both readings of n) and the corrected one. Bottom:
    each statement minus the exact value, so a statement fails exactly where its curve is below 0."""
    fig, (ax, diff) = subplots(
        2, 1, figsize=(7.0, 7.2), sharex=True, layout="constrained", gridspec_kw={"height_ratios": [3, 2]}
    )
    rows: list[dict[str, Any]] = []
    for i, series in enumerate(data["series"]):
        s = _Arrays(series)
        ls = SERIES_STYLES[i % len(SERIES_STYLES)]
        tag = f" ({s.label})" if len(data["series"]) > 1 else ""
        mask = s.exact > 0 if yscale == "log" else np.ones(s.n.size, dtype=bool)
        ax.plot(s.n[mask], s.exact[mask], color=colour, ls=ls, lw=1.6, label=f"exact{tag}")
        marker = "o" if np.isfinite(s.reported).sum() < 3 else None  # a statement about one length
        ax.plot(
            s.n, s.reported, color=COLORS["bound"], ls=ls, lw=1.0, marker=marker, label=f"as reported{tag}"
        )
        diff.plot(s.n, s.reported - s.exact, color=COLORS["bound"], ls=ls, lw=1.0, marker=marker)
        if not np.array_equal(s.reported, s.reported_offset, equal_nan=True):
            ax.plot(
                s.n,
                s.reported_offset,
                color=COLORS["bound"],
                ls=":",
                lw=1.0,
                label=f"as reported, n = length - 1{tag}",
            )
            diff.plot(s.n, s.reported_offset - s.exact, color=COLORS["bound"], ls=":", lw=1.0)
        ax.plot(s.n, s.corrected, color=CORRECTED, ls=ls, lw=2.4, alpha=0.6, label=f"corrected{tag}")
        diff.plot(s.n, s.corrected - s.exact, color=CORRECTED, ls=ls, lw=2.4, alpha=0.6)
        rows += [
            {
                "series": s.label,
                "n": int(n),
                "exact": float(e),
                "reported": float(r) if np.isfinite(r) else None,
                "reported_offset": float(ro) if np.isfinite(ro) else None,
                "corrected": float(c),
            }
            for n, e, r, ro, c in zip(s.n, s.exact, s.reported, s.reported_offset, s.corrected, strict=True)
        ]
    if yscale == "symlog":
        ax.set_yscale("symlog", linthresh=1e-3)
    else:
        ax.set_yscale(yscale)
    diff.axhline(0.0, color=COLORS["random"], lw=0.8)
    diff.set_yscale("symlog", linthresh=1e-4)
    diff.set_xlabel("sequence length n (tokens)")
    diff.set_ylabel("statement - exact (< 0: fails)")
    ax.set_ylabel(ylabel)
    ax.set_title(f"{title}\nexact: {data['quantity']}\nas reported: {data['reported_label']}\n"
                 f"corrected: {data['corrected_label']}", fontsize="small")  # fmt: skip
    ax.legend(loc="best", fontsize="small")
    return FigureResult(stem, fig, rows, caption)


class _Arrays:
    """A series of :func:`correction_figure_data` with its arrays as numpy arrays."""

    def __init__(self, series: dict[str, Any]) -> None:
        self.label = series["label"]
        self.n = np.array(series["n"])
        self.exact, self.reported, self.reported_offset, self.corrected = (
            np.array(series[k], dtype=np.float64) for k in SERIES_FIELDS[1:]
        )


def _caption(data: dict[str, Any], what: str) -> str:
    status = data["status"]
    return (
        f"{what} Top: exact values (colour), the statement as reported (black; dotted: n read as the largest "
        f"offset) and the corrected statement (green, {status}: docs/theory.md section 9) against length. "
        "Bottom: each statement minus the exact value (symmetric log, linear below 1e-4); a statement fails "
        "where its curve is below 0."
    )


def _figure(
    store: ResultStore | None,
    product: Any,
    what: str,
    stem: str,
    title: str,
    yscale: str,
    ylabel: str,
    colour: str,
    **query: Any,
) -> FigureResult:
    """:func:`_draw` of ``product``'s data for ``query`` (from ``store``, a fresh :class:`ResultStore`
    when ``None``), captioned by :func:`_caption` with ``what``."""
    data = (ResultStore() if store is None else store).get(product, **query)
    return _draw(data, stem, title, _caption(data, what), yscale, ylabel, colour)


@styled
def index_fixed_theta_figure(quick: bool = False, store: ResultStore | None = None) -> FigureResult:
    """T_Index's worst margin at theta = 0.8660 against min(1 - cos theta, pi^2/(2 n^2)) and the corrected
    min(1 - cos theta, 2 sin(pi/n)^2)."""
    what = "Theorem 3.2 corrected for T_Index at a fixed angle (worst-case margin = smallest gap)."
    return _figure(store, INDEX_FIXED_THETA_DATA, what, "errata_index_fixed_theta",
                   "T_Index at theta = 0.866: worst margin", "log", "worst-case margin (logit units)",
                   COLORS["index"])  # fmt: skip


@styled
def index_best_theta_figure(quick: bool = False, store: ResultStore | None = None) -> FigureResult:
    """The best one-plane T_Index margin over every angle, 2 sin(pi/n)^2, against pi^2/(2 n^2)."""
    what = ("Theorem 3.2's pi^2/(2n^2) corrected: the best worst-case margin over every angle, "
            "attained at theta = 2 pi/n, is 2 sin(pi/n)^2, about four times the term.")  # fmt: skip
    return _figure(store, INDEX_BEST_THETA_DATA, what, "errata_index_best_theta",
                   "T_Index, best angle at each length", "log", "best worst-case margin (logit units)",
                   COLORS["index"])  # fmt: skip


@styled
def index_largest_gap_figure(quick: bool = False, store: ResultStore | None = None) -> FigureResult:
    """T_Index's largest gap at theta = 0.8660 against [A]'s bound and the corrected one."""
    what = ("Theorem 3.2 for T_Index read literally (the largest gap, the target in the middle): "
            "min(1 - cos theta, 2 sin(pi/(ceil((n-1)/2) + 1))^2).")  # fmt: skip
    return _figure(store, INDEX_LARGEST_GAP_DATA, what, "errata_index_largest_gap",
                   "T_Index at theta = 0.866: largest gap", "log",
                   "largest top-1 minus top-2 gap (logit units)", COLORS["index"])  # fmt: skip


@styled
def retrieval_margin_figure(quick: bool = False, store: ResultStore | None = None) -> FigureResult:
    """T_Retrieval's worst margin against 1 - cos(omega - n theta) and 1 - cos(omega - (n - 1) theta)."""
    what = ("Theorem 3.2 corrected for T_Retrieval (|ALPH| = 8) at theta = 0.0027 (solid) and "
            "theta = 0 (dashed, where exact and both bounds coincide): 1 - cos(omega - (n - 1) theta) "
            "holds at every length n >= 3.")  # fmt: skip
    return _figure(store, RETRIEVAL_MARGIN_DATA, what, "errata_retrieval_margin", "T_Retrieval: worst margin",
                   "linear", "worst-case margin (logit units)", COLORS["retrieval"])  # fmt: skip


@styled
def retrieval_largest_gap_figure(quick: bool = False, store: ResultStore | None = None) -> FigureResult:
    """T_Retrieval's largest gap (the literal Delta) against [A]'s bound and its closed form."""
    what = ("Theorem 3.2 for T_Retrieval read literally: the largest gap is cos theta + "
            "cos((n - 1) theta), near 2, far above any bound of [A]'s shape; theta = 0.0027 (solid) "
            "and 0 (dashed).")  # fmt: skip
    return _figure(store, RETRIEVAL_LARGEST_GAP_DATA, what, "errata_retrieval_largest_gap",
                   "T_Retrieval: largest gap", "linear", "largest top-1 minus top-2 gap (logit units)",
                   COLORS["retrieval"])  # fmt: skip


@styled
def readout_figure(quick: bool = False, store: ResultStore | None = None) -> FigureResult:
    """The positional Retrieval head's worst readout margin against Remark 3.1's 0 and the per-query bound
    min_j C p_j(Q) (C min_j p_j(Q) where C >= 0)."""
    lengths = [3, 8, 17, 33, PERIOD] if quick else list(range(3, PERIOD + 1))
    what = (
        "Remark 3.1 read at the output: for every query Q asking for a letter Y and pairs tau != o of left "
        "letter Y with C = C(tau, o) >= 0, a positional head's worst readout margin is at most "
        "C min_j p_j(Q) <= C (1 - p_Q(Q))/(n - 1), p_j(Q) being Q's key weights; the period-"
        f"{PERIOD} head (C = 1) attains it at every length up to its period, where the remark says no "
        "positional head can be right (0)."
    )
    return _figure(store, READOUT_DATA, what, "errata_remark31_readout", "Positional head, Retrieval readout",
                   "linear", "worst readout margin", COLORS["retrieval0"], lengths=lengths)  # fmt: skip


@styled
def partial_induction_figure(quick: bool = False, store: ResultStore | None = None) -> FigureResult:
    """The one-plane letter code's worst margin on partial induction against [B]'s 0 and its closed form."""
    what = ("[B]'s one-plane partial-induction statement, reading (a), corrected: the letter code "
            "at theta = omega/32 (|ALPH| = 4) solves every input up to its horizon, with the closed-"
            "form margin; [B]'s statement would put it at or below 0.")  # fmt: skip
    return _figure(store, PARTIAL_INDUCTION_DATA, what, "errata_partial_induction",
                   "One plane on partial induction", "symlog", "worst-case margin (logit units)",
                   COLORS["reflexive"])  # fmt: skip


FIGURES: dict[str, Callable[..., FigureResult]] = {
    "errata_index_fixed_theta": index_fixed_theta_figure,
    "errata_index_best_theta": index_best_theta_figure,
    "errata_index_largest_gap": index_largest_gap_figure,
    "errata_retrieval_margin": retrieval_margin_figure,
    "errata_retrieval_largest_gap": retrieval_largest_gap_figure,
    "errata_remark31_readout": readout_figure,
    "errata_partial_induction": partial_induction_figure,
}
"""The errata figures by name, in the order of the corrections."""
