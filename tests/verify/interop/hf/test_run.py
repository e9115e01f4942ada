"""Running HF attention modules: the layer's attention module, the softmax inputs recorded (and softmax
restored afterwards, also on an error), and what is refused."""

from __future__ import annotations

import pytest
import torch

transformers = pytest.importorskip("transformers")

from ropeproof.verify.interop._errors import HeadImportError  # noqa: E402
from ropeproof.verify.interop.hf._run import (  # noqa: E402
    attention_module,
    capture_softmax_inputs,
    hf_attention_forward,
)


@pytest.mark.parametrize("arch", ["gptj", "llama"])
def test_attention_module_and_its_run(arch: str, random_model) -> None:
    model = random_model(arch)
    assert attention_module(model, arch, 1) is not attention_module(model, arch, 0)
    assert attention_module(model.base_model, arch, 1) is attention_module(model, arch, 1)  # a base model
    with pytest.raises(HeadImportError, match=r"layer=2 is out of range; the model has layers 0\.\.1"):
        attention_module(model, arch, 2)
    x = torch.randn(2, 5, 32, generator=torch.Generator().manual_seed(0))
    res = hf_attention_forward(model, arch, x, layer=1)
    assert res.scores.shape == res.weights.shape == (2, 4, 5, 5) and res.output.shape == (2, 5, 32)
    causal = torch.ones(5, 5, dtype=torch.bool).tril()
    assert torch.all(res.scores[..., ~causal] < -1e30)  # the additive mask, as eager attention sees it
    assert torch.allclose(res.weights, torch.softmax(res.scores.float(), -1).to(res.weights.dtype), atol=1e-6)


def test_capture_restores_softmax() -> None:
    original = torch.nn.functional.softmax
    with capture_softmax_inputs() as seen:
        torch.nn.functional.softmax(torch.zeros(1, 1, 2, 2), dim=-1)
        torch.nn.functional.softmax(torch.zeros(3), dim=-1)  # not 4-D: not recorded
    assert len(seen) == 1 and seen[0].shape == (1, 1, 2, 2)
    assert torch.nn.functional.softmax is original
    with pytest.raises(RuntimeError), capture_softmax_inputs():
        raise RuntimeError
    assert torch.nn.functional.softmax is original


def test_sdpa_returns_no_weights(random_model) -> None:
    model = random_model("llama")
    model.config._attn_implementation = "sdpa"
    with pytest.raises(HeadImportError, match="attn_implementation='eager'"):
        hf_attention_forward(model, "llama", torch.zeros(1, 3, 32))
