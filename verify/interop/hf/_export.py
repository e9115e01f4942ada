"""Export: a compiled head as a one-layer ``GPTJForCausalLM`` / ``LlamaForCausalLM`` whose layer-0
attention computes the head exactly, the JSON that maps it back and a tokenizer (the shared skeleton:
:mod:`ropeproof.verify.interop._head_export`)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import torch

from ropeproof.constructions._head import CompiledHead
from ropeproof.machinery._memory_budget import check_allocation
from ropeproof.verify.interop._errors import ExportError
from ropeproof.verify.interop._head_export import (
    ExportInfo,
    HeadExport,
    check_export_options,
    head_weights,
    placement_fields,
)
from ropeproof.verify.interop.hf._converters import converter
from ropeproof.verify.interop.hf._finite_weights import finite_weights
from ropeproof.verify.interop.hf._library import quiet_progress, require_transformers
from ropeproof.verify.interop.hf._norm_bypass import NORM_GAIN
from ropeproof.verify.interop.hf._placement import Placement
from ropeproof.verify.interop.hf._run import attention_module
from ropeproof.verify.kernel._devices import DtypeLike


@dataclass(frozen=True)
class HFExportInfo(ExportInfo):
    """:class:`~ropeproof.verify.interop._head_export.ExportInfo` of an HF export (format
    ``ropeproof-hf-export`` version 2; version 1, written before the ``format`` key, is read too)."""

    FORMAT: ClassVar[str] = "ropeproof-hf-export"
    VERSION: ClassVar[int] = 2
    UNLABELLED_VERSION: ClassVar[int | None] = 1

    @classmethod
    def placement_from_json(cls, data: Mapping[str, Any]) -> Placement:
        return Placement(*placement_fields(data))


@dataclass
class HFExport(HeadExport):
    """An exported head: the one-layer causal LM (``model``) and how it was laid out (``info``)."""

    @property
    def config(self) -> Any:
        return self.model.config

    @property
    def attention(self) -> Any:
        """The layer-0 attention module (``GPTJAttention`` / ``LlamaAttention``)."""
        return attention_module(self.model, self.info.arch)

    def logits_of_ids(self, ids: torch.Tensor) -> torch.Tensor:
        return self.model(input_ids=ids).logits

    def save_model(self, path: Path) -> None:
        with quiet_progress():
            self.model.save_pretrained(path)

    def save_pretrained(self, path: str | Path) -> Path:
        """:meth:`save` under transformers' name: ``config.json``, the weights, ``tokenizer.json`` and
        :data:`~ropeproof.verify.interop._head_export.EXPORT_INFO_FILE`."""
        return self.save(path)


def place_head(
    head: CompiledHead,
    arch: str,
    rotary_dim: int | None = None,
    head_dim: int | None = None,
    rope_theta: float | None = None,
) -> Placement:
    """The :class:`Placement` :func:`export_head` uses for ``head`` in ``arch``; raises if none is exact."""
    return converter(arch, ExportError).place_head(head, rotary_dim, head_dim, rope_theta)


def export_head(
    head: CompiledHead,
    arch: str,
    *,
    rotary_dim: int | None = None,
    head_dim: int | None = None,
    rope_theta: float | None = None,
    logit_scale: float = 1.0,
    dtype: DtypeLike = torch.float32,
    max_positions: int = 2048,
    attn_implementation: str = "eager",
) -> HFExport:
    """Export ``head`` as a one-layer ``GPTJForCausalLM`` / ``LlamaForCausalLM`` (eager attention).

    ``arch``: ``"gptj"``, ``"llama"`` or another registered converter. ``rotary_dim`` (GPT-J),
    ``head_dim`` and ``rope_theta`` (LLaMA) fix choices the placement would otherwise make; if they
    leave no exact placement an
    :class:`ExportError` says why and what would work. ``logit_scale`` multiplies the head's logits
    (e.g. a large value makes softmax pick the argmax key). ``dtype``: ``float32`` or ``float64``
    (see the module docstring on what HF still computes in float32). ``max_positions``: the longest
    sequence (GPT-J's sin/cos table, LLaMA's ``max_position_embeddings``). ``attn_implementation``:
    ``"eager"`` (returns attention weights; what the parity checks use) or e.g. ``"sdpa"``.
    """
    logit_scale, dt = check_export_options(head, logit_scale, dtype, max_positions, "max_positions")
    conv = converter(arch, ExportError)
    pl = conv.place_head(head, rotary_dim, head_dim, rope_theta)
    spare = 2 * head.d_model if conv.facts.norm_subtracts_mean else None
    h, hid, vocab = pl.head_dim, pl.hidden_size, head.vocab_size
    # numpy float64 matrices, the model's own initial weights, and the state dict copied into it:
    # ~4 copies of 8 bytes per weight; GPT-J also builds a max_positions x rotary_dim sin/cos table
    weights = 4 * h * hid + 2 * vocab * hid
    table = conv.position_table_size(max_positions, pl.rotary_dim)
    check_allocation(
        f"exporting a {conv.name} model (hidden_size {hid}, head_dim {h}, vocab {vocab}, "
        f"max_positions {max_positions})",
        32 * weights + 16 * table,
    )
    # HF multiplies q . k by head_dim^(-1/2)
    w = head_weights(head, pl, math.sqrt(h) * head.scale * logit_scale)
    if spare is not None:  # LayerNorm output is x - mean(x): make every reader annihilate constants
        w.cancel_mean(spare)
    tf = require_transformers()
    config = conv.export_config(tf, pl, 1, vocab, max_positions, attn_implementation, None)
    layer = (w.w_q.T, w.w_k.T, w.w_v.T, w.w_o.T)  # HF's Linear weights are [out, in]
    new = conv.export_weights(w.w_e, [layer], w.w_u.T, np.full(hid, NORM_GAIN))
    new = finite_weights(new, dt, f"lower logit_scale={logit_scale:g} or export in float64")
    model = conv.exported_model(tf, config, dt, new)
    return HFExport(model, HFExportInfo.of_head(head, pl, w, spare, logit_scale))
