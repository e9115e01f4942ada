"""Export: a compiled head as a one-layer, attention-only rotary ``HookedTransformer``.

The model (built from a config, nothing downloaded) has ``normalization_type=None`` (no norms at
all), one layer with one head, ``positional_embedding_type="rotary"``, and a residual stream of
``2 d_model`` dims: the embedding writes the head's input into dims ``[0, d_model)``, the head writes
its output into ``[d_model, 2 d_model)``, and the unembedding reads only those. So

- the head's ``hook_attn_scores`` are ``logit_scale`` times the compiled head's logits (``-inf``
  above the diagonal) and ``hook_pattern`` is their softmax;
- the model's logits are ``output @ W_U`` of the compiled head, exactly in real arithmetic.

Frequencies are placed exactly (:mod:`ropeproof.verify.interop.tl._placement`); TransformerLens
divides scores by ``attn_scale = sqrt(d_head)``, which ``W_Q`` carries. TransformerLens computes its
sin/cos table in the model's dtype (float64 models stay float64 throughout).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import torch

from ropeproof.constructions._head import CompiledHead
from ropeproof.theory._rope_spec import Layout
from ropeproof.verify.interop._errors import ExportError
from ropeproof.verify.interop._head_export import (
    ExportInfo,
    HeadExport,
    check_export_options,
    head_weights,
    placement_fields,
)
from ropeproof.verify.interop.hf._finite_weights import finite_weights
from ropeproof.verify.interop.tl import _converter as tl_names
from ropeproof.verify.interop.tl._checkpoint import save_hooked_transformer
from ropeproof.verify.interop.tl._library import build_hooked_transformer, require_transformer_lens
from ropeproof.verify.interop.tl._placement import TLPlacement, place_tl
from ropeproof.verify.kernel._devices import DtypeLike


@dataclass(frozen=True)
class TLExportInfo(ExportInfo):
    """:class:`~ropeproof.verify.interop._head_export.ExportInfo` of a TransformerLens export (format
    ``ropeproof-tl-export`` version 1; its ``placement`` is a :class:`TLPlacement`, its ``spare_dim`` always
    ``None``: there are no norms)."""

    FORMAT: ClassVar[str] = "ropeproof-tl-export"
    VERSION: ClassVar[int] = 1

    def to_json(self) -> dict[str, Any]:
        data = super().to_json()
        data["placement"]["layout"] = self.placement.layout  # type: ignore[attr-defined]
        return data

    @classmethod
    def placement_from_json(cls, data: Mapping[str, Any]) -> TLPlacement:
        return TLPlacement(*placement_fields({**data, "arch": "tl"}), data["layout"])


@dataclass
class TLExport(HeadExport):
    """An exported head: the ``HookedTransformer`` (``model``) and how it was laid out (``info``)."""

    @property
    def attention(self) -> Any:
        """The model's only attention module (``blocks[0].attn``)."""
        return tl_names.attention(self.model, 0)

    def logits_of_ids(self, ids: torch.Tensor) -> torch.Tensor:
        return self.model(ids)

    def save_model(self, path: Path) -> None:
        """:func:`~ropeproof.verify.interop.tl._checkpoint.save_hooked_transformer` (``ropeproof import tl``
        reads it)."""
        save_hooked_transformer(self.model, path)


def export_hooked_transformer(
    head: CompiledHead,
    *,
    layout: Layout = "interleaved",
    rotary_dim: int | None = None,
    d_head: int | None = None,
    rotary_base: float | None = None,
    logit_scale: float = 1.0,
    dtype: DtypeLike = torch.float32,
    n_ctx: int = 2048,
) -> TLExport:
    """Export ``head`` as an attention-only rotary ``HookedTransformer`` (see the module docstring).

    ``layout``: ``"interleaved"`` (``rotary_adjacent_pairs=True``) or ``"half"``. ``rotary_dim``,
    ``d_head`` and ``rotary_base`` fix choices the placement would otherwise make.
    ``logit_scale`` multiplies the head's logits. ``dtype``: ``float32`` or ``float64``. ``n_ctx``:
    the longest sequence the model accepts.
    """
    logit_scale, dt = check_export_options(head, logit_scale, dtype, n_ctx, "n_ctx")
    pl = place_tl(head, layout, rotary_dim, d_head, rotary_base, str(dt).removeprefix("torch."))
    tl = require_transformer_lens()
    d, h, vocab = head.d_model, pl.head_dim, head.vocab_size
    cfg = tl.HookedTransformerConfig(
        n_layers=1,
        d_model=2 * d,
        n_ctx=n_ctx,
        d_head=h,
        n_heads=1,
        d_vocab=vocab,
        d_vocab_out=vocab,
        attn_only=True,
        normalization_type=None,
        positional_embedding_type="rotary",
        rotary_dim=pl.rotary_dim,
        rotary_base=pl.rope_theta,
        rotary_adjacent_pairs=tl_names.adjacent_pairs(layout),
        default_prepend_bos=False,
        model_name=f"ropeproof-{head.name}",
        dtype=dt,
        device="cpu",
    )
    model = build_hooked_transformer(cfg).eval()
    # TransformerLens divides q . k by attn_scale
    w = head_weights(head, pl, float(tl_names.attention(model, 0).attn_scale) * head.scale * logit_scale)
    projections = {"q": w.w_q, "k": w.w_k, "v": w.w_v, "o": w.w_o}
    new = {
        tl_names.EMBED_KEY: w.w_e,
        **{tl_names.attention_key(0, role): m[None] for role, m in projections.items()},
        tl_names.UNEMBED_KEY: w.w_u,
    }
    new = finite_weights(new, dt, f"lower logit_scale={logit_scale:g} or export in float64")
    state = model.state_dict()
    missing = set(new) - set(state)
    if missing:  # pragma: no cover - guards against a TransformerLens rename
        raise ExportError(f"this TransformerLens version has no parameters {sorted(missing)}")
    for key, value in state.items():  # biases are zero; buffers (rotary tables, mask) are kept
        if key in new:
            state[key] = new[key]
        elif tl_names.is_bias_key(key):
            state[key] = torch.zeros_like(value)
    model.load_state_dict(state)
    return TLExport(model, TLExportInfo.of_head(head, pl, w, None, logit_scale))
