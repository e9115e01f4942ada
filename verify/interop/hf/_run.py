"""Run HF attention modules: find a layer's attention and capture its pre-softmax scores, weights and
output."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import torch

from ropeproof.verify.interop._errors import HeadImportError
from ropeproof.verify.interop.hf._converters import converter


def attention_module(model: Any, arch: str, layer: int = 0) -> Any:
    """Layer ``layer``'s attention module of a GPT-J / LLaMA model (causal LM or base model)."""
    conv = converter(arch, HeadImportError)
    return conv.attention(conv.block(model, layer))


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
    conv = converter(arch, HeadImportError)
    attn = conv.attention(conv.block(model, layer))
    batch, n, _ = hidden.shape
    dev = hidden.device
    pos = torch.arange(n, device=dev).unsqueeze(0).expand(batch, n)
    future = torch.ones(n, n, dtype=torch.bool, device=dev).triu(1)
    mask = torch.zeros(1, 1, n, n, dtype=hidden.dtype, device=dev)
    mask = mask.masked_fill(future, torch.finfo(hidden.dtype).min)
    with torch.no_grad(), capture_softmax_inputs() as seen:
        if conv.rotary_inside_attention(attn):
            out = attn(hidden_states=hidden, attention_mask=mask, position_ids=pos, output_attentions=True)
        else:
            pe = conv.rotary_embeddings(model, hidden, pos)
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
