"""Import: one head of a rotary TransformerLens ``HookedTransformer`` as a
:class:`~ropeproof.verify.kernel._attention.RopeAttention`.

TransformerLens (3.x, ``components/abstract_attention.py``) computes for head ``h`` of a layer

    q = x W_Q[h] + b_Q[h],  k = x W_K[h] + b_K[h],  v = x W_V[h] + b_V[h]      ([batch, n, d_head])
    scores = rot(q) . rot(k) / attn_scale,  -inf above the diagonal,  pattern = softmax(scores)

with ``rot`` rotating the first ``rotary_dim`` dims: adjacent pairs ``(2k, 2k+1)`` when
``rotary_adjacent_pairs`` (GPT-J, our ``"interleaved"``), else ``(k, k + rotary_dim/2)`` (NeoX/LLaMA,
our ``"half"``), by ``p * theta_k`` with ``theta_k = rotary_base^(-2k/rotary_dim) / rotary_scaling_factor``
and the rotation ``x_first' = x_first cos - x_second sin``, ``x_second' = x_first sin + x_second cos``
(``docs/theory.md`` section 1). Dims past ``rotary_dim`` pass through (``theta = 0``). With GQA
(``n_key_value_heads``) query head ``h`` reads key/value head ``h // (n_heads / n_key_value_heads)``;
the ``W_K``/``W_V`` properties already repeat them that way. The head writes ``z W_O[h]``; the
layer's ``b_O`` is shared by all heads and is not part of any head.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch

from ropeproof.theory._rope_spec import RopeSpec
from ropeproof.verify.interop._errors import HeadImportError
from ropeproof.verify.interop._head_assembly import assemble_head
from ropeproof.verify.interop.tl import _converter as tl_names
from ropeproof.verify.kernel._attention import RopeAttention
from ropeproof.verify.kernel._devices import DeviceLike, DtypeLike

UNSUPPORTED_FLAGS: tuple[tuple[str, str], ...] = (
    ("use_NTK_by_parts_rope", "NTK-by-parts RoPE rescales frequencies piecewise"),
    ("use_yarn_rope", "YaRN rescales frequencies and the rotation's magnitude"),
    ("use_dynamic_ntk_rope", "dynamic NTK changes the base with the sequence length"),
    ("use_logn_attn", "log-n attention rescales queries by position"),
    ("use_qk_norm", "q/k norms act between the projection and the rotation"),
    ("use_attention_sinks", "a learned sink logit joins the softmax"),
    ("load_in_4bit", "4-bit weights are not read"),
)
"""``HookedTransformerConfig`` flags under which a head is not a plain RoPE head, with the reason."""


def _cfg_value(cfg: Any, name: str, default: Any = None) -> Any:
    return getattr(cfg, name, default)


def tl_rope_spec(cfg: Any, attn_type: str = "global") -> RopeSpec:
    """The :class:`RopeSpec` of a rotary ``HookedTransformerConfig`` (``cfg``).

    ``head_dim = d_head``, ``rotary_dim`` from the config (``None`` means ``d_head``), layout
    ``"interleaved"`` when ``rotary_adjacent_pairs`` else ``"half"``, and frequencies
    ``rotary_base^(-2k/rotary_dim) / rotary_scaling_factor`` in float64 (the factor applies to
    global-attention layers only, as in TransformerLens). Raises :class:`HeadImportError` for a
    non-rotary config or one of :data:`UNSUPPORTED_FLAGS`.
    """
    kind = _cfg_value(cfg, "positional_embedding_type")
    if kind != "rotary":
        raise HeadImportError(
            f"cfg.positional_embedding_type={kind!r}; only 'rotary' models have RoPE heads to import"
        )
    for flag, why in UNSUPPORTED_FLAGS:
        if _cfg_value(cfg, flag, False):
            raise HeadImportError(f"cfg.{flag}=True: {why}, so the head is not a plain RoPE head")
    clip = _cfg_value(cfg, "clip_qkv")
    if clip is not None:
        raise HeadImportError(f"cfg.clip_qkv={clip}: clamping q/k/v is not a linear head")
    cap = _cfg_value(cfg, "attn_scores_soft_cap", -1.0)
    if cap is not None and cap > 0:
        raise HeadImportError(f"cfg.attn_scores_soft_cap={cap}: soft-capped scores are not a RoPE logit")
    if _cfg_value(cfg, "attention_dir", "causal") != "causal":
        raise HeadImportError(f"cfg.attention_dir={cfg.attention_dir!r}; RopeAttention is causal")
    if _cfg_value(cfg, "original_architecture") in (
        "OlmoeForCausalLM",
        "Olmo2ForCausalLM",
        "Olmo3ForCausalLM",
    ):
        raise HeadImportError(
            f"cfg.original_architecture={cfg.original_architecture!r} applies q/k norms before the rotation"
        )
    d_head = int(cfg.d_head)
    rotary_dim = int(_cfg_value(cfg, "rotary_dim") or d_head)
    if rotary_dim % 2 or not 0 < rotary_dim <= d_head:
        raise HeadImportError(f"cfg.rotary_dim={rotary_dim} must be even and in 2..d_head={d_head}")
    base = float(_cfg_value(cfg, "rotary_base", 10000.0))
    if attn_type == "local" and _cfg_value(cfg, "rotary_base_local") is not None:
        base = float(cfg.rotary_base_local)
    if not (math.isfinite(base) and base > 0):
        raise HeadImportError(f"cfg.rotary_base={base} must be finite and > 0")
    factor = float(_cfg_value(cfg, "rotary_scaling_factor", 1.0) or 1.0)
    if attn_type == "local":
        factor = 1.0
    if not (math.isfinite(factor) and factor > 0):
        raise HeadImportError(f"cfg.rotary_scaling_factor={factor} must be finite and > 0")
    layout = tl_names.layout_of(cfg)
    if factor == 1.0:  # the same float64 formula as RopeSpec's default spectrum (and the HF import)
        return RopeSpec(d_head, rotary_dim, base, layout=layout)
    plain = RopeSpec(d_head, rotary_dim, base, layout=layout).rotating_freqs
    return RopeSpec(d_head, rotary_dim, freqs=(plain / factor).tolist(), layout=layout)


def _nonzero(t: torch.Tensor) -> bool:
    return bool(torch.as_tensor(t).detach().abs().max() != 0)


def import_tl_head(
    model: Any,
    layer: int,
    head: int,
    *,
    read_dims: slice | Sequence[int] | None = None,
    write_dims: slice | Sequence[int] | None = None,
    fold_scale: bool = True,
    device: DeviceLike = "auto",
    dtype: DtypeLike = torch.float64,
) -> RopeAttention:
    """Head ``head`` of layer ``layer`` of a rotary ``HookedTransformer`` as a :class:`RopeAttention` (the
    HF counterpart is ``import_hf_head(model, layer, head, ...)``; both assemble the head in
    :func:`~ropeproof.verify.interop._head_assembly.assemble_head`).

    The weights are ``W_Q[head]``, ``W_K[head]``, ``W_V[head]`` (``[d_model, d_head]``; GQA already
    resolved by TransformerLens' properties) and ``W_O[head]`` (``[d_head, d_model]``); the spec is
    :func:`tl_rope_spec` of the model's config (the layer's attention type decides the base for
    local layers). The head reads the layer's attention input, ``ln1(resid_pre)``, and its output is
    TransformerLens' per-head ``hook_result``. ``fold_scale=True`` divides ``W_Q`` by the layer's
    ``attn_scale`` (which includes ``scale_attn_by_inverse_layer_idx``) and sets ``scale = 1``;
    ``False`` keeps the weights and sets ``scale = 1 / attn_scale``. ``read_dims``/``write_dims``
    restrict ``d_model`` to the residual dims the head reads (rows of ``W_Q/W_K/W_V``) and writes
    (columns of ``W_O``); both must have the same size (an export's ``info.import_kwargs()``).

    Raises :class:`HeadImportError` for a layer or head out of range, a local-attention (windowed)
    layer, a nonzero ``b_Q``/``b_K``/``b_V`` (RopeAttention has no biases), or a config that is not
    a plain RoPE head (:func:`tl_rope_spec`).
    """
    blocks = tl_names.blocks(model)
    cfg = getattr(model, "cfg", None)
    if blocks is None or cfg is None:
        raise HeadImportError(
            f"model must be a TransformerLens HookedTransformer, got {type(model).__name__}"
        )
    if isinstance(layer, bool) or not isinstance(layer, int) or not 0 <= layer < len(blocks):
        raise HeadImportError(f"layer={layer!r} is out of range; the model has layers 0..{len(blocks) - 1}")
    n_heads = int(cfg.n_heads)
    if isinstance(head, bool) or not isinstance(head, int) or not 0 <= head < n_heads:
        raise HeadImportError(f"head={head!r} is out of range; the model has heads 0..{n_heads - 1}")
    attn = tl_names.attention(model, layer)
    where = tl_names.attention_path(layer)
    attn_type = getattr(attn, "attn_type", "global")
    if attn_type != "global":
        raise HeadImportError(
            f"layer {layer} uses {attn_type!r} attention (a window of {cfg.window_size} keys); RopeAttention "
            "attends to every earlier key"
        )
    spec = tl_rope_spec(cfg, attn_type)
    for name in tl_names.BIASES:
        if _nonzero(getattr(attn, name)[head]):
            raise HeadImportError(
                f"{where}.{name}[{head}] is nonzero; RopeAttention has no biases (load the "
                "model without folding biases in, or zero them if they are not part of your question)"
            )
    weights = {
        role: getattr(attn, name)[head].detach().to("cpu", torch.float64)
        for role, name in tl_names.WEIGHTS.items()
    }
    attn_scale = float(getattr(attn, "attn_scale", 1.0))
    if not (math.isfinite(attn_scale) and attn_scale != 0):
        raise HeadImportError(f"{where}.attn_scale={attn_scale} must be finite and nonzero")
    return assemble_head(
        weights["q"],
        weights["k"],
        weights["v"],
        weights["o"],
        spec,
        attn_scale,
        read_dims=read_dims,
        write_dims=write_dims,
        fold_scale=fold_scale,
        device=device,
        dtype=dtype,
    )


from_hooked_transformer = import_tl_head
""":func:`import_tl_head` under its earlier name."""
