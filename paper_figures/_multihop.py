"""Figures of the compiled multi-hop models: accuracy against length with the proved horizon, and [A]'s
per-layer positional/symbolic picture (the counterpart of [A]'s Figure 2). Their data come from the run's
store: the length study the claim ``multihop.length`` reads
(:data:`~ropeproof.verify.studies.beyond._multihop_length.STANDARD_STUDY`) and :data:`PS_LAYERS_DATA`."""

from __future__ import annotations

from typing import Any

import numpy as np

from ropeproof.machinery._result_store import ResultStore, data_product
from ropeproof.paper_figures._style import COLORS, FigureResult, styled, subplots
from ropeproof.verify.measure._layer_scores import layer_ps_scores
from ropeproof.verify.measure._tasks import letter_task, number_task
from ropeproof.verify.studies.beyond._checkpoint_solvers import CHECKPOINT_MODEL
from ropeproof.verify.studies.beyond._multihop_length import STANDARD_STUDY, length_settings

SETTING_COLORS = {
    "paper": "#1f77b4",
    "smallest": "#d62728",
    "best": "#2ca02c",
}
"""One colour per solver of the length study's checkpoints."""


def length_rows(
    quick: bool = False, store: ResultStore | None = None
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The study's rows (one per setting, build and length: the grid's, and the lengths probed between
    grid points for an exact first failure, ``grid`` false) and its summary (horizons, first failures),
    from ``store`` (default a fresh one)."""
    study = (ResultStore() if store is None else store).get(STANDARD_STUDY, quick=quick)
    return study["rows"], study["summary"]


@styled
def length_figure(quick: bool = False, store: ResultStore | None = None) -> FigureResult:
    """Accuracy against length (sampled: solid, with anytime-valid 95% intervals; decoy: dashed) with the
    certified horizon (dotted) and the exact first failure (triangle)."""
    rows, summary = length_rows(quick, store)
    tasks = ["number", "letter"]
    builds = list(dict.fromkeys(r["build"] for r in rows))
    fig, axes = subplots(
        len(tasks),
        len(builds),
        figsize=(3.6 * len(builds), 5.4),
        squeeze=False,
        sharex=True,
        sharey=True,
        layout="constrained",
    )
    labels = {s.key: s.label for s in length_settings()}
    for i, task in enumerate(tasks):
        for j, build in enumerate(builds):
            ax = axes[i, j]
            keys = list(dict.fromkeys(r["setting"] for r in rows if r["task"] == task))
            for key in keys:
                sel = sorted(
                    (r for r in rows if r["setting"] == key and r["build"] == build and r["grid"]),
                    key=lambda r: r["n"],
                )
                color = SETTING_COLORS[key.split("-", 1)[1]]
                n = np.array([r["n"] for r in sel])
                acc = np.array([r["accuracy"] for r in sel])
                ci = np.array([r["accuracy_ci"] for r in sel]).reshape(-1, 2)
                yerr = np.array([acc - ci[:, 0], ci[:, 1] - acc])
                ax.errorbar(n, acc, yerr=yerr, fmt="o-", ms=3, capsize=2, color=color, label=labels[key])
                ax.plot(n, [r["decoy_accuracy"] for r in sel], "x--", ms=3, lw=0.8, color=color)
                ax.set_xscale("log")
                horizon = summary[key]["certified_horizon"]
                ax.axvline(horizon, color=color, ls=":", lw=1.0)
                fail = summary[key]["measured"].get(build, {}).get("first_failure")
                if fail:
                    ax.plot([fail["n"]], [1.03], "v", color=color, ms=5)
            ax.set_title(f"{task} task, {build}", fontsize=8)
            ax.set_ylim(-0.05, 1.08)
            if i == len(tasks) - 1:
                ax.set_xlabel("sequence length n (tokens)")
            if j == 0:
                ax.set_ylabel("accuracy (fraction correct)")
            ax.legend(loc="lower left", fontsize=6)
    caption = (
        "The compiled 12-layer checkpoints of ropeproof export-model (4 hop layers, 8 Reflexive, logit scale "
        "1000; solvers: [A]'s one-plane heads, the width-6/8 program, the best on GPT-J's width-128 "
        "spectrum) on [A]'s tasks with 1-4 hops, float64. Solid: accuracy on sampled inputs, bars its "
        "anytime-valid 95% interval (past the certified horizon a row stops once the interval lies below "
        "25%, so its bar is wide); dashed: the same inputs with every answer-kind token off the chain "
        "replaced by one decoy a quarter turn from the answer on the code circle (a second probe, not a "
        "worst case). "
        "Dotted verticals: the certified horizon (every input of the family with up to 4 hops is proved "
        "correct at every length up to it, by interval arithmetic); triangles: the exact first length with "
        "a wrong answer (every length between grid points probed; its tokens are in the multihop.length "
        "claim of the report). Builds: 'distractors' keeps [A]'s 17-token input at the end after random "
        "tokens; 'window' lengthens the target window; 'both' lengthens both windows. Curves stop after "
        "two grid lengths whose interval lies below 25%."
    )
    return FigureResult("multihop_length", fig, rows, caption)


def ps_rows(quick: bool = False, store: ResultStore | None = None) -> list[dict[str, Any]]:
    """Per-layer scores of the checkpoint programs (both tasks, both Reflexive variants), from ``store``
    (default a fresh one)."""
    return (ResultStore() if store is None else store).get(PS_LAYERS_DATA, quick=quick)


@data_product("figure.multihop-ps-layers")
def PS_LAYERS_DATA(store: ResultStore, quick: bool) -> list[dict[str, Any]]:
    """[A]'s per-layer scores of both tasks' checkpoint programs, both Reflexive variants, on 100 inputs
    (8 when ``quick``)."""
    count = 8 if quick else 100
    rows = []
    for task, make in (("number", number_task), ("letter", letter_task)):
        insts = make(count, seed=0)
        for variant in ("positional", "symbolic"):
            model = store.get(CHECKPOINT_MODEL, task=task, reflexive=variant)
            for s in layer_ps_scores(model, insts):
                rows.append({"task": task, "reflexive": variant, "inputs": count, **s.as_dict()})
    return rows


@styled
def ps_figure(quick: bool = False, store: ResultStore | None = None) -> FigureResult:
    """[A]'s per-layer positional/symbolic scores of the compiled checkpoints."""
    rows = ps_rows(quick, store)
    fig, axes = subplots(2, 2, figsize=(8.0, 5.0), sharex=True, sharey=True, layout="constrained")
    for i, task in enumerate(("number", "letter")):
        for j, variant in enumerate(("positional", "symbolic")):
            ax = axes[i, j]
            sel = [r for r in rows if r["task"] == task and r["reflexive"] == variant]
            layer = np.array([r["layer"] for r in sel])
            hop = [r["kind"] in ("index", "retrieval") for r in sel]
            ax.axvspan(-0.5, sum(hop) - 0.5, color="#dddddd", alpha=0.5, lw=0)
            ax.plot(layer, [r["S_pos"] for r in sel], "o-", color=COLORS["index"], ms=4, label="S_pos")
            ax.plot(layer, [r["S_sym"] for r in sel], "s-", color=COLORS["retrieval"], ms=4, label="S_sym")
            ax.set_title(f"{task} task, Reflexive {variant}", fontsize=8)
            ax.set_ylim(-0.05, 1.05)
            if i == 1:
                ax.set_xlabel("layer (shaded: hop layers)")
            if j == 0:
                ax.set_ylabel("score")
            ax.legend(loc="center right", fontsize=6)
    caption = (
        "[A]'s per-layer positional/symbolic scores of the compiled 12-layer checkpoints (GPT-J widths 6 and "
        "8): for each layer the hidden states entering the block are swapped at two non-query positions "
        "(position ids fixed), only that block is re-run and the last token's attention row is scored "
        f"(tau = 1e-4), mean over {rows[0]['inputs']} inputs of 17 tokens with 1-4 hops. Shaded: Index "
        "(number) or Retrieval (letter) layers; then Reflexive layers, positional (left) or symbolic "
        "(right). A missing point is a layer whose scores float64 does not resolve: its row sits on the "
        "query, so most swapped attention entries underflow to 0."
    )
    return FigureResult("multihop_ps_layers", fig, rows, caption)
