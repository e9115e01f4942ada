"""Figures of the shipped trained models' learning dynamics (``docs/theory.md`` section 6), for the
``paper`` configuration ([A]'s shape and schedule) and the ``small`` one, seed 0 of each: accuracy per hop
count against step with 95% Wilson intervals, each layer's path through the positional-symbolic plane
over training, and the final per-layer scores with 95% bootstrap intervals, all from the shipped run
records (no training, no model runs; :data:`DYNAMICS_DATA`); accuracy against length, the per-frequency
profile and the theory comparison of the shipped models (:data:`LENGTH_DATA`, :data:`FREQUENCIES_DATA`,
:data:`THEORY_DATA`), whose models and profiles come from the run's store, shared with the training
claims (:mod:`ropeproof.verify.studies.training._shipped_results`). A configuration that does not ship is left
out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from matplotlib import colormaps

from ropeproof.constructions._paper import TASKS
from ropeproof.machinery._result_store import ResultStore, data_product
from ropeproof.paper_figures._style import COLORS, FigureResult, styled, subplots
from ropeproof.verify.measure._statistics import proportion_interval
from ropeproof.verify.studies.training._observations import HOPS
from ropeproof.verify.studies.training._shipped import shipped_path, shipped_seeds
from ropeproof.verify.studies.training._trainer import TrainingRecord, load_record

CONFIGS = ("paper", "small")
HOP_COLORS = {1: "#1f77b4", 2: "#ff7f0e", 3: "#2ca02c", 4: "#d62728"}


def _records() -> dict[tuple[str, str], TrainingRecord]:
    """``{(config, task): record}`` of seed 0 of every configuration that ships for both tasks."""
    return {
        (config, task): load_record(shipped_path(task, config, 0))
        for config in CONFIGS
        if all(0 in shipped_seeds(t, config) for t in TASKS)
        for task in TASKS
    }


def _ci(pair: list[float] | None) -> tuple[float, float]:
    return (float("nan"), float("nan")) if pair is None else (float(pair[0]), float(pair[1]))


def _num(value: float | None) -> float:
    return float("nan") if value is None else float(value)


def dynamics_rows() -> list[dict[str, Any]]:
    """One row per configuration, task, checkpoint and layer: step, accuracy per hop with its Wilson
    interval (when the record has counts), S_pos, S_sym, entropy with their bootstrap intervals."""
    rows = []
    for (config, task), record in _records().items():
        for e in record.evaluations:
            dyn = e.get("dynamics") or {}
            accuracy: dict[str, Any] = {}  # the same for every layer: computed once per checkpoint
            for h in HOPS:
                accuracy[f"accuracy_{h}hop"] = e["accuracy"][str(h)]
                if "counts" in e:
                    est = proportion_interval(*e["counts"][str(h)])
                    accuracy[f"accuracy_{h}hop_ci_low"], accuracy[f"accuracy_{h}hop_ci_high"] = (
                        est.low,
                        est.high,
                    )
            for layer in range(record.config.n_layer):
                row: dict[str, Any] = {"config": config, "task": task, "step": e["step"], "layer": layer}
                row.update(accuracy)
                if dyn:
                    for key in ("S_pos", "S_sym", "entropy"):
                        row[key] = _num(dyn[key][layer])
                        if f"{key}_ci" in dyn:
                            row[f"{key}_ci_low"], row[f"{key}_ci_high"] = _ci(dyn[f"{key}_ci"][layer])
                row["best"] = e["step"] == record.best_step
                rows.append(row)
    return rows


@data_product("figure.training-dynamics")
def DYNAMICS_DATA(store: ResultStore) -> dict[str, Any]:
    """What the three learning-dynamics figures draw: :func:`dynamics_rows` (``rows``) and, per shipped
    configuration and task (``"CONFIG/TASK"``), the run's set-up sentence, layers, best step and scoring
    prompts (``records``)."""
    return {
        "rows": dynamics_rows(),
        "records": {
            f"{config}/{task}": {
                "setup": _setup(r),
                "n_layer": r.config.n_layer,
                "best_step": r.best_step,
                "score_prompts": r.config.score_prompts,
            }
            for (config, task), r in _records().items()
        },
    }


def _dynamics(
    store: ResultStore | None,
) -> tuple[list[dict[str, Any]], dict[tuple[str, str], dict[str, Any]]]:
    data = (ResultStore() if store is None else store).get(DYNAMICS_DATA)
    records = {tuple(k.split("/")): v for k, v in data["records"].items()}
    return data["rows"], records  # type: ignore[return-value]


def _setup(record: TrainingRecord) -> str:
    c = record.config
    return (
        f"{c.name}: GPT-J, {c.n_layer} layers of one head, n_embd {c.n_embd}, MLP {c.n_inner}; AdamW lr "
        f"{c.lr:g}, {c.warmup_steps} warm-up steps, {c.steps} steps of batch {c.batch_size}, "
        f"seed {record.seed}"
    )


def _panels(records: dict[tuple[str, str], Any], height: float = 2.6) -> tuple[Any, Any, list]:
    """A grid with one row per shipped configuration and one column per task."""
    configs = sorted({c for c, _ in records}, key=CONFIGS.index)
    fig, axes = subplots(
        len(configs), 2, figsize=(7.2, height * len(configs)), squeeze=False, layout="constrained"
    )
    return fig, axes, configs


@styled
def accuracy_figure(quick: bool = False, store: ResultStore | None = None) -> FigureResult:
    """Validation accuracy per hop count against training step, both tasks, both configurations."""
    all_rows, records = _dynamics(store)
    rows = [r for r in all_rows if r["layer"] == 0]
    fig, axes, configs = _panels(records)
    for i, config in enumerate(configs):
        for j, task in enumerate(TASKS):
            ax = axes[i, j]
            sel = [r for r in rows if r["task"] == task and r["config"] == config]
            steps = np.array([r["step"] for r in sel])
            for h in HOPS:
                acc = np.array([r[f"accuracy_{h}hop"] for r in sel])
                ax.plot(steps, acc, "o-", ms=3, color=HOP_COLORS[h], label=f"{h} hop")
                if sel and f"accuracy_{h}hop_ci_low" in sel[0]:
                    low = np.array([r[f"accuracy_{h}hop_ci_low"] for r in sel])
                    high = np.array([r[f"accuracy_{h}hop_ci_high"] for r in sel])
                    ax.fill_between(steps, low, high, color=HOP_COLORS[h], alpha=0.2, lw=0)
            ax.set_title(f"{task} task, {config} configuration", fontsize=8)
            ax.set_ylim(-0.03, 1.03)
            if i == len(configs) - 1:
                ax.set_xlabel("training step")
            if j == 0:
                ax.set_ylabel("validation accuracy")
    axes[0, 0].legend(loc="lower right", fontsize=6)
    setups = "; ".join(records[(c, "number")]["setup"] for c in configs)
    caption = (
        f"Validation accuracy per hop count against training step for the shipped runs ({setups}); each "
        "configuration's held-out balanced 17-token prompts per checkpoint, greedy last-token answer, with "
        "95% Wilson intervals (bands). [A] reports hop-by-hop learning on the number task and simultaneous "
        "learning on the letter task (claims training.hop-by-hop, training.letter-simultaneous)."
    )
    return FigureResult("training_accuracy", fig, rows, caption)


@styled
def ps_paths_figure(quick: bool = False, store: ResultStore | None = None) -> FigureResult:
    """Each layer's path through the (S_pos, S_sym) plane over training, both tasks and configurations."""
    all_rows, records = _dynamics(store)
    rows = [r for r in all_rows if "S_pos" in r]
    fig, axes, configs = _panels(records, 3.2)
    cmap = colormaps["viridis"]
    for i, config in enumerate(configs):
        for j, task in enumerate(TASKS):
            ax = axes[i, j]
            n_layer = records[(config, task)]["n_layer"]
            for layer in range(n_layer):
                sel = sorted(
                    (r for r in rows if r["task"] == task and r["config"] == config and r["layer"] == layer),
                    key=lambda r: r["step"],
                )
                x, y = np.array([r["S_pos"] for r in sel]), np.array([r["S_sym"] for r in sel])
                color = cmap(layer / max(1, n_layer - 1))
                ax.plot(x, y, "-", lw=0.9, color=color, alpha=0.8)
                ax.plot(x[:1], y[:1], "o", ms=3, mfc="none", color=color)
                ax.plot(x[-1:], y[-1:], "o", ms=5, color=color, label=f"layer {layer}")
            ax.plot([0.5, 0.5], [-0.05, 1.05], ":", color=COLORS["bound"], lw=0.6)
            ax.plot([-0.05, 1.05], [0.5, 0.5], ":", color=COLORS["bound"], lw=0.6)
            ax.set_title(f"{task} task, {config} configuration", fontsize=8)
            ax.set_xlim(-0.05, 1.05)
            ax.set_ylim(-0.05, 1.05)
            if i == len(configs) - 1:
                ax.set_xlabel("S_pos")
            if j == 0:
                ax.set_ylabel("S_sym")
        axes[i, 1].legend(loc="lower left", fontsize=5, ncol=2)
    prompts = records[(configs[0], "number")]["score_prompts"]
    caption = (
        "Each layer's path through [A]'s positional-symbolic plane over training (open circle: step 0; "
        "filled: the last checkpoint), from the layer-input swap scores (tau = 1e-4) on "
        f"{prompts} prompts per checkpoint (means; their 95% bootstrap intervals are in the CSV and in "
        "training_ps_final). Uniform attention scores (1, 1); positional heads sit bottom right, symbolic "
        "heads top left. A layer whose rows underflow (not resolved) has no point."
    )
    return FigureResult("training_ps_paths", fig, rows, caption)


@styled
def ps_final_figure(quick: bool = False, store: ResultStore | None = None) -> FigureResult:
    """S_pos, S_sym and attention entropy per layer at each run's best checkpoint, with intervals."""
    all_rows, records = _dynamics(store)
    rows = [r for r in all_rows if r["best"] and "S_pos" in r]
    fig, axes, configs = _panels(records)
    styles = {
        "S_pos": ("o-", COLORS["index"]),
        "S_sym": ("s-", COLORS["retrieval"]),
        "entropy": ("^--", COLORS["random"]),
    }
    for i, config in enumerate(configs):
        for j, task in enumerate(TASKS):
            ax = axes[i, j]
            sel = sorted(
                (r for r in rows if r["task"] == task and r["config"] == config), key=lambda r: r["layer"]
            )
            layer = np.array([r["layer"] for r in sel])
            for key, (marker, color) in styles.items():
                value = np.array([r[key] for r in sel])
                if sel and f"{key}_ci_low" in sel[0]:
                    err = np.abs(
                        np.array([[r[f"{key}_ci_low"] for r in sel], [r[f"{key}_ci_high"] for r in sel]])
                        - value
                    )
                    ax.errorbar(
                        layer, value, yerr=err, fmt=marker, ms=3, color=color, capsize=2, lw=0.8, label=key
                    )
                else:
                    ax.plot(layer, value, marker, ms=3, color=color, label=key)
            ax.set_title(f"{task} task, {config}, step {records[(config, task)]['best_step']}", fontsize=8)
            ax.set_ylim(-0.05, 1.05)
            if i == len(configs) - 1:
                ax.set_xlabel("layer")
            if j == 0:
                ax.set_ylabel("score / normalised entropy")
    axes[0, 0].legend(loc="center left", fontsize=6)
    caption = (
        "The final per-layer picture of the shipped runs (best checkpoint by validation accuracy): [A]'s "
        "layer-swap scores S_pos and S_sym and the normalised entropy of the last token's attention row (1: "
        "uniform), means over the scoring prompts with 95% bootstrap intervals over the prompts (bars)."
    )
    return FigureResult("training_ps_final", fig, rows, caption)


TRAINED_LENGTH_MODELS: tuple[Path, ...] = ()
"""Trained run directories (``ropeproof train --out DIR``) that :func:`length_figure` draws besides the
shipped small models: the paper-configuration runs are added here (or passed as ``trained``)."""
COMPILED_SETTINGS = {"smallest": ("compiled width 6/8", "s--"), "best": ("compiled best (width 128)", "D-")}
"""The compiled checkpoints of the length study that the figure draws, with legend and line style."""


def trained_length_dirs(quick: bool = False, full: bool = False) -> list[Path]:
    """Seed 0 of the paper configuration (the rows the claim ``training.length`` judges), then
    :data:`TRAINED_LENGTH_MODELS`; with ``full`` seed 0 of every shipped configuration (paper, then small);
    with ``quick`` only the smallest shipped configuration's (the preview the frequency figures show
    too)."""
    configs = [c for c in CONFIGS if any(0 in shipped_seeds(t, c) for t in TASKS)]
    chosen = configs[-1:] if quick else configs if full else configs[:1]
    shipped = [shipped_path(t, c) for c in chosen for t in TASKS if 0 in shipped_seeds(t, c)]
    return shipped if quick else shipped + [Path(d) for d in TRAINED_LENGTH_MODELS]


def _trained_rows(store: ResultStore, path: Path, quick: bool, full: bool = False) -> list[dict[str, Any]]:
    """The rows of one trained model under every reading of the length study for its task
    (:func:`~ropeproof.verify.studies.training._lengths.study_plan`): a shipped seed-0 checkpoint's rows are
    the very rows the claim ``training.length`` reads from the run's store (no input is answered twice),
    any other run directory's are computed for it the same way; with ``full`` also the one-look rows no
    verdict reads (``judged`` says which)."""
    from ropeproof.verify.studies.training._lengths import first_look, reading, reading_rows, study_plan
    from ropeproof.verify.studies.training._shipped_results import (
        DECIDED_LENGTH_ROW,
        DIRECTORY_DECIDED_LENGTH_ROW,
    )

    record = load_record(path)
    task, config = record.task, record.config.name
    shipped = config in CONFIGS and 0 in shipped_seeds(task, config)
    shipped = shipped and path.resolve() == shipped_path(task, config).resolve()
    plan = study_plan(quick, full)

    rows = []
    for key in plan["readings"]:
        r = reading(key)
        if r.task != task:
            continue

        def measure(n: int, cap: int, key: str = key) -> dict[str, Any]:
            sample = {"n": n, "reading": key, "first": first_look(n, plan["cap"]), "cap": cap}
            if shipped:
                return store.get(DECIDED_LENGTH_ROW, task=task, config=config, seed=0, **sample)
            return store.get(DIRECTORY_DECIDED_LENGTH_ROW, path=str(path), **sample)

        for row in reading_rows(key, plan["lengths"], plan["cap"], measure, full):
            plain = r.build == "distractors" and r.positions == "uniform"
            label = f"trained {config}" + ("" if plain else f", {key.split('-', 1)[1]}")
            rows.append(
                {
                    "task": task,
                    "model": label,
                    "kind": "trained",
                    "build": r.build,
                    "reading": key,
                    "path": path.name,
                    "n": row["n"],
                    "count": row["count"],
                    "accuracy": row["accuracy"],
                    "ci_lo": row["ci_low"],
                    "ci_hi": row["ci_high"],
                    "interval": row["interval"],
                    "table_rebuilt": row["table_rebuilt"],
                    "judged": row["judged"],
                    "certified_horizon": None,
                    "first_failure": None,
                }
            )
    return rows


def length_figure_rows(
    quick: bool = False,
    trained: list[Path] | None = None,
    store: ResultStore | None = None,
    full: bool = False,
) -> list[dict[str, Any]]:
    """Trained models (every reading of the length study, the claim's rows; with ``full`` the rows no
    verdict reads too) and the compiled checkpoints of the length study (width 6/8 and the best at width
    128), with anytime-valid 95% intervals, certified horizons and exact first failures (``store``: the
    run's, default a fresh one)."""
    paths = None if trained is None else [str(Path(p)) for p in trained]
    got = ResultStore() if store is None else store
    return got.get(LENGTH_DATA, quick=quick, trained=paths, full=bool(full))


@data_product("figure.training-length")
def LENGTH_DATA(
    store: ResultStore, quick: bool, trained: list[str] | None = None, full: bool = False
) -> list[dict[str, Any]]:
    """The rows of :func:`length_figure_rows` for the run directories ``trained`` (``None``:
    :func:`trained_length_dirs` of ``quick`` and ``full``, so a saved run names no directory of the
    machine that made it)."""
    from ropeproof.verify.studies.beyond._multihop_length import STANDARD_STUDY

    rows = []
    for path in trained_length_dirs(quick, full) if trained is None else [Path(p) for p in trained]:
        rows += _trained_rows(store, Path(path), quick, full)
    study = store.get(STANDARD_STUDY, quick=quick)
    summary = study["summary"]
    for r in study["rows"]:
        solver = r["setting"].split("-", 1)[1]
        if solver not in COMPILED_SETTINGS or r["build"] != "distractors" or not r["grid"]:
            continue
        fail = summary[r["setting"]]["measured"]["distractors"]["first_failure"]
        rows.append(
            {
                "task": r["task"],
                "model": COMPILED_SETTINGS[solver][0],
                "kind": "compiled",
                "n": r["n"],
                "count": r["inputs"],
                "accuracy": r["accuracy"],
                "ci_lo": r["accuracy_ci"][0],
                "ci_hi": r["accuracy_ci"][1],
                "certified_horizon": r["certified_horizon"],
                "first_failure": None if fail is None else fail["n"],
            }
        )
    return rows


@styled
def length_figure(
    quick: bool = False,
    store: ResultStore | None = None,
    trained: list[Path] | None = None,
    full: bool = False,
) -> FigureResult:
    """Accuracy against length (log axis to 10^4): trained models (``trained``: run directories, default
    :func:`trained_length_dirs` of ``quick`` and ``full``), the width-6/8 and the best compiled
    checkpoints, each compiled one with its certified horizon (dotted) and exact first failure (triangle);
    bars are 95% anytime-valid intervals (the rows' own, :func:`length_figure_rows`). By default the
    trained rows are the ones the claim ``training.length`` judges; ``full`` (``ropeproof figures --full``)
    adds the small configuration's seed 0 and the one-look rows no verdict reads (hollow markers)."""
    rows = length_figure_rows(quick, trained, store, full)
    fig, axes = subplots(1, 2, figsize=(7.6, 3.0), sharey=True, layout="constrained")
    models = list(dict.fromkeys(r["model"] for r in rows))
    palette = colormaps["tab10"]
    for ax, task in zip(axes, TASKS, strict=True):
        for i, model in enumerate(models):
            sel = sorted((r for r in rows if r["task"] == task and r["model"] == model), key=lambda r: r["n"])
            if not sel:
                continue
            compiled = sel[0]["kind"] == "compiled"
            style = next((st for label, st in COMPILED_SETTINGS.values() if label == model), "o-")
            color = palette(i % 10)
            n = np.array([r["n"] for r in sel])
            acc = np.array([r["accuracy"] for r in sel])
            err = np.array([acc - [r["ci_lo"] for r in sel], np.array([r["ci_hi"] for r in sel]) - acc])
            ax.errorbar(n, acc, yerr=err, fmt=style, ms=3, lw=1.0, capsize=2, color=color, label=model)
            unjudged = np.array([r.get("judged") is False for r in sel])
            if unjudged.any():  # the one-look rows of --full: no verdict reads them
                ax.plot(n[unjudged], acc[unjudged], "o", ms=3, mfc="white", color=color)
            if compiled:
                ax.axvline(sel[0]["certified_horizon"], color=color, ls=":", lw=1.0)
                if sel[0]["first_failure"] is not None:
                    ax.plot([sel[0]["first_failure"]], [1.04], "v", color=color, ms=5)
        ax.axvline(850, color=COLORS["bound"], ls="-.", lw=0.6, label="[A]: letter > 90% to 850")
        ax.set_xscale("log")
        ax.set_xlim(14, 1.3e4)
        ax.set_title(f"{task} task", fontsize=8)
        ax.set_xlabel("sequence length n (tokens)")
        ax.set_ylim(-0.03, 1.08)
        ax.legend(loc="lower left", fontsize=6)
    axes[0].set_ylabel("accuracy")
    caption = (
        "Length generalisation on [A]'s tasks with 1-4 hops (the 'distractors' build: [A]'s 17-token input "
        "preceded by random distractor tokens; for the letter task the trained models also on the 'window' "
        "and 'both' builds, on the 'near' build (the chain within [A]'s 17 tokens at the end) with 1-hop "
        "chains and with 1-4 hops, and with the earlier draw that puts a chain's middle steps near the "
        "query, ropeproof.verify.measure._task_lengths): trained models trained on 17 tokens against the "
        "compiled 12-layer checkpoints that ropeproof export-model writes, "
        "the width-6/8 one (theta = 1) and the best (width 128, the best heads on GPT-J's spectrum), whose "
        "bars are the length study's anytime-valid 95% intervals too. Dotted verticals: each compiled "
        "checkpoint's certified horizon (every input of the family proved correct up to it); triangles: its "
        "exact first failure (every length probed between grid points). [A] reports its letter model above "
        "90% up to 850 tokens."
    )
    if full and not quick:
        caption += (
            " Shown: seed 0 of each shipped configuration (ropeproof figures --full). Judged (filled "
            "markers): the paper seed's rows that claim training.length reads, each sampled until its "
            "anytime-valid 95% interval decides the claim's threshold (bars wide where few inputs decided "
            "it); not judged (hollow markers): the small seed's rows and the lengths a reading does not "
            "judge or no longer needs after a contradiction, one forward batch each, which no verdict reads."
        )
    elif not quick:
        caption += (
            " Shown: paper seed 0, only the rows claim training.length judges, each sampled until its "
            "anytime-valid 95% interval decides the claim's threshold (bars wide where few inputs decided "
            "it): a letter reading contradicted at its longest length shows that length alone. The rows "
            "no verdict reads (the small seeds, one look at the other lengths) are left out; ropeproof "
            "figures --full draws them."
        )
    if quick:
        from ropeproof.verify.studies.training._lengths import study_plan

        configs = sorted({r["model"].removeprefix("trained ") for r in rows if r["kind"] == "trained"})
        lengths = ", ".join(str(n) for n in study_plan(quick)["lengths"])
        caption += (
            f" Quick preview: the trained models of the {', '.join(configs) or 'no'} configuration only, on "
            f"the 'distractors' build, at {lengths} tokens."
        )
    return FigureResult("training_length", fig, rows, caption)


FIGURE_PROMPTS = {False: 100, True: 20}
"""Scoring prompts per frequency profile in the frequency and theory figures (full, quick): one profile
per layer serves both figures."""


def _shipped_configs() -> list[str]:
    return sorted({config for config, _ in _records()}, key=CONFIGS.index)


def _profiled_layers(task: str, n_layer: int, every: bool) -> list[int]:
    """The layers whose frequency profiles the frequency and theory figures show: with ``every`` (``ropeproof
    figures --full``) every layer, else only the layer the claim ``training.frequencies`` judges (the number
    model's first, the letter model's last), whose profile the claim computes anyway."""
    from ropeproof.verify.studies.training._judging import FREQUENCY_LAYER

    return list(range(n_layer)) if every else [FREQUENCY_LAYER[task](n_layer)]


def _profiled_configs(quick: bool, full: bool) -> list[str]:
    """The shipped configurations the frequency figure shows: under ``quick`` the last (the smallest), with
    ``full`` every one, else the first (paper), the one the claim ``training.frequencies`` judges."""
    configs = _shipped_configs()
    return configs[-1:] if quick else configs if full else configs[:1]


FREQUENCY_FIGURES_SHOWN = (
    " Shown: per task the layer the claim training.frequencies judges (the number model's first, the "
    "letter model's last), of the {config} configuration's seed 0 (the claim judges every seed of it); "
    "every layer of every shipped configuration is drawn by ropeproof figures --full, which computes the "
    "profiles no verdict reads."
)
"""What the frequency and theory figures of ``ropeproof check`` show, and what ``--full`` adds (caption)."""


def frequency_rows(
    quick: bool = False, store: ResultStore | None = None, full: bool = False
) -> list[dict[str, Any]]:
    """Per-frequency profile rows of both tasks' seed-0 models (:func:`_profiled_configs`: the paper
    configuration, under ``quick`` the smallest, with ``full`` every shipped one), per task the layer the
    claim ``training.frequencies`` judges (with ``full`` and not ``quick``: every layer), from ``store``
    (default a fresh one)."""
    return (ResultStore() if store is None else store).get(FREQUENCIES_DATA, quick=quick, full=bool(full))


@data_product("figure.training-frequencies")
def FREQUENCIES_DATA(store: ResultStore, quick: bool, full: bool = False) -> list[dict[str, Any]]:
    """The rows of :func:`frequency_rows` (the profiles the claim ``training.frequencies`` reads too)."""
    from ropeproof.verify.studies.training._shipped_results import FREQUENCY_PROFILE, SHIPPED_MODEL

    rows = []
    for config in _profiled_configs(quick, full):
        for task in TASKS:
            n_layer = store.get(SHIPPED_MODEL, task=task, config=config).model.config.n_layer
            for layer in _profiled_layers(task, n_layer, full and not quick):
                profile = store.get(
                    FREQUENCY_PROFILE, task=task, prompts=FIGURE_PROMPTS[quick], layer=layer, config=config
                )
                rows += [{"config": config, "task": task, **r} for r in profile]
    return rows


@styled
def frequencies_figure(
    quick: bool = False, store: ResultStore | None = None, full: bool = False
) -> FigureResult:
    """Logit share per rotary frequency of the trained layers :func:`frequency_rows` profiles (``full``:
    every layer of every shipped configuration), with [A]'s frequencies marked."""
    from ropeproof.constructions._paper import INDEX_THETA, RETRIEVAL_THETA

    rows = frequency_rows(quick, store, full)
    configs = sorted({r["config"] for r in rows}, key=CONFIGS.index)
    fig, axes = subplots(
        len(configs), 2, figsize=(7.2, 2.6 * len(configs)), squeeze=False, layout="constrained"
    )
    cmap = colormaps["viridis"]
    for (i, config), (j, task) in ((a, b) for a in enumerate(configs) for b in enumerate(TASKS)):
        ax = axes[i, j]
        layers = sorted({r["layer"] for r in rows if r["task"] == task and r["config"] == config})
        for k, layer in enumerate(layers):
            sel = [r for r in rows if r["task"] == task and r["config"] == config and r["layer"] == layer]
            color = cmap(k / max(1, len(layers) - 1))
            ax.semilogx(
                [r["theta"] for r in sel],
                [r["share"] for r in sel],
                "o-",
                ms=2,
                lw=0.8,
                color=color,
                label=f"layer {layer}",
            )
        ax.axvline(INDEX_THETA, color=COLORS["index"], ls=":", lw=1.0, label="[A] Index, 0.8660")
        ax.axvline(RETRIEVAL_THETA, color=COLORS["retrieval"], ls=":", lw=1.0, label="[A] Retrieval, 0.0027")
        ax.set_title(f"{task} task, {config} configuration", fontsize=8)
        ax.set_xlabel("plane frequency theta (rad / position)")
        ax.set_ylabel("share of the last-token logit spread")
        if len(layers) == 1:  # one layer a panel: each says which
            ax.legend(loc="upper left", fontsize=5)
    if max(len({r["layer"] for r in rows if r["task"] == t}) for t in TASKS) > 1:
        axes[0, 1].legend(loc="upper left", fontsize=5, ncol=2)
    caption = (
        "Which RoPE frequencies move each trained layer's logits: for every rotary plane of each layer of "
        "the shipped seed-0 models (GPT-J rotary, base 10000), the standard deviation of that plane's "
        "last-token logit row on the layer's real inputs, as a share of the sum over planes "
        "(ropeproof.verify.studies.training._head_theory). Dotted: the frequencies [A] reports for Index "
        "(0.8660) and Retrieval (0.0027) heads."
    )
    if quick:
        caption += (
            f" Quick preview: the {configs[0]} configuration only, and per task only the layer the claim "
            "training.frequencies judges (the number model's first, the letter model's last)."
        )
    elif not full:
        caption += FREQUENCY_FIGURES_SHOWN.format(config=configs[0])
    return FigureResult("training_frequencies", fig, rows, caption)


def theory_rows(
    quick: bool = False, store: ResultStore | None = None, full: bool = False
) -> list[dict[str, Any]]:
    """:func:`ropeproof.verify.studies.training._head_theory.construction_comparison` of the trained layers
    of the first shipped configuration's seed-0 models (under ``quick`` the last configuration's, the
    smallest) at the frequency of each one's largest logit share: per task the layer the claim
    ``training.frequencies`` judges, with ``full`` and not ``quick`` every layer; from ``store`` (default a
    fresh one)."""
    return (ResultStore() if store is None else store).get(THEORY_DATA, quick=quick, full=bool(full))


@data_product("figure.training-theory")
def THEORY_DATA(store: ResultStore, quick: bool, full: bool = False) -> list[dict[str, Any]]:
    """The rows of :func:`theory_rows`."""
    from ropeproof.verify.studies.training._head_theory import construction_comparison, dominant_plane
    from ropeproof.verify.studies.training._shipped_results import FREQUENCY_PROFILE, SHIPPED_MODEL

    config = _shipped_configs()[-1 if quick else 0]
    rows = []
    for task in TASKS:
        model = store.get(SHIPPED_MODEL, task=task, config=config).model
        for layer in _profiled_layers(task, model.config.n_layer, full and not quick):
            profile = store.get(
                FREQUENCY_PROFILE, task=task, prompts=FIGURE_PROMPTS[quick], layer=layer, config=config
            )
            theta = dominant_plane(profile)["theta"]
            rows += [{"config": config, **r} for r in construction_comparison(model, task, layer, theta)]
    return rows


@styled
def theory_figure(quick: bool = False, store: ResultStore | None = None, full: bool = False) -> FigureResult:
    """Trained heads against the single-plane construction and Theorem 3.2's bound, against length (the
    layers of :func:`theory_rows`; ``full``: every layer)."""
    rows = theory_rows(quick, store, full)
    fig, axes = subplots(2, 2, figsize=(7.2, 4.8), sharex=True, layout="constrained")
    cmap = colormaps["viridis"]
    for j, task in enumerate(TASKS):
        sel = [r for r in rows if r["task"] == task]
        layers = sorted({r["layer"] for r in sel})
        for layer in layers:
            lr = sorted((r for r in sel if r["layer"] == layer), key=lambda r: r["n"])
            n = [r["n"] for r in lr]
            color = cmap(layer / max(1, len(layers) - 1)) if len(layers) > 1 else COLORS["random"]
            label = f"trained layer {layer} (theta {lr[0]['theta']:.3g})"
            axes[0, j].semilogy(n, [r["trained_gap_sup"] for r in lr], "o-", ms=2, color=color, label=label)
            axes[1, j].plot(n, [r["trained_margin_inf"] for r in lr], "o-", ms=2, color=color, label=label)
        first = sorted((r for r in sel if r["layer"] == layers[0]), key=lambda r: r["n"])
        n = [r["n"] for r in first]
        kind = "T_Index" if task == "number" else "T_Retrieval"
        axes[0, j].semilogy(
            n,
            [r["construction_gap_sup"] for r in first],
            "s--",
            ms=2,
            color=COLORS["index"],
            label=f"{kind} at layer {layers[0]}'s theta",
        )
        axes[0, j].semilogy(n, [r["bound"] for r in first], ":", color=COLORS["bound"], label="Thm 3.2 bound")
        axes[1, j].plot(n, [r["construction_margin_inf"] for r in first], "s--", ms=2, color=COLORS["index"])
        axes[1, j].axhline(0, color=COLORS["bound"], lw=0.6)
        axes[0, j].set_title(f"{task} task", fontsize=8)
        axes[1, j].set_xlabel("sequence length n")
    axes[0, 0].set_ylabel("Delta(n) (own logit units)")
    axes[1, 0].set_ylabel("worst target margin")
    for ax in axes[0]:
        ax.legend(loc="lower left", fontsize=5)
    caption = (
        "Trained heads against the theory, over the construction's task family ([A]'s sizes, n <= 17): "
        "exact Delta(n) (largest minus second-largest logit, maximised over inputs) and the worst target "
        f"margin of each layer of the {rows[0]['config']} configuration's seed-0 models (its logit function "
        "with token embeddings through the layer's ln_1: exact for layer 0, a proxy deeper), of the "
        "single-plane construction at the "
        "frequency carrying most of that layer's logit spread (unit vectors), and Theorem 3.2's reported "
        "bound at that frequency. No normalisation of Delta is stated, so trained values are in their own "
        "units; a negative margin means some input of the family is answered wrongly by that head alone."
    )
    if quick:
        caption += (
            " Quick preview: per task only the layer the claim training.frequencies judges (the number "
            "model's first, the letter model's last)."
        )
    elif not full:
        caption += FREQUENCY_FIGURES_SHOWN.format(config=rows[0]["config"])
    return FigureResult("training_theory", fig, rows, caption)
