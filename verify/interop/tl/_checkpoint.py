"""A ``HookedTransformer`` on disk, which TransformerLens itself does not define.

A directory holding

- ``tl_config.json``: ``{"format": "ropeproof-tl-model", "version": 1, "config": {...}}``, the
  ``HookedTransformerConfig`` fields as JSON (``dtype`` by name, ``device`` left out);
- ``model.safetensors``: the model's ``state_dict()`` (parameters and buffers).

:func:`save_hooked_transformer` writes it, :func:`load_hooked_transformer` rebuilds the model from it
(nothing downloaded), and ``ropeproof import tl DIR`` reads it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch

from ropeproof.verify.interop._errors import HeadImportError
from ropeproof.verify.interop.tl._library import build_hooked_transformer, require_transformer_lens
from ropeproof.verify.kernel._devices import DTYPES, dtype_name

TL_MODEL_FORMAT, TL_MODEL_VERSION = "ropeproof-tl-model", 1
TL_CONFIG_FILE = "tl_config.json"
TL_WEIGHTS_FILE = "model.safetensors"


def _json_config(cfg: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in cfg.to_dict().items():
        if key == "device":
            continue
        if isinstance(value, torch.dtype):
            value = dtype_name(value)
        try:
            json.dumps(value)
        except TypeError as exc:
            raise HeadImportError(f"config field {key}={value!r} has no JSON form") from exc
        out[key] = value
    return out


def save_hooked_transformer(model: Any, path: str | Path) -> Path:
    """Write ``model`` (a ``HookedTransformer``) to the directory ``path``; return the path."""
    from safetensors.torch import save_file

    out = Path(path)
    out.mkdir(parents=True, exist_ok=True)
    meta = {"format": TL_MODEL_FORMAT, "version": TL_MODEL_VERSION, "config": _json_config(model.cfg)}
    (out / TL_CONFIG_FILE).write_text(json.dumps(meta, indent=1) + "\n")
    state = {k: v.detach().to("cpu").contiguous().clone() for k, v in model.state_dict().items()}
    save_file(state, str(out / TL_WEIGHTS_FILE))
    return out


def load_hooked_transformer(path: str | Path, device: str = "cpu") -> Any:
    """The ``HookedTransformer`` that :func:`save_hooked_transformer` wrote into ``path``.

    Raises :class:`HeadImportError` naming the file when the directory is not in this format.
    """
    from safetensors.torch import load_file

    src = Path(path)
    meta_path = src / TL_CONFIG_FILE
    if not meta_path.is_file() or not (src / TL_WEIGHTS_FILE).is_file():
        raise HeadImportError(
            f"{src} must hold {TL_CONFIG_FILE} and {TL_WEIGHTS_FILE} (written by save_hooked_transformer "
            "or export_hooked_transformer(...).save)"
        )
    try:
        meta = json.loads(meta_path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise HeadImportError(f"{meta_path} is not valid JSON: {exc}") from exc
    if not isinstance(meta, dict) or meta.get("format") != TL_MODEL_FORMAT or meta.get("version") != 1:
        raise HeadImportError(f"{meta_path} is not a {TL_MODEL_FORMAT} file of version {TL_MODEL_VERSION}")
    config = dict(meta["config"])
    if config.get("dtype") not in DTYPES:
        raise HeadImportError(f"{meta_path}: dtype={config.get('dtype')!r}; accepted: {sorted(DTYPES)}")
    config["dtype"] = DTYPES[config["dtype"]]
    config["device"] = device
    tl = require_transformer_lens()
    model = build_hooked_transformer(tl.HookedTransformerConfig.from_dict(config))
    model.load_state_dict(load_file(str(src / TL_WEIGHTS_FILE)), strict=True)
    return model.eval()  # built on cfg.device already
