from __future__ import annotations

import pytest
import torch

from ropeproof.machinery._errors import InputError
from ropeproof.verify.studies.training._config import SMALL
from ropeproof.verify.studies.training._data import TRAIN, TaskEncoder
from ropeproof.verify.studies.training._dynamics import attention_entropy, layer_dynamics
from ropeproof.verify.studies.training._evaluation import (
    ablated_accuracy_per_hop,
    accuracy_per_hop,
    predictions,
)
from ropeproof.verify.studies.training._model import build_model

pytest.importorskip("transformers")

CFG = SMALL.with_overrides(steps=1)


def _uniform_model() -> torch.nn.Module:
    # zero queries: every logit is 0, so every attention row is uniform over the visible positions
    model = build_model(CFG, TaskEncoder("number").vocab_size, seed=0).eval()
    with torch.no_grad():
        for block in model.transformer.h:
            block.attn.q_proj.weight.zero_()
    return model


def test_uniform_attention_has_entropy_one_and_scores_one_one() -> None:
    ids = TaskEncoder("number").draw(6, 0, TRAIN, 0).input_ids
    model = _uniform_model()
    # float32 softmax of equal logits: each a_j = 1/17 to ~1 ulp, so H / log 17 = 1 to ~1e-6
    assert attention_entropy(model, ids) == pytest.approx([1.0] * CFG.n_layer, abs=1e-5)
    dyn = layer_dynamics(model, ids)
    # a uniform row is unchanged by any swap: both cosine similarities are exactly 1 up to float32
    assert dyn["S_pos"] == pytest.approx([1.0] * CFG.n_layer, abs=1e-5)
    assert dyn["S_sym"] == pytest.approx([1.0] * CFG.n_layer, abs=1e-5)


def test_ablation_equals_a_zero_output_projection() -> None:
    import copy

    enc = TaskEncoder("letter")
    model = build_model(CFG, enc.vocab_size, seed=1).eval()
    with torch.no_grad():  # make the last layer's attention matter for the readout
        model.transformer.h[-1].attn.out_proj.weight.mul_(100.0)
    batch = enc.draw(64, 0, TRAIN, 0)
    full = accuracy_per_hop(model, batch)
    hooked = ablated_accuracy_per_hop(model, batch, CFG.n_layer - 1)
    # GPT-J's attention output is out_proj(...) without bias: zeroing its weight is the same ablation
    zeroed = copy.deepcopy(model)
    with torch.no_grad():
        zeroed.transformer.h[-1].attn.out_proj.weight.zero_()
    assert hooked == accuracy_per_hop(zeroed, batch)
    assert not predictions(zeroed, batch.input_ids).equal(predictions(model, batch.input_ids))
    assert accuracy_per_hop(model, batch) == full  # the hook is removed afterwards
    with pytest.raises(InputError, match="layer="):
        ablated_accuracy_per_hop(model, batch, CFG.n_layer)


def test_decided_accuracies_grow_until_the_interval_decides() -> None:
    from ropeproof.verify.measure._statistics import confidence_sequence, look_sizes
    from ropeproof.verify.studies.training._evaluation import decided_accuracy_per_hop

    model = _uniform_model()  # uniform attention on a random model: nowhere near 0.95, nor its ablation
    rows = decided_accuracy_per_hop(model, "number", 0, 0.95, start=8, cap=64)
    for row in rows.values():
        # the running interval lies inside the confidence sequence at the final size
        final = confidence_sequence(row["correct"], row["count"])
        assert final.low <= row["ci_low"] <= row["accuracy"] <= row["ci_high"] <= final.high
        assert row["interval"].startswith("beta-binomial confidence sequence")
        assert row["side"] == ("below" if row["ci_high"] < 0.95 else "undecided")
    assert sum(r["count"] for r in rows.values()) in look_sizes(8, 64, 240)
    ablated = decided_accuracy_per_hop(model, "number", 0, 0.95, start=8, cap=8, ablate=CFG.n_layer - 1)
    assert sum(r["count"] for r in ablated.values()) == 8
    both = decided_accuracy_per_hop(model, "number", 0, 0.95, start=8, cap=8, ablate=[0, CFG.n_layer - 1])
    assert sum(r["count"] for r in both.values()) == 8
    with pytest.raises(InputError, match="ablate="):
        decided_accuracy_per_hop(model, "number", 0, 0.95, start=8, cap=8, ablate=CFG.n_layer)


def test_decided_accuracies_stop_at_the_first_forward_batch_that_decides_every_hop_count() -> None:
    """After the first look, accuracies are looked at after every forward batch (240 prompts of 17
    tokens): the prompts drawn are the first look size at which every hop count's own answers decide the
    bar (:func:`~ropeproof.verify.measure._statistics.first_decided`), no later."""
    from ropeproof.verify.measure._statistics import first_decided, look_sizes
    from ropeproof.verify.studies.training._data import concatenate
    from ropeproof.verify.studies.training._evaluation import (
        decided_accuracy_per_hop,
        forward_batch,
        last_answers,
        validation_chunk,
    )
    from ropeproof.verify.studies.training._shipped import load_shipped

    shipped = load_shipped("letter", config="small", seed=0)
    model, seed = shipped.model, shipped.record.seed
    batch = concatenate([validation_chunk("letter", seed, k) for k in range(4)])
    right = (last_answers(model, batch.input_ids) == batch.answers).numpy()
    hops = batch.hops.numpy()
    sizes = look_sizes(8, 800, forward_batch(17))
    want = next(
        size
        for size in sizes
        if all(
            (k := first_decided(right[:size][hops[:size] == h], 0.9)) is not None
            and k <= int((hops[:size] == h).sum())
            for h in (1, 2, 3, 4)
        )
    )
    rows = decided_accuracy_per_hop(model, "letter", seed, 0.9, start=8, cap=800)
    assert sum(r["count"] for r in rows.values()) == want and want > 8
    assert all(r["side"] == "above" for r in rows.values())
