"""Rotary position embeddings: the spec, the rotation, and pre-softmax logits.

Conventions (``shared/THEORY.md`` section 1): positions are 0-indexed; plane ``k`` of a vector at
position ``p`` is rotated by ``p * theta_k`` with ``rho(a) = [[cos a, -sin a], [sin a, cos a]]``;
the logit between query ``i`` and key ``j`` is ``scale * (R_i q_i) . (R_j k_j)``, which equals
``scale * q_i^T R(j - i) k_j`` and so depends on positions only through ``j - i``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import torch

from verify.errors import InputError, RopeSpecError

Layout = Literal["interleaved", "half"]
LAYOUTS: tuple[str, ...] = ("interleaved", "half")


@dataclass(frozen=True)
class RopeSpec:
    """A RoPE head's rotation: which dims form each plane, and each plane's frequency.

    Parameters
    ----------
    head_dim:
        Size of a query/key vector; an even integer >= 2.
    rotary_dim:
        How many leading dims rotate (GPT-J's partial rotary). Even, ``0 <= rotary_dim <= head_dim``.
        Defaults to ``head_dim``. Dims beyond it are planes with ``theta = 0`` (pass-through).
    base:
        Default spectrum ``theta_k = base ** (-2k / rotary_dim)``, ``k = 0 .. rotary_dim/2 - 1``.
        Finite and > 0. Ignored when ``freqs`` is given.
    freqs:
        Explicit list of ``rotary_dim / 2`` finite frequencies (radians per position); zeros allowed.
    layout:
        ``"interleaved"`` (GPT-J): plane ``k`` is dims ``(2k, 2k+1)``. ``"half"`` (NeoX/LLaMA): plane
        ``k`` is dims ``(k, k + rotary_dim/2)`` inside the rotary block; the pass-through block is
        paired the same way within itself.
    """

    head_dim: int
    rotary_dim: int | None = None
    base: float = 10000.0
    freqs: Sequence[float] | None = None
    layout: Layout = "interleaved"
    _theta: tuple[float, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        head_dim, rotary_dim = self.head_dim, self.rotary_dim
        if isinstance(head_dim, bool) or not isinstance(head_dim, int | np.integer):
            raise RopeSpecError(f"head_dim must be an int, got {type(head_dim).__name__}")
        if head_dim < 2 or head_dim % 2:
            raise RopeSpecError(f"head_dim={head_dim} must be an even integer >= 2")
        if rotary_dim is None:
            rotary_dim = head_dim
        if isinstance(rotary_dim, bool) or not isinstance(rotary_dim, int | np.integer):
            raise RopeSpecError(f"rotary_dim must be an int, got {type(rotary_dim).__name__}")
        if rotary_dim % 2:
            raise RopeSpecError(
                f"rotary_dim={rotary_dim} is odd; it must be even, 0 <= rotary_dim <= head_dim={head_dim}"
            )
        if not 0 <= rotary_dim <= head_dim:
            raise RopeSpecError(
                f"rotary_dim={rotary_dim} is out of range; accepted: 0 <= rotary_dim <= head_dim"
                f"={head_dim}, even"
            )
        if self.layout not in LAYOUTS:
            raise RopeSpecError(f"layout={self.layout!r} is unknown; accepted: {list(LAYOUTS)}")
        n_rot = rotary_dim // 2
        if self.freqs is not None:
            try:
                theta = np.asarray(self.freqs, dtype=np.float64).reshape(-1)
            except (TypeError, ValueError) as exc:
                raise RopeSpecError(f"freqs must be a list of {n_rot} real numbers") from exc
            if theta.size != n_rot:
                raise RopeSpecError(
                    f"freqs has {theta.size} entries; rotary_dim={rotary_dim} needs exactly "
                    f"rotary_dim/2={n_rot}"
                )
            if not np.all(np.isfinite(theta)):
                raise RopeSpecError(f"freqs must all be finite, got {theta.tolist()}")
        else:
            base = float(self.base)
            if not math.isfinite(base) or base <= 0:
                raise RopeSpecError(f"base={self.base} must be finite and > 0")
            k = np.arange(n_rot, dtype=np.float64)
            theta = base ** (-2.0 * k / rotary_dim) if n_rot else np.zeros(0)
        n_pass = (head_dim - rotary_dim) // 2
        object.__setattr__(self, "rotary_dim", int(rotary_dim))
        object.__setattr__(self, "head_dim", int(head_dim))
        if self.freqs is not None:
            object.__setattr__(self, "freqs", tuple(float(t) for t in theta))
        object.__setattr__(self, "_theta", tuple(theta.tolist()) + (0.0,) * n_pass)

    @property
    def n_planes(self) -> int:
        """Number of 2-D planes, ``head_dim / 2`` (rotating and pass-through)."""
        return self.head_dim // 2

    @property
    def plane_freqs(self) -> np.ndarray:
        """Frequency of every plane, shape ``[head_dim/2]``; ``0`` beyond ``rotary_dim``."""
        return np.array(self._theta, dtype=np.float64)

    @property
    def plane_dims(self) -> list[tuple[int, int]]:
        """The ``(first, second)`` dims of every plane, in plane order.

        The rotation acts as ``x_first' = x_first cos - x_second sin`` and
        ``x_second' = x_first sin + x_second cos``.
        """
        r, h = self.rotary_dim, self.head_dim
        if self.layout == "interleaved":
            return [(2 * k, 2 * k + 1) for k in range(h // 2)]
        rot = [(k, k + r // 2) for k in range(r // 2)]
        p = (h - r) // 2
        return rot + [(r + m, r + p + m) for m in range(p)]

    def to_layout(self, layout: Layout) -> RopeSpec:
        """The same planes and frequencies under another layout."""
        return RopeSpec(self.head_dim, self.rotary_dim, self.base, self.rotating_freqs.tolist(), layout)

    @property
    def rotating_freqs(self) -> np.ndarray:
        """Frequencies of the ``rotary_dim / 2`` rotating planes."""
        return self.plane_freqs[: self.rotary_dim // 2]

    def permutation_to(self, other: RopeSpec) -> np.ndarray:
        """Index array ``perm`` with ``x_other = x_self[..., perm]`` mapping plane ``k`` to plane ``k``.

        The two specs must have the same ``head_dim``, ``rotary_dim`` and frequencies; only the
        layout may differ.
        """
        if (self.head_dim, self.rotary_dim) != (other.head_dim, other.rotary_dim) or not np.array_equal(
            self.plane_freqs, other.plane_freqs
        ):
            raise RopeSpecError("permutation_to needs specs that differ only in layout")
        perm = np.empty(self.head_dim, dtype=np.int64)
        for (a, b), (c, d) in zip(self.plane_dims, other.plane_dims, strict=True):
            perm[c], perm[d] = a, b
        return perm

    def _index_tensors(self, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
        dims = np.array(self.plane_dims, dtype=np.int64)
        return (
            torch.as_tensor(dims[:, 0], device=device),
            torch.as_tensor(dims[:, 1], device=device),
        )


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
    first, second = spec._index_tensors(x.device)
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
