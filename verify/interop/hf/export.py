"""Export: a compiled head as a one-layer ``GPTJForCausalLM`` / ``LlamaForCausalLM`` whose layer-0
attention computes the head exactly, and the JSON that maps it back."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ropeproof.constructions.head import CompiledHead
from ropeproof.theory.memory_budget import check_allocation
from ropeproof.theory.rope_spec import RopeSpec
from ropeproof.verify.interop.hf.architectures import (
    EXPORT_INFO_FILE,
    NORM_GAIN,
    ExportError,
    HeadImportError,
    require_transformers,
)
from ropeproof.verify.interop.hf.converters import converter
from ropeproof.verify.interop.hf.finite_weights import finite_weights
from ropeproof.verify.interop.hf.placement import Placement
from ropeproof.verify.interop.hf.run import attention_module
from ropeproof.verify.kernel.attention import RopeAttention
from ropeproof.verify.kernel.devices import DtypeLike, resolve_dtype

EXPORT_FORMAT, EXPORT_VERSION = "ropeproof-hf-export", 2
"""Name and version of :data:`EXPORT_INFO_FILE` (version 1 had no ``format``/``version`` keys)."""


@dataclass(frozen=True)
class ExportInfo:
    """What an export did: enough to map an imported head back onto the compiled one.

    ``read_dims``/``write_dims``: hidden dims holding the head's input / output residual stream
    (``d_model`` each); ``spare_dim``: GPT-J's always-zero dim carrying the LayerNorm compensation.
    ``logit_scale`` multiplied the logits on top of ``head_scale``.
    """

    name: str
    tokens: tuple[str, ...]
    source_spec: RopeSpec
    placement: Placement
    read_dims: tuple[int, ...]
    write_dims: tuple[int, ...]
    spare_dim: int | None
    head_scale: float
    logit_scale: float
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def arch(self) -> str:
        return self.placement.arch

    @property
    def d_model(self) -> int:
        return len(self.read_dims)

    def embed(self, x: torch.Tensor) -> torch.Tensor:
        """Residual inputs ``[..., d_model]`` -> hidden states ``[..., hidden_size]`` (zeros elsewhere)."""
        out = x.new_zeros((*x.shape[:-1], self.placement.hidden_size))
        out[..., list(self.read_dims)] = x
        return out

    def read_output(self, hidden: torch.Tensor) -> torch.Tensor:
        """The head's output ``[..., d_model]`` from an attention layer's ``[..., hidden_size]`` output."""
        return hidden[..., list(self.write_dims)]

    def import_kwargs(self) -> dict[str, Any]:
        """``read_dims``/``write_dims`` for :func:`import_head` on this export."""
        return {"read_dims": list(self.read_dims), "write_dims": list(self.write_dims)}

    def to_source(self, attention: RopeAttention) -> RopeAttention:
        """An imported head (``d_model`` restricted by :meth:`import_kwargs`) in the compiled head's dims.

        Undoes the plane/value placement and ``logit_scale``; the result has the source spec and
        ``scale = head_scale``, so its matrices equal the compiled head's (to rounding).
        """
        spec, pl = self.source_spec, self.placement
        if attention.spec.head_dim != pl.head_dim or attention.d_model != self.d_model:
            raise HeadImportError(
                f"attention has head_dim={attention.spec.head_dim}, d_model={attention.d_model}; this "
                f"export needs head_dim={pl.head_dim}, d_model={self.d_model} (import with "
                "**info.import_kwargs())"
            )
        s, sv = pl.qk_map(spec), pl.value_map(spec.head_dim)
        w = {n: getattr(attention, n).detach().double().cpu().numpy() for n in ("W_Q", "W_K", "W_V", "W_O")}
        q_factor = attention.scale / (self.logit_scale * self.head_scale)
        return RopeAttention(
            w["W_Q"] @ s.T * q_factor,
            w["W_K"] @ s.T,
            w["W_V"] @ sv.T,
            sv @ w["W_O"],
            spec,
            self.head_scale,
            attention.device,
            attention.dtype,
        )

    def to_json(self) -> dict[str, Any]:
        pl = self.placement
        return {
            "format": EXPORT_FORMAT,
            "version": EXPORT_VERSION,
            "name": self.name,
            "tokens": list(self.tokens),
            "source_spec": self.source_spec.to_dict(),
            "placement": {
                "arch": pl.arch,
                "head_dim": pl.head_dim,
                "rotary_dim": pl.rotary_dim,
                "rope_theta": "inf" if math.isinf(pl.rope_theta) else pl.rope_theta,
                "hidden_size": pl.hidden_size,
                "planes": [list(m) for m in pl.planes],
                "values": [list(m) for m in pl.values],
            },
            "read_dims": list(self.read_dims),
            "write_dims": list(self.write_dims),
            "spare_dim": self.spare_dim,
            "head_scale": self.head_scale,
            "logit_scale": self.logit_scale,
            "metadata": self.metadata,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ExportInfo:
        """Read :meth:`to_json`'s output; files written before the format field existed (no
        ``format`` key) are accepted as version 1."""
        fmt, version = data.get("format", EXPORT_FORMAT), data.get("version", 1)
        if fmt != EXPORT_FORMAT or version not in (1, EXPORT_VERSION):
            raise HeadImportError(f"not a {EXPORT_FORMAT} v{EXPORT_VERSION} record")
        s, p = data["source_spec"], data["placement"]
        placement = Placement(
            p["arch"],
            int(p["head_dim"]),
            int(p["rotary_dim"]),
            float(p["rope_theta"]),
            int(p["hidden_size"]),
            tuple((int(a), int(b), bool(c)) for a, b, c in p["planes"]),
            tuple((int(a), int(b)) for a, b in p["values"]),
        )
        return cls(
            name=data["name"],
            tokens=tuple(data["tokens"]),
            source_spec=RopeSpec.from_dict(s),
            placement=placement,
            read_dims=tuple(data["read_dims"]),
            write_dims=tuple(data["write_dims"]),
            spare_dim=data["spare_dim"],
            head_scale=float(data["head_scale"]),
            logit_scale=float(data["logit_scale"]),
            metadata=dict(data.get("metadata", {})),
        )


def load_export_info(path: str | Path) -> ExportInfo:
    """Read the :class:`ExportInfo` that :meth:`HFExport.save_pretrained` wrote into ``path``."""
    file = Path(path) / EXPORT_INFO_FILE
    if not file.is_file():
        raise HeadImportError(f"{file} does not exist; it is written by HFExport.save_pretrained")
    return ExportInfo.from_json(json.loads(file.read_text()))


@dataclass
class HFExport:
    """An exported head: the one-layer causal LM (``model``) and how it was laid out (``info``)."""

    model: Any
    info: ExportInfo

    @property
    def config(self) -> Any:
        return self.model.config

    @property
    def attention(self) -> Any:
        """The layer-0 attention module (``GPTJAttention`` / ``LlamaAttention``)."""
        return attention_module(self.model, self.info.arch)

    def ids(self, sequences: Sequence[Sequence[str]]) -> torch.Tensor:
        """Token ids ``[batch, n]`` of equal-length sequences of token names."""
        index = {t: i for i, t in enumerate(self.info.tokens)}
        try:
            return torch.tensor([[index[t] for t in seq] for seq in sequences], dtype=torch.long)
        except KeyError as exc:
            raise ExportError(f"unknown token {exc.args[0]!r}; this export has {len(index)} tokens") from None

    def lm_logits(self, sequences: Sequence[Sequence[str]]) -> torch.Tensor:
        """The causal LM's logits ``[batch, n, vocab]`` on token-name sequences."""
        with torch.no_grad():
            return self.model(input_ids=self.ids(sequences)).logits

    def answer(self, sequences: Sequence[Sequence[str]]) -> list[str]:
        """The LM's argmax token at the last position of each sequence."""
        last = self.lm_logits(sequences)[:, -1]
        return [self.info.tokens[int(i)] for i in last.argmax(-1)]

    def save_pretrained(self, path: str | Path) -> Path:
        """``model.save_pretrained(path)`` plus :data:`EXPORT_INFO_FILE`."""
        path = Path(path)
        self.model.save_pretrained(path)
        (path / EXPORT_INFO_FILE).write_text(json.dumps(self.info.to_json(), indent=1))
        return path


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
    if not isinstance(head, CompiledHead):
        raise ExportError(f"head must be a CompiledHead, got {type(head).__name__}")
    logit_scale = float(logit_scale)
    if not math.isfinite(logit_scale) or logit_scale <= 0:
        raise ExportError(f"logit_scale={logit_scale} must be finite and > 0")
    dt = resolve_dtype(dtype)
    if dt not in (torch.float32, torch.float64):
        raise ExportError(f"dtype={dt} is not supported; accepted: float32, float64")
    if isinstance(max_positions, bool) or not isinstance(max_positions, int) or max_positions < 1:
        raise ExportError(f"max_positions={max_positions} must be an integer >= 1")
    conv = converter(arch, ExportError)
    pl = conv.place_head(head, rotary_dim, head_dim, rope_theta)
    d = head.d_model
    read, write = np.arange(d), np.arange(d, 2 * d)
    spare = 2 * d if conv.facts.norm_subtracts_mean else None
    s, sv = pl.qk_map(head.spec), pl.value_map(head.spec.head_dim)
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
    q_w, k_w, v_w = (np.zeros((h, hid)) for _ in range(3))
    q_w[:, read] = (head.W_Q @ s * (math.sqrt(h) * head.scale * logit_scale)).T
    k_w[:, read] = (head.W_K @ s).T
    v_w[:, read] = (head.W_V @ sv).T
    o_w = np.zeros((hid, h))
    o_w[write, :] = (sv.T @ head.W_O).T
    emb = np.zeros((vocab, hid))
    emb[:, read] = head.W_E
    lm = np.zeros((vocab, hid))
    lm[:, write] = head.W_U.T
    if spare is not None:  # LayerNorm output is x - mean(x): make every reader annihilate constants
        for w in (q_w, k_w, v_w, lm):
            w[:, spare] = -w.sum(axis=1)
    tf = require_transformers()
    config = conv.export_config(tf, pl, 1, vocab, max_positions, attn_implementation, None)
    torch_state = torch.random.get_rng_state()
    try:
        model = conv.model_class(tf)(config)
    finally:  # HF initialisation draws random weights we overwrite; leave the caller's RNG alone
        torch.random.set_rng_state(torch_state)
    model = model.to(dt).eval()
    new = conv.export_weights(emb, [(q_w, k_w, v_w, o_w)], lm, np.full(hid, NORM_GAIN))
    new = finite_weights(new, dt, f"lower logit_scale={logit_scale:g} or export in float64")
    state = model.state_dict()
    for key, value in state.items():  # everything else (MLP, norm biases) is zero
        state[key] = new[key] if key in new else torch.zeros_like(value)
    missing = set(new) - set(state)
    if missing:  # pragma: no cover - guards against a transformers rename
        raise ExportError(f"this transformers version has no parameters {sorted(missing)}")
    model.load_state_dict(state)
    info = ExportInfo(
        name=head.name,
        tokens=tuple(head.tokens),
        source_spec=head.spec,
        placement=pl,
        read_dims=tuple(int(i) for i in read),
        write_dims=tuple(int(i) for i in write),
        spare_dim=spare,
        head_scale=float(head.scale),
        logit_scale=logit_scale,
        metadata={"construction": head.metadata.get("construction", head.name)},
    )
    return HFExport(model, info)
