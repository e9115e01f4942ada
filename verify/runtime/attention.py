"""A single causal RoPE attention head as a torch module.

For inputs ``x`` of shape ``[batch, n, d_model]`` the head computes

    q = x W_Q,  k = x W_K,  v = x W_V                         ([batch, n, head_dim])
    logits[i, j] = scale * (R_i q_i) . (R_j k_j)  for j <= i,  -inf for j > i
    pattern = softmax(logits, over j)
    output = pattern @ v @ W_O                                ([batch, n, d_model])

with ``R_p`` the RoPE rotation of :mod:`ropeproof.verify.runtime.rope`. There is one code path for every
device.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch
from torch import nn

from ropeproof.theory.errors import InputError, WeightError
from ropeproof.theory.rope_spec import RopeSpec
from ropeproof.verify.runtime.devices import DeviceLike, DtypeLike, resolve_device, resolve_dtype
from ropeproof.verify.runtime.rope import apply_rope

if TYPE_CHECKING:
    from ropeproof.constructions.head import CompiledHead

ArrayLike = torch.Tensor | np.ndarray | Sequence[Sequence[float]]


@dataclass(frozen=True)
class AttentionResult:
    """What :meth:`RopeAttention.forward` returns.

    ``logits``: ``[batch, n, n]`` pre-softmax, ``-inf`` above the diagonal. ``pattern``: softmax of
    ``logits`` over the last axis. ``output``: ``[batch, n, d_model]``.

    Shapes: logits [batch, n, n]; pattern [batch, n, n]; output [batch, n, d_model]
    """

    logits: torch.Tensor
    pattern: torch.Tensor
    output: torch.Tensor


def _as_weight(
    name: str, value: ArrayLike, shape: tuple[int, int], dtype: torch.dtype, device: torch.device
) -> torch.Tensor:
    try:
        t = torch.as_tensor(np.asarray(value) if not isinstance(value, torch.Tensor) else value)
    except (TypeError, ValueError) as exc:
        raise WeightError(f"{name} must be a 2-D array of real numbers") from exc
    if t.dtype.is_complex or t.dtype == torch.bool:
        raise WeightError(f"{name} must be real, got dtype {t.dtype}")
    if tuple(t.shape) != shape:
        raise WeightError(f"{name} has shape {tuple(t.shape)}; expected {shape}")
    t = t.detach().to(device=device, dtype=torch.float64)
    if not torch.isfinite(t).all():
        bad = (~torch.isfinite(t)).nonzero()[0].tolist()
        raise WeightError(f"{name} contains NaN or inf (first at index {tuple(bad)}); weights must be finite")
    return t.to(dtype)


class RopeAttention(nn.Module):
    """One causal RoPE attention head with explicit weights.

    Parameters
    ----------
    W_Q, W_K, W_V:
        ``[d_model, head_dim]`` projections (``q = x @ W_Q``).
    W_O:
        ``[head_dim, d_model]`` output projection.
    spec:
        The :class:`~ropeproof.verify.runtime.rope.RopeSpec`; its ``head_dim`` fixes the weights' inner size.
    scale:
        Multiplies every logit (constructions use 1; HF modules use ``1/sqrt(head_dim)``).
    device:
        ``"auto"`` (CUDA when available, else CPU), ``"cpu"``, ``"cuda"`` or a ``torch.device``.
    dtype:
        ``float64`` (default), ``float32``, ``float16`` or ``bfloat16``.

    Shapes: W_Q [d_model, head_dim]; W_K [d_model, head_dim]; W_V [d_model, head_dim];
        W_O [head_dim, d_model]
    """

    def __init__(
        self,
        W_Q: ArrayLike,
        W_K: ArrayLike,
        W_V: ArrayLike,
        W_O: ArrayLike,
        spec: RopeSpec,
        scale: float = 1.0,
        device: DeviceLike = "auto",
        dtype: DtypeLike = torch.float64,
    ) -> None:
        super().__init__()
        if not isinstance(spec, RopeSpec):
            raise WeightError(f"spec must be a RopeSpec, got {type(spec).__name__}")
        scale = float(scale)
        if not math.isfinite(scale):
            raise WeightError(f"scale={scale} must be finite")
        dev, dt = resolve_device(device), resolve_dtype(dtype)
        w_q = torch.as_tensor(np.asarray(W_Q)) if not isinstance(W_Q, torch.Tensor) else W_Q
        if w_q.ndim != 2:
            raise WeightError(f"W_Q must be 2-D [d_model, head_dim], got shape {tuple(w_q.shape)}")
        d_model, h = int(w_q.shape[0]), spec.head_dim
        if w_q.shape[1] != h:
            raise WeightError(f"W_Q has shape {tuple(w_q.shape)}; expected [d_model, spec.head_dim={h}]")
        self.spec = spec
        self.scale = scale
        self.d_model = d_model
        self.W_Q = nn.Parameter(_as_weight("W_Q", W_Q, (d_model, h), dt, dev), requires_grad=False)
        self.W_K = nn.Parameter(_as_weight("W_K", W_K, (d_model, h), dt, dev), requires_grad=False)
        self.W_V = nn.Parameter(_as_weight("W_V", W_V, (d_model, h), dt, dev), requires_grad=False)
        self.W_O = nn.Parameter(_as_weight("W_O", W_O, (h, d_model), dt, dev), requires_grad=False)

    @classmethod
    def from_head(
        cls, head: CompiledHead, device: DeviceLike = "auto", dtype: DtypeLike = torch.float64
    ) -> RopeAttention:
        """The module of a compiled head: its ``W_Q``, ``W_K``, ``W_V``, ``W_O``, spec and scale."""
        return cls(head.W_Q, head.W_K, head.W_V, head.W_O, head.spec, head.scale, device, dtype)

    @property
    def device(self) -> torch.device:
        return self.W_Q.device

    @property
    def dtype(self) -> torch.dtype:
        return self.W_Q.dtype

    def _check_input(self, x: torch.Tensor) -> torch.Tensor:
        if not isinstance(x, torch.Tensor):
            x = torch.as_tensor(np.asarray(x))
        if x.ndim != 3:
            raise InputError(f"x must have shape [batch, n, d_model], got {tuple(x.shape)}")
        if x.shape[1] == 0:
            raise InputError("the sequence is empty; n must be >= 1")
        if x.shape[2] != self.d_model:
            raise InputError(f"x has d_model={x.shape[2]}; this head expects d_model={self.d_model}")
        x = x.to(device=self.device, dtype=self.dtype)
        if not torch.isfinite(x).all():
            raise InputError("x contains NaN or inf; inputs must be finite")
        return x

    def project(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``(q, k, v) = (x W_Q, x W_K, x W_V)``, each ``[batch, n, head_dim]``, unrotated.

        Shapes: x [batch, n, d_model]; return [batch, n, head_dim] (each of q, k, v)
        """
        x = self._check_input(x)
        return x @ self.W_Q, x @ self.W_K, x @ self.W_V

    def forward(
        self, x: torch.Tensor, positions: torch.Tensor | Sequence[int] | None = None
    ) -> AttentionResult:
        """Run the head on ``x`` (``[batch, n, d_model]``) at ``positions`` (default ``0..n-1``).

        Shapes: x [batch, n, d_model]; positions [n]; return.logits [batch, n, n];
            return.pattern [batch, n, n]; return.output [batch, n, d_model]
        """
        q, k, v = self.project(x)
        n = q.shape[1]
        rq, rk = apply_rope(q, self.spec, positions), apply_rope(k, self.spec, positions)
        logits = self.scale * (rq @ rk.transpose(-1, -2))
        future = torch.ones(n, n, dtype=torch.bool, device=self.device).triu(1)
        logits = logits.masked_fill(future, float("-inf"))
        pattern = torch.softmax(logits, dim=-1)
        output = pattern @ v @ self.W_O
        return AttentionResult(logits=logits, pattern=pattern, output=output)

    def extra_repr(self) -> str:
        return (
            f"d_model={self.d_model}, head_dim={self.spec.head_dim}, rotary_dim={self.spec.rotary_dim}, "
            f"layout={self.spec.layout!r}, scale={self.scale}, dtype={self.dtype}, device={self.device}"
        )
