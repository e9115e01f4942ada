"""The facts about each model architecture that the toolkit exports to and imports from: how its RoPE
pairs dims, whether its base is fixed, whether dims may pass through unrotated, which norm it applies.

Plain data, no ``transformers``: the programs a checkpoint carries
(:mod:`ropeproof.verify.studies.beyond._checkpoint_solvers`) are built from these facts, and the HF converters
(:mod:`ropeproof.verify.interop.hf._converters`) add the key names, module paths and configs on top.
Every use of an architecture name goes through :data:`ARCHITECTURES` (:func:`architecture`), so adding
an architecture adds one entry (:func:`register_architecture`, which the converter registry calls).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from ropeproof.machinery._errors import InputError, RopeproofError
from ropeproof.theory._rope_spec import LAYOUTS, Layout, RopeSpec

Norm = Literal["layernorm", "rmsnorm"]
NORMS: tuple[str, ...] = ("layernorm", "rmsnorm")

GPTJ_BASE = 10000.0
"""GPT-J's RoPE base; fixed in its code (``create_sinusoidal_positions``)."""


@dataclass(frozen=True)
class Architecture:
    """One architecture's RoPE and norm, as its reference implementation computes them.

    ``name``: the HF ``model_type`` (``"gptj"``); ``label``: how messages write it (``"GPT-J"``).
    ``layout``: ``"interleaved"`` (plane ``k`` is dims ``2k, 2k+1``) or ``"half"`` (dims ``k,
    k + rotary_dim/2``). ``fixed_base``: the RoPE base when the architecture fixes it, ``None`` when its
    config chooses it (``rope_theta``). ``partial_rotary``: only the first ``rotary_dim`` dims of a head
    rotate and the rest pass through (``theta = 0``). ``separate_head_dim``: the config sets ``head_dim``
    apart from the width (``False``: ``head_dim = width / heads``). ``norm``: the pre-attention norm,
    ``"layernorm"`` (subtracts the mean) or ``"rmsnorm"`` (only rescales).
    """

    name: str
    label: str
    layout: Layout
    fixed_base: float | None
    partial_rotary: bool
    separate_head_dim: bool
    norm: Norm

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise InputError(f"name={self.name!r} must be a non-empty string")
        if self.layout not in LAYOUTS:
            raise InputError(f"layout={self.layout!r} is unknown; accepted: {list(LAYOUTS)}")
        if self.norm not in NORMS:
            raise InputError(f"norm={self.norm!r} is unknown; accepted: {list(NORMS)}")
        if self.fixed_base is not None and not (math.isfinite(self.fixed_base) and self.fixed_base > 0):
            raise InputError(f"fixed_base={self.fixed_base} must be finite and > 0 (or None)")

    @property
    def norm_subtracts_mean(self) -> bool:
        """Whether the norm subtracts each token's mean (LayerNorm), which an exported model must cancel."""
        return self.norm == "layernorm"

    def rope_spec(self, head_dim: int, rotary_dim: int, base: float) -> RopeSpec:
        """The :class:`RopeSpec` of a head of this architecture: ``rotary_dim`` rotating dims at
        ``base^(-2k/rotary_dim)`` in float64 (the formula; HF evaluates it in float32), the rest passing
        through. ``base = inf`` gives the spectrum ``(1, 0, 0, ...)``: ``inf ** x = inf`` and
        ``1 / inf = 0`` in every precision, except ``inf ** 0 = 1``."""
        if math.isinf(base):
            freqs = [1.0] + [0.0] * (rotary_dim // 2 - 1)
            return RopeSpec(head_dim, rotary_dim, freqs=freqs, layout=self.layout)
        return RopeSpec(head_dim, rotary_dim, base, layout=self.layout)


GPTJ = Architecture(
    "gptj",
    "GPT-J",
    "interleaved",
    fixed_base=GPTJ_BASE,
    partial_rotary=True,
    separate_head_dim=False,
    norm="layernorm",
)
LLAMA = Architecture(
    "llama",
    "LLaMA",
    "half",
    fixed_base=None,
    partial_rotary=False,
    separate_head_dim=True,
    norm="rmsnorm",
)

ARCHITECTURES: dict[str, Architecture] = {GPTJ.name: GPTJ, LLAMA.name: LLAMA}
"""Every architecture by name, in registration order (:func:`register_architecture` adds one)."""


def register_architecture(facts: Architecture) -> Architecture:
    """Add ``facts`` under ``facts.name`` (the same facts again is a no-op); different facts under a
    name already taken raise :class:`InputError`."""
    if not isinstance(facts, Architecture):
        raise InputError(f"facts must be an Architecture, got {type(facts).__name__}")
    known = ARCHITECTURES.get(facts.name)
    if known is not None and known != facts:
        raise InputError(f"architecture {facts.name!r} is already registered with other facts")
    ARCHITECTURES[facts.name] = facts
    return facts


def architecture(name: object, error: type[RopeproofError] = InputError) -> Architecture:
    """The facts of architecture ``name`` (case-insensitive); ``error`` naming the accepted names."""
    facts = ARCHITECTURES.get(name.lower()) if isinstance(name, str) else None
    if facts is None:
        raise error(f"arch={name!r} is unknown; accepted: {list(ARCHITECTURES)}")
    return facts
