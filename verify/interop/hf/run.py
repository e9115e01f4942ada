"""Run HF attention modules: find a layer's attention and capture its pre-softmax scores, weights and
output."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import torch

from ropeproof.verify.interop.hf.architectures import HeadImportError, check_arch


def _base_model(model: Any, arch: str) -> Any:
    return getattr(model, "transformer" if arch == "gptj" else "model", model)


def attention_module(model: Any, arch: str, layer: int = 0) -> Any:
    """Layer ``layer``'s attention module of a GPT-J / LLaMA model (causal LM or base model)."""
    arch = check_arch(arch, HeadImportError)
    base = _base_model(model, arch)
    layers = base.h if arch == "gptj" else base.layers
    if not 0 <= layer < len(layers):
        raise HeadImportError(f"layer={layer} is out of range; the model has layers 0..{len(layers) - 1}")
    return layers[layer].attn if arch == "gptj" else layers[layer].self_attn


@dataclass(frozen=True)
class HFAttentionResult:
    """What an HF attention module computed: ``scores`` (pre-softmax, as fed to softmax, masked
    entries at a large negative value) and ``weights``, ``[batch, heads, n, n]``; ``output``
    ``[batch, n, hidden_size]``."""

    scores: torch.Tensor
    weights: torch.Tensor
    output: torch.Tensor


@contextlib.contextmanager
def capture_softmax_inputs() -> Iterator[list[torch.Tensor]]:
    """Record every 4-D tensor passed to ``torch.nn.functional.softmax`` inside the block.

    HF's eager attention calls ``nn.functional.softmax(scores, ...)`` on exactly the scaled, masked
    ``q . k`` scores; this reads them without re-deriving anything. Not thread-safe.
    """
    fn = torch.nn.functional
    original = fn.softmax
    seen: list[torch.Tensor] = []

    def recording(input: torch.Tensor, *args: Any, **kwargs: Any) -> torch.Tensor:
        if isinstance(input, torch.Tensor) and input.ndim == 4:
            seen.append(input.detach().clone())
        return original(input, *args, **kwargs)

    fn.softmax = recording
    try:
        yield seen
    finally:
        fn.softmax = original


def hf_attention_forward(model: Any, arch: str, hidden: torch.Tensor, layer: int = 0) -> HFAttentionResult:
    """Run layer ``layer``'s HF attention module on ``hidden`` (``[batch, n, hidden_size]``).

    Positions ``0 .. n-1``, causal mask as an additive ``finfo.min`` mask (what eager attention
    receives from the model). The model must use eager attention for ``weights``/``scores``.
    """
    arch = check_arch(arch, HeadImportError)
    attn = attention_module(model, arch, layer)
    batch, n, _ = hidden.shape
    dev = hidden.device
    pos = torch.arange(n, device=dev).unsqueeze(0).expand(batch, n)
    future = torch.ones(n, n, dtype=torch.bool, device=dev).triu(1)
    mask = torch.zeros(1, 1, n, n, dtype=hidden.dtype, device=dev)
    mask = mask.masked_fill(future, torch.finfo(hidden.dtype).min)
    with torch.no_grad(), capture_softmax_inputs() as seen:
        if arch == "gptj" and hasattr(attn, "embed_positions"):  # older GPT-J: rotary inside attention
            out = attn(hidden_states=hidden, attention_mask=mask, position_ids=pos, output_attentions=True)
        else:
            pe = _base_model(model, arch).rotary_emb(hidden, pos)
            out = attn(
                hidden_states=hidden,
                position_embeddings=pe,
                attention_mask=mask,
                position_ids=pos,
                output_attentions=True,
            )
    weights = [t for t in out[1:] if isinstance(t, torch.Tensor) and t.ndim == 4]
    if not weights or not seen:
        raise HeadImportError(
            "the attention module returned no weights; load the model with attn_implementation='eager'"
        )
    return HFAttentionResult(scores=seen[-1], weights=weights[0], output=out[0])
