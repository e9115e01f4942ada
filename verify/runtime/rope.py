"""Rotary position embeddings: the spec, the rotation, and pre-softmax logits.

Conventions (``shared/THEORY.md`` section 1): positions are 0-indexed; plane ``k`` of a vector at
position ``p`` is rotated by ``p * theta_k`` with ``rho(a) = [[cos a, -sin a], [sin a, cos a]]``;
the logit between query ``i`` and key ``j`` is ``scale * (R_i q_i) . (R_j k_j)``, which equals
``scale * q_i^T R(j - i) k_j`` and so depends on positions only through ``j - i``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch

from ropeproof.theory.errors import InputError
from ropeproof.theory.rope_spec import RopeSpec


def _positions(positions: torch.Tensor | Sequence[int] | None, n: int, device: torch.device) -> torch.Tensor:
    if positions is None:
        return torch.arange(n, device=device, dtype=torch.float64)
    pos = torch.as_tensor(positions, device=device)
    if pos.dtype.is_complex or pos.dtype == torch.bool:
        raise InputError(f"positions must be real numbers, got dtype {pos.dtype}")
    pos = pos.to(torch.float64)
    if pos.ndim == 0 or pos.shape[-1] != n:
        raise InputError(f"positions must have last dimension n={n}, got shape {tuple(pos.shape)}")
    if not torch.isfinite(pos).all():
        raise InputError("positions must be finite")
    return pos


def _plane_index_tensors(spec: RopeSpec, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """The first and second dims of every plane, as index tensors on ``device``."""
    dims = np.array(spec.plane_dims, dtype=np.int64)
    return torch.as_tensor(dims[:, 0], device=device), torch.as_tensor(dims[:, 1], device=device)


def rotation_cos_sin(
    spec: RopeSpec,
    positions: torch.Tensor | Sequence[int] | None,
    n: int,
    device: torch.device,
    dtype: torch.dtype,
) -> tuple[torch.Tensor, torch.Tensor]:
    """``cos(p * theta_k)`` and ``sin(p * theta_k)``, shape ``[..., n, head_dim/2]``.

    Angles are formed and reduced in float64 whatever ``dtype`` is, then cast, so that large
    positions (``p * theta`` of order 1e6) keep their accuracy in low-precision checks.

    Shapes: positions [..., n]; return [..., n, head_dim/2] (cos, sin)
    """
    pos = _positions(positions, n, device)
    theta = torch.as_tensor(spec.plane_freqs, device=device, dtype=torch.float64)
    angles = pos[..., None] * theta
    return torch.cos(angles).to(dtype), torch.sin(angles).to(dtype)


def apply_rope(
    x: torch.Tensor,
    spec: RopeSpec,
    positions: torch.Tensor | Sequence[int] | None = None,
) -> torch.Tensor:
    """Rotate ``x`` of shape ``[..., n, head_dim]``: plane ``k`` at position ``p`` by ``p * theta_k``.

    ``positions`` (default ``0 .. n-1``) has shape ``[n]`` or broadcasts against ``x[..., :, 0]``.
    Device and dtype of ``x`` are preserved.

    Shapes: x [..., n, head_dim]; positions [n]; return [..., n, head_dim]
    """
    if not isinstance(x, torch.Tensor):
        raise InputError(f"x must be a torch.Tensor, got {type(x).__name__}")
    if x.ndim < 2:
        raise InputError(f"x must have shape [..., n, head_dim], got {tuple(x.shape)}")
    if x.shape[-1] != spec.head_dim:
        raise InputError(f"x has last dimension {x.shape[-1]}, but spec.head_dim={spec.head_dim}")
    n = x.shape[-2]
    if n == 0:
        raise InputError("the sequence is empty; n must be >= 1")
    cos, sin = rotation_cos_sin(spec, positions, n, x.device, x.dtype)
    first, second = _plane_index_tensors(spec, x.device)
    xa, xb = x[..., first], x[..., second]
    out = torch.empty_like(x)
    out[..., first] = xa * cos - xb * sin
    out[..., second] = xa * sin + xb * cos
    return out


def rope_logits(
    q: torch.Tensor,
    k: torch.Tensor,
    spec: RopeSpec,
    scale: float = 1.0,
    q_positions: torch.Tensor | Sequence[int] | None = None,
    k_positions: torch.Tensor | Sequence[int] | None = None,
) -> torch.Tensor:
    """Pre-softmax logits ``scale * (R_i q_i) . (R_j k_j)``, shape ``[..., n_q, n_k]``, unmasked.

    ``q`` is ``[..., n_q, head_dim]`` at positions ``q_positions`` (default ``0 .. n_q-1``); ``k`` is
    ``[..., n_k, head_dim]`` at ``k_positions`` (default ``0 .. n_k-1``).

    Shapes: q [..., n_q, head_dim]; k [..., n_k, head_dim]; q_positions [n_q]; k_positions [n_k];
        return [..., n_q, n_k]
    """
    if not isinstance(q, torch.Tensor) or not isinstance(k, torch.Tensor):
        raise InputError("q and k must be torch tensors")
    if q.dtype != k.dtype or q.device != k.device:
        raise InputError(
            f"q and k must share dtype and device, got {q.dtype}/{q.device} and {k.dtype}/{k.device}"
        )
    if not math.isfinite(scale):
        raise InputError(f"scale={scale} must be finite")
    rq = apply_rope(q, spec, q_positions)
    rk = apply_rope(k, spec, k_positions)
    return scale * (rq @ rk.transpose(-1, -2))
