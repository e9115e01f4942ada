"""[A]'s observations about heads under each fair reading of its words (``docs/guides/training.md``),
measured on the shipped checkpoints through the run's store
(:mod:`ropeproof.verify.studies.training._shipped_results`).

**Pure heads** ("the best models have pure heads"; [A] classifies a head "for a given prompt"):

- *per layer* (:func:`~ropeproof.verify.studies.training._observations.pure_heads`, from the run record):
  every layer's mean scores satisfy ``|S_pos - S_sym| >= 0.5`` on their intervals;
- *per prompt* (:func:`per_prompt_purity`): in every layer, most prompts are pure: the share of prompts
  with ``|s_pos - s_sym| >= 0.5`` (per-prompt layer-swap scores) is above 0.5 on its anytime-valid
  interval, prompts drawn in chunks of 50
  (:data:`~ropeproof.verify.studies.training._shipped_results.PROMPT_CHUNK`) until decided, at most
  :data:`PROMPT_CAP`;
- *functional* (:func:`functional_purity`): the impure layers are not what the accuracy rests on:
  zeroing the attention output of every layer the per-layer reading does not find pure, all together,
  keeps validation accuracy at or above 0.9 at every hop count (anytime-valid intervals).

**Last letter layer necessary** ("the last head is needed for every hop count"):

- *causal* (the claim as first stated): zeroing the last layer's attention drops accuracy below 0.5 at
  every hop count;
- *any single layer* (:func:`single_layer_ablations`): some single layer's ablation does;
- *descriptive* (:func:`last_layer_symbolic_per_hop`): the last layer is symbolic (``S_sym > 0.5 >
  S_pos`` on 95% bootstrap intervals) on the prompts of every hop count.
"""

from __future__ import annotations

from typing import Any

from ropeproof.machinery._result_store import ResultStore
from ropeproof.verify.measure._statistics import SequentialProportion, mean_interval
from ropeproof.verify.studies.training._observations import (
    CONTRADICTS,
    HOPS,
    SHOWS,
    UNDECIDED,
    Finding,
    best_evaluation,
    combine,
    is_label,
    pure,
)

PROMPT_CAP = 400
"""The most prompts the per-prompt reading draws for one layer."""
SINGLE_LAYER_START = 100
"""Prompts of the first look of each single-layer ablation (25 per hop count: an accuracy near 1 against
0.5 is decided there; more are drawn only where it is not)."""
FUNCTIONAL_LEVEL = 0.9
"""The accuracy the functional reading asks for at every hop count with the impure layers zeroed."""


def _side_finding(side: str, want: str) -> Finding:
    return SHOWS if side == want else UNDECIDED if side == "undecided" else CONTRADICTS


def per_prompt_purity(
    store: ResultStore,
    task: str,
    config: str,
    seed: int,
    layer: int,
    min_gap: float = 0.5,
    level: float = 0.5,
) -> dict[str, Any]:
    """The share of scoring prompts on which ``layer`` is pure (``|s_pos - s_sym| >= min_gap``), sampled
    in chunks until its anytime-valid 95% interval decides ``level``: ``{"layer", "pure", "prompts",
    "share", "ci_low", "ci_high", "side", "finding"}`` (``finding`` ``undecided`` for a layer whose scores
    the dtype does not resolve)."""
    from ropeproof.verify.studies.training._shipped_results import PROMPT_SCORES

    seq = SequentialProportion()
    chunk = 0
    while seq.trials < PROMPT_CAP:
        got = store.get(PROMPT_SCORES, task=task, config=config, seed=seed, layer=layer, chunk=chunk)
        if not got["resolved"]:
            return {"layer": layer, "resolved": False, "finding": UNDECIDED}
        seq.add([abs(p - s) >= min_gap for p, s in zip(got["s_pos"], got["s_sym"], strict=True)])
        chunk += 1
        if seq.decide(level) != "undecided":
            break
    est = seq.estimate()
    side = seq.decide(level)
    return {
        "layer": layer,
        "resolved": True,
        "pure": seq.successes,
        "prompts": est.n,
        "share": est.value,
        "ci_low": est.low,
        "ci_high": est.high,
        "side": side,
        "finding": _side_finding(side, "above"),
    }


WORST_KEYS = ("share", "pure", "prompts", "accuracy", "correct", "count", "ci_low", "ci_high", "hops")
"""What :func:`worst_of` keeps of the worst row: its value, its count and its interval."""
UNDECIDED_WHICH = "undecided which"
"""The worst layer's name where its interval does not lie below every other layer's."""


def worst_of(rows: list[dict[str, Any]], value: str, name: str) -> dict[str, Any] | None:
    """The row of ``rows`` with the lowest ``value``, its ``name`` kept only when it is decided against
    the others (its interval's upper end below every other row's lower end, the intervals
    ``ci_low``/``ci_high``), else :data:`UNDECIDED_WHICH`; ``lowest_ci_low``: the lowest lower end over
    all rows (where a bar on the value would flip, whichever row it is). ``None`` for no rows."""
    if not rows:
        return None
    worst = min(rows, key=lambda r: r[value])
    others = [r for r in rows if r is not worst]
    decided = all(worst["ci_high"] < r["ci_low"] for r in others)
    return {
        **{k: v for k, v in worst.items() if k in WORST_KEYS},
        name: worst[name] if decided else UNDECIDED_WHICH,
        "lowest_ci_low": min(r["ci_low"] for r in rows),
    }


def per_prompt_reading(store: ResultStore, task: str, config: str, seed: int, n_layer: int) -> dict[str, Any]:
    """:func:`per_prompt_purity` of every layer and the finding (every layer mostly pure); ``worst_layer``
    (:func:`worst_of`): the layer with the lowest share of pure prompts, with its count (``pure`` of
    ``prompts``) and interval, named only when decided against the others."""
    layers = [per_prompt_purity(store, task, config, seed, layer) for layer in range(n_layer)]
    resolved = [r for r in layers if r["resolved"]]
    return {
        "finding": combine([r["finding"] for r in layers]),
        "layers": layers,
        "worst_layer": worst_of(resolved, "share", "layer"),
    }


def impure_layers(record: Any, min_gap: float = 0.5) -> list[int]:
    """The layers of the best checkpoint the per-layer reading does not find pure (contradicting or
    undecided, :func:`~ropeproof.verify.studies.training._observations.pure`)."""
    dyn = best_evaluation(record)["dynamics"]
    pairs = zip(dyn["S_pos_ci"], dyn["S_sym_ci"], strict=True)
    return [i for i, (p, s) in enumerate(pairs) if pure(p, s, min_gap) != SHOWS]


def functional_purity(store: ResultStore, task: str, config: str, seed: int, record: Any) -> dict[str, Any]:
    """Accuracy per hop count with every impure layer's attention zeroed together (module docstring):
    ``{"impure_layers", "rows", "finding"}`` (no impure layer: ``shows`` with no rows)."""
    from ropeproof.verify.studies.training._shipped_results import ABLATED_ACCURACY

    layers = impure_layers(record)
    if not layers:
        return {"impure_layers": [], "rows": {}, "finding": SHOWS}
    rows = store.get(
        ABLATED_ACCURACY, task=task, config=config, seed=seed, layers=layers, threshold=FUNCTIONAL_LEVEL
    )
    finding = combine([_side_finding(r["side"], "above") for r in rows.values()])
    return {"impure_layers": layers, "rows": rows, "finding": finding}


def single_layer_ablations(store: ResultStore, config: str, seed: int, n_layer: int) -> dict[str, Any]:
    """Each layer of the letter model ablated alone, decided against 0.5 per hop count (from
    :data:`SINGLE_LAYER_START` prompts): ``{"layers":
    {layer: rows}, "necessary": [layers whose ablation drops every hop count below 0.5], "worst", "finding"}``
    (``shows`` when some layer is necessary); ``worst`` (:func:`worst_of`): the lowest accuracy over layers
    and hop counts with its count and interval, its layer named only when decided against every other
    layer's rows."""
    from ropeproof.verify.studies.training._shipped_results import ABLATED_ACCURACY

    out: dict[str, Any] = {}
    necessary = []
    findings = []
    for layer in range(n_layer):
        rows = store.get(
            ABLATED_ACCURACY, task="letter", config=config, seed=seed, layers=[layer], threshold=0.5,
            start=SINGLE_LAYER_START,
        )  # fmt: skip
        out[str(layer)] = rows
        sides = [r["side"] for r in rows.values()]
        if all(s == "below" for s in sides):
            findings.append(SHOWS)
            necessary.append(layer)
        else:
            findings.append(CONTRADICTS if "above" in sides else UNDECIDED)
    flat = [{**r, "layer": int(k), "hops": int(h)} for k, rows in out.items() for h, r in rows.items()]
    worst = min(flat, key=lambda r: r["accuracy"])
    # the worst layer is decided against the other layers' rows (its own other hop counts aside)
    named = worst_of([worst, *(r for r in flat if r["layer"] != worst["layer"])], "accuracy", "layer")
    finding = SHOWS if SHOWS in findings else UNDECIDED if UNDECIDED in findings else CONTRADICTS
    return {"layers": out, "necessary": necessary, "worst": named, "finding": finding}


def last_layer_symbolic_per_hop(store: ResultStore, config: str, seed: int, n_layer: int) -> dict[str, Any]:
    """The last letter layer's label on the prompts of each hop count (the first two chunks of scoring
    prompts, about 25 per hop count): ``{"per_hop": {h: {"S_pos", "S_pos_ci", "S_sym", "S_sym_ci",
    "prompts", "finding"}}, "finding"}`` (every hop count symbolic: ``shows``)."""
    from ropeproof.verify.studies.training._shipped_results import PROMPT_SCORES

    layer = n_layer - 1
    chunks = [
        store.get(PROMPT_SCORES, task="letter", config=config, seed=seed, layer=layer, chunk=c)
        for c in (0, 1)
    ]
    if not all(c["resolved"] for c in chunks):
        return {"per_hop": {}, "finding": UNDECIDED, "resolved": False}
    pos = [v for c in chunks for v in c["s_pos"]]
    sym = [v for c in chunks for v in c["s_sym"]]
    hops = [h for c in chunks for h in c["hops"]]
    per_hop: dict[str, Any] = {}
    for h in HOPS:
        sel = [i for i, x in enumerate(hops) if x == h]
        p_est, s_est = mean_interval([pos[i] for i in sel]), mean_interval([sym[i] for i in sel])
        finding = is_label([p_est.low, p_est.high], [s_est.low, s_est.high], "symbolic")
        per_hop[str(h)] = {
            "prompts": len(sel),
            "S_pos": p_est.value,
            "S_pos_ci": [p_est.low, p_est.high],
            "S_sym": s_est.value,
            "S_sym_ci": [s_est.low, s_est.high],
            "finding": finding,
        }
    return {
        "per_hop": per_hop,
        "finding": combine([v["finding"] for v in per_hop.values()]),
        "resolved": True,
    }
