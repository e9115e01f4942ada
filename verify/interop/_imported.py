"""A head imported from a model, as a :class:`~ropeproof.constructions._head.CompiledHead`.

An imported :class:`~ropeproof.verify.kernel._attention.RopeAttention` has no vocabulary. Giving it
one makes every tool that takes a compiled head (``answer``, exact sweeps over a token family,
``ps-score``, export to HF or TransformerLens) work on it, and lets ``CompiledHead.save`` write it
as an ordinary head directory (``head.json`` + ``weights.safetensors``, format ``ropeproof-head``):

- ``tokens``: the model's token ids as names (``"0"``, ``"17"``, ...), a chosen subset of the
  vocabulary;
- ``W_E``: each token's embedding passed through the layer's pre-attention norm, i.e. exactly what
  the head reads at layer 0 (rotary models add no position embedding to the residual); for deeper
  layers the residual depends on the context, so ``W_E`` is a token-only proxy and
  ``metadata["imported"]["embedding"]`` says so;
- ``W_U``: the model's unembedding columns of those tokens, read straight off the head's output
  (the direct path, without the final norm);
- ``metadata["imported"]``: where it came from (library, model, layer, head).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from ropeproof.constructions._head import CompiledHead
from ropeproof.verify.interop._errors import HeadImportError
from ropeproof.verify.kernel._attention import RopeAttention

MAX_IMPORT_VOCAB = 4096
"""Largest vocabulary imported whole; past it the caller chooses ``token_ids``."""

EXACT_EMBEDDING = "layer-0 attention input: token embedding through the pre-attention norm (exact)"
PROXY_EMBEDDING = (
    "token embedding through this layer's pre-attention norm: a token-only proxy (deeper layers read a "
    "context-dependent residual stream)"
)


def choose_token_ids(vocab_size: int, token_ids: Sequence[int] | None) -> list[int]:
    """``token_ids`` checked against ``0 .. vocab_size - 1`` (default: all, up to
    :data:`MAX_IMPORT_VOCAB`); distinct ids in the given order."""
    if token_ids is None:
        if vocab_size > MAX_IMPORT_VOCAB:
            raise HeadImportError(
                f"the vocabulary has {vocab_size} tokens (> {MAX_IMPORT_VOCAB}); choose token_ids "
                "(--tokens A:B on the command line)"
            )
        return list(range(vocab_size))
    ids = [int(i) for i in token_ids]
    if not ids or len(set(ids)) != len(ids) or min(ids) < 0 or max(ids) >= vocab_size:
        raise HeadImportError(
            f"token_ids must be distinct ids in 0..{vocab_size - 1}, got {len(ids)} ids"
            + (f" from {min(ids)} to {max(ids)}" if ids else "")
        )
    return ids


def imported_head(
    attention: RopeAttention,
    layer_input: torch.Tensor | np.ndarray,
    unembed: torch.Tensor | np.ndarray,
    token_ids: Sequence[int],
    name: str,
    source: dict[str, Any],
) -> CompiledHead:
    """The :class:`CompiledHead` of an imported head (see the module docstring).

    Shapes: layer_input [V, d_model]; unembed [d_model, V]; V = len(token_ids).

    ``layer_input`` holds the head's input for each chosen token, in ``token_ids`` order;
    ``unembed`` the unembedding columns of the same tokens. ``source`` is stored as
    ``metadata["imported"]``.
    """
    w = {
        n: getattr(attention, n).detach().to("cpu", torch.float64).numpy()
        for n in ("W_Q", "W_K", "W_V", "W_O")
    }
    w_e = torch.as_tensor(layer_input).detach().to("cpu", torch.float64).numpy()
    w_u = torch.as_tensor(unembed).detach().to("cpu", torch.float64).numpy()
    return CompiledHead(
        name=name,
        tokens=tuple(str(i) for i in token_ids),
        W_E=w_e,
        W_Q=w["W_Q"],
        W_K=w["W_K"],
        W_V=w["W_V"],
        W_O=w["W_O"],
        W_U=w_u,
        spec=attention.spec,
        scale=attention.scale,
        metadata={"imported": dict(source)},
    )
