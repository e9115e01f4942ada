"""Figures of spectrum checks: a parameter scan's good and bad values, and RoFormer's decay bound.

:func:`plot_parameter_scans` draws one strip per scan (a label each, e.g. one context length) over the
parameter: every grid value coloured good, bad, undecided or unscanned, with optional marks (e.g. a
paper's values). :func:`plot_partial_sum_decay` draws ``f(m)`` of
:func:`~ropeproof.verify.measure.exact._partial_sums.partial_sum_decay` with its first rise marked. Both
return a :class:`~ropeproof.paper_figures._style.FigureResult` (figure, rows, caption).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ropeproof.machinery._errors import InputError
from ropeproof.paper_figures._style import FigureResult, styled, subplots
from ropeproof.verify.measure.exact._parameter_scan import ParameterScan
from ropeproof.verify.measure.exact._partial_sums import PartialSumDecay

VERDICT_COLORS = {"good": "#2ca02c", "bad": "#d62728", "undecided": "#7f7f7f", "unscanned": "#ffffff"}
"""Strip colours by verdict."""


@styled
def plot_parameter_scans(
    scans: Mapping[str, ParameterScan],
    *,
    parameter: str = "parameter",
    marks: Mapping[str, float] | None = None,
    log: bool = True,
    name: str = "parameter_scan",
) -> FigureResult:
    """One horizontal strip per scan (top to bottom in the mapping's order): each grid value a bar
    coloured by its verdict, spanning half-way to its neighbours; ``marks[label]`` draws a black tick on
    that strip. Rows: ``label, value, verdict, first_violation``."""
    if not scans:
        raise InputError("scans must name at least one ParameterScan")
    fig, ax = subplots(figsize=(7.0, 0.45 * len(scans) + 1.2), layout="constrained")
    rows = []
    labels = list(scans)
    for y, label in enumerate(labels):
        scan = scans[label]
        if not isinstance(scan, ParameterScan):
            raise InputError(f"scans[{label!r}] must be a ParameterScan, got {type(scan).__name__}")
        v = np.asarray(scan.values)
        mids = np.sqrt(v[1:] * v[:-1]) if log and v.size > 1 else (v[1:] + v[:-1]) / 2
        left = np.concatenate([[v[0]], mids])
        right = np.concatenate([mids, [v[-1]]])
        for verdict, color in VERDICT_COLORS.items():
            pick = np.array([s == verdict for s in scan.verdicts])
            if pick.any():
                ax.barh(
                    y,
                    right[pick] - left[pick],
                    left=left[pick],
                    height=0.7,
                    color=color,
                    linewidth=0,
                    label=verdict if y == 0 else None,
                )
        if marks and label in marks:
            ax.plot([marks[label]] * 2, [y - 0.45, y + 0.45], color="black", linewidth=1.5)
        rows += [
            {"label": label, "value": float(x), "verdict": s, "first_violation": f}
            for x, s, f in zip(scan.values, scan.verdicts, scan.first_violations, strict=True)
        ]
    if log:
        ax.set_xscale("log")
    ax.set_yticks(range(len(labels)), labels)
    ax.invert_yaxis()
    ax.set_xlabel(parameter)
    ax.legend(loc="lower right", fontsize="small", ncols=3)
    first = scans[labels[0]]
    caption = (
        f"Good (green) and bad (red) values of the {parameter} on grids of {first.resolution}: a value is "
        f"good when B(m) {first.relation} {first.threshold:g} at every offset of its row; verdicts "
        f"{'certified' if first.certified else 'from float bounds'}"
        + ("; black ticks: the marked values." if marks else ".")
    )
    return FigureResult(name, fig, rows, caption)


@styled
def plot_partial_sum_decay(result: PartialSumDecay, *, name: str = "partial_sum_decay") -> FigureResult:
    """``f(m)`` against ``m = 0 .. max_m`` (log-scaled offsets from 1), the first rise marked. Rows: ``m,
    f, error``."""
    if not isinstance(result, PartialSumDecay):
        raise InputError(f"result must be a PartialSumDecay, got {type(result).__name__}")
    fig, ax = subplots(figsize=(6.0, 3.6), layout="constrained")
    m = np.arange(result.max_m + 1)
    ax.plot(m[1:], result.values[1:], color="#1f77b4", linewidth=0.6)
    if result.first_rise is not None:
        r = result.first_rise
        ax.plot([r], [result.values[r]], "o", color="#d62728", label=f"first rise: m = {r}")
        ax.legend(loc="upper right", fontsize="small")
    ax.set_xscale("log")
    ax.set_xlabel("relative distance m")
    ax.set_ylabel("(1/K) sum_j |S_j(m)|")
    rows = [
        {"m": int(k), "f": float(result.values[k]), "error": float(result.errors[k])}
        for k in range(result.max_m + 1)
    ]
    caption = (
        f"The mean modulus of the spectrum's partial sums at every offset m <= {result.max_m} (errors below "
        f"{float(result.errors.max()):.1e})"
        + (f"; it first rises at m = {result.first_rise}." if result.first_rise is not None else ".")
    )
    return FigureResult(name, fig, rows, caption)
