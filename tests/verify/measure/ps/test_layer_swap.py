"""The generic layer-input swap (no transformers needed): a toy adapter whose block is a per-token
RMS norm followed by several RopeAttention heads, against each head scored on its own."""

from __future__ import annotations

import pytest
import torch

from ropeproof.machinery._errors import InputError
from ropeproof.theory._rope_spec import RopeSpec
from ropeproof.verify.kernel._random_heads import random_head
from ropeproof.verify.measure.ps._layer_swap import LayerSwapAdapter, LayerSwapScores, layer_swap_scores
from ropeproof.verify.measure.ps._scores import last_row_fn, ps_scores

TOL = 1e-12  # the same rows by the same arithmetic; only batch composition and summation order differ


class ToyModel:
    """Embedding lookup, then per block: RMS norm (per token) and ``H`` heads reading it."""

    def __init__(self, n_heads: int = 3, d_model: int = 6, vocab: int = 9, seed: int = 0) -> None:
        g = torch.Generator().manual_seed(seed)
        self.embed = torch.randn(vocab, d_model, generator=g, dtype=torch.float64)
        self.blocks = [
            [random_head(RopeSpec(8, freqs=[1.3 / (h + 1), 0.2, 0.0, 2.1]), d_model, 10 * layer + h, 1.4)
             for h in range(n_heads)]
            for layer in range(2)
        ]  # fmt: skip
        self.n_layers, self.n_heads = 2, n_heads
        self.softmax_dtype: torch.dtype | None = torch.float64
        self.calls = 0

    @staticmethod
    def norm(h: torch.Tensor) -> torch.Tensor:
        return h / h.pow(2).mean(-1, keepdim=True).sqrt()

    def layer_inputs(self, tokens: torch.Tensor, layer: int) -> torch.Tensor:
        h = self.embed[tokens]
        for block in self.blocks[:layer]:  # a residual update per earlier block
            h = h + torch.stack([head(self.norm(h)).output for head in block]).sum(0)
        return h

    def attention_rows(self, hidden: torch.Tensor, layer: int) -> torch.Tensor:
        self.calls += 1
        normed = self.norm(hidden)
        return torch.stack([last_row_fn(head)(normed) for head in self.blocks[layer]], 1)

    def bytes_per_sequence(self, n: int, layer: int) -> int:
        return 40 * n * 8 * self.n_heads


def test_toy_adapter_is_an_adapter() -> None:
    assert isinstance(ToyModel(), LayerSwapAdapter)


@pytest.mark.parametrize(("layer", "block_size"), [(0, 1), (1, 1), (1, 3)])
def test_each_head_equals_its_own_scores(layer: int, block_size: int) -> None:
    """The norm acts per token, so swapping hidden states swaps the normed ones: head h's layer
    scores are ps_scores of head h on the normed block input."""
    model = ToyModel()
    tokens = torch.randint(0, 9, (4, 15), generator=torch.Generator().manual_seed(3))
    sc = layer_swap_scores(model, tokens, layer, block_size=block_size, memory_budget=200_000)
    assert isinstance(sc, LayerSwapScores) and sc.layer == layer and sc.heads == (0, 1, 2)
    normed = model.norm(model.layer_inputs(tokens, layer))
    for h, head in enumerate(model.blocks[layer]):
        alone = ps_scores(last_row_fn(head), normed, block_size=block_size)
        assert torch.allclose(sc.head(h).s_pos, alone.s_pos, rtol=0, atol=TOL)
        assert torch.allclose(sc.s_sym[h], alone.s_sym, rtol=0, atol=TOL)
    assert sc.S_pos.shape == (3,) and sc.skipped_weight.shape == (3, 4)
    assert float(sc.skipped_weight.max()) == 0.0
    summary = sc.to_dict()
    assert summary["layer"] == layer and set(summary["heads"]) == {"0", "1", "2"}


def test_one_block_run_serves_every_head_and_chunks_follow_the_budget() -> None:
    model = ToyModel()
    tokens = torch.randint(0, 9, (2, 10), generator=torch.Generator().manual_seed(4))
    sc = layer_swap_scores(model, tokens, 1, heads=[2, 0], max_skipped_weight=None, per_swap=True)
    assert model.calls == 2  # the unswapped rows, then all 2 x 36 swapped copies in one chunk
    assert sc.heads == (2, 0) and sc.scores[0].pos is not None and sc.scores[0].pos.shape == (2, 36)
    model.calls = 0
    per_seq = model.bytes_per_sequence(10, 1) + 2 * 10 * 6 * 8 + 6 * 2 * 10 * 8
    small = layer_swap_scores(
        model, tokens, 1, heads=[2, 0], max_skipped_weight=None, memory_budget=20 * per_seq
    )
    assert model.calls == 1 + 8  # 72 swapped copies, 10 per call
    assert torch.allclose(small.s_pos, sc.s_pos, rtol=0, atol=TOL)


def test_errors() -> None:
    model = ToyModel()
    tokens = torch.zeros(2, 6, dtype=torch.int64)
    with pytest.raises(InputError, match="layer"):
        layer_swap_scores(model, tokens, -1)
    with pytest.raises(InputError, match="heads"):
        layer_swap_scores(model, tokens, 0, heads="ab")
    with pytest.raises(InputError, match="heads"):
        layer_swap_scores(model, tokens, 0, heads=[])
    with pytest.raises(InputError, match="tokens must have shape"):
        layer_swap_scores(model, torch.zeros(5, dtype=torch.int64), 0)
    with pytest.raises(InputError, match="LayerSwapAdapter"):
        layer_swap_scores(object(), tokens, 0)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="was not scored"):
        layer_swap_scores(model, tokens, 0, heads=[1]).head(0)
