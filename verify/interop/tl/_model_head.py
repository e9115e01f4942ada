"""One head of a ``HookedTransformer`` as a :class:`~ropeproof.constructions._head.CompiledHead` with a
vocabulary (see :mod:`ropeproof.verify.interop._imported`)."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import torch

from ropeproof.constructions._head import CompiledHead
from ropeproof.verify.interop._imported import (
    EXACT_EMBEDDING,
    PROXY_EMBEDDING,
    choose_token_ids,
    imported_head,
)
from ropeproof.verify.interop.tl import _converter as tl_names
from ropeproof.verify.interop.tl._head_import import import_tl_head


def compiled_from_tl_model(
    model: Any, layer: int, head: int, token_ids: Sequence[int] | None = None, source: str = ""
) -> CompiledHead:
    """Head ``head`` of layer ``layer`` of a ``HookedTransformer``, with the vocabulary ``token_ids``
    (default: all, up to :data:`~ropeproof.verify.interop._imported.MAX_IMPORT_VOCAB`).

    The weights come from :func:`~ropeproof.verify.interop.tl._head_import.import_tl_head`
    (float64, ``attn_scale`` folded into ``W_Q``); ``W_E`` is ``blocks[layer].ln1`` of each
    token's ``W_E`` row, evaluated in float64; ``W_U`` the model's ``W_U`` columns.
    """
    attention = import_tl_head(model, layer, head, device="cpu", dtype=torch.float64)
    w_e = tl_names.embedding(model).detach()
    ids = choose_token_ids(int(w_e.shape[0]), token_ids)
    norm = copy.deepcopy(tl_names.input_norm(model, layer)).to("cpu", torch.float64)
    with torch.no_grad():
        layer_input = norm(w_e[ids].to("cpu", torch.float64)[None])[0]
        unembed = tl_names.unembedding(model).detach()[:, ids].to("cpu", torch.float64)
    info = {
        "library": "tl",
        "model": source or str(getattr(model.cfg, "model_name", "")),
        "layer": layer,
        "head": head,
        "embedding": EXACT_EMBEDDING if layer == 0 else PROXY_EMBEDDING,
    }
    return imported_head(attention, layer_input, unembed, ids, f"tl-L{layer}H{head}", info)


compiled_from_hooked_transformer = compiled_from_tl_model
""":func:`compiled_from_tl_model` under its earlier name (its HF counterpart: ``compiled_from_hf_model``)."""
