"""The GPT-J converter: ``GPTJForCausalLM``'s module paths, keys, configs and placement (see
:mod:`ropeproof.verify.interop.hf._converter`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
import torch

from ropeproof.constructions._head import CompiledHead
from ropeproof.constructions._multihop_compile import CompiledModel
from ropeproof.theory._architectures import GPTJ, GPTJ_BASE
from ropeproof.verify.interop._errors import HeadImportError
from ropeproof.verify.interop.hf._converter import HeadGeometry, HFConverter, config_value
from ropeproof.verify.interop.hf._norm_bypass import NORM_EPS
from ropeproof.verify.interop.hf._placement import (
    Placement,
    _used_planes,
    place_gptj,
    place_gptj_layers,
    used_value_count,
)


class GPTJConverter(HFConverter):
    """``GPTJForCausalLM``: interleaved planes, base fixed at 10000, partial rotary, LayerNorm computed in
    the model's dtype, one LayerNorm per layer feeding attention and MLP in parallel."""

    facts = GPTJ
    base_attribute = "transformer"
    layers_attribute = "h"
    attention_attribute = "attn"
    input_norm_attribute = "ln_1"
    embedding_attribute = "wte"
    final_norm_attribute = "ln_f"
    last_rows_shortcut = True
    projections: ClassVar[Mapping[str, str]] = {"q": "q_proj", "k": "k_proj", "v": "v_proj", "o": "out_proj"}
    width_keys = ("n_embd", "hidden_size")
    heads_keys = ("n_head", "num_attention_heads")
    inner_key = "n_inner"
    position_table = True

    def model_class(self, tf: Any) -> Any:
        return tf.GPTJForCausalLM

    def config_class(self, tf: Any) -> Any:
        return tf.GPTJConfig

    def rotary_inside_attention(self, attention: Any) -> bool:
        return hasattr(attention, "embed_positions")  # older transformers: the sin/cos table is its own

    def rope_cos_sin(self, model: Any, n: int) -> tuple[np.ndarray, np.ndarray]:
        """GPT-J's sin/cos table (``create_sinusoidal_positions``: ``inv_freq`` and ``position * inv_freq``
        in float32, then ``sin``/``cos`` in float32), rows ``0 .. n - 1``."""
        hidden, positions = self._model_positions(model, n)
        attention = self.attention(self.block(model, 0))
        with torch.no_grad():
            if self.rotary_inside_attention(attention):  # transformers before 4.48: the table is its own
                half = attention.embed_positions.shape[-1] // 2
                sin, cos = attention.embed_positions[:n, :half], attention.embed_positions[:n, half:]
            else:
                sin, cos = (t[0] for t in self.base(model).rotary_emb(hidden, position_ids=positions))
        return cos.double().numpy(), sin.double().numpy()

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
            n_embd=placement.hidden_size,
            n_head=1,
            n_layer=n_layers,
            n_inner=1,
            rotary_dim=placement.rotary_dim,
            n_positions=max_positions,
            layer_norm_epsilon=NORM_EPS,
            resid_pdrop=0.0,
            embd_pdrop=0.0,
            attn_pdrop=0.0,
            **self._export_common(vocab, attn_implementation, pad_token_id),
        )

    def head_geometry(self, config: Any) -> HeadGeometry:
        self._check_model_type(config)
        hidden = self.width(config)
        n_heads = self.heads(config)
        if hidden % n_heads:
            raise HeadImportError(f"config n_embd={hidden} is not divisible by n_head={n_heads}")
        head_dim = hidden // n_heads
        rotary = config_value(config, "rotary_dim")
        rotary = int(rotary) if rotary is not None else hidden
        if rotary > head_dim or rotary % 2:
            raise HeadImportError(
                f"config rotary_dim={rotary} (None means n_embd) must be even and <= head_dim="
                f"n_embd/n_head={head_dim}"
            )
        spec = self.facts.rope_spec(head_dim, rotary, GPTJ_BASE)
        return HeadGeometry(hidden, n_heads, n_heads, head_dim, spec)

    def place_head(
        self,
        head: CompiledHead,
        rotary_dim: int | None = None,
        head_dim: int | None = None,
        rope_theta: float | None = None,
    ) -> Placement:
        self.check_options(rotary_dim, rope_theta)
        n_values = used_value_count(head)
        # read dims, write dims and the spare dim of the LayerNorm bypass
        return self._own(place_gptj(_used_planes(head), n_values, 2 * head.d_model + 1, rotary_dim, head_dim))

    def place_model(
        self,
        model: CompiledModel,
        hidden_size: int | None,
        head_dim: int | None,
        rotary_dim: int | None,
        rope_theta: float | None,
    ) -> tuple[int, list[Placement]]:
        width, placements = place_gptj_layers(model, hidden_size, rotary_dim)
        return width, [self._own(p) for p in placements]
