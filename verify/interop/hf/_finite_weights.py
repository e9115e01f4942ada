"""Weights are checked finite in the dtype they are written in, before anything is written: a large
``logit_scale`` (``1e300``) or an extreme head overflows float32 (above about ``3.4e38``) into ``inf``,
and a checkpoint with ``inf`` weights gives NaN logits on every prompt."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import torch

from ropeproof.verify.interop._errors import ExportError


def finite_weights(weights: Mapping[str, Any], dtype: torch.dtype, hint: str) -> dict[str, torch.Tensor]:
    """``weights`` cast to ``dtype``; :class:`ExportError` naming the first tensor that is not finite
    there (with its largest magnitude before the cast) and ``hint`` (what to change)."""
    out: dict[str, torch.Tensor] = {}
    for name, value in weights.items():
        tensor = torch.as_tensor(value, dtype=dtype)
        if not bool(torch.isfinite(tensor).all()):
            source = np.asarray(value, dtype=np.float64)
            finite = source[np.isfinite(source)]
            largest = float(np.abs(finite).max()) if finite.size else float("nan")
            raise ExportError(
                f"weight {name} is not finite in {str(dtype).removeprefix('torch.')} (largest magnitude "
                f"{largest:.3g}; {str(dtype).removeprefix('torch.')} holds up to "
                f"{torch.finfo(dtype).max:.3g}); {hint}"
            )
        out[name] = tensor
    return out
