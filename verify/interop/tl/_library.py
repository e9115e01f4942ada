"""Reaching TransformerLens: the lazy import, building a ``HookedTransformer`` quietly, and the
configuration features a RoPE head import or export cannot represent exactly."""

from __future__ import annotations

import warnings
from typing import Any

from ropeproof.verify.interop._errors import ExportError

TL_EXTRA = "pip install 'ropeproof[tl]'"
"""How to install TransformerLens with the versions this module is tested against."""


def require_transformer_lens() -> Any:
    """The ``transformer_lens`` module; :class:`ExportError` naming the ``tl`` extra when absent.

    ``HookedTransformer`` was removed in TransformerLens 4.0, so a 4.x install is refused too.
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            import transformer_lens
            from transformer_lens import HookedTransformer  # noqa: F401
    except ImportError as exc:
        raise ExportError(
            f"TransformerLens with HookedTransformer (3.x) is not installed; install the extra: {TL_EXTRA}"
            f" ({exc})"
        ) from exc
    return transformer_lens


def build_hooked_transformer(cfg: Any) -> Any:
    """``HookedTransformer(cfg)`` without TransformerLens 3.x's deprecation warning.

    ``cfg`` is a ``HookedTransformerConfig`` or its dict. The construction draws random initial
    weights; the caller's torch RNG state is restored afterwards.
    """
    import torch

    tl = require_transformer_lens()
    state = torch.random.get_rng_state()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            return tl.HookedTransformer(cfg)
    finally:
        torch.random.set_rng_state(state)
