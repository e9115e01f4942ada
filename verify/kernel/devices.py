"""Resolve the ``device`` and ``dtype`` arguments accepted across the toolkit."""

from __future__ import annotations

import torch

from ropeproof.theory.errors import InputError

DTYPES: dict[str, torch.dtype] = {
    "float64": torch.float64,
    "float32": torch.float32,
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
}
"""The floating dtypes a check may run in, by name."""

DeviceLike = str | torch.device
DtypeLike = str | torch.dtype


def resolve_device(device: DeviceLike = "auto") -> torch.device:
    """Return the torch device for ``device``.

    ``"auto"`` picks ``cuda`` when a CUDA device is available and the CPU otherwise. Any other
    string or ``torch.device`` is passed through after checking that it exists: only ``cpu`` (no index
    other than 0) and ``cuda``/``cuda:N`` with ``N`` below the number of CUDA devices are accepted
    (``meta``, ``mps``, ``cpu:1`` are refused with :class:`InputError`).
    """
    if isinstance(device, torch.device):
        resolved = device
    elif isinstance(device, str):
        if device == "auto":
            return torch.device("cuda" if torch.cuda.is_available() else "cpu")
        try:
            resolved = torch.device(device)
        except RuntimeError as exc:
            raise InputError(
                f"device={device!r} is not a device; accepted: 'auto', 'cpu', 'cuda', 'cuda:N'"
            ) from exc
    else:
        raise InputError(f"device must be a str or torch.device, got {type(device).__name__}")
    accepted = "accepted: 'auto', 'cpu', 'cuda', 'cuda:N'"
    if resolved.type not in ("cpu", "cuda"):
        raise InputError(f"device={str(resolved)!r} is not supported; {accepted}")
    if resolved.type == "cpu" and resolved.index not in (None, 0):
        raise InputError(f"device={str(resolved)!r} is not a device (the CPU has no index); {accepted}")
    if resolved.type == "cuda":
        if not torch.cuda.is_available():
            raise InputError(f"device={str(resolved)!r} requested but CUDA is not available; use 'auto'")
        count = torch.cuda.device_count()
        if resolved.index is not None and resolved.index >= count:
            raise InputError(
                f"device={str(resolved)!r} does not exist: this machine has {count} CUDA device(s), "
                f"cuda:0 to cuda:{count - 1}"
            )
    return resolved


def resolve_dtype(dtype: DtypeLike = torch.float64) -> torch.dtype:
    """Return the torch dtype for ``dtype`` (a name from :data:`DTYPES` or a floating dtype)."""
    if isinstance(dtype, str):
        if dtype not in DTYPES:
            raise InputError(f"dtype={dtype!r} is unknown; accepted: {sorted(DTYPES)}")
        return DTYPES[dtype]
    if isinstance(dtype, torch.dtype) and dtype in DTYPES.values():
        return dtype
    raise InputError(f"dtype={dtype!r} is not supported; accepted: {sorted(DTYPES)}")


def dtype_name(dtype: DtypeLike) -> str:
    """The short name of a supported dtype (``torch.float64`` -> ``"float64"``); a name from
    :data:`DTYPES` is its own (it was refused as "not supported" before)."""
    dtype = resolve_dtype(dtype)
    for name, value in DTYPES.items():
        if value == dtype:
            return name
    raise InputError(f"dtype={dtype!r} is not supported; accepted: {sorted(DTYPES)}")
