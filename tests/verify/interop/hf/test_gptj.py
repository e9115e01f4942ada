"""The GPT-J converter: the head geometry it reads from a config (object or dict, either width name), the
config it builds for an export, and where it places a head (the LayerNorm bypass's spare dim included)."""

from __future__ import annotations

import pytest

from ropeproof.theory._architectures import GPTJ_BASE
from ropeproof.theory._rope_spec import RopeSpec
from ropeproof.verify.interop._errors import HeadImportError
from ropeproof.verify.interop.hf._converters import converter
from ropeproof.verify.interop.hf._gptj import GPTJConverter
from ropeproof.verify.interop.hf._norm_bypass import NORM_EPS

CONV = converter("gptj")


def test_geometry_from_a_dict_config() -> None:
    assert isinstance(CONV, GPTJConverter)
    geo = CONV.head_geometry({"model_type": "gptj", "n_embd": 32, "n_head": 4, "rotary_dim": 4})
    assert (geo.hidden, geo.n_heads, geo.n_kv, geo.head_dim) == (32, 4, 4, 8)
    assert geo.spec == RopeSpec(8, 4, GPTJ_BASE, layout="interleaved")
    # the attribute names of GPTJConfig's attribute map work in a dict too; rotary_dim None: n_embd
    one = CONV.head_geometry({"hidden_size": 16, "num_attention_heads": 1})
    assert one.spec == RopeSpec(16, 16, GPTJ_BASE, layout="interleaved")
    with pytest.raises(HeadImportError, match="n_embd=30 is not divisible by n_head=4"):
        CONV.head_geometry({"n_embd": 30, "n_head": 4})
    whole = r"rotary_dim=32 \(None means n_embd\) must be even and <= head_dim=n_embd/n_head=8"
    with pytest.raises(HeadImportError, match=whole):
        CONV.head_geometry({"n_embd": 32, "n_head": 4})
    with pytest.raises(HeadImportError, match="model_type='llama' does not match arch='gptj'"):
        CONV.head_geometry({"model_type": "llama", "n_embd": 8, "n_head": 1})


def test_the_numerics_it_states() -> None:
    import torch

    assert CONV.norm_dtype(torch.float64) == torch.float64  # LayerNorm runs in the model's dtype
    assert CONV.position_table_size(64, 8) == 512  # its sin/cos table
    assert CONV.facts.norm_subtracts_mean  # hence the spare dim


def test_export_config_and_head_placement(compiled) -> None:
    transformers = pytest.importorskip("transformers")
    head = compiled("index")
    pl = CONV.place_head(head)
    assert pl.arch == "gptj" and pl.hidden_size == pl.head_dim >= 2 * head.d_model + 1  # the spare dim
    config = CONV.export_config(transformers, pl, 3, 11, 64, "eager", 10)
    assert isinstance(config, transformers.GPTJConfig)
    assert (config.n_embd, config.n_head, config.n_layer, config.rotary_dim) == (pl.hidden_size, 1, 3, 128)
    assert (config.n_positions, config.layer_norm_epsilon, config.pad_token_id) == (64, NORM_EPS, 10)
    assert config.tie_word_embeddings is False and config.bos_token_id is None
    assert CONV.model_class(transformers) is transformers.GPTJForCausalLM
    model = CONV.model_class(transformers)(config)
    assert not CONV.rotary_inside_attention(CONV.attention(CONV.block(model, 0)))

    class Legacy:  # transformers' older GPTJAttention kept its own sin/cos table
        embed_positions = None

    assert CONV.rotary_inside_attention(Legacy())
