"""Resolve the ``device`` and ``dtype`` arguments accepted across the toolkit.

torch is imported when a device or a torch dtype is resolved, not with this module: a dtype given by
name (``"float64"``) is checked and named without it (:func:`dtype_name`), so numpy-only callers (the
exact sweeps) stay torch-free. :data:`DTYPES`, ``DeviceLike`` and ``DtypeLike`` are built on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ropeproof.machinery._errors import InputError

if TYPE_CHECKING:
    import torch

    DeviceLike = str | torch.device
    DtypeLike = str | torch.dtype

DTYPE_NAMES: tuple[str, ...] = ("float64", "float32", "float16", "bfloat16")
"""The floating dtypes a check may run in, by name (the keys of :data:`DTYPES`, in order)."""


def __getattr__(name: str) -> Any:
    """``DTYPES`` (the torch dtypes by name), ``DeviceLike`` and ``DtypeLike``, importing torch."""
    if name not in ("DTYPES", "DeviceLike", "DtypeLike"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import torch

    values = {
        "DTYPES": {n: getattr(torch, n) for n in DTYPE_NAMES},
        "DeviceLike": str | torch.device,
        "DtypeLike": str | torch.dtype,
    }
    globals().update(values)
    return values[name]


def resolve_device(device: DeviceLike = "auto") -> torch.device:
    """Return the torch device for ``device``.

    ``"auto"`` picks ``cuda`` when a CUDA device is available and the CPU otherwise. Any other
    string or ``torch.device`` is passed through after checking that it exists: only ``cpu`` (no index
    other than 0) and ``cuda``/``cuda:N`` with ``N`` below the number of CUDA devices are accepted
    (``meta``, ``mps``, ``cpu:1`` are refused with :class:`InputError`).
    """
    import torch

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


def resolve_dtype(dtype: DtypeLike = "float64") -> torch.dtype:
    """Return the torch dtype for ``dtype`` (a name from :data:`DTYPES` or a floating dtype)."""
    import torch

    dtypes = {n: getattr(torch, n) for n in DTYPE_NAMES}
    if isinstance(dtype, str):
        if dtype not in dtypes:
            raise InputError(f"dtype={dtype!r} is unknown; accepted: {sorted(dtypes)}")
        return dtypes[dtype]
    if isinstance(dtype, torch.dtype) and dtype in dtypes.values():
        return dtype
    raise InputError(f"dtype={dtype!r} is not supported; accepted: {sorted(dtypes)}")


def dtype_name(dtype: DtypeLike) -> str:
    """The short name of a supported dtype (``torch.float64`` -> ``"float64"``; a name from
    :data:`DTYPE_NAMES` is itself, checked without importing torch)."""
    if isinstance(dtype, str):
        if dtype not in DTYPE_NAMES:
            raise InputError(f"dtype={dtype!r} is unknown; accepted: {sorted(DTYPE_NAMES)}")
        return dtype
    import torch

    for name in DTYPE_NAMES:
        if getattr(torch, name) == dtype:
            return name
    raise InputError(f"dtype={dtype!r} is not supported; accepted: {sorted(DTYPE_NAMES)}")
