"""The LLaMA converter: ``LlamaForCausalLM``'s module paths, keys, configs and placement (see
:mod:`ropeproof.verify.interop.hf._converter`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
import torch

from ropeproof.constructions._head import CompiledHead
from ropeproof.constructions._multihop_compile import CompiledModel
from ropeproof.theory._architectures import LLAMA
from ropeproof.verify.interop._errors import HeadImportError
from ropeproof.verify.interop.hf._converter import HeadGeometry, HFConverter, config_int, config_value
from ropeproof.verify.interop.hf._norm_bypass import NORM_EPS
from ropeproof.verify.interop.hf._placement import (
    Placement,
    _used_planes,
    place_llama,
    place_llama_layers,
    used_value_count,
)


class LlamaConverter(HFConverter):
    """``LlamaForCausalLM``: half layout, every dim rotating at a configurable ``rope_theta``, a separate
    ``head_dim``, GQA, RMSNorm computed in float32, norms before attention and before the MLP."""

    facts = LLAMA
    base_attribute = "model"
    layers_attribute = "layers"
    attention_attribute = "self_attn"
    input_norm_attribute = "input_layernorm"
    other_norm_attributes = ("post_attention_layernorm",)
    embedding_attribute = "embed_tokens"
    final_norm_attribute = "norm"
    projections: ClassVar[Mapping[str, str]] = {"q": "q_proj", "k": "k_proj", "v": "v_proj", "o": "o_proj"}
    width_keys = ("hidden_size",)
    heads_keys = ("num_attention_heads",)
    inner_key = "intermediate_size"
    norm_upcasts = True

    def model_class(self, tf: Any) -> Any:
        return tf.LlamaForCausalLM

    def config_class(self, tf: Any) -> Any:
        return tf.LlamaConfig

    def evaluate_norm(self, norm: Any, x: torch.Tensor) -> torch.Tensor:
        """RMSNorm from its formula, ``x / sqrt(mean(x^2) + eps) * weight``, in float64 (the module
        upcasts to float32 inside ``transformers``)."""
        eps = float(getattr(norm, "variance_epsilon", getattr(norm, "eps", 1e-6)))
        weight = norm.weight.detach().to("cpu", torch.float64)
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight

    def rope_cos_sin(self, model: Any, n: int) -> tuple[np.ndarray, np.ndarray]:
        """LLaMA's rotation (``LlamaRotaryEmbedding``: ``inv_freq`` in float32, ``position * inv_freq`` and
        ``cos``/``sin`` in float32), positions ``0 .. n - 1``; the first half of its duplicated halves."""
        hidden, positions = self._model_positions(model, n)
        with torch.no_grad():
            cos, sin = self.rotary_embeddings(model, hidden, positions)
        half = cos.shape[-1] // 2
        return cos[0, :, :half].double().numpy(), sin[0, :, :half].double().numpy()

    def export_config(
        self,
        tf: Any,
        placement: Placement,
        n_layers: int,
        vocab: int,
        max_positions: int,
        attn_implementation: str,
        pad_token_id: int | None,
    ) -> Any:
        return self.config_class(tf)(
            hidden_size=placement.hidden_size,
            intermediate_size=1,
            num_hidden_layers=n_layers,
            num_attention_heads=1,
            num_key_value_heads=1,
            head_dim=placement.head_dim,
            rope_theta=placement.rope_theta,
            rms_norm_eps=NORM_EPS,
            max_position_embeddings=max_positions,
            attention_bias=False,
            mlp_bias=False,
            **self._export_common(vocab, attn_implementation, pad_token_id),
        )

    def rope_theta(self, config: Any) -> float:
        """``rope_theta`` of the default RoPE (top level or in ``rope_parameters``); scaled or per-layer
        RoPE and a partial rotary factor are refused."""
        params = config_value(config, "rope_parameters")
        if isinstance(params, Mapping) and "rope_theta" not in params and params:
            raise HeadImportError(
                f"config rope_parameters={dict(params)} has no rope_theta (per-layer-type RoPE is not "
                "supported)"
            )
        scaling = config_value(config, "rope_scaling")
        rope_type = (
            (params or {}).get("rope_type") or (scaling or {}).get("rope_type") or (scaling or {}).get("type")
        )
        if rope_type not in (None, "default"):
            raise HeadImportError(
                f"config rope_type={rope_type!r} rescales frequencies or positions; only the default RoPE "
                "is imported exactly"
            )
        factor = config_value(config, "partial_rotary_factor", default=1.0)
        if float(factor) != 1.0:
            raise HeadImportError(
                f"config partial_rotary_factor={factor}: LlamaAttention rotates the whole head; a partial "
                "factor is not imported"
            )
        theta = config_value(config, "rope_theta") or (params or {}).get("rope_theta")
        if theta is None:
            raise HeadImportError("config has no rope_theta (nor rope_parameters['rope_theta'])")
        if isinstance(theta, Mapping) and "__float__" in theta:
            theta = theta["__float__"]
        theta = float(theta)
        if not theta > 0 or theta == 1:
            raise HeadImportError(f"config rope_theta={theta} must be > 0 and != 1")
        return theta

    def head_geometry(self, config: Any) -> HeadGeometry:
        self._check_model_type(config)
        hidden = self.width(config)
        n_heads = self.heads(config)
        n_kv = config_int(config, "key/value head count", "num_key_value_heads", default=n_heads)
        if n_heads % n_kv:
            raise HeadImportError(
                f"config num_attention_heads={n_heads} is not a multiple of num_key_value_heads={n_kv}; GQA "
                "maps query head h to key/value head h // (num_attention_heads / num_key_value_heads)"
            )
        head_dim = config_int(config, "head_dim", "head_dim", default=hidden // n_heads)
        if head_dim % 2:
            raise HeadImportError(f"config head_dim={head_dim} must be even")
        spec = self.facts.rope_spec(head_dim, head_dim, self.rope_theta(config))
        return HeadGeometry(hidden, n_heads, n_kv, head_dim, spec)

    def place_head(
        self,
        head: CompiledHead,
        rotary_dim: int | None = None,
        head_dim: int | None = None,
        rope_theta: float | None = None,
    ) -> Placement:
        self.check_options(rotary_dim, rope_theta, "; use head_dim")
        n_values = used_value_count(head)
        return self._own(place_llama(_used_planes(head), n_values, 2 * head.d_model, head_dim, rope_theta))

    def place_model(
        self,
        model: CompiledModel,
        hidden_size: int | None,
        head_dim: int | None,
        rotary_dim: int | None,
        rope_theta: float | None,
    ) -> tuple[int, list[Placement]]:
        width, placements = place_llama_layers(model, hidden_size, head_dim, rope_theta)
        return width, [self._own(p) for p in placements]
