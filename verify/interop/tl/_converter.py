"""TransformerLens' names: the ``HookedTransformer`` state-dict keys an export sets, the parameter names an
import reads, and how ``rotary_adjacent_pairs`` spells a RoPE layout.

TransformerLens converts every architecture it loads into the one ``HookedTransformer`` layout, so one
converter covers it (the HF side has one per architecture, :mod:`ropeproof.verify.interop.hf._converters`);
this module is the only place in :mod:`ropeproof.verify.interop.tl` that writes these names.
"""

from __future__ import annotations

from typing import Any

from ropeproof.theory._rope_spec import Layout

EMBED_KEY = "embed.W_E"
"""The token embedding ``[d_vocab, d_model]``."""
UNEMBED_KEY = "unembed.W_U"
"""The unembedding ``[d_model, d_vocab_out]``."""
WEIGHTS: dict[str, str] = {"q": "W_Q", "k": "W_K", "v": "W_V", "o": "W_O"}
"""Role -> the attention's per-head weight (``W_Q/W_K/W_V`` ``[heads, d_model, d_head]``, ``W_O``
``[heads, d_head, d_model]``)."""
BIASES: tuple[str, ...] = ("b_Q", "b_K", "b_V")
"""The per-head biases a RoPE head must not have (``b_O`` is shared by the layer's heads)."""


def attention_path(layer: int) -> str:
    """Where layer ``layer``'s attention sits in the model (``blocks.0.attn``)."""
    return f"blocks.{layer}.attn"


def attention_key(layer: int, role: str) -> str:
    """A projection's state-dict key (``blocks.0.attn.W_Q``)."""
    return f"{attention_path(layer)}.{WEIGHTS[role]}"


def is_bias_key(key: str) -> bool:
    """Whether a state-dict key is a bias (``b_*``, and the ``_b_*`` of grouped-query attention)."""
    return key.split(".")[-1].startswith(("b_", "_b_"))


def adjacent_pairs(layout: Layout) -> bool:
    """``rotary_adjacent_pairs`` of a layout: ``True`` for ``"interleaved"`` (planes ``2k, 2k+1``)."""
    return layout == "interleaved"


def layout_of(cfg: Any) -> Layout:
    """The layout of a ``HookedTransformerConfig``: ``"interleaved"`` when ``rotary_adjacent_pairs``
    (GPT-J's pairing) else ``"half"`` (NeoX/LLaMA's)."""
    return "interleaved" if getattr(cfg, "rotary_adjacent_pairs", False) else "half"


def blocks(model: Any) -> Any:
    """The model's layers (``None`` when it is not a ``HookedTransformer``)."""
    return getattr(model, "blocks", None)


def attention(model: Any, layer: int) -> Any:
    """Layer ``layer``'s attention module."""
    return model.blocks[layer].attn


def input_norm(model: Any, layer: int) -> Any:
    """Layer ``layer``'s pre-attention norm (``ln1``, an identity when the model has no norms)."""
    return model.blocks[layer].ln1


def embedding(model: Any) -> Any:
    """The token embedding parameter ``[d_vocab, d_model]``."""
    return model.embed.W_E


def unembedding(model: Any) -> Any:
    """The unembedding parameter ``[d_model, d_vocab_out]``."""
    return model.unembed.W_U
