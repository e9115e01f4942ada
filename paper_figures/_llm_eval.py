"""[A]'s frontier figure: accuracy against length for the 1-hop number and letter tasks, one line per
model, with [A]'s reported thresholds marked and a one-line reading per model (``docs/theory.md``
section 3, "[A]'s 1-hop protocol for chat models").

:func:`llm_eval_figure` draws any run summaries (``ropeproof llm-eval plot DIR...``);
:func:`local_figure` draws the models on this machine
(:mod:`ropeproof.verify.studies.llm_eval._local_models`),
the controlled counterpart that ``ropeproof check`` includes as ``llm_eval_local``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ropeproof.constructions._paper import TASKS
from ropeproof.machinery._errors import InputError
from ropeproof.machinery._result_store import ResultStore
from ropeproof.paper_figures._style import FigureResult, styled, subplots
from ropeproof.verify.studies.llm_eval._protocol import DEFAULT_LENGTHS, REPORTED_THRESHOLDS
from ropeproof.verify.studies.llm_eval._results import INTERVAL, RunSummary

LINE_COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#7f7f7f")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


def figure_rows(summaries: Sequence[RunSummary]) -> list[dict[str, Any]]:
    """One row per model, task and length: the plotted accuracy, its spread and interval."""
    return [
        {"model": s.label, **r.to_json()} for s in summaries for r in s.results if r.accuracy_mean is not None
    ]


def readings(summaries: Sequence[RunSummary]) -> list[str]:
    """``"LABEL: reading"`` per model: does it show [A]'s ordering letter > number?"""
    return [f"{s.label}: {s.ordering().line()}" for s in summaries]


@styled
def llm_eval_figure(
    summaries: Sequence[RunSummary], name: str = "llm_eval", context: str = ""
) -> FigureResult:
    """Two panels (number, letter task): accuracy (mean over draws) against length per model, error bars
    the 95% interval, [A]'s thresholds as triangles pointing the way [A] reports; the caption ends with
    each model's reading."""
    if not summaries:
        raise InputError("summaries is empty: nothing to plot")
    labels = [s.label for s in summaries]
    if len(set(labels)) != len(labels):
        raise InputError(f"labels must differ between runs to tell the lines apart, got {labels}")
    rows = figure_rows(summaries)
    fig, axes = subplots(1, 2, figsize=(7.2, 3.0), sharey=True, layout="constrained")
    for ax, task in zip(axes, TASKS, strict=True):
        for i, s in enumerate(summaries):
            sel = sorted(
                (r for r in s.results if r.task == task and r.accuracy_mean is not None),
                key=lambda r: r.length,
            )
            if not sel:
                continue
            mean = [r.accuracy_mean for r in sel]
            err = [
                [m - r.ci_low for m, r in zip(mean, sel, strict=True)],  # type: ignore[operator]
                [r.ci_high - m for m, r in zip(mean, sel, strict=True)],  # type: ignore[operator]
            ]
            ax.errorbar(
                [r.length for r in sel],
                mean,
                yerr=err,
                fmt=f"{MARKERS[i % len(MARKERS)]}-",
                ms=3,
                lw=1.0,
                capsize=2,
                color=LINE_COLORS[i % len(LINE_COLORS)],
                label=s.label,
            )
        for th in (t for t in REPORTED_THRESHOLDS if t.task == task):
            marker = "^" if th.relation == ">" else "v"
            ax.plot([th.length], [th.value], marker, color="#333333", ms=6, mfc="none", zorder=5)
            ax.annotate(
                f"[A] {th.relation} {th.value}",
                (th.length, th.value),
                xytext=(4, 6 if th.relation == ">" else -10),
                textcoords="offset points",
                fontsize=6,
            )
        ax.set_title(f"{task} task, 1 hop", fontsize=8)
        ax.set_xlabel("sequence length (tokens, final token included)")
        ax.set_ylim(-0.03, 1.05)
    axes[0].set_ylabel("accuracy (mean over draws)")
    axes[1].legend(loc="lower left", fontsize=6)
    caption = (
        "[A]'s 1-hop protocol (docs/theory.md section 3): accuracy against sequence length, mean over "
        f"dataset draws; error bars: the {INTERVAL}. Open triangles: [A]'s reported levels for GPT-5.4, "
        f"GPT-5.5 and Claude Sonnet 3.7 ({'; '.join(t.describe() for t in REPORTED_THRESHOLDS)}). "
        + context
        + " Readings (letter above number when the intervals are disjoint): "
        + "; ".join(readings(summaries))
        + "."
    )
    return FigureResult(name, fig, rows, " ".join(caption.split()))


def local_figure(quick: bool = False, store: ResultStore | None = None) -> FigureResult:
    """:func:`llm_eval_figure` of the local models at the report's sizes (their results from ``store``,
    default a fresh one: the claim ``llm-eval.local-ordering`` reads the same)."""
    from ropeproof.verify.studies.llm_eval._local_models import LOCAL_MODELS, local_results, sizes

    s = sizes(quick)
    context = (
        f"Controlled counterpart on this machine: {', '.join(dict.fromkeys(m.label for m in LOCAL_MODELS))} "
        f"models, each on the task it was trained or compiled for, in that task's raw token format "
        f"({s['prompts']} prompts x {s['draws']} draws per task and length)."
    )
    return llm_eval_figure(local_results(DEFAULT_LENGTHS, **s, store=store), "llm_eval_local", context)
