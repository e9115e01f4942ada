"""The converter base class on a made-up architecture (names unlike any real one, so nothing here can pass
by matching a built-in converter): keys and module paths derived from its attributes, config values,
the options a fixed base or a full rotary refuses, the norm's dtype and float64 evaluation."""

from __future__ import annotations

from typing import ClassVar

import pytest
import torch

from ropeproof.theory._architectures import Architecture
from ropeproof.verify.interop._errors import ExportError, HeadImportError
from ropeproof.verify.interop.hf._converter import ROLES, HFConverter, config_int, config_value

TOY = Architecture("toy", "Toy", "interleaved", 500.0, False, False, "layernorm")


class ToyConverter(HFConverter):
    facts = TOY
    base_attribute = "net"
    layers_attribute = "blocks"
    attention_attribute = "mix"
    input_norm_attribute = "pre"
    other_norm_attributes = ("post",)
    embedding_attribute = "tok"
    final_norm_attribute = "out_norm"
    projections: ClassVar[dict[str, str]] = {"q": "wq", "k": "wk", "v": "wv", "o": "wo"}
    width_keys = ("width", "hidden_size")
    heads_keys = ("heads",)
    inner_key = "ff"
    norm_upcasts = True


class Block(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.mix = torch.nn.Module()
        for name in ("wq", "wk", "wv", "wo"):
            setattr(self.mix, name, torch.nn.Linear(4, 4, bias=False))
        self.pre, self.post = torch.nn.LayerNorm(4), torch.nn.LayerNorm(4)


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.tok = torch.nn.Embedding(3, 4)
        self.blocks = torch.nn.ModuleList([Block(), Block()])
        self.out_norm = torch.nn.LayerNorm(4)


class LM(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.net = Net()
        self.lm_head = torch.nn.Linear(4, 3, bias=False)


def test_keys_and_paths_come_from_the_attributes() -> None:
    conv, lm = ToyConverter(), LM()
    assert (conv.name, conv.label, repr(conv)) == ("toy", "Toy", "ToyConverter('toy')")
    state = lm.state_dict()
    zero = torch.zeros(1)
    written = conv.export_weights(zero, [(zero,) * 4] * 2, zero, zero)
    assert list(written) == [
        "net.tok.weight",
        *[f"net.blocks.0.mix.w{r}.weight" for r in "qkvo"],
        "net.blocks.0.pre.weight",
        "net.blocks.0.post.weight",
        *[f"net.blocks.1.mix.w{r}.weight" for r in "qkvo"],
        "net.blocks.1.pre.weight",
        "net.blocks.1.post.weight",
        "net.out_norm.weight",
        "lm_head.weight",
    ]
    assert set(written) <= set(state)
    assert conv.attention_prefixes(1) == ("net.blocks.1.mix.", "blocks.1.mix.", "")
    assert conv.projection_key("o", "bias") == "wo.bias"
    assert conv.base(lm) is lm.net and conv.base(lm.net) is lm.net  # a base model is its own base
    assert conv.block(lm, 1) is lm.net.blocks[1] and conv.block(lm.net, 0) is lm.net.blocks[0]
    assert conv.attention(lm.net.blocks[0]) is lm.net.blocks[0].mix
    assert conv.input_norm(lm.net.blocks[1]) is lm.net.blocks[1].pre
    assert not conv.rotary_inside_attention(lm.net.blocks[0].mix)
    with pytest.raises(HeadImportError, match=r"layer=2 is out of range; the model has layers 0\.\.1"):
        conv.block(lm, 2)
    assert ROLES == ("q", "k", "v", "o")


def test_config_values() -> None:
    conv = ToyConverter()
    assert config_value({"a": None, "b": 2}, "a", "b") == 2 and config_value({}, "a", default=7) == 7

    class Cfg:
        hidden_size, heads, ff = 12, 3, None

    assert (conv.width(Cfg()), conv.heads(Cfg()), conv.inner(Cfg())) == (12, 3, 48)  # ff unset: 4 * width
    assert conv.inner({"width": 4, "ff": 5}) == 5
    with pytest.raises(HeadImportError, match=r"config has no head count \(looked for \['heads'\]\)"):
        conv.heads({})
    with pytest.raises(HeadImportError, match=r"config heads=0 is out of range; accepted: an integer >= 1"):
        conv.heads({"heads": 0})
    with pytest.raises(HeadImportError, match=r"config width=2\.0 is not an integer"):
        config_int({"width": 2.0}, "width", "width")
    for stub in (conv.head_geometry, conv.model_class, conv.config_class):
        with pytest.raises(NotImplementedError):
            stub(None)


def test_options_follow_the_facts() -> None:
    conv = ToyConverter()
    conv.check_options(None, 500.0)  # the fixed base itself is accepted
    fixed = r"rope_theta=10000\.0: Toy's base is fixed at 500; use arch='llama'"  # the free-base ones
    with pytest.raises(ExportError, match=fixed):
        conv.check_options(None, 1e4)
    full = r"rotary_dim=4: Toy rotates all of head_dim \(no partial rotary\)"
    with pytest.raises(ExportError, match=full + "$"):
        conv.check_options(4, None)
    with pytest.raises(ExportError, match=full + "; see$"):
        conv.check_options(4, None, "; see")
    shape = r"head_dim: Toy in \[A\]'s shape has head_dim = width; use hidden_size"
    with pytest.raises(ExportError, match=shape):
        conv.check_model_options(8, None, None)


def test_norm_numerics() -> None:
    conv = ToyConverter()
    assert conv.norm_dtype(torch.float64) == torch.float32  # norm_upcasts
    assert conv.position_table_size(100, 8) == 0
    norm = torch.nn.LayerNorm(4)
    with torch.no_grad():
        norm.weight.uniform_(0.5, 1.5, generator=torch.Generator().manual_seed(0))
    x = torch.randn(3, 4, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    with torch.no_grad():
        got = conv.evaluate_norm(norm, x)
    mean, var = x.mean(-1, keepdim=True), x.var(-1, unbiased=False, keepdim=True)
    expected = (x - mean) / torch.sqrt(var + norm.eps) * norm.weight.double() + norm.bias.double()
    assert got.dtype == torch.float64 and (got - expected).abs().max().item() < 1e-14
    assert norm.weight.dtype == torch.float32  # the model's own module is left alone
