"""The LLaMA converter: ``rope_theta`` wherever a config keeps it and the RoPE variants it refuses, GQA in
the head geometry, the config it builds for an export, and RMSNorm evaluated in float64 from its formula."""

from __future__ import annotations

import math

import pytest
import torch

from ropeproof.theory._rope_spec import RopeSpec
from ropeproof.verify.interop._errors import HeadImportError
from ropeproof.verify.interop.hf._converters import converter
from ropeproof.verify.interop.hf._llama import LlamaConverter
from ropeproof.verify.interop.hf._norm_bypass import NORM_EPS

CONV = converter("llama")
BASE = {"model_type": "llama", "hidden_size": 32, "num_attention_heads": 4, "num_key_value_heads": 2}


def test_rope_theta_wherever_the_config_keeps_it() -> None:
    assert isinstance(CONV, LlamaConverter)
    assert CONV.rope_theta({"rope_theta": 500}) == 500.0
    assert CONV.rope_theta({"rope_parameters": {"rope_type": "default", "rope_theta": 16.0}}) == 16.0
    assert CONV.rope_theta({"rope_theta": {"__float__": "inf"}}) == math.inf  # JSON's way to write inf
    refused = {
        "per-layer-type RoPE": {"rope_parameters": {"full_attention": {"rope_theta": 1e4}}},
        "rope_type='yarn'": {"rope_theta": 1e4, "rope_scaling": {"rope_type": "yarn", "factor": 4}},
        "rope_type='linear'": {"rope_theta": 1e4, "rope_scaling": {"type": "linear", "factor": 2}},
        "partial_rotary_factor=0.5": {"rope_theta": 1e4, "partial_rotary_factor": 0.5},
        "no rope_theta": {},
        r"rope_theta=1\.0 must be > 0 and != 1": {"rope_theta": 1.0},
        r"rope_theta=-2\.0 must be > 0": {"rope_theta": -2.0},
    }
    for message, config in refused.items():
        with pytest.raises(HeadImportError, match=message):
            CONV.rope_theta(config)


def test_geometry_with_gqa() -> None:
    geo = CONV.head_geometry(BASE | {"rope_theta": 500.0})
    assert (geo.hidden, geo.n_heads, geo.n_kv, geo.head_dim) == (32, 4, 2, 8)
    assert geo.spec == RopeSpec(8, 8, 500.0, layout="half")
    wide = CONV.head_geometry(BASE | {"rope_theta": 500.0, "head_dim": 16})  # head_dim apart from the width
    assert wide.head_dim == 16
    inf = CONV.head_geometry(BASE | {"rope_theta": math.inf})
    assert inf.spec.plane_freqs.tolist() == [1.0, 0.0, 0.0, 0.0]
    with pytest.raises(HeadImportError, match="not a multiple of num_key_value_heads=3"):
        CONV.head_geometry(BASE | {"num_key_value_heads": 3, "rope_theta": 500.0})
    with pytest.raises(HeadImportError, match="head_dim=7 must be even"):
        CONV.head_geometry(BASE | {"head_dim": 7, "rope_theta": 500.0})


def test_rms_norm_from_its_formula_in_float64() -> None:
    class RMSNorm(torch.nn.Module):  # what the converter reads: a weight and variance_epsilon
        def __init__(self) -> None:
            super().__init__()
            self.weight = torch.nn.Parameter(torch.tensor([0.5, 2.0, 1.0, 1.5]))
            self.variance_epsilon = 1e-6

    x = torch.tensor([[1.0, -2.0, 3.0, 0.5]], dtype=torch.float64)
    rms = math.sqrt((1 + 4 + 9 + 0.25) / 4 + 1e-6)
    expected = [[0.5 / rms, -4.0 / rms, 3.0 / rms, 0.75 / rms]]
    got = CONV.evaluate_norm(RMSNorm(), x)
    assert got.dtype == torch.float64 and torch.allclose(got, torch.tensor(expected, dtype=torch.float64))
    assert CONV.norm_dtype(torch.float64) == torch.float32  # the module upcasts to float32
    assert CONV.position_table_size(64, 8) == 0 and not CONV.facts.norm_subtracts_mean


def test_export_config(compiled) -> None:
    transformers = pytest.importorskip("transformers")
    pl = CONV.place_head(compiled("reflexive"))
    assert pl.arch == "llama" and (pl.head_dim, pl.rope_theta) == (8, 16.0)
    config = CONV.export_config(transformers, pl, 2, 11, 64, "eager", None)
    assert isinstance(config, transformers.LlamaConfig)
    assert (config.hidden_size, config.head_dim, config.num_hidden_layers) == (pl.hidden_size, 8, 2)
    assert (config.num_attention_heads, config.num_key_value_heads, config.rms_norm_eps) == (1, 1, NORM_EPS)
    assert CONV.rope_theta(config) == 16.0 and config.max_position_embeddings == 64
    assert CONV.model_class(transformers) is transformers.LlamaForCausalLM
