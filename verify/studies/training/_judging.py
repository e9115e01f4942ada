"""Judging [A]'s observations on training (``docs/theory.md`` section 6) on the shipped checkpoints: the
accuracy of every shipped seed on its 95% intervals, whether the paper seeds follow [A]'s stated
configuration, and each observation per seed, counted over the seeds of both settings
(:data:`SETTINGS`), under every reading where there are several.

The ``*_outcome`` functions that run models measure through the run's
:class:`~ropeproof.machinery._result_store.ResultStore` (models loaded once per run) and hand the
measurements to a ``judge_*`` function that only aggregates (through :func:`over_seeds` or
:func:`readings_outcome`), so the aggregation is testable on hand-made measurements; those that read run
records only read them through :func:`shipped_record`. The claims in :mod:`ropeproof.claims._training`
state what is judged and call one ``*_outcome`` function each.

The seeds judged are those :func:`seeds_of` lists, looked up when a judging function runs.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Mapping
from typing import Any

from ropeproof.machinery._result_store import ResultStore
from ropeproof.verify.measure._outcome import Outcome
from ropeproof.verify.studies.training._config import deviations_by_run, in_a_configuration
from ropeproof.verify.studies.training._lengths import (
    first_look,
    flip_text,
    reading,
    reading_finding,
    reading_rows,
    row_against,
    study_plan,
)
from ropeproof.verify.studies.training._observations import (
    CONTRADICTS,
    HOPS,
    SHOWS,
    UNDECIDED,
    Finding,
    best_evaluation,
    combine,
    hop_by_hop,
    layer_roles,
    pure_heads,
    seed_summary,
    simultaneous,
    uniform_early,
    verdict_over_seeds,
)
from ropeproof.verify.studies.training._shipped import shipped_path, shipped_seeds
from ropeproof.verify.studies.training._trainer import TrainingRecord, load_record

SETTINGS = ("paper", "small")
"""The configurations judged: [A]'s, then the CPU-sized second setting."""
TASKS = ("number", "letter")
"""The tasks every shipped seed is trained on."""
NO_TRANSFORMERS = "transformers is not installed (the hf extra)"
"""The detail of the ``unresolvable`` outcome of the judging that loads models."""
NO_PAPER = "no paper-configuration checkpoint ships"
"""The detail of an outcome with no paper-configuration seed to judge."""


def shipped_record(task: str, config: str = "small", seed: int = 0) -> TrainingRecord:
    """The run record of a shipped checkpoint (needs no transformers)."""
    return load_record(shipped_path(task, config, seed))


def seeds_of(config: str, quick: bool = False) -> list[int]:
    """The seeds shipped for both tasks with ``config`` (only the first under ``--quick`` when the claim
    runs the models)."""
    seeds = sorted(set(shipped_seeds("number", config)) & set(shipped_seeds("letter", config)))
    return seeds[:1] if quick else seeds


def shipped_model(store: ResultStore, task: str, config: str, seed: int) -> Any:
    """The shipped model, loaded once per run (the run's store; read-only)."""
    from ropeproof.verify.studies.training._shipped_results import SHIPPED_MODEL

    return store.get(SHIPPED_MODEL, task=task, config=config, seed=seed).model


def missing_transformers() -> Outcome | None:
    """``unresolvable`` (:data:`NO_TRANSFORMERS`) when ``transformers`` is not installed, else ``None``."""
    if importlib.util.find_spec("transformers") is not None:
        return None
    return Outcome("unresolvable", detail=NO_TRANSFORMERS)


def configuration_groups() -> dict[str, list[int]]:
    """The shipped paper seeds split by how they were trained: ``a-configuration`` (both tasks' records
    set every field [A] states, :func:`~ropeproof.verify.studies.training._config.in_a_configuration`)
    and ``earlier`` (the rest)."""
    groups: dict[str, list[int]] = {"a-configuration": [], "earlier": []}
    for seed in seeds_of("paper"):
        followed = all(in_a_configuration(shipped_record(t, "paper", seed).config) for t in TASKS)
        groups["a-configuration" if followed else "earlier"].append(seed)
    return groups


def verdict_by_configuration(
    paper: Mapping[int, Finding], groups: Mapping[str, list[int]] | None = None
) -> dict[str, Any]:
    """The verdict of "every seed shows it" over each :func:`configuration_groups` group, among the
    paper seeds judged (``paper``: seed -> finding): ``{group: {"seeds": [...], "verdict": ...}}`` with
    verdict ``"no seed"`` for a group none of whose seeds was judged, and ``"changes"``: whether the two
    groups' verdicts differ (``None`` unless both groups have a judged seed). ``groups``: the
    :func:`configuration_groups` already read (read here when ``None``)."""
    out: dict[str, Any] = {}
    for group, seeds in (configuration_groups() if groups is None else groups).items():
        judged = {s: paper[s] for s in seeds if s in paper}
        out[group] = {"seeds": sorted(judged), "verdict": verdict_over_seeds(judged) if judged else "no seed"}
    verdicts = [g["verdict"] for g in out.values()]
    out["changes"] = None if "no seed" in verdicts else verdicts[0] != verdicts[1]
    return out


def over_seeds(observe: Callable[[str, int], Finding], quick_models: bool = False) -> Outcome:
    """``observe(config, seed)`` for every seed of every setting (only the first seed of each when
    ``quick_models``): figures ``{setting: seed_summary}``, ``paper_seeds_showing`` ("k of n") and
    ``by_configuration`` (:func:`verdict_by_configuration` of the paper seeds' findings); the
    verdict is :func:`~ropeproof.verify.studies.training._observations.verdict_over_seeds` over the paper
    seeds (``unresolvable`` with :data:`NO_PAPER` when there are none)."""
    figures: dict[str, Any] = {}
    paper: dict[int, Finding] = {}
    for config in SETTINGS:
        found = {seed: observe(config, seed) for seed in seeds_of(config, quick_models)}
        figures[config] = seed_summary(found)
        if config == "paper":
            paper = found
    figures["paper_seeds_showing"] = f"{figures['paper'][SHOWS]} of {figures['paper']['seeds']}"
    figures["by_configuration"] = verdict_by_configuration(paper)
    verdict = verdict_over_seeds(paper)
    detail = "" if paper else NO_PAPER
    return Outcome(verdict, figures, key_figure="paper_seeds_showing", detail=detail)


def readings_outcome(
    primary: str,
    observe: Mapping[str, Callable[[str, int], tuple[Finding, Any]]],
    stand: Mapping[str, Callable[[list[Any]], str]] | None = None,
) -> Outcome:
    """Every reading in ``observe`` (``reading -> (config, seed) -> (finding, detail)``) over every
    shipped seed of both settings; the verdict is the ``primary`` reading's over the paper seeds, and the
    figures give every reading's verdict (and its :func:`verdict_by_configuration`, with the readings
    whose verdict differs between the groups in ``configuration_changes``), which readings flip it, each
    seed's detail and, for a reading in
    ``stand``, where its verdict stands (``stand[reading](paper seeds' details)``: the bar at which it
    would flip)."""
    per_reading: dict[str, Any] = {}
    groups = configuration_groups()  # read once for every reading
    for name, look in observe.items():
        found: dict[str, dict[int, Finding]] = {}
        details: dict[str, Any] = {}
        for config in SETTINGS:
            found[config] = {}
            for seed in seeds_of(config):
                finding, detail = look(config, seed)
                found[config][seed] = finding
                details[f"{config}-seed{seed}"] = detail
        per_reading[name] = {
            "verdict": verdict_over_seeds(found["paper"]),
            "by_configuration": verdict_by_configuration(found["paper"], groups),
            "paper": seed_summary(found["paper"]),
            "small": seed_summary(found["small"]),
            "detail": details,
        }
    verdicts = {k: v["verdict"] for k, v in per_reading.items()}
    verdict = verdicts[primary]
    figures: dict[str, Any] = {
        "reading": primary,
        "reading_verdicts": verdicts,
        "readings_that_flip_it": sorted(k for k, v in verdicts.items() if v != verdict),
        "readings": per_reading,
        "readings_said": "; ".join(
            f"{k} {v['verdict']} (paper seeds showing, contradicting, undecided: {v['paper'][SHOWS]}/"
            f"{v['paper'][CONTRADICTS]}/{v['paper'][UNDECIDED]})"
            for k, v in per_reading.items()
        ),
        "paper": per_reading[primary]["paper"],
        "small": per_reading[primary]["small"],
        "configuration_changes": sorted(
            k for k, v in per_reading.items() if v["by_configuration"]["changes"]
        ),
    }
    paper_details = {
        k: [d for s, d in v["detail"].items() if s.startswith("paper-")] for k, v in per_reading.items()
    }
    figures["where_readings_stand"] = {
        k: f(paper_details[k]) for k, f in (stand or {}).items() if paper_details.get(k)
    }
    figures["where_readings_stand_said"] = (
        "; ".join(f"{k}: {v}" for k, v in figures["where_readings_stand"].items()) or "no paper seed"
    )
    detail = "" if seeds_of("paper") else NO_PAPER
    return Outcome(verdict, figures, key_figure="reading_verdicts", detail=detail)


# -- accuracy ------------------------------------------------------------------------------------------


def judge_accuracy(config: str, rows_of: Callable[[str, int], dict[str, dict[str, Any]]]) -> Outcome:
    """Accuracy per hop count of every shipped ``config`` seed and task, ``rows_of(task, seed) -> {hop:
    {"side", "ci_low", ...}}`` (figures ``"{task}-seed{seed}"``): ``violated`` when some row is decided
    ``below`` its bar, else ``unresolvable`` when one is ``undecided``, else ``holds``; ``worst_ci_low``
    is the lowest interval end and ``worst_said`` names its row with its count and interval
    (``unresolvable`` when no ``config`` seed ships)."""
    figures: dict[str, Any] = {}
    sides = []
    for seed in seeds_of(config):
        for task in TASKS:
            rows = rows_of(task, seed)
            figures[f"{task}-seed{seed}"] = rows
            sides += [r["side"] for r in rows.values()]
    if not sides:
        return Outcome("unresolvable", figures, detail=f"no {config} checkpoint ships")
    cells = [(k, h, r) for k, v in figures.items() for h, r in v.items()]
    name, hop, worst = min(cells, key=lambda c: c[2]["ci_low"])
    figures["worst_ci_low"] = worst["ci_low"]
    figures["worst_said"] = (
        f"{worst['ci_low']:.6g}, {name} at {hop} hops: {worst['correct']}/{worst['count']} prompts, interval "
        f"[{worst['ci_low']:.3f}, {worst['ci_high']:.3f}]"
    )
    verdict = "violated" if "below" in sides else "unresolvable" if "undecided" in sides else "holds"
    return Outcome(
        verdict,
        figures,
        key_figure="worst_ci_low",
        counterexample=figures if verdict != "holds" else None,
    )


def accuracy_outcome(
    store: ResultStore, config: str, min_accuracy: float, start: int, cap: int, source: str
) -> Outcome:
    """:func:`judge_accuracy` on every shipped ``config`` seed against ``min_accuracy``: with ``source``
    ``"record"`` the run record's own evaluation of the best checkpoint (float32 weights, 95% Wilson
    intervals), with ``"weights"`` the shipped float16 weights on held-out validation prompts, sampled
    from ``start`` up to ``cap`` until each hop count's anytime-valid interval decides."""
    if (missing := missing_transformers()) is not None:
        return missing
    from ropeproof.verify.studies.training._observations import recorded_accuracy_per_hop
    from ropeproof.verify.studies.training._shipped_results import DECIDED_ACCURACY

    def rows_of(task: str, seed: int) -> dict[str, dict[str, Any]]:
        if source == "record":  # the run's own evaluation of the best checkpoint (float32 weights)
            return recorded_accuracy_per_hop(shipped_record(task, config, seed), min_accuracy)
        # the shipped float16 weights, evaluated here: a result of the run's store
        return store.get(
            DECIDED_ACCURACY,
            task=task,
            config=config,
            seed=seed,
            threshold=min_accuracy,
            start=start,
            cap=cap,
        )

    return judge_accuracy(config, rows_of)


# -- configuration -------------------------------------------------------------------------------------


def configuration_outcome() -> Outcome:
    """Which shipped paper seeds were trained, for both tasks, with every field of [A]'s configuration
    that [A] states (:func:`~ropeproof.verify.studies.training._config.deviations_by_run` on the records'
    configurations): figures ``seeds_in_a_configuration``, ``deviations`` per run, ``deviations_said``
    and ``remaining_said``; ``holds`` when some seed was (:func:`configuration_groups`)."""
    runs = {
        f"{task}-seed{seed}": shipped_record(task, "paper", seed).config
        for seed in seeds_of("paper")
        for task in TASKS
    }
    found = deviations_by_run(runs)
    both = configuration_groups()["a-configuration"]
    figures = {
        "seeds_in_a_configuration": both,
        "deviations": found["deviations"],
        "deviations_said": "; ".join(f"{run}: {' '.join(d)}" for run, d in found["deviations"].items() if d)
        or "none",
        "remaining_said": " ".join(found["remaining"]),
    }
    return Outcome("holds" if both else "violated", figures, key_figure="seeds_in_a_configuration")


# -- the observations read off the run records ---------------------------------------------------------


def hop_by_hop_outcome(threshold: float) -> Outcome:
    """:func:`~ropeproof.verify.studies.training._observations.hop_by_hop` of every seed's number record,
    over the seeds."""
    return over_seeds(lambda config, seed: hop_by_hop(shipped_record("number", config, seed), threshold))


def letter_simultaneous_outcome(threshold: float) -> Outcome:
    """:func:`~ropeproof.verify.studies.training._observations.simultaneous` of every seed's letter
    record, over the seeds."""
    return over_seeds(lambda config, seed: simultaneous(shipped_record("letter", config, seed), threshold))


def layer_roles_outcome() -> Outcome:
    """:func:`~ropeproof.verify.studies.training._observations.layer_roles` of every seed's number and
    letter records, over the seeds."""
    return over_seeds(
        lambda config, seed: layer_roles(
            shipped_record("number", config, seed), shipped_record("letter", config, seed)
        )
    )


def uniform_early_outcome(level: float, entropy: float) -> Outcome:
    """:func:`~ropeproof.verify.studies.training._observations.uniform_early` of both tasks' records
    (combined per seed), over the seeds."""
    return over_seeds(
        lambda config, seed: combine(
            [uniform_early(shipped_record(t, config, seed), level, entropy) for t in TASKS]
        )
    )


# -- the last letter layer -----------------------------------------------------------------------------


def last_layer_causal_finding(rows: Mapping[str, Mapping[str, Any]]) -> Finding:
    """The causal reading of one seed from its accuracy rows with the last layer zeroed, decided against
    the bar per hop count: ``contradicts`` when some hop count stays ``above``, else ``undecided`` when
    one is ``undecided``, else ``shows`` (every hop count ``below``)."""
    sides = [r["side"] for r in rows.values()]
    return CONTRADICTS if "above" in sides else UNDECIDED if "undecided" in sides else SHOWS


def _single_layer(details: list[Any]) -> str:
    worst = min((x["worst"] for x in details), key=lambda w: w["accuracy"])
    lowest = min(x["worst"]["lowest_ci_low"] for x in details)
    layer = worst["layer"] if worst["layer"] == "undecided which" else f"layer {worst['layer']}"
    return (
        "no single layer's ablation drops every hop count below 0.5 in "
        f"{sum(not x['necessary'] for x in details)} of {len(details)} paper seeds; lowest accuracy after "
        f"one: {worst['accuracy']:.3f} ({worst['correct']}/{worst['count']} prompts at {worst['hops']} "
        f"hops, anytime-valid 95% interval [{worst['ci_low']:.3f}, {worst['ci_high']:.3f}], {layer}); "
        f"lowest interval end over every layer and hop count: {lowest:.3f}"
    )


def _causal(details: list[Any]) -> str:
    row = min((r for rows in details for r in rows.values()), key=lambda r: r["ci_low"])
    return (
        f"accuracy with the last layer zeroed stays >= {row['ci_low']:.3f} (lowest interval end: "
        f"{row['correct']}/{row['count']} prompts, interval [{row['ci_low']:.3f}, {row['ci_high']:.3f}])"
    )


LAST_LAYER_STANDS: dict[str, Callable[[list[Any]], str]] = {
    "causal": _causal,
    "any-single-layer": _single_layer,
}
"""Where the last-layer readings stand, from the paper seeds' details (:func:`readings_outcome`)."""


def judge_letter_last_layer(
    causal: Callable[[str, int], Mapping[str, Mapping[str, Any]]],
    single: Callable[[str, int], Mapping[str, Any]],
    descriptive: Callable[[str, int], Mapping[str, Any]],
) -> Outcome:
    """The last-letter-layer observation under its readings, primary ``causal``: ``causal(config, seed)``
    the accuracy rows per hop count with the last layer zeroed (:func:`last_layer_causal_finding`),
    ``single(config, seed)`` the output of
    :func:`~ropeproof.verify.studies.training._readings.single_layer_ablations` and
    ``descriptive(config, seed)`` that of
    :func:`~ropeproof.verify.studies.training._readings.last_layer_symbolic_per_hop`."""

    def causal_reading(config: str, seed: int) -> tuple[Finding, Any]:
        rows = causal(config, seed)
        return last_layer_causal_finding(rows), rows

    def single_reading(config: str, seed: int) -> tuple[Finding, Any]:
        found = single(config, seed)
        return found["finding"], {k: found[k] for k in ("necessary", "worst")}

    def descriptive_reading(config: str, seed: int) -> tuple[Finding, Any]:
        found = descriptive(config, seed)
        return found["finding"], found["per_hop"]

    looks = {"causal": causal_reading, "any-single-layer": single_reading, "descriptive": descriptive_reading}
    return readings_outcome("causal", looks, LAST_LAYER_STANDS)


def letter_last_layer_outcome(store: ResultStore, max_accuracy: float, start: int, cap: int) -> Outcome:
    """:func:`judge_letter_last_layer` on the shipped letter models: the last layer's attention zeroed,
    accuracy per hop count decided against ``max_accuracy`` (sampled from ``start`` up to ``cap``
    held-out prompts), every single layer ablated, and the last layer's scores per hop count."""
    if (missing := missing_transformers()) is not None:
        return missing
    from ropeproof.verify.studies.training._readings import (
        last_layer_symbolic_per_hop,
        single_layer_ablations,
    )
    from ropeproof.verify.studies.training._shipped_results import ABLATED_ACCURACY

    def layers(config: str, seed: int) -> int:
        return int(shipped_model(store, "letter", config, seed).config.n_layer)

    def causal(config: str, seed: int) -> Any:
        return store.get(
            ABLATED_ACCURACY, task="letter", config=config, seed=seed, layers=[layers(config, seed) - 1],
            threshold=max_accuracy, start=start, cap=cap,
        )  # fmt: skip

    return judge_letter_last_layer(
        causal,
        lambda config, seed: single_layer_ablations(store, config, seed, layers(config, seed)),
        lambda config, seed: last_layer_symbolic_per_hop(store, config, seed, layers(config, seed)),
    )


# -- pure heads ----------------------------------------------------------------------------------------


def layer_gaps(record: TrainingRecord) -> list[dict[str, Any]]:
    """Per layer of the best checkpoint, the numbers the per-layer reading decides on: ``S_pos`` and
    ``S_sym`` with their 95% bootstrap intervals over the run record's scoring prompts, and the interval of
    the difference ``[S_pos low - S_sym high, S_pos high - S_sym low]``
    (:func:`~ropeproof.verify.studies.training._observations.pure`)."""
    dyn = best_evaluation(record)["dynamics"]
    out = []
    n = len(dyn["S_pos_ci"])
    means = zip(dyn.get("S_pos", [None] * n), dyn.get("S_sym", [None] * n), strict=True)
    for layer, ((p, s), p_ci, s_ci) in enumerate(zip(means, dyn["S_pos_ci"], dyn["S_sym_ci"], strict=True)):
        gap = None if p_ci is None or s_ci is None else [p_ci[0] - s_ci[1], p_ci[1] - s_ci[0]]
        out.append(
            {"layer": layer, "S_pos": p, "S_pos_ci": p_ci, "S_sym": s, "S_sym_ci": s_ci, "gap_ci": gap}
        )
    return out


def _prompt_share(details: list[Any]) -> str:
    worsts = [w for d in details for t in d.values() if (w := t["worst_layer"])]
    if not worsts:
        return "no layer's scores resolved"
    low = min(w["lowest_ci_low"] for w in worsts)
    worst = min(worsts, key=lambda w: w["share"])
    layer = worst["layer"] if worst["layer"] == "undecided which" else f"layer {worst['layer']}"
    return (
        f"holds for any bar on the share of pure prompts up to {low:.3f} (lowest interval end over every "
        f"layer and seed); lowest share {worst['share']:.3f} ({worst['pure']}/{worst['prompts']} prompts, "
        f"anytime-valid 95% interval [{worst['ci_low']:.3f}, {worst['ci_high']:.3f}], {layer})"
    )


def _ablated(details: list[Any]) -> str:
    lows = [r["ci_low"] for d in details for t in d.values() for r in t["rows"].values()]
    return f"holds for any accuracy bar up to {min(lows):.3f}" if lows else "no layer to zero"


PURE_STANDS: dict[str, Callable[[list[Any]], str]] = {"per-prompt": _prompt_share, "functional": _ablated}
"""Where the pure-heads readings stand, from the paper seeds' details (:func:`readings_outcome`)."""


def judge_pure_heads(
    min_gap: float,
    per_prompt: Callable[[str, str, int], Mapping[str, Any]],
    functional: Callable[[str, str, int], Mapping[str, Any]],
) -> Outcome:
    """The pure-heads observation under its readings, primary ``per-layer``
    (:func:`~ropeproof.verify.studies.training._observations.pure_heads` of both tasks' records at
    ``min_gap``, combined); ``per_prompt(task, config, seed)`` the output of
    :func:`~ropeproof.verify.studies.training._readings.per_prompt_reading` and ``functional(task, config,
    seed)`` that of :func:`~ropeproof.verify.studies.training._readings.functional_purity`."""

    def per_layer(config: str, seed: int) -> tuple[Finding, Any]:
        records = {t: shipped_record(t, config, seed) for t in TASKS}
        found = [pure_heads(records[t], min_gap) for t in TASKS]
        detail = {
            t: {"finding": f, "layers": layer_gaps(records[t])} for t, f in zip(TASKS, found, strict=True)
        }
        return combine(found), detail

    def per_prompt_reading(config: str, seed: int) -> tuple[Finding, Any]:
        out = {t: per_prompt(t, config, seed) for t in TASKS}
        detail = {t: {"finding": v["finding"], "worst_layer": v["worst_layer"]} for t, v in out.items()}
        return combine([v["finding"] for v in out.values()]), detail

    def functional_reading(config: str, seed: int) -> tuple[Finding, Any]:
        out = {t: functional(t, config, seed) for t in TASKS}
        return combine([v["finding"] for v in out.values()]), out

    looks = {"per-layer": per_layer, "per-prompt": per_prompt_reading, "functional": functional_reading}
    return readings_outcome("per-layer", looks, PURE_STANDS)


def pure_heads_outcome(store: ResultStore, min_gap: float) -> Outcome:
    """:func:`judge_pure_heads` on the shipped models: each layer's share of pure prompts, and accuracy
    with every impure layer's attention zeroed."""
    if (missing := missing_transformers()) is not None:
        return missing
    from ropeproof.verify.studies.training._readings import functional_purity, per_prompt_reading

    return judge_pure_heads(
        min_gap,
        lambda t, config, seed: per_prompt_reading(
            store, t, config, seed, shipped_record(t, config, seed).config.n_layer
        ),
        lambda t, config, seed: functional_purity(store, t, config, seed, shipped_record(t, config, seed)),
    )


# -- length --------------------------------------------------------------------------------------------


SMALL_NOT_MEASURED = "not measured: no verdict reads them (ropeproof figures --full draws small seed 0)"
"""What the length claim says of the small seeds, which its verdicts and pins do not read."""


def judge_lengths(
    primary: str, plan: Mapping[str, Any], row: Callable[[str, str, int, int, int], dict[str, Any]]
) -> Outcome:
    """The length observation under every reading of ``plan``
    (:func:`~ropeproof.verify.studies.training._lengths.study_plan`), primary ``primary``: each paper
    seed's rows (and each small seed's when ``plan["full"]``: no verdict reads them)
    measured by :func:`~ropeproof.verify.studies.training._lengths.reading_rows` with ``row(reading,
    config, seed, n, cap)``, read by :func:`~ropeproof.verify.studies.training._lengths.reading_finding`,
    each reading's verdict over the paper seeds; figures give every reading's verdict, where each that
    flips the primary's stands (:func:`flip_text`), the rows, the inputs answered and the
    primary reading's row at 850 tokens for paper seed 0 (:func:`row_against`)."""
    rows: dict[str, Any] = {}
    per_reading: dict[str, dict[str, Any]] = {}
    groups = configuration_groups()  # read once for every reading
    settings = SETTINGS if plan.get("full") else ("paper",)  # the verdicts read the paper seeds only
    for key in plan["readings"]:
        r = reading(key)
        per_reading[key] = {"seeds": {}}
        found: dict[str, dict[int, Finding]] = {"small": {}}
        for config in settings:
            found[config] = {}
            for seed in seeds_of(config):

                def measure(n: int, cap: int, key: str = key, config: str = config, seed: int = seed) -> Any:
                    return row(key, config, seed, n, cap)

                measured = reading_rows(key, plan["lengths"], plan["cap"], measure, plan.get("full", False))
                rows.setdefault(f"{config}-seed{seed}", []).extend(measured)
                finding = reading_finding(key, measured, plan["lengths"])
                found[config][seed] = finding["finding"]
                per_reading[key]["seeds"][f"{config}-seed{seed}"] = finding
        per_reading[key].update(
            says=r.says,
            verdict=verdict_over_seeds(found["paper"]),
            by_configuration=verdict_by_configuration(found["paper"], groups),
            paper=seed_summary(found["paper"]),
            small=seed_summary(found["small"]) if "small" in settings else SMALL_NOT_MEASURED,
        )
    verdicts = {k: v["verdict"] for k, v in per_reading.items()}
    verdict = verdicts[primary]
    flips = {k: v for k, v in verdicts.items() if v != verdict}
    stands = {k: flip_text(v) for k, v in per_reading.items()}
    figures: dict[str, Any] = {
        "reading": primary,
        "reading_verdicts": verdicts,
        "readings_that_flip_it": {k: stands[k] for k in flips},
        "where_readings_stand": stands,
        "where_readings_stand_said": "; ".join(f"{k} {v}" for k, v in stands.items()),
        "readings": per_reading,
        "readings_said": "; ".join(f"{k} {v}" for k, v in verdicts.items()),
        "configuration_changes": sorted(
            k for k, v in per_reading.items() if v["by_configuration"]["changes"]
        ),
        "inputs_answered": sum(row["count"] for seed_rows in rows.values() for row in seed_rows),
        "rows": rows,
    }
    at_850 = [row for row in rows.get("paper-seed0", []) if row["reading"] == primary and row["n"] == 850]
    figures["paper_letter_850"] = row_against(at_850[0]) if at_850 else "not measured"
    detail = "" if seeds_of("paper") else NO_PAPER
    return Outcome(
        verdict if seeds_of("paper") else "unresolvable",
        figures,
        key_figure="reading_verdicts",
        detail=detail,
    )


def length_outcome(store: ResultStore, quick: bool, primary: str) -> Outcome:
    """:func:`judge_lengths` on the shipped models, every row sampled until its anytime-valid interval
    decides (the study of :func:`~ropeproof.verify.studies.training._lengths.study_plan` for ``quick``)."""
    if (missing := missing_transformers()) is not None:
        return missing
    from ropeproof.verify.studies.training._shipped_results import DECIDED_LENGTH_ROW

    plan = study_plan(quick)

    def row(key: str, config: str, seed: int, n: int, cap: int) -> Any:
        return store.get(
            DECIDED_LENGTH_ROW,
            task=reading(key).task,
            config=config,
            seed=seed,
            reading=key,
            n=n,
            first=first_look(n, plan["cap"]),
            cap=cap,
        )

    return judge_lengths(primary, plan, row)


# -- frequencies ---------------------------------------------------------------------------------------

FREQUENCY_LAYER: dict[str, Callable[[int], int]] = {"number": lambda n: 0, "letter": lambda n: n - 1}
"""The layer whose dominant plane is judged, per task, of a model with ``n`` layers: the number model's
first, the letter model's last."""
FREQUENCY_SHOWS: dict[str, Callable[[float], bool]] = {
    "number": lambda t: t >= 0.5,
    "letter": lambda t: t <= 0.05,
}
"""Whether the dominant plane's ``theta`` shows the observation, per task: high for the number model's
pointer layer, low for the letter model's lookup layer."""
MIN_STABILITY = 0.95
"""A plane counts as dominant when it stays largest in at least this share of bootstrap resamples."""


def judge_frequencies(top_plane: Callable[[str, str, int], Mapping[str, Any]], quick: bool) -> Outcome:
    """The frequency observation over the seeds (:func:`over_seeds`, only the first seed of each setting
    when ``quick``): ``top_plane(task, config, seed)`` is the dominant plane of the task's
    :data:`FREQUENCY_LAYER` (:func:`~ropeproof.verify.studies.training._head_theory.dominant_plane`); per
    task it shows the observation when its ``dominant_stability`` is at least :data:`MIN_STABILITY` and
    its ``theta`` passes :data:`FREQUENCY_SHOWS`, contradicts it when stable and failing, and leaves it
    undecided when not stable; the tasks combine per seed. Figures add ``dominant_planes``."""
    tops: dict[str, Any] = {}

    def observe(config: str, seed: int) -> Finding:
        found = []
        for task in TASKS:
            top = top_plane(task, config, seed)
            tops[f"{config}-seed{seed}-{task}"] = {
                k: top[k] for k in ("layer", "freq_id", "theta", "share", "dominant_stability")
            }
            if top["dominant_stability"] < MIN_STABILITY:
                found.append(UNDECIDED)
            else:
                found.append(SHOWS if FREQUENCY_SHOWS[task](top["theta"]) else CONTRADICTS)
        return combine(found)

    outcome = over_seeds(observe, quick_models=quick)
    outcome.figures["dominant_planes"] = tops
    return outcome


def frequencies_outcome(store: ResultStore, prompts: int, quick: bool) -> Outcome:
    """:func:`judge_frequencies` on the shipped models, each layer's logit share per plane on ``prompts``
    prompts with its bootstrap stability."""
    if (missing := missing_transformers()) is not None:
        return missing
    from ropeproof.verify.studies.training._head_theory import dominant_plane
    from ropeproof.verify.studies.training._shipped_results import FREQUENCY_PROFILE

    def top_plane(task: str, config: str, seed: int) -> Any:
        layer = FREQUENCY_LAYER[task](shipped_model(store, task, config, seed).config.n_layer)
        profile = store.get(
            FREQUENCY_PROFILE, task=task, prompts=prompts, layer=layer, config=config, seed=seed
        )
        return dominant_plane(profile)

    return judge_frequencies(top_plane, quick)


__all__ = [
    "HOPS",
    "SETTINGS",
    "accuracy_outcome",
    "configuration_outcome",
    "frequencies_outcome",
    "hop_by_hop_outcome",
    "layer_roles_outcome",
    "length_outcome",
    "letter_last_layer_outcome",
    "letter_simultaneous_outcome",
    "pure_heads_outcome",
    "readings_outcome",
    "seeds_of",
    "shipped_record",
    "uniform_early_outcome",
]
