"""TransformerLens' names: every key an export writes is a key of a real ``HookedTransformer``, the bias
test matches its biases and nothing else, and the layout map runs both ways."""

from __future__ import annotations

import pytest

from ropeproof.verify.interop.tl import _converter as tl_names


def test_the_layout_map_runs_both_ways() -> None:
    class Cfg:
        rotary_adjacent_pairs = True

    assert tl_names.layout_of(Cfg()) == "interleaved" and tl_names.layout_of(object()) == "half"
    for layout in ("interleaved", "half"):

        class Back:
            rotary_adjacent_pairs = tl_names.adjacent_pairs(layout)

        assert tl_names.layout_of(Back()) == layout


@pytest.mark.xdist_group("tl")  # transformer_lens imported by one pytest worker, not both
def test_keys_are_the_models_own() -> None:
    pytest.importorskip("transformer_lens")
    from ropeproof.verify.interop.tl._library import build_hooked_transformer, require_transformer_lens

    tl = require_transformer_lens()
    cfg = tl.HookedTransformerConfig(
        n_layers=2,
        d_model=8,
        n_ctx=16,
        d_head=4,
        n_heads=2,
        d_vocab=5,
        attn_only=True,
        positional_embedding_type="rotary",
        rotary_dim=4,
        normalization_type=None,
        device="cpu",
    )
    model = build_hooked_transformer(cfg)
    state = model.state_dict()
    keys = {tl_names.EMBED_KEY, tl_names.UNEMBED_KEY}
    keys |= {tl_names.attention_key(layer, role) for layer in (0, 1) for role in tl_names.WEIGHTS}
    assert keys <= set(state), sorted(keys - set(state))
    assert tl_names.attention_key(1, "o") == "blocks.1.attn.W_O"
    biases = {k for k in state if tl_names.is_bias_key(k)}
    assert biases == {f"blocks.{i}.attn.b_{n}" for i in (0, 1) for n in "QKVO"} | {"unembed.b_U"}
    assert tl_names.attention(model, 1) is model.blocks[1].attn
    assert tl_names.input_norm(model, 0) is model.blocks[0].ln1 and tl_names.blocks(model) is model.blocks
    assert tl_names.embedding(model) is model.embed.W_E and tl_names.unembedding(model) is model.unembed.W_U
    assert all(hasattr(model.blocks[0].attn, b) for b in tl_names.BIASES)
    assert tl_names.layout_of(cfg) == "half"
