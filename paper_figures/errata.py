"""One figure per corrected statement (docs/theory.md section 9): the exact quantity, the statement as
reported (with ``n`` the length and with ``n`` the largest offset) and the corrected statement, against
the sequence length. The data come from :mod:`ropeproof.verify.errata`, the same functions that
``ropeproof errata`` and ``ropeproof check`` pin."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ropeproof.paper_figures.style import COLORS, FigureResult, styled, subplots
from ropeproof.verify.errata.correction_data import CorrectionData
from ropeproof.verify.errata.index import index_best_theta, index_fixed_theta, index_largest_gap
from ropeproof.verify.errata.partial_induction import partial_induction_correction
from ropeproof.verify.errata.readout import PERIOD, readout_correction
from ropeproof.verify.errata.retrieval import retrieval_largest_gap_correction, retrieval_margin_correction

CORRECTED = "#2ca02c"
"""The corrected statement's colour in every errata figure."""
SERIES_STYLES = ("-", "--")
"""Line style of the first and second parameter setting of a correction."""


def _draw(
    data: CorrectionData, stem: str, title: str, caption: str, yscale: str, ylabel: str, colour: str
) -> FigureResult:
    """Top: the exact quantity, the reported statement (both readings of n) and the corrected one. Bottom:
    each statement minus the exact value, so a statement fails exactly where its curve is below 0."""
    fig, (ax, diff) = subplots(
        2, 1, figsize=(7.0, 7.2), sharex=True, layout="constrained", gridspec_kw={"height_ratios": [3, 2]}
    )
    rows: list[dict[str, Any]] = []
    for i, s in enumerate(data.series):
        ls = SERIES_STYLES[i % len(SERIES_STYLES)]
        tag = f" ({s.label})" if len(data.series) > 1 else ""
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
    ax.set_title(f"{title}\nexact: {data.quantity}\nas reported: {data.reported_label}\n"
                 f"corrected: {data.corrected_label}", fontsize="small")  # fmt: skip
    ax.legend(loc="best", fontsize="small")
    return FigureResult(stem, fig, rows, caption)


def _caption(data: CorrectionData, what: str) -> str:
    status, _why = data.established()
    return (
        f"{what} Top: exact values (colour), the statement as reported (black; dotted: n read as the largest "
        f"offset) and the corrected statement (green, {status}: docs/theory.md section 9) against length. "
        "Bottom: each statement minus the exact value (symmetric log, linear below 1e-4); a statement fails "
        "where its curve is below 0."
    )


@styled
def index_fixed_theta_figure(quick: bool = False) -> FigureResult:
    """T_Index's worst margin at theta = 0.8660 against min(1 - cos theta, pi^2/(2 n^2)) and the corrected
    min(1 - cos theta, 2 sin(pi/n)^2)."""
    d = index_fixed_theta()
    cap = _caption(
        d, "Theorem 3.2 corrected for T_Index at a fixed angle (worst-case margin = smallest gap)."
    )
    return _draw(d, "errata_index_fixed_theta", "T_Index at theta = 0.866: worst margin", cap, "log",
                 "worst-case margin (logit units)", COLORS["index"])  # fmt: skip


@styled
def index_best_theta_figure(quick: bool = False) -> FigureResult:
    """The best one-plane T_Index margin over every angle, 2 sin(pi/n)^2, against pi^2/(2 n^2)."""
    d = index_best_theta()
    cap = _caption(d, "Theorem 3.2's pi^2/(2n^2) corrected: the best worst-case margin over every angle, "
                   "attained at theta = 2 pi/n, is 2 sin(pi/n)^2, about four times the term.")  # fmt: skip
    return _draw(d, "errata_index_best_theta", "T_Index, best angle at each length", cap, "log",
                 "best worst-case margin (logit units)", COLORS["index"])  # fmt: skip


@styled
def index_largest_gap_figure(quick: bool = False) -> FigureResult:
    """T_Index's largest gap at theta = 0.8660 against [A]'s bound and the corrected one."""
    d = index_largest_gap()
    cap = _caption(d, "Theorem 3.2 for T_Index read literally (the largest gap, the target in the middle): "
                   "min(1 - cos theta, 2 sin(pi/(ceil((n-1)/2) + 1))^2).")  # fmt: skip
    return _draw(d, "errata_index_largest_gap", "T_Index at theta = 0.866: largest gap", cap, "log",
                 "largest top-1 minus top-2 gap (logit units)", COLORS["index"])  # fmt: skip


@styled
def retrieval_margin_figure(quick: bool = False) -> FigureResult:
    """T_Retrieval's worst margin against 1 - cos(omega - n theta) and 1 - cos(omega - (n - 1) theta)."""
    d = retrieval_margin_correction()
    cap = _caption(d, "Theorem 3.2 corrected for T_Retrieval (|ALPH| = 8) at theta = 0.0027 (solid) and "
                   "theta = 0 (dashed, where exact and both bounds coincide): 1 - cos(omega - (n - 1) theta) "
                   "holds at every length n >= 3.")  # fmt: skip
    return _draw(d, "errata_retrieval_margin", "T_Retrieval: worst margin", cap, "linear",
                 "worst-case margin (logit units)", COLORS["retrieval"])  # fmt: skip


@styled
def retrieval_largest_gap_figure(quick: bool = False) -> FigureResult:
    """T_Retrieval's largest gap (the literal Delta) against [A]'s bound and its closed form."""
    d = retrieval_largest_gap_correction()
    cap = _caption(d, "Theorem 3.2 for T_Retrieval read literally: the largest gap is cos theta + "
                   "cos((n - 1) theta), near 2, far above any bound of [A]'s shape; theta = 0.0027 (solid) "
                   "and 0 (dashed).")  # fmt: skip
    return _draw(d, "errata_retrieval_largest_gap", "T_Retrieval: largest gap", cap, "linear",
                 "largest top-1 minus top-2 gap (logit units)", COLORS["retrieval"])  # fmt: skip


@styled
def readout_figure(quick: bool = False) -> FigureResult:
    """The positional Retrieval head's worst readout margin against Remark 3.1's 0 and the bound
    C min_j p_j."""
    lengths = [3, 8, 17, 33, PERIOD] if quick else list(range(3, PERIOD + 1))
    d = readout_correction(lengths)
    what = (
        "Remark 3.1 read at the output: a positional head's worst readout margin is at most C min_j p_j <= "
        f"C (1 - p_Q)/(n - 1); the period-{PERIOD} head attains it at every length up to its period, where "
        "the remark says no positional head can be right (0)."
    )
    cap = _caption(d, what)
    return _draw(d, "errata_remark31_readout", "Positional head, Retrieval readout", cap, "linear",
                 "worst readout margin", COLORS["retrieval0"])  # fmt: skip


@styled
def partial_induction_figure(quick: bool = False) -> FigureResult:
    """The one-plane letter code's worst margin on partial induction against [B]'s 0 and its closed form."""
    d = partial_induction_correction()
    cap = _caption(d, "[B]'s one-plane partial-induction statement, reading (a), corrected: the letter code "
                   "at theta = omega/32 (|ALPH| = 4) solves every input up to its horizon, with the closed-"
                   "form margin; [B]'s statement would put it at or below 0.")  # fmt: skip
    return _draw(d, "errata_partial_induction", "One plane on partial induction", cap, "symlog",
                 "worst-case margin (logit units)", COLORS["reflexive"])  # fmt: skip


FIGURES: dict[str, Callable[[bool], FigureResult]] = {
    "errata_index_fixed_theta": index_fixed_theta_figure,
    "errata_index_best_theta": index_best_theta_figure,
    "errata_index_largest_gap": index_largest_gap_figure,
    "errata_retrieval_margin": retrieval_margin_figure,
    "errata_retrieval_largest_gap": retrieval_largest_gap_figure,
    "errata_remark31_readout": readout_figure,
    "errata_partial_induction": partial_induction_figure,
}
"""The errata figures by name, in the order of the corrections."""
