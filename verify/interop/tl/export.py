"""Export: a compiled head as a one-layer, attention-only rotary ``HookedTransformer``.

The model (built from a config, nothing downloaded) has ``normalization_type=None`` (no norms at
all), one layer with one head, ``positional_embedding_type="rotary"``, and a residual stream of
``2 d_model`` dims: the embedding writes the head's input into dims ``[0, d_model)``, the head writes
its output into ``[d_model, 2 d_model)``, and the unembedding reads only those. So

- the head's ``hook_attn_scores`` are ``logit_scale`` times the compiled head's logits (``-inf``
  above the diagonal) and ``hook_pattern`` is their softmax;
- the model's logits are ``output @ W_U`` of the compiled head, exactly in real arithmetic.

Frequencies are placed exactly (:mod:`ropeproof.verify.interop.tl.placement`); TransformerLens
divides scores by ``attn_scale = sqrt(d_head)``, which ``W_Q`` carries. TransformerLens computes its
sin/cos table in the model's dtype (float64 models stay float64 throughout).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ropeproof.constructions.head import CompiledHead
from ropeproof.theory.rope_spec import Layout, RopeSpec
from ropeproof.verify.interop.hf.architectures import EXPORT_INFO_FILE, ExportError, HeadImportError
from ropeproof.verify.interop.hf.export import ExportInfo
from ropeproof.verify.interop.hf.finite_weights import finite_weights
from ropeproof.verify.interop.tl import converter as tl_names
from ropeproof.verify.interop.tl.checkpoint import save_hooked_transformer
from ropeproof.verify.interop.tl.library import build_hooked_transformer, require_transformer_lens
from ropeproof.verify.interop.tl.placement import TLPlacement, place_tl
from ropeproof.verify.kernel.devices import DtypeLike, resolve_dtype

TL_EXPORT_FORMAT, TL_EXPORT_VERSION = "ropeproof-tl-export", 1
"""Name and version of the :data:`EXPORT_INFO_FILE` a TransformerLens export writes."""


@dataclass(frozen=True)
class TLExportInfo(ExportInfo):
    """:class:`~ropeproof.verify.interop.hf.export.ExportInfo` of a TransformerLens export (its
    ``placement`` is a :class:`TLPlacement`; ``spare_dim`` is always ``None``: there are no norms)."""

    def to_json(self) -> dict[str, Any]:
        data = super().to_json()
        data["format"], data["version"] = TL_EXPORT_FORMAT, TL_EXPORT_VERSION
        data["placement"]["layout"] = self.placement.layout  # type: ignore[attr-defined]
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TLExportInfo:
        """Read :meth:`to_json`'s output."""
        if data.get("format") != TL_EXPORT_FORMAT or data.get("version") != TL_EXPORT_VERSION:
            raise HeadImportError(f"not a {TL_EXPORT_FORMAT} v{TL_EXPORT_VERSION} record")
        p = data["placement"]
        placement = TLPlacement(
            "tl",
            int(p["head_dim"]),
            int(p["rotary_dim"]),
            float(p["rope_theta"]),
            int(p["hidden_size"]),
            tuple((int(a), int(b), bool(c)) for a, b, c in p["planes"]),
            tuple((int(a), int(b)) for a, b in p["values"]),
            p["layout"],
        )
        return cls(
            name=data["name"],
            tokens=tuple(data["tokens"]),
            source_spec=RopeSpec.from_dict(data["source_spec"]),
            placement=placement,
            read_dims=tuple(data["read_dims"]),
            write_dims=tuple(data["write_dims"]),
            spare_dim=None,
            head_scale=float(data["head_scale"]),
            logit_scale=float(data["logit_scale"]),
            metadata=dict(data.get("metadata", {})),
        )


def load_tl_export_info(path: str | Path) -> TLExportInfo:
    """Read the :class:`TLExportInfo` that :meth:`TLExport.save` wrote into ``path``."""
    file = Path(path) / EXPORT_INFO_FILE
    if not file.is_file():
        raise HeadImportError(f"{file} does not exist; it is written by TLExport.save")
    return TLExportInfo.from_json(json.loads(file.read_text()))


@dataclass
class TLExport:
    """An exported head: the ``HookedTransformer`` (``model``) and how it was laid out (``info``)."""

    model: Any
    info: TLExportInfo

    @property
    def attention(self) -> Any:
        """The model's only attention module (``blocks[0].attn``)."""
        return tl_names.attention(self.model, 0)

    def ids(self, sequences: Sequence[Sequence[str]]) -> torch.Tensor:
        """Token ids ``[batch, n]`` of equal-length sequences of token names."""
        index = {t: i for i, t in enumerate(self.info.tokens)}
        try:
            return torch.tensor([[index[t] for t in seq] for seq in sequences], dtype=torch.long)
        except KeyError as exc:
            raise ExportError(f"unknown token {exc.args[0]!r}; this export has {len(index)} tokens") from None

    def lm_logits(self, sequences: Sequence[Sequence[str]]) -> torch.Tensor:
        """The model's logits ``[batch, n, vocab]`` on token-name sequences."""
        with torch.no_grad():
            return self.model(self.ids(sequences))

    def answer(self, sequences: Sequence[Sequence[str]]) -> list[str]:
        """The model's argmax token at the last position of each sequence."""
        last = self.lm_logits(sequences)[:, -1]
        return [self.info.tokens[int(i)] for i in last.argmax(-1)]

    def save(self, path: str | Path) -> Path:
        """:func:`~ropeproof.verify.interop.tl.checkpoint.save_hooked_transformer` plus
        :data:`EXPORT_INFO_FILE`; ``ropeproof import tl`` and :func:`load_tl_export_info` read it."""
        out = save_hooked_transformer(self.model, path)
        (out / EXPORT_INFO_FILE).write_text(json.dumps(self.info.to_json(), indent=1))
        return out


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
    if not isinstance(head, CompiledHead):
        raise ExportError(f"head must be a CompiledHead, got {type(head).__name__}")
    logit_scale = float(logit_scale)
    if not math.isfinite(logit_scale) or logit_scale <= 0:
        raise ExportError(f"logit_scale={logit_scale} must be finite and > 0")
    dt = resolve_dtype(dtype)
    if dt not in (torch.float32, torch.float64):
        raise ExportError(f"dtype={dt} is not supported; accepted: float32, float64")
    if isinstance(n_ctx, bool) or not isinstance(n_ctx, int) or n_ctx < 1:
        raise ExportError(f"n_ctx={n_ctx} must be an integer >= 1")
    pl = place_tl(head, layout, rotary_dim, d_head, rotary_base)
    tl = require_transformer_lens()
    d, h, vocab = head.d_model, pl.head_dim, head.vocab_size
    read, write = np.arange(d), np.arange(d, 2 * d)
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
    s, sv = pl.qk_map(head.spec), pl.value_map(head.spec.head_dim)
    attn_scale = float(tl_names.attention(model, 0).attn_scale)
    w_q, w_k, w_v = (np.zeros((2 * d, h)) for _ in range(3))
    w_q[read] = head.W_Q @ s * (attn_scale * head.scale * logit_scale)
    w_k[read] = head.W_K @ s
    w_v[read] = head.W_V @ sv
    w_o = np.zeros((h, 2 * d))
    w_o[:, write] = sv.T @ head.W_O
    w_e = np.zeros((vocab, 2 * d))
    w_e[:, read] = head.W_E
    w_u = np.zeros((2 * d, vocab))
    w_u[write] = head.W_U
    projections = {"q": w_q, "k": w_k, "v": w_v, "o": w_o}
    new = {
        tl_names.EMBED_KEY: w_e,
        **{tl_names.attention_key(0, role): w[None] for role, w in projections.items()},
        tl_names.UNEMBED_KEY: w_u,
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
    info = TLExportInfo(
        name=head.name,
        tokens=tuple(head.tokens),
        source_spec=head.spec,
        placement=pl,
        read_dims=tuple(int(i) for i in read),
        write_dims=tuple(int(i) for i in write),
        spare_dim=None,
        head_scale=float(head.scale),
        logit_scale=logit_scale,
        metadata={"construction": head.metadata.get("construction", head.name)},
    )
    return TLExport(model, info)
