"""What the HF interop tests share: the compiled heads they export (cached per process), their exports,
small randomly initialised GPT-J and LLaMA models built from configs (nothing downloaded), and a
``report`` fixture that prints measured differences past pytest's capture and stores them with
``record_property``.

The helpers reach the tests as fixtures (``compiled``, ``exported``, ``random_model``, ``report``); the
frequencies are module constants here, repeated in a test module only where a parametrisation needs one.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import pytest
import torch

from ropeproof.constructions._compile import compile_construction
from ropeproof.constructions._head import CompiledHead
from ropeproof.constructions._paper import index_construction, reflexive_construction, retrieval_construction

K1_OF_128 = 10000 ** (-2 / 128)  # 0.8659643233600653: k = 1 of a 128-dim rotary head ([A]'s id 2)
K41_OF_128 = 10000 ** (-82 / 128)  # 0.0027390...: k = 41 ([A]'s id 42, "0.0027")
K1_OF_8 = 10000 ** (-2 / 8)  # 0.1: k = 1 of an 8-dim rotary head
POSITIONS = 64  # longest sequence the exported test models support (keeps GPT-J's sin/cos table small)


@functools.cache
def compiled_head(key: str) -> CompiledHead:
    """The compiled construction named ``key`` (index at k = 1 of 128, Retrieval at 0 and at k = 41,
    Reflexive at 0.5 and at k = 1 of 8)."""
    builders = {
        "index": lambda: index_construction(theta=K1_OF_128),
        "retrieval0": lambda: retrieval_construction(theta=0.0),
        "retrieval41": lambda: retrieval_construction(theta=K41_OF_128),
        "reflexive": lambda: reflexive_construction(theta=0.5),
        "reflexive_k1": lambda: reflexive_construction(theta=K1_OF_8),
    }
    return compile_construction(builders[key]())


@functools.cache
def exported_head(key: str, arch: str, dtype: str = "float32", logit_scale: float = 1.0) -> Any:
    """:func:`export_head` of :func:`compiled_head` (``POSITIONS`` positions), cached per process."""
    from ropeproof.verify.interop.hf._export import export_head

    return export_head(
        compiled_head(key), arch, dtype=dtype, logit_scale=logit_scale, max_positions=POSITIONS
    )


def build_random_model(arch: str, seed: int = 0, attn: str = "eager") -> Any:
    """Two layers, four heads of head_dim 8 (LLaMA with two key/value heads: GQA), ``rotary_dim = 4``
    (GPT-J) or ``rope_theta = 500`` (LLaMA), attention implementation ``attn``, attention projections
    drawn at scale 0.3 so rows are far from uniform."""
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(seed)
    if arch == "gptj":
        config = transformers.GPTJConfig(
            vocab_size=11,
            n_embd=32,
            n_head=4,
            n_layer=2,
            rotary_dim=4,
            n_inner=8,
            attn_implementation=attn,
        )
        model = transformers.GPTJForCausalLM(config)
    else:
        config = transformers.LlamaConfig(
            vocab_size=11,
            hidden_size=32,
            intermediate_size=8,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            head_dim=8,
            rope_theta=500.0,
            attn_implementation=attn,
        )
        model = transformers.LlamaForCausalLM(config)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "proj" in name and "mlp" not in name:
                p.copy_(torch.randn_like(p) * 0.3)
    return model.eval()


@pytest.fixture
def compiled() -> Callable[[str], CompiledHead]:
    return compiled_head


@pytest.fixture
def exported() -> Callable[..., Any]:
    return exported_head


@pytest.fixture
def random_model() -> Callable[..., Any]:
    return build_random_model


@pytest.fixture
def report(capsys: pytest.CaptureFixture[str], record_property: Callable[[str, object], None]):
    """``report(label, **values)``: print ``[hf-interop] label: name=value, ...`` and record each value."""

    def _report(label: str, **values: float) -> None:
        for name, value in values.items():
            record_property(f"{label} {name}", value)
        line = f"[hf-interop] {label}: " + ", ".join(f"{k}={v:.3g}" for k, v in values.items())
        with capsys.disabled():
            print("\n" + line, end="")

    return _report
