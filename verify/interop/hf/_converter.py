"""The converter of an HF architecture: its facts plus what ``transformers`` names and builds.

A converter (:class:`HFConverter`) holds an architecture's facts
(:class:`~ropeproof.theory._architectures.Architecture`: layout, fixed or free base, partial rotary, norm)
and adds

- *module paths*: the base model (``transformer`` / ``model``), its decoder layers (``h`` / ``layers``),
  a layer's attention (``attn`` / ``self_attn``) and pre-attention norm (``ln_1`` / ``input_layernorm``),
  the rotary embeddings (GPT-J before transformers 4.48 computed them inside its attention);
- *state-dict keys* per role and layer: the embedding, the four projections (``out_proj`` / ``o_proj``),
  the norms, the final norm and the LM head;
- *configs*: the one-head-per-layer config an export builds, and the head geometry (widths, head counts,
  GQA, ``rotary_dim``, ``rope_theta``) read back from any config of the architecture;
- *numerics*: the dtype the norm computes in and its float64 evaluation, the position table it allocates;
- *placement*: which spectrum search places a head or a multi-hop model
  (:mod:`ropeproof.verify.interop.hf._placement`) and which export options the architecture refuses.

The built-in converters are :mod:`.gptj` and :mod:`.llama`; :mod:`.converters` is the registry every
other module asks.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import torch

from ropeproof.constructions._head import CompiledHead
from ropeproof.constructions._multihop_compile import CompiledModel
from ropeproof.machinery._validate import integer
from ropeproof.theory._architectures import ARCHITECTURES, Architecture
from ropeproof.theory._rope_spec import RopeSpec
from ropeproof.verify.interop._errors import ExportError, HeadImportError
from ropeproof.verify.interop.hf._placement import Placement

ROLES: tuple[str, ...] = ("q", "k", "v", "o")
"""The attention projections by role: query, key, value, output."""


def config_value(config: Any, *names: str, default: Any = None) -> Any:
    """The first of ``names`` set (not ``None``) in ``config`` (an object or a dict), else ``default``."""
    for name in names:
        value = config.get(name) if isinstance(config, Mapping) else getattr(config, name, None)
        if value is not None:
            return value
    return default


def config_int(config: Any, what: str, *names: str, default: Any = None) -> int:
    """:func:`config_value` as a positive integer; :class:`HeadImportError` naming ``what`` or the field."""
    value = config_value(config, *names, default=default)
    if value is None:
        raise HeadImportError(f"config has no {what} (looked for {list(names)})")
    return integer(value, f"config {names[0]}", low=1, error=HeadImportError)


@dataclass(frozen=True)
class HeadGeometry:
    """What a config says about one layer's attention: width, query and key/value head counts (GQA),
    ``head_dim`` and the heads' :class:`RopeSpec`."""

    hidden: int
    n_heads: int
    n_kv: int
    head_dim: int
    spec: RopeSpec


class HFConverter:
    """An HF architecture: its facts plus ``transformers``' names, configs and numerics (module docstring).

    Subclasses set the class attributes and implement :meth:`model_class`, :meth:`config_class`,
    :meth:`export_config`, :meth:`head_geometry`, :meth:`place_head` and :meth:`place_model`.
    """

    facts: ClassVar[Architecture]
    base_attribute: ClassVar[str]
    """Attribute of a causal LM holding the base model (``transformer.``/``model.`` in its keys)."""
    layers_attribute: ClassVar[str]
    attention_attribute: ClassVar[str]
    input_norm_attribute: ClassVar[str]
    other_norm_attributes: ClassVar[tuple[str, ...]] = ()
    """A layer's norms besides the pre-attention one (LLaMA's ``post_attention_layernorm``)."""
    embedding_attribute: ClassVar[str]
    final_norm_attribute: ClassVar[str]
    projections: ClassVar[Mapping[str, str]]
    """Role (:data:`ROLES`) -> projection module name."""
    lm_head_key: ClassVar[str] = "lm_head.weight"
    width_keys: ClassVar[tuple[str, ...]]
    heads_keys: ClassVar[tuple[str, ...]]
    inner_key: ClassVar[str]
    norm_upcasts: ClassVar[bool] = False
    """The norm module computes in float32 whatever the model's dtype."""
    position_table: ClassVar[bool] = False
    """The model allocates a ``max_positions x rotary_dim`` sin/cos table."""
    last_rows_shortcut: ClassVar[bool] = False
    """The layer-swap rows of a block may be computed from its LayerNorm, q and k alone
    (:class:`~ropeproof.verify.interop.hf._layer_swap.LayerSwap`'s shortcut: GPT-J's block layout, interleaved
    rotary on the first ``rotary_dim`` features, eager float32 weights); else the whole block runs."""

    @property
    def name(self) -> str:
        return self.facts.name

    @property
    def label(self) -> str:
        return self.facts.label

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"

    # ---- module paths -------------------------------------------------------------------------------

    def base(self, model: Any) -> Any:
        """The base model of a causal LM (the model itself when it is one)."""
        return getattr(model, self.base_attribute, model)

    def layers(self, model: Any) -> Any:
        """The decoder layers of a causal LM or base model."""
        return getattr(self.base(model), self.layers_attribute)

    def block(self, model: Any, layer: int) -> Any:
        """Decoder layer ``layer``; :class:`HeadImportError` when it is out of range."""
        layers = self.layers(model)
        if not 0 <= layer < len(layers):
            raise HeadImportError(f"layer={layer} is out of range; the model has layers 0..{len(layers) - 1}")
        return layers[layer]

    def attention(self, block: Any) -> Any:
        """A decoder layer's attention module."""
        return getattr(block, self.attention_attribute)

    def input_norm(self, block: Any) -> Any:
        """A decoder layer's pre-attention norm module."""
        return getattr(block, self.input_norm_attribute)

    def rotary_inside_attention(self, attention: Any) -> bool:
        """Whether ``attention`` rotates by itself (from position ids) rather than taking the base model's
        ``position_embeddings``."""
        return False

    def rotary_embeddings(self, model: Any, hidden: torch.Tensor, positions: torch.Tensor) -> Any:
        """The ``position_embeddings`` (cos, sin) the base model passes its layers for ``positions``."""
        return self.base(model).rotary_emb(hidden, positions)

    # ---- state-dict keys ----------------------------------------------------------------------------

    def layer_prefix(self, layer: int) -> str:
        """Key prefix of decoder layer ``layer`` in a causal LM's state dict."""
        return f"{self.base_attribute}.{self.layers_attribute}.{layer}."

    def attention_prefixes(self, layer: int) -> tuple[str, ...]:
        """Where layer ``layer``'s projections may sit: in a causal LM's, a base model's or the attention
        module's own state dict."""
        inner = f"{self.layers_attribute}.{layer}.{self.attention_attribute}."
        return (f"{self.base_attribute}.{inner}", inner, "")

    def projection_key(self, role: str, kind: str = "weight") -> str:
        """A projection's key inside its attention module (``q_proj.weight``)."""
        return f"{self.projections[role]}.{kind}"

    def attention_key(self, layer: int, role: str, kind: str = "weight") -> str:
        """A projection's key in a causal LM's state dict."""
        return f"{self.layer_prefix(layer)}{self.attention_attribute}.{self.projection_key(role, kind)}"

    def norm_keys(self, layer: int) -> tuple[str, ...]:
        """The gain keys of layer ``layer``'s norms, pre-attention first."""
        names = (self.input_norm_attribute, *self.other_norm_attributes)
        return tuple(f"{self.layer_prefix(layer)}{n}.weight" for n in names)

    @property
    def embedding_key(self) -> str:
        return f"{self.base_attribute}.{self.embedding_attribute}.weight"

    @property
    def final_norm_key(self) -> str:
        return f"{self.base_attribute}.{self.final_norm_attribute}.weight"

    def export_weights(
        self,
        embedding: np.ndarray,
        layers: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]],
        lm_head: np.ndarray,
        gain: np.ndarray,
    ) -> dict[str, np.ndarray]:
        """The state dict entries an export sets: the embedding, per layer the ``(q, k, v, o)`` projections
        and every norm's gain, the final norm's gain and the LM head (in that order)."""
        out = {self.embedding_key: embedding}
        for layer, weights in enumerate(layers):
            for role, w in zip(ROLES, weights, strict=True):
                out[self.attention_key(layer, role)] = w
            for key in self.norm_keys(layer):
                out[key] = gain
        out[self.final_norm_key] = gain
        out[self.lm_head_key] = lm_head
        return out

    # ---- configs ------------------------------------------------------------------------------------

    def model_class(self, tf: Any) -> Any:
        """The causal LM class of ``transformers`` (``tf``)."""
        raise NotImplementedError

    def config_class(self, tf: Any) -> Any:
        """The config class of ``transformers`` (``tf``)."""
        raise NotImplementedError

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
        """The config of an exported model: ``n_layers`` layers of one head each laid out as
        ``placement``, norms with :data:`~ropeproof.verify.interop.hf._norm_bypass.NORM_EPS`, MLPs of
        width 1 (zeroed), no dropout, no biases, untied embeddings."""
        raise NotImplementedError

    def exported_model(self, tf: Any, config: Any, dtype: torch.dtype, weights: Mapping[str, Any]) -> Any:
        """The causal LM of ``config`` (``transformers`` is ``tf``) in ``dtype``, its state dict set to
        ``weights`` and zero everywhere else (MLPs, biases); the caller's torch RNG state is left as it
        was (HF's initialisation draws the weights this overwrites)."""
        rng_state = torch.random.get_rng_state()
        try:
            model = self.model_class(tf)(config)
        finally:
            torch.random.set_rng_state(rng_state)
        model = model.to(dtype).eval()
        state = model.state_dict()
        missing = set(weights) - set(state)
        if missing:  # pragma: no cover - guards against a transformers rename
            raise ExportError(f"this transformers version has no parameters {sorted(missing)}")
        for key, value in state.items():
            state[key] = weights[key] if key in weights else torch.zeros_like(value)
        model.load_state_dict(state)
        return model

    @staticmethod
    def _export_common(vocab: int, attn_implementation: str, pad_token_id: int | None) -> dict[str, Any]:
        return {
            "vocab_size": vocab,
            "tie_word_embeddings": False,
            "bos_token_id": None,
            "eos_token_id": None,
            "pad_token_id": pad_token_id,
            "attn_implementation": attn_implementation,
        }

    def width(self, config: Any) -> int:
        return config_int(config, "hidden size", *self.width_keys)

    def heads(self, config: Any) -> int:
        return config_int(config, "head count", *self.heads_keys)

    def inner(self, config: Any) -> int:
        """The MLP width (``4 * width`` when the config leaves it unset)."""
        value = config_value(config, self.inner_key)
        return int(value) if value is not None else 4 * self.width(config)

    def head_geometry(self, config: Any) -> HeadGeometry:
        """The attention geometry of ``config`` (an object or a dict); :class:`HeadImportError` when it is
        another architecture's or not a plain RoPE head."""
        raise NotImplementedError

    def _check_model_type(self, config: Any) -> None:
        model_type = config_value(config, "model_type")
        if model_type is not None and model_type != self.name:
            raise HeadImportError(f"config.model_type={model_type!r} does not match arch={self.name!r}")

    # ---- numerics -----------------------------------------------------------------------------------

    def norm_dtype(self, dtype: torch.dtype) -> torch.dtype:
        """The dtype the norm module computes in for a model of ``dtype``."""
        return torch.float32 if self.norm_upcasts else dtype

    def evaluate_norm(self, norm: Any, x: torch.Tensor) -> torch.Tensor:
        """The norm module ``norm`` on ``x`` (``[..., width]``) in float64 (a float64 copy of the module)."""
        return copy.deepcopy(norm).to("cpu", torch.float64)(x)

    def rope_cos_sin(self, model: Any, n: int) -> tuple[np.ndarray, np.ndarray]:
        """``(cos, sin)``, each ``[n, rotary_dim / 2]`` (float64 copies): the rotation of plane ``k`` at
        positions ``0 .. n - 1`` exactly as ``model``'s own code builds it (in float32 for the built-in
        architectures, whatever the model's dtype)."""
        raise NotImplementedError

    def _model_positions(self, model: Any, n: int) -> tuple[torch.Tensor, torch.Tensor]:
        """A ``[1, n, 1]`` hidden state in the model's dtype and positions ``0 .. n - 1``: what the rotary
        module reads."""
        dtype = next(model.parameters()).dtype
        return torch.zeros(1, n, 1, dtype=dtype), torch.arange(n)[None]

    def position_table_size(self, max_positions: int, rotary_dim: int) -> int:
        """Entries of the sin/cos table the model allocates (0 when it computes them per call)."""
        return max_positions * rotary_dim if self.position_table else 0

    # ---- placement ----------------------------------------------------------------------------------

    def check_options(self, rotary_dim: int | None, rope_theta: float | None, hint: str = "") -> None:
        """Refuse a ``rope_theta`` other than a fixed base and a ``rotary_dim`` without partial rotary."""
        facts = self.facts
        if facts.fixed_base is not None and rope_theta is not None and float(rope_theta) != facts.fixed_base:
            free = " or ".join(f"arch={n!r}" for n, f in ARCHITECTURES.items() if f.fixed_base is None)
            raise ExportError(
                f"rope_theta={rope_theta}: {facts.label}'s base is fixed at {facts.fixed_base:g}; use {free}"
            )
        if not facts.partial_rotary and rotary_dim is not None:
            raise ExportError(
                f"rotary_dim={rotary_dim}: {facts.label} rotates all of head_dim (no partial rotary){hint}"
            )

    def check_model_options(
        self, head_dim: int | None, rotary_dim: int | None, rope_theta: float | None
    ) -> None:
        """:meth:`check_options`, and a ``head_dim`` refused where it is the width (one head per layer)."""
        if not self.facts.separate_head_dim and head_dim is not None:
            raise ExportError(
                f"head_dim: {self.label} in [A]'s shape has head_dim = {self.width_keys[0]}; use hidden_size"
            )
        self.check_options(rotary_dim, rope_theta)

    def _own(self, placement: Placement) -> Placement:
        return dataclasses.replace(placement, arch=self.name)

    def place_head(
        self,
        head: CompiledHead,
        rotary_dim: int | None = None,
        head_dim: int | None = None,
        rope_theta: float | None = None,
    ) -> Placement:
        """Where ``head`` goes in a one-layer export reading dims ``[0, d)`` and writing ``[d, 2d)``."""
        raise NotImplementedError

    def place_model(
        self,
        model: CompiledModel,
        hidden_size: int | None,
        head_dim: int | None,
        rotary_dim: int | None,
        rope_theta: float | None,
    ) -> tuple[int, list[Placement]]:
        """The width and every layer's placement of a multi-hop export (residual dims ``[0, d)``)."""
        raise NotImplementedError
