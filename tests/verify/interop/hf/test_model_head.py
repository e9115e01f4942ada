"""One head of a GPT-J / LLaMA model as a CompiledHead with a vocabulary: the layer's input per token
against the norm's formula, evaluated independently here in float64."""

from __future__ import annotations

import numpy as np
import pytest
import torch

transformers = pytest.importorskip("transformers")

from ropeproof.verify.interop.hf._head_import import import_model_head  # noqa: E402
from ropeproof.verify.interop.hf._model_head import compiled_from_hf_model  # noqa: E402


def _seeded(build):
    state = torch.random.get_rng_state()
    torch.manual_seed(0)
    try:
        return build()
    finally:
        torch.random.set_rng_state(state)


def test_gptj_layer_input_is_layer_norm_of_the_embedding() -> None:
    config = transformers.GPTJConfig(
        vocab_size=10, n_embd=16, n_head=2, n_layer=2, rotary_dim=4, n_positions=32
    )
    model = _seeded(lambda: transformers.GPTJForCausalLM(config)).eval()
    with torch.no_grad():  # a non-trivial norm: random gain and bias
        model.transformer.h[1].ln_1.weight.uniform_(0.5, 1.5)
        model.transformer.h[1].ln_1.bias.uniform_(-0.2, 0.2)
    head = compiled_from_hf_model(model, 1, 1, [2, 4, 6])
    ln = model.transformer.h[1].ln_1
    x = model.transformer.wte.weight.detach().double()[[2, 4, 6]]
    mean, var = x.mean(-1, keepdim=True), x.var(-1, unbiased=False, keepdim=True)
    expected = (x - mean) / torch.sqrt(var + ln.eps) * ln.weight.double() + ln.bias.double()
    assert np.allclose(
        head.W_E, expected.detach().numpy(), rtol=0, atol=1e-14
    )  # float64 rounding of O(1) values
    assert head.tokens == ("2", "4", "6") and head.spec.layout == "interleaved" and head.spec.rotary_dim == 4
    assert np.array_equal(head.W_U, model.lm_head.weight.detach().double()[[2, 4, 6]].T.numpy())
    ref = import_model_head(model, "gptj", 1, 1, device="cpu")
    assert np.array_equal(head.W_Q, ref.W_Q.numpy()) and head.scale == ref.scale == 1.0
    assert "proxy" in head.metadata["imported"]["embedding"]  # layer 1 reads a context-dependent stream


def test_llama_rms_norm_is_evaluated_in_float64() -> None:
    """transformers' LlamaRMSNorm upcasts to float32 even in a float64 model; the import evaluates
    the formula in float64 instead, which differs from the module by float32 rounding only."""
    config = transformers.LlamaConfig(
        vocab_size=10, hidden_size=16, intermediate_size=8, num_hidden_layers=1, num_attention_heads=2,
        max_position_embeddings=32,
    )  # fmt: skip
    model = _seeded(lambda: transformers.LlamaForCausalLM(config)).double().eval()
    with torch.no_grad():
        model.model.layers[0].input_layernorm.weight.uniform_(0.5, 1.5)
    head = compiled_from_hf_model(model, 0, 0, [1, 3])
    norm = model.model.layers[0].input_layernorm
    x = model.model.embed_tokens.weight.detach()[[1, 3]]
    with torch.no_grad():
        formula = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + norm.variance_epsilon) * norm.weight
    assert np.allclose(head.W_E, formula.detach().numpy(), rtol=0, atol=1e-14)
    with torch.no_grad():
        module = norm(x[None])[0]
    gap = float((module - formula).abs().max())
    assert 0 < gap < 1e-5  # the module's float32 step: nonzero, at float32 rounding of O(1) values
    assert head.metadata["imported"]["embedding"].endswith("(exact)")
