"""The readings of the head observations on the shipped small models: per-prompt purity counts what the
per-prompt scores say, the functional reading zeroes exactly the layers the per-layer reading does not
find pure, single-layer ablations and the last layer's per-hop label follow their rows."""

from __future__ import annotations

import dataclasses

import pytest

from ropeproof.machinery._result_store import ResultStore
from ropeproof.verify.studies.training import _readings as readings
from ropeproof.verify.studies.training._observations import CONTRADICTS, SHOWS, UNDECIDED, is_label
from ropeproof.verify.studies.training._shipped_results import PROMPT_CHUNK

pytest.importorskip("transformers")


def test_per_prompt_purity_counts_the_pure_prompts() -> None:
    from ropeproof.verify.interop.hf._layer_swap import hf_layer_swap_scores
    from ropeproof.verify.studies.training._data import SCORING, TaskEncoder
    from ropeproof.verify.studies.training._shipped import load_shipped
    from ropeproof.verify.studies.training._shipped_results import PROMPT_SCORES

    store = ResultStore()
    shipped = load_shipped("number")
    batch = TaskEncoder("number").draw(PROMPT_CHUNK, shipped.record.seed, SCORING, 0)
    direct = hf_layer_swap_scores(shipped.model, batch.input_ids, 1)
    stored = store.get(PROMPT_SCORES, task="number", config="small", seed=0, layer=1, chunk=0)
    assert stored["s_pos"] == pytest.approx(direct.s_pos[0].double().tolist(), abs=0)
    assert stored["hops"] == batch.hops.tolist()
    row = readings.per_prompt_purity(store, "number", "small", 0, 1)
    chunks = row["prompts"] // PROMPT_CHUNK
    pure = sum(
        abs(p - s) >= 0.5
        for c in range(chunks)
        for p, s in zip(
            *(store.get(PROMPT_SCORES, task="number", config="small", seed=0, layer=1, chunk=c)[k]
              for k in ("s_pos", "s_sym")),
            strict=True,
        )
    )  # fmt: skip
    assert row["pure"] == pure and row["share"] == pure / row["prompts"]
    assert row["ci_low"] <= row["share"] <= row["ci_high"]
    assert row["finding"] == {"above": SHOWS, "below": CONTRADICTS, "undecided": UNDECIDED}[row["side"]]
    assert row["side"] != "undecided" or row["prompts"] >= readings.PROMPT_CAP


def test_functional_reading_zeroes_the_layers_not_found_pure() -> None:
    from ropeproof.verify.studies.training._evaluation import decided_accuracy_per_hop
    from ropeproof.verify.studies.training._shipped import load_shipped

    store = ResultStore()
    shipped = load_shipped("letter")
    record = shipped.record
    best = next(e for e in record.evaluations if e["step"] == record.best_step)
    dyn = dict(best["dynamics"])
    # make layers 1 and 3 decidedly impure, every other layer decidedly pure
    dyn["S_pos_ci"] = [[0.4, 0.5] if i in (1, 3) else [0.0, 0.1] for i in range(len(dyn["S_pos_ci"]))]
    dyn["S_sym_ci"] = [[0.4, 0.5] if i in (1, 3) else [0.9, 1.0] for i in range(len(dyn["S_sym_ci"]))]
    evaluations = [({**e, "dynamics": dyn} if e is best else e) for e in record.evaluations]
    fake = dataclasses.replace(record, evaluations=evaluations)
    assert readings.impure_layers(fake) == [1, 3]
    found = readings.functional_purity(store, "letter", "small", 0, fake)
    direct = decided_accuracy_per_hop(shipped.model, "letter", record.seed, 0.9, 400, 2400, ablate=[1, 3])
    assert found["impure_layers"] == [1, 3] and found["rows"] == direct
    sides = {r["side"] for r in direct.values()}
    assert found["finding"] == (
        SHOWS if sides == {"above"} else CONTRADICTS if "below" in sides else UNDECIDED
    )


def test_single_layer_ablations_and_the_last_layer_per_hop() -> None:
    store = ResultStore()
    found = readings.single_layer_ablations(store, "small", 0, 6)
    accuracies = [(r["accuracy"], int(k)) for k, rows in found["layers"].items() for r in rows.values()]
    worst = found["worst"]
    assert worst["accuracy"] == min(a for a, _ in accuracies) and worst["count"] > 0
    assert worst["ci_low"] <= worst["accuracy"] == worst["correct"] / worst["count"] <= worst["ci_high"]
    others = [r for k, rows in found["layers"].items() for r in rows.values() if k != str(worst["layer"])]
    named = worst["layer"] != readings.UNDECIDED_WHICH
    assert named == all(worst["ci_high"] < r["ci_low"] for r in others)
    for layer in found["necessary"]:
        assert all(r["side"] == "below" for r in found["layers"][str(layer)].values())
    assert (found["finding"] == SHOWS) == bool(found["necessary"])
    # every ablation looks first at SINGLE_LAYER_START prompts; those decided there stop at it
    used = [sum(r["count"] for r in rows.values()) for rows in found["layers"].values()]
    assert min(used) == readings.SINGLE_LAYER_START
    last = readings.last_layer_symbolic_per_hop(store, "small", 0, 6)
    assert sum(v["prompts"] for v in last["per_hop"].values()) == 2 * PROMPT_CHUNK
    for v in last["per_hop"].values():
        assert v["finding"] == is_label(v["S_pos_ci"], v["S_sym_ci"], "symbolic")
        assert v["S_pos_ci"][0] <= v["S_pos"] <= v["S_pos_ci"][1]


def _share(layer: int, share: float, low: float, high: float) -> dict:
    pure = round(50 * share)
    return {"layer": layer, "share": share, "pure": pure, "prompts": 50, "ci_low": low, "ci_high": high}


def test_a_worst_layer_is_named_only_when_decided_against_the_others() -> None:
    """The lowest share keeps its layer only when its interval lies below every other layer's; otherwise
    it is 'undecided which', with its count and interval either way, and the lowest lower end over all."""
    rows = [_share(0, 0.86, 0.70, 0.95), _share(5, 0.88, 0.72, 0.96), _share(2, 0.99, 0.9, 1.0)]
    worst = readings.worst_of(rows, "share", "layer")
    assert worst is not None and worst["layer"] == readings.UNDECIDED_WHICH  # 0 against 5: intervals overlap
    assert (worst["share"], worst["pure"], worst["prompts"]) == (0.86, 43, 50)
    assert (worst["ci_low"], worst["ci_high"], worst["lowest_ci_low"]) == (0.70, 0.95, 0.70)
    rows[:2] = [_share(0, 0.8, 0.7, 0.85), _share(5, 0.99, 0.96, 1.0)]  # 0 now below both others
    assert readings.worst_of(rows, "share", "layer")["layer"] == 0
    assert readings.worst_of([], "share", "layer") is None
