"""The last-token forward the trained-model claims run: HF's GPT-J logits at the last position bit for bit
(both attention implementations, ablations, batches of every size, started from cached hidden states),
and decided accuracies, length rows and layer-swap rows that do not change with it."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from ropeproof.machinery._errors import InputError
from ropeproof.verify.studies.training._lengths import encoded, length_model

pytest.importorskip("transformers")


def _hf_logits(model: Any, ids: torch.Tensor, zero: tuple[int, ...] = ()) -> torch.Tensor:
    """HF's forward with the attention outputs of ``zero`` zeroed by hooks (the claims' former path)."""

    def zeroed(module: Any, args: Any, output: Any) -> Any:
        return (torch.zeros_like(output[0]), *output[1:])

    handles = [model.transformer.h[z].attn.register_forward_hook(zeroed) for z in zero]
    try:
        with torch.inference_mode():
            return model(input_ids=ids, use_cache=False, logits_to_keep=1).logits[:, -1]
    finally:
        for h in handles:
            h.remove()


def _models() -> list[tuple[str, Any]]:
    from ropeproof.verify.studies.training._shipped import load_shipped, shipped_path

    return [
        ("eager", load_shipped("letter", config="small", seed=0).model),
        ("sdpa", length_model(shipped_path("number", "small", 1))),
    ]


@pytest.mark.parametrize("which", [0, 1])
def test_logits_are_hf_logits_bit_for_bit(which: int) -> None:
    """On 6 inputs at 17 and 70 tokens, LastToken's logits equal HF's exactly, for every batch size 1-6,
    with no block, the first, a middle and the last block's attention zeroed, and started from the hidden
    states entering the lowest zeroed block."""
    from ropeproof.verify.studies.training._last_token import LastToken

    kind, model = _models()[which]
    task = "letter" if kind == "eager" else "number"
    forward = LastToken(model)
    assert forward.impl == kind and forward.layers == model.config.n_layer
    for n in (17, 70):
        ids = encoded(task, n, 0, 6, "distractors", 0, (1, 2, 3, 4)).input_ids
        for zero in [(), (0,), (2,), (forward.layers - 1,), (1, 3)]:
            want = _hf_logits(model, ids, zero)
            assert torch.equal(forward.logits(ids, zero), want), (kind, n, zero)
            if zero:
                start = min(zero)
                got = forward.logits(zero=zero, states=forward.states(ids, start), start=start)
                assert torch.equal(got, want), (kind, n, zero, "from states")
        for b in range(1, 7):
            assert torch.equal(forward.logits(ids[:b]), _hf_logits(model, ids[:b])), (kind, n, b)
    states = forward.states(ids, 0)
    assert torch.equal(forward.states_after(states, 0), forward.states(ids, 1))


def test_bad_arguments_are_refused() -> None:
    from ropeproof.verify.studies.training._last_token import LastToken

    _, model = _models()[0]
    forward = LastToken(model)
    ids = encoded("letter", 17, 0, 2, "distractors", 0, (1,)).input_ids
    with pytest.raises(InputError, match="ablate=9"):
        forward.logits(ids, zero=(9,))
    with pytest.raises(InputError, match="exactly one"):
        forward.logits()
    with pytest.raises(InputError, match="start=2"):
        forward.logits(zero=(1,), states=forward.states(ids, 2), start=2)
    with pytest.raises(InputError, match="layer=6"):
        forward.states(ids, 6)
    with pytest.raises(InputError, match="GPTJForCausalLM"):
        LastToken(torch.nn.Linear(2, 2))


def test_decided_accuracy_from_cached_states_is_the_hooked_forward() -> None:
    """decided_accuracy_per_hop with an ablation gives the same rows with and without the cached hidden
    states, and the same answers as HF's forward with the hook."""
    from ropeproof.verify.studies.training._evaluation import (
        decided_accuracy_per_hop,
        last_answers,
        validation_chunk,
    )
    from ropeproof.verify.studies.training._last_token import LastToken

    _, model = _models()[0]
    forward = LastToken(model)
    cache: dict[int, list[torch.Tensor]] = {}

    def states(chunk: int, layer: int) -> torch.Tensor:
        if chunk not in cache:
            ids = validation_chunk("letter", 0, chunk).input_ids
            cache[chunk] = [forward.states(ids, k) for k in range(forward.layers)]
        return cache[chunk][layer]

    plain = decided_accuracy_per_hop(model, "letter", 0, 0.5, 100, 400, ablate=[2])
    cached = decided_accuracy_per_hop(model, "letter", 0, 0.5, 100, 400, ablate=[2], states=states)
    assert plain == cached and cache
    ids = validation_chunk("letter", 0, 0).input_ids[:40]
    assert torch.equal(last_answers(model, ids, (2,)), _hf_logits(model, ids, (2,)).argmax(-1))


def test_layer_swap_rows_are_the_whole_block_rows() -> None:
    """The GPT-J layer-swap path (LayerNorm, q, k and the eager weights only; given block inputs) gives the
    rows and scores of re-running the whole block (forced by a hook on it), bit for bit."""
    from ropeproof.verify.interop.hf._layer_swap import HFLayerSwap, hf_layer_swap_scores
    from ropeproof.verify.studies.training._last_token import LastToken

    _, model = _models()[0]
    ids = encoded("letter", 17, 0, 8, "distractors", 0, (1, 2, 3, 4)).input_ids
    layer = 2
    adapter = HFLayerSwap(model)
    hidden = adapter.layer_inputs(ids, layer)
    assert torch.equal(hidden, LastToken(model).states(ids, layer))
    swapped = hidden.flip(1).contiguous()
    fast = adapter.attention_rows(swapped, layer)
    handle = model.transformer.h[layer].register_forward_hook(lambda m, a, o: None)
    try:
        slow = adapter.attention_rows(swapped, layer)
        slow_scores = hf_layer_swap_scores(model, ids, layer)
    finally:
        handle.remove()
    assert torch.equal(fast, slow)
    given = hf_layer_swap_scores(model, ids, layer, inputs=hidden)
    assert torch.equal(given.s_pos, slow_scores.s_pos) and torch.equal(given.s_sym, slow_scores.s_sym)
