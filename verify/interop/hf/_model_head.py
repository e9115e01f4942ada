"""One head of a GPT-J / LLaMA model (or a local checkpoint) as a
:class:`~ropeproof.constructions._head.CompiledHead` with a vocabulary (see
:mod:`ropeproof.verify.interop._imported`)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from ropeproof.constructions._head import CompiledHead
from ropeproof.verify.interop._errors import HeadImportError
from ropeproof.verify.interop._imported import (
    EXACT_EMBEDDING,
    PROXY_EMBEDDING,
    choose_token_ids,
    imported_head,
)
from ropeproof.verify.interop.hf._converters import CONVERTERS, converter
from ropeproof.verify.interop.hf._head_import import import_model_head
from ropeproof.verify.interop.hf._library import require_transformers


def compiled_from_hf_model(
    model: Any,
    layer: int,
    head: int,
    token_ids: Sequence[int] | None = None,
    arch: str | None = None,
    source: str = "",
) -> CompiledHead:
    """Head ``head`` of layer ``layer`` of a loaded GPT-J / LLaMA causal LM, with the vocabulary
    ``token_ids`` (default: all, up to :data:`~ropeproof.verify.interop._imported.MAX_IMPORT_VOCAB`).

    The weights come from :func:`~ropeproof.verify.interop.hf._head_import.import_model_head`
    (float64, ``scale`` folded into ``W_Q``); ``W_E`` is the embedding of each token through the
    layer's pre-attention norm (``ln_1`` / ``input_layernorm``), evaluated in float64
    (:meth:`~ropeproof.verify.interop.hf._converter.HFConverter.evaluate_norm`: GPT-J's ``LayerNorm`` runs
    in float64 when its parameters are float64; LLaMA's ``RMSNorm`` upcasts to float32 inside
    ``transformers``, so its formula ``x / sqrt(mean(x^2) + eps) * weight`` is evaluated instead).
    """
    conv = converter(arch or getattr(model.config, "model_type", "") or "", HeadImportError)
    arch = conv.name
    attention = import_model_head(model, arch, layer, head, device="cpu", dtype=torch.float64)
    embedding = model.get_input_embeddings().weight
    ids = choose_token_ids(int(embedding.shape[0]), token_ids)
    norm = conv.input_norm(conv.block(model, layer))
    with torch.no_grad():
        layer_input = conv.evaluate_norm(norm, embedding.detach()[ids].to("cpu", torch.float64))
        unembed = model.get_output_embeddings().weight.detach()[ids].to("cpu", torch.float64).T
    info = {
        "library": "hf",
        "arch": arch,
        "model": source or str(getattr(model.config, "_name_or_path", "")),
        "layer": layer,
        "head": head,
        "embedding": EXACT_EMBEDDING if layer == 0 else PROXY_EMBEDDING,
    }
    return imported_head(attention, layer_input, unembed, ids, f"{arch}-L{layer}H{head}", info)


def load_hf_model(model_dir: str | Path) -> Any:
    """A causal LM from a local checkpoint directory (``config.json`` + weights), in float64;
    ``local_files_only``, so nothing is downloaded."""
    path = Path(model_dir)
    config_file = path / "config.json"
    if not config_file.is_file():
        raise HeadImportError(f"{path} must be a checkpoint directory with config.json (save_pretrained)")
    try:
        config = json.loads(config_file.read_text())
    except (ValueError, UnicodeDecodeError) as exc:
        raise HeadImportError(f"{config_file} is not a JSON file: {exc}") from None
    model_type = config.get("model_type") if isinstance(config, dict) else None
    if model_type not in CONVERTERS:
        raise HeadImportError(
            f"{config_file} has model_type={model_type!r}; accepted: a checkpoint of one of "
            f"{list(CONVERTERS)} (written by save_pretrained)"
        )
    tf = require_transformers()
    try:
        model = tf.AutoModelForCausalLM.from_pretrained(str(path), local_files_only=True)
    except (OSError, ValueError, KeyError, TypeError) as exc:  # missing or mismatched weights, bad config
        raise HeadImportError(f"transformers cannot load {path} as a {model_type} causal LM: {exc}") from None
    return model.to(torch.float64).eval()
