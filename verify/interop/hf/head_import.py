"""Import: one head of a GPT-J or LLaMA layer (state dict + config, GQA aware) as a
:class:`~ropeproof.verify.runtime.attention.RopeAttention`."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from ropeproof.theory.rope_spec import RopeSpec
from ropeproof.verify.interop.hf.architectures import GPTJ_BASE, HeadImportError, check_arch
from ropeproof.verify.runtime.attention import RopeAttention
from ropeproof.verify.runtime.devices import DeviceLike, DtypeLike, resolve_device


def _cfg(config: Any, *names: str, default: Any = None) -> Any:
    for name in names:
        value = config.get(name) if isinstance(config, Mapping) else getattr(config, name, None)
        if value is not None:
            return value
    return default


def _int_cfg(config: Any, what: str, *names: str, default: Any = None) -> int:
    value = _cfg(config, *names, default=default)
    if value is None:
        raise HeadImportError(f"config has no {what} (looked for {list(names)})")
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise HeadImportError(f"config {names[0]}={value!r} must be a positive integer")
    return int(value)


@dataclass(frozen=True)
class _HeadGeometry:
    hidden: int
    n_heads: int
    n_kv: int
    head_dim: int
    spec: RopeSpec
    prefixes: tuple[str, ...]
    names: tuple[str, str, str, str]


def _llama_rope(config: Any) -> float:
    params = _cfg(config, "rope_parameters")
    if isinstance(params, Mapping) and "rope_theta" not in params and params:
        raise HeadImportError(
            f"config rope_parameters={dict(params)} has no rope_theta (per-layer-type RoPE is not supported)"
        )
    scaling = _cfg(config, "rope_scaling")
    rope_type = (
        (params or {}).get("rope_type") or (scaling or {}).get("rope_type") or (scaling or {}).get("type")
    )
    if rope_type not in (None, "default"):
        raise HeadImportError(
            f"config rope_type={rope_type!r} rescales frequencies or positions; only the default RoPE "
            "is imported exactly"
        )
    factor = _cfg(config, "partial_rotary_factor", default=1.0)
    if float(factor) != 1.0:
        raise HeadImportError(
            f"config partial_rotary_factor={factor}: LlamaAttention rotates the whole head; a partial "
            "factor is not imported"
        )
    theta = _cfg(config, "rope_theta") or (params or {}).get("rope_theta")
    if theta is None:
        raise HeadImportError("config has no rope_theta (nor rope_parameters['rope_theta'])")
    if isinstance(theta, Mapping) and "__float__" in theta:
        theta = theta["__float__"]
    theta = float(theta)
    if not theta > 0 or theta == 1:
        raise HeadImportError(f"config rope_theta={theta} must be > 0 and != 1")
    return theta


def _geometry(arch: str, config: Any, layer: int) -> _HeadGeometry:
    model_type = _cfg(config, "model_type")
    if model_type is not None and model_type != arch:
        raise HeadImportError(f"config.model_type={model_type!r} does not match arch={arch!r}")
    if arch == "gptj":
        hidden = _int_cfg(config, "hidden size", "n_embd", "hidden_size")
        n_heads = _int_cfg(config, "head count", "n_head", "num_attention_heads")
        if hidden % n_heads:
            raise HeadImportError(f"config n_embd={hidden} is not divisible by n_head={n_heads}")
        head_dim = hidden // n_heads
        rotary = _cfg(config, "rotary_dim")
        rotary = int(rotary) if rotary is not None else hidden
        if rotary > head_dim or rotary % 2:
            raise HeadImportError(
                f"config rotary_dim={rotary} (None means n_embd) must be even and <= head_dim="
                f"n_embd/n_head={head_dim}"
            )
        spec = RopeSpec(head_dim, rotary, GPTJ_BASE, layout="interleaved")
        prefixes = (f"transformer.h.{layer}.attn.", f"h.{layer}.attn.", "")
        return _HeadGeometry(hidden, n_heads, n_heads, head_dim, spec, prefixes, ("q", "k", "v", "out"))
    hidden = _int_cfg(config, "hidden size", "hidden_size")
    n_heads = _int_cfg(config, "head count", "num_attention_heads")
    n_kv = _int_cfg(config, "key/value head count", "num_key_value_heads", default=n_heads)
    if n_heads % n_kv:
        raise HeadImportError(
            f"config num_attention_heads={n_heads} is not a multiple of num_key_value_heads={n_kv}; GQA "
            "maps query head h to key/value head h // (num_attention_heads / num_key_value_heads)"
        )
    head_dim = _int_cfg(config, "head_dim", "head_dim", default=hidden // n_heads)
    if head_dim % 2:
        raise HeadImportError(f"config head_dim={head_dim} must be even")
    theta = _llama_rope(config)
    if math.isinf(theta):
        spec = RopeSpec(head_dim, head_dim, freqs=[1.0] + [0.0] * (head_dim // 2 - 1), layout="half")
    else:
        spec = RopeSpec(head_dim, head_dim, theta, layout="half")
    prefixes = (f"model.layers.{layer}.self_attn.", f"layers.{layer}.self_attn.", "")
    return _HeadGeometry(hidden, n_heads, n_kv, head_dim, spec, prefixes, ("q", "k", "v", "o"))


def _dims(name: str, dims: slice | Sequence[int] | None, hidden: int) -> np.ndarray:
    if dims is None:
        return np.arange(hidden)
    idx = np.arange(hidden)[dims] if isinstance(dims, slice) else np.asarray(dims, dtype=np.int64)
    if idx.ndim != 1 or idx.size == 0 or idx.min() < 0 or idx.max() >= hidden:
        raise HeadImportError(f"{name} must select dims in 0..{hidden - 1}, got {dims!r}")
    return idx


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
    arch = check_arch(arch, HeadImportError)
    if isinstance(layer, bool) or not isinstance(layer, int) or layer < 0:
        raise HeadImportError(f"layer={layer} must be an integer >= 0")
    geo = _geometry(arch, config, layer)
    if isinstance(head, bool) or not isinstance(head, int) or not 0 <= head < geo.n_heads:
        raise HeadImportError(f"head={head} is out of range; the config has heads 0..{geo.n_heads - 1}")
    if not isinstance(state_dict, Mapping):
        raise HeadImportError(
            f"state_dict must be a mapping of names to tensors, got {type(state_dict).__name__}"
        )
    first = f"{geo.names[0]}_proj.weight"
    prefix = next((p for p in geo.prefixes if p + first in state_dict), None)
    if prefix is None:
        layer_ids = sorted(
            {int(k.split(".")[-4]) for k in state_dict if k.endswith(first) and k.split(".")[-4].isdigit()}
        )
        raise HeadImportError(
            f"missing keys: state_dict has none of {[p + first for p in geo.prefixes]}"
            + (f"; layers present: {layer_ids}" if layer_ids else f"; it has {len(state_dict)} keys")
        )
    hd, group = geo.head_dim, geo.n_heads // geo.n_kv
    kv = head // group
    expected = {
        "q": (geo.n_heads * hd, geo.hidden),
        "k": (geo.n_kv * hd, geo.hidden),
        "v": (geo.n_kv * hd, geo.hidden),
        geo.names[3]: (geo.hidden, geo.n_heads * hd),
    }
    weights = {}
    for short in geo.names:
        key = f"{prefix}{short}_proj.weight"
        if key not in state_dict:
            raise HeadImportError(f"missing key {key!r} in state_dict")
        w = torch.as_tensor(state_dict[key]).detach().to("cpu", torch.float64)
        if tuple(w.shape) != expected[short]:
            what = "GQA: num_key_value_heads * head_dim" if short in ("k", "v") else "the config"
            raise HeadImportError(
                f"{key} has shape {tuple(w.shape)}; {what} gives {expected[short]} (hidden={geo.hidden}, "
                f"heads={geo.n_heads}, kv_heads={geo.n_kv}, head_dim={hd})"
            )
        bias = state_dict.get(f"{prefix}{short}_proj.bias")
        if bias is not None and torch.as_tensor(bias).abs().max() != 0:
            raise HeadImportError(f"{prefix}{short}_proj.bias is nonzero; RopeAttention has no biases")
        weights[short] = w
    rows_q = slice(head * hd, (head + 1) * hd)
    rows_kv = slice(kv * hd, (kv + 1) * hd)
    read = _dims("read_dims", read_dims, geo.hidden)
    write = _dims("write_dims", write_dims, geo.hidden)
    if read.size != write.size:
        raise HeadImportError(f"read_dims has {read.size} dims and write_dims {write.size}; they must match")
    w_q = weights["q"][rows_q].T[read]
    w_k = weights["k"][rows_kv].T[read]
    w_v = weights["v"][rows_kv].T[read]
    w_o = weights[geo.names[3]][:, rows_q].T[:, write]
    if fold_scale:
        w_q, scale = w_q / math.sqrt(hd), 1.0
    else:
        scale = hd**-0.5
    return RopeAttention(w_q, w_k, w_v, w_o, geo.spec, scale, resolve_device(device), dtype)


def import_model_head(
    model: Any, arch: str | None = None, layer: int = 0, head: int = 0, **kwargs: Any
) -> RopeAttention:
    """:func:`import_head` on a loaded ``transformers`` model (``arch`` defaults to its model type)."""
    arch = arch or getattr(model.config, "model_type", None) or ""
    return import_head(arch, model.state_dict(), model.config, layer, head, **kwargs)
