"""Import: one head of a GPT-J or LLaMA layer (state dict + config, GQA aware) as a
:class:`~ropeproof.verify.kernel._attention.RopeAttention`."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import torch

from ropeproof.verify.interop._errors import HeadImportError
from ropeproof.verify.interop._head_assembly import assemble_head
from ropeproof.verify.interop.hf._converter import ROLES
from ropeproof.verify.interop.hf._converters import converter
from ropeproof.verify.kernel._attention import RopeAttention
from ropeproof.verify.kernel._devices import DeviceLike, DtypeLike


def import_head(
    arch: str,
    state_dict: Mapping[str, torch.Tensor],
    config: Any,
    layer: int = 0,
    head: int = 0,
    *,
    read_dims: slice | Sequence[int] | None = None,
    write_dims: slice | Sequence[int] | None = None,
    fold_scale: bool = True,
    device: DeviceLike = "auto",
    dtype: DtypeLike = torch.float64,
) -> RopeAttention:
    """Query head ``head`` of layer ``layer`` of a GPT-J / LLaMA model as a :class:`RopeAttention`.

    ``state_dict``: a causal LM's, a base model's (``transformer.``/``model.`` prefix dropped), or one
    attention module's (then ``layer`` is not looked up). ``config``: the model's config object or
    its dict. Keys other than the four projections are ignored, including the legacy ``attn.bias`` /
    ``attn.masked_bias`` buffers of old GPT-J checkpoints. GQA (LLaMA): query head ``h`` reads
    key/value head ``h // (num_attention_heads / num_key_value_heads)``.

    The spec is GPT-J's (interleaved, ``rotary_dim`` from the config, base 10000) or LLaMA's (half,
    ``rope_theta``); frequencies are the formula's in float64 (HF evaluates them in float32).
    ``fold_scale=True`` divides ``W_Q`` by ``sqrt(head_dim)`` and sets ``scale = 1`` (the
    constructions' convention); ``False`` keeps the weights and sets ``scale = head_dim^(-1/2)``.
    ``read_dims``/``write_dims`` restrict ``d_model`` to the hidden dims the head reads (rows of
    ``W_Q/W_K/W_V``) and writes (columns of ``W_O``); both must have the same size.
    """
    conv = converter(arch, HeadImportError)
    if isinstance(layer, bool) or not isinstance(layer, int) or layer < 0:
        raise HeadImportError(f"layer={layer} must be an integer >= 0")
    geo = conv.head_geometry(config)
    if isinstance(head, bool) or not isinstance(head, int) or not 0 <= head < geo.n_heads:
        raise HeadImportError(f"head={head} is out of range; the config has heads 0..{geo.n_heads - 1}")
    if not isinstance(state_dict, Mapping):
        raise HeadImportError(
            f"state_dict must be a mapping of names to tensors, got {type(state_dict).__name__}"
        )
    first = conv.projection_key("q")
    prefixes = conv.attention_prefixes(layer)
    prefix = next((p for p in prefixes if p + first in state_dict), None)
    if prefix is None:
        layer_ids = sorted(
            {int(k.split(".")[-4]) for k in state_dict if k.endswith(first) and k.split(".")[-4].isdigit()}
        )
        raise HeadImportError(
            f"missing keys: state_dict has none of {[p + first for p in prefixes]}"
            + (f"; layers present: {layer_ids}" if layer_ids else f"; it has {len(state_dict)} keys")
        )
    hd, group = geo.head_dim, geo.n_heads // geo.n_kv
    kv = head // group
    expected = {
        "q": (geo.n_heads * hd, geo.hidden),
        "k": (geo.n_kv * hd, geo.hidden),
        "v": (geo.n_kv * hd, geo.hidden),
        "o": (geo.hidden, geo.n_heads * hd),
    }
    weights = {}
    for short in ROLES:
        key = prefix + conv.projection_key(short)
        if key not in state_dict:
            raise HeadImportError(f"missing key {key!r} in state_dict")
        w = torch.as_tensor(state_dict[key]).detach().to("cpu", torch.float64)
        if tuple(w.shape) != expected[short]:
            what = "GQA: num_key_value_heads * head_dim" if short in ("k", "v") else "the config"
            raise HeadImportError(
                f"{key} has shape {tuple(w.shape)}; {what} gives {expected[short]} (hidden={geo.hidden}, "
                f"heads={geo.n_heads}, kv_heads={geo.n_kv}, head_dim={hd})"
            )
        bias_key = prefix + conv.projection_key(short, "bias")
        bias = state_dict.get(bias_key)
        if bias is not None and torch.as_tensor(bias).abs().max() != 0:
            raise HeadImportError(f"{bias_key} is nonzero; RopeAttention has no biases")
        weights[short] = w
    rows_q = slice(head * hd, (head + 1) * hd)
    rows_kv = slice(kv * hd, (kv + 1) * hd)
    return assemble_head(
        weights["q"][rows_q].T,
        weights["k"][rows_kv].T,
        weights["v"][rows_kv].T,
        weights["o"][:, rows_q].T,
        geo.spec,
        math.sqrt(hd),
        hd**-0.5,
        read_dims=read_dims,
        write_dims=write_dims,
        fold_scale=fold_scale,
        device=device,
        dtype=dtype,
    )


def import_hf_head(
    model: Any, layer: int = 0, head: int = 0, *, arch: str | None = None, **kwargs: Any
) -> RopeAttention:
    """Head ``head`` of layer ``layer`` of a loaded ``transformers`` model as a :class:`RopeAttention`:
    :func:`import_head` on its state dict and config (``arch`` defaults to its model type; ``kwargs``:
    ``read_dims``, ``write_dims``, ``fold_scale``, ``device``, ``dtype``). The TransformerLens
    counterpart is ``import_tl_head(model, layer, head, ...)``."""
    arch = arch or getattr(model.config, "model_type", None) or ""
    return import_head(arch, model.state_dict(), model.config, layer, head, **kwargs)


def import_model_head(
    model: Any, arch: str | None = None, layer: int = 0, head: int = 0, **kwargs: Any
) -> RopeAttention:
    """:func:`import_hf_head` under its earlier name and argument order (``arch`` second)."""
    return import_hf_head(model, layer, head, arch=arch, **kwargs)
