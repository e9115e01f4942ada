"""A single causal RoPE attention head as a torch module.

For inputs ``x`` of shape ``[batch, n, d_model]`` the head computes

    q = x W_Q,  k = x W_K,  v = x W_V                         ([batch, n, head_dim])
    logits[i, j] = scale * (R_i q_i) . (R_j k_j)  for j <= i,  -inf for j > i
    pattern = softmax(logits, over j)
    output = pattern @ v @ W_O                                ([batch, n, d_model])

with ``R_p`` the RoPE rotation of :mod:`ropeproof.verify.kernel._rope`. The same code runs on every
device.

Two paths (the ``need_weights`` convention of ``torch.nn.MultiheadAttention``):

- ``need_weights=True`` (default): logits, pattern and output as above, all materialised.
- ``need_weights=False``: only ``output``, through ``torch.nn.functional.scaled_dot_product_attention``
  with causal masking; the ``[batch, n, n]`` logits and pattern are never built, and the result's
  ``logits`` and ``pattern`` are ``None``. The output equals the full path's up to rounding
  (``tests/verify/kernel/test_attention.py`` derives and asserts the tolerance).

Both paths project with one ``x @ [W_Q | W_K | W_V]`` product whose q and k columns are put in the
halves order ``(a_0, .., a_{K-1}, b_0, .., b_{K-1})`` of their planes ``(a_k, b_k)`` (a permutation
applied to q and k alike leaves every ``q . k`` unchanged), rotate q and k together with the cached
tables of :func:`~ropeproof.verify.kernel._rope.rotation_table`, and check finiteness as
:mod:`ropeproof.verify.kernel._finite` describes (``check=True``: one synchronisation per call).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ropeproof.machinery._errors import InputError, RopeproofError, WeightError
from ropeproof.machinery._validate import real
from ropeproof.theory._rope_spec import RopeSpec
from ropeproof.verify.kernel._devices import DeviceLike, DtypeLike, resolve_device, resolve_dtype
from ropeproof.verify.kernel._finite import (
    all_finite,
    finite_screen,
    non_finite_input,
    overflow_error,
    passes,
)
from ropeproof.verify.kernel._rope import (
    Positions,
    RotationTable,
    common_origin,
    halves_order,
    positions_error,
    rotate_halves,
    rotation_table,
)

if TYPE_CHECKING:
    from ropeproof.constructions._head import CompiledHead

ArrayLike = torch.Tensor | np.ndarray | Sequence[Sequence[float]]


@dataclass(frozen=True)
class AttentionResult:
    """What :meth:`RopeAttention.forward` returns.

    ``logits``: ``[batch, n, n]`` pre-softmax, ``-inf`` above the diagonal. ``pattern``: softmax of
    ``logits`` over the last axis. ``output``: ``[batch, n, d_model]``. ``logits`` and ``pattern``
    are ``None`` when the forward ran with ``need_weights=False`` (they were never computed).

    Shapes: logits [batch, n, n]; pattern [batch, n, n]; output [batch, n, d_model]
    """

    logits: torch.Tensor | None
    pattern: torch.Tensor | None
    output: torch.Tensor

    @property
    def has_weights(self) -> bool:
        """Whether ``logits`` and ``pattern`` were computed (``need_weights=True``)."""
        return self.logits is not None


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
        The :class:`~ropeproof.verify.kernel._rope.RopeSpec`; its ``head_dim`` fixes the weights' inner size.
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
        scale = real(scale, "scale", error=WeightError)
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

    def _input(self, x: torch.Tensor) -> torch.Tensor:
        """``x`` checked for shape and moved to the head's device and dtype (finiteness: see ``check``)."""
        if not isinstance(x, torch.Tensor):
            try:
                x = torch.as_tensor(np.asarray(x))
            except (TypeError, ValueError) as exc:
                raise InputError(f"x must be a [batch, n, d_model] array of real numbers: {exc}") from None
        if x.dtype.is_complex or x.dtype == torch.bool:
            raise InputError(f"x must hold real numbers (a floating or integer dtype), got dtype {x.dtype}")
        if x.ndim != 3:
            raise InputError(f"x must have shape [batch, n, d_model], got {tuple(x.shape)}")
        if x.shape[1] == 0:
            raise InputError("the sequence is empty; n must be >= 1")
        if x.shape[2] != self.d_model:
            raise InputError(f"x has d_model={x.shape[2]}; this head expects d_model={self.d_model}")
        return x.to(device=self.device, dtype=self.dtype)

    def _error(self, x: torch.Tensor, positions: Positions, what: str) -> RopeproofError:
        """Why a checked result is not finite: a bad input, else an overflow (only on failure)."""
        bad = non_finite_input({"x": x}) or positions_error("positions", positions)
        return bad or overflow_error(what, self.dtype, {"x": x})

    def project(
        self, x: torch.Tensor, *, check: bool = True
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``(q, k, v) = (x W_Q, x W_K, x W_V)``, each ``[batch, n, head_dim]``, unrotated.

        With ``check`` the three are verified finite (one synchronisation).

        Shapes: x [batch, n, d_model]; return [batch, n, head_dim] (each of q, k, v)
        """
        x = self._input(x)
        q, k, v = x @ self.W_Q, x @ self.W_K, x @ self.W_V
        if check and not passes(finite_screen(q, k, v), lambda: all_finite(q, k, v)):
            raise self._error(x, None, "the projections q, k, v")
        return q, k, v

    def _qkv_weight(self) -> torch.Tensor:
        """``[W_Q | W_K | W_V]`` (``[d_model, 3 head_dim]``), q and k columns in halves order.

        Cached; rebuilt when a weight is replaced, moved or modified in place (its identity, storage
        or version counter changes). Not cached, and not detached, while a weight requires grad."""
        weights = (self.W_Q, self.W_K, self.W_V)
        index = torch.tensor(halves_order(self.spec), device=self.device)
        if any(w.requires_grad for w in weights):
            return torch.cat([self.W_Q.index_select(1, index), self.W_K.index_select(1, index), self.W_V], 1)
        key = tuple((w.data_ptr(), w._version) for w in weights)
        cached = self.__dict__.get("_qkv_cache")
        same = cached is not None and all(a is b for a, b in zip(cached[0], weights, strict=True))
        if same and cached[1] == key:
            return cached[2]
        w_q, w_k = self.W_Q.detach().index_select(1, index), self.W_K.detach().index_select(1, index)
        fused = torch.cat([w_q, w_k, self.W_V.detach()], dim=1)
        self.__dict__["_qkv_cache"] = (weights, key, fused)
        return fused

    def _rotated_qkv(self, x: torch.Tensor, positions: Positions) -> tuple[torch.Tensor, torch.Tensor]:
        """From one projection: rotated q and k stacked, ``[batch, n, 2, head_dim]`` (halves order),
        and v, ``[batch, n, head_dim]``."""
        h, n = self.spec.head_dim, x.shape[1]
        qkv = x @ self._qkv_weight()
        table = rotation_table(self.spec, positions, n, self.device, self.dtype, shifted=True)
        qk = rotate_halves(qkv[..., : 2 * h].unflatten(-1, (2, h)), table, per_position=2)
        return qk, qkv[..., 2 * h :]

    def forward(
        self,
        x: torch.Tensor,
        positions: torch.Tensor | Sequence[int] | None = None,
        need_weights: bool = True,
        *,
        check: bool = True,
    ) -> AttentionResult:
        """Run the head on ``x`` (``[batch, n, d_model]``) at ``positions`` (default ``0..n-1``;
        ``[n]`` or ``[batch, n]``; shifted first by a common integer, which changes no logit:
        :func:`~ropeproof.verify.kernel._rope.common_origin`). The causal mask is by index: query ``i``
        sees keys ``j <= i``.

        ``need_weights=False`` computes only the output, without building logits or pattern (they are
        ``None`` in the result). With ``check`` the result is verified finite (masked logits on and
        below the diagonal, and the output; on the fast path q, k, v and the output) with one
        synchronisation; on failure :class:`InputError` names the bad input or
        :class:`~ropeproof.machinery._errors.NonFiniteError` reports an overflow.

        Shapes: x [batch, n, d_model]; positions [n]; return.logits [batch, n, n] (None without
            weights); return.pattern [batch, n, n]; return.output [batch, n, d_model]
        """
        x = self._input(x)
        qk, v = self._rotated_qkv(x, common_origin([(positions, x.shape[1])], self.device)[0])
        q, k = qk[..., 0, :], qk[..., 1, :]
        if not need_weights:
            output = self._output_only(q, k, v)
            if check and not passes(finite_screen(qk, v, output), lambda: all_finite(qk, v, output)):
                raise self._error(x, positions, "the head's q, k, v or output")
            return AttentionResult(logits=None, pattern=None, output=output)
        n = x.shape[1]
        logits = q @ k.transpose(-1, -2)
        if self.scale != 1.0:
            logits.mul_(self.scale)
        screen = finite_screen(logits) if check else None  # before masking: the -inf are intended
        future = _future_mask(n, self.device)
        logits.masked_fill_(future, float("-inf"))
        pattern = torch.softmax(logits, dim=-1)
        output = (pattern @ v) @ self.W_O

        def exact() -> bool:  # on and below the diagonal, and the output
            return bool((torch.isfinite(logits) | future).all()) and all_finite(output)

        if screen is not None and not passes(screen + finite_screen(output), exact):
            raise self._error(x, positions, "the head's logits or output")
        return AttentionResult(logits=logits, pattern=pattern, output=output)

    def last_query(self, x: torch.Tensor, *, check: bool = True) -> tuple[torch.Tensor, torch.Tensor]:
        """The last query against every key, from one projection, without the ``[n, n]`` logits:
        ``(R_{n-1} q_{n-1}) . (R_j k_j)`` for ``j = 0 .. n-1`` (``[batch, n]``, *not* multiplied by
        ``scale``), and ``v`` (``[batch, n, head_dim]``), at the default positions ``0 .. n-1``.

        Only the last position's query is projected and rotated (the same rotation as :meth:`forward`'s,
        entry by entry); ``scale * row`` is row ``n-1`` of :meth:`forward`'s logits up to the order in
        which the products sum each dot product (``tests/verify/kernel/test_attention.py`` bounds the
        difference). With ``check`` both are
        verified finite (one synchronisation).

        Shapes: x [batch, n, d_model]; return.0 [batch, n]; return.1 [batch, n, head_dim]
        """
        x = self._input(x)
        h, n = self.spec.head_dim, x.shape[1]
        w = self._qkv_weight()
        kv = x @ w[:, h:]  # every key and value; the query of the last position alone
        table = rotation_table(self.spec, None, n, self.device, self.dtype, shifted=True)
        last = RotationTable(table.cos[..., -1:, :], table.sin[..., -1:, :])
        q = rotate_halves(x[:, -1:] @ w[:, :h], last)
        k, v = rotate_halves(kv[..., :h], table), kv[..., h:]
        row = (q @ k.transpose(-1, -2)).squeeze(-2)
        if check and not passes(finite_screen(row, v), lambda: all_finite(row, v)):
            raise self._error(x, None, "the head's last-query logits or v")
        return row, v

    def _output_only(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """``softmax(scale q k^T, causal) v W_O`` by the fused kernel, without the logits.

        Checked by the caller on q, k, v and the output: the fused CPU kernel returns a row of zeros,
        not NaN, for a NaN query (torch 2.13), so the output alone would not reveal it.
        """
        # torch's CPU kernel returns NaN for a causal mask with scale <= 0 (it scales the -inf mask
        # too): pass only positive scales to it, and fold others into q (exact for scale = 0 and
        # -1; else one rounding of q * scale, like the scaling of the logits in the full path).
        scale = self.scale
        if scale <= 0:
            q, scale = q * scale, 1.0
        attended = F.scaled_dot_product_attention(
            q.unsqueeze(1), k.unsqueeze(1), v.unsqueeze(1), is_causal=True, scale=scale
        )
        return attended.squeeze(1) @ self.W_O

    def forward_bytes(self, n: int) -> int:
        """Estimated working memory of :meth:`forward` per sequence of ``n`` tokens, in bytes: ``q``,
        ``k``, ``v`` and two rotations (``[n, head_dim]``), the logits, mask and pattern (``[n, n]``),
        the input and the output (``[n, d_model]``)."""
        return (5 * self.spec.head_dim + 3 * n + 2 * self.d_model) * n * self.dtype.itemsize

    def extra_repr(self) -> str:
        return (
            f"d_model={self.d_model}, head_dim={self.spec.head_dim}, rotary_dim={self.spec.rotary_dim}, "
            f"layout={self.spec.layout!r}, scale={self.scale}, dtype={self.dtype}, device={self.device}"
        )


@functools.lru_cache(maxsize=8)
def _future_mask(n: int, device: torch.device) -> torch.Tensor:
    """``[n, n]`` boolean, true above the diagonal (key ``j > i``: masked). Cached per (n, device)."""
    return torch.ones(n, n, dtype=torch.bool, device=device).triu(1)
