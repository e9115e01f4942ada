"""Row sources for the swap engine (:mod:`ropeproof.verify.measure.ps._swap_stream`): where a swapped input's
attention row comes from.

- :class:`CallableSource`: any function of the layer inputs (a :class:`RowFunction` or a plain
  callable). Each chunk of swaps becomes one call on a freshly built batch of swapped copies
  ``x'[c]`` (input ``b_idx[c]`` with its layer inputs at the two blocks exchanged, every other
  position and the query untouched); every returned row is checked to be a probability vector.
- :class:`TableSource`: a :class:`~ropeproof.verify.kernel._attention.RopeAttention`, whose logits
  factor through per-token vectors: ``l(n-1, p) = scale * k_c . u_p`` with ``k_c = x[c] W_K`` the
  unrotated key of the content at ``p`` and ``u_p = R_{n-1-p} q`` the query rotated back to ``p``
  (``q = x[n-1] W_Q``; rotations compose). A swap changes only the logits at the swapped positions,
  ``scale * k_{pb} . u_{pa}`` at ``pa`` and ``scale * k_{pa} . u_{pb}`` at ``pb``, so a swapped row
  costs ``O(n + b h)`` and no copy of the input. Computed in the head's dtype on its device. It
  holds ``k`` and ``u`` for every input (``2 x batch x n x head_dim`` numbers, the size of the
  inputs when ``head_dim = d_model``) beside the streaming budget.
- :class:`PlaneTableSource`: every rotary plane of a :class:`RopeAttention` as a head of its own
  (:func:`~ropeproof.verify.measure.ps._per_frequency.split_planes`' plane heads, all at once): RoPE
  rotates each plane on its own, so plane ``k``'s logit is the dot product of ``k_c`` and ``u_p``
  restricted to the plane's two dims, and one swap gives the ``K`` planes' rows in one step.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from ropeproof.verify.kernel._attention import RopeAttention
from ropeproof.verify.kernel._rope import apply_rope
from ropeproof.verify.measure.ps._row_functions import RowFunction, attention_rows

FLOAT64 = 8


class CallableSource:
    """Rows from ``fn`` called on (swapped copies of) ``x`` ``[batch, n, d_model]``.

    ``fn``: a :class:`RowFunction` (its ``n_heads``, ``softmax_dtype`` and ``bytes_per_sequence``
    are used) or a plain callable returning one head's rows.

    Shapes: fn [batch, n, d_model] (its input); x [batch, n, d_model]
    """

    def __init__(self, fn: RowFunction | Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor) -> None:
        self.fn = fn
        self.x = x
        self.batch, self.n = int(x.shape[0]), int(x.shape[1])
        spec = fn if isinstance(fn, RowFunction) else None
        self.heads_axis = None if spec is None else spec.n_heads
        self.n_heads = 1 if self.heads_axis is None else int(self.heads_axis)
        self.softmax_dtype = None if spec is None else spec.softmax_dtype
        self.row_dtype = self.softmax_dtype  # where its rows underflow (None: float64's range)
        self.declared = None if spec is None else spec.bytes_per_sequence
        self.name = "the head" if spec is None else f"the head ({spec.name})"

    def _rows(self, x: torch.Tensor) -> torch.Tensor:
        return attention_rows(self.fn, x, self.heads_axis, self.softmax_dtype, self.name)

    def base_rows(self, chunk: int) -> torch.Tensor:
        parts = [self._rows(self.x[i : i + chunk]) for i in range(0, self.batch, chunk)]
        return torch.cat([p.to(parts[0].device) for p in parts], 0)

    def swapped_rows(self, b_idx: torch.Tensor, pa: torch.Tensor, pb: torch.Tensor) -> torch.Tensor:
        """See :meth:`~ropeproof.verify.measure.ps._swap_stream.SwapRowSource.swapped_rows`.

        Shapes: b_idx [C]; pa [C, b]; pb [C, b]; return [C, H, n - 1]
        """
        dev = self.x.device
        b_idx, pa, pb = b_idx.to(dev), pa.to(dev), pb.to(dev)
        xs = self.x[b_idx]  # a copy: [C, n, d_model]
        rows = torch.arange(xs.shape[0], device=dev)[:, None]
        src = b_idx[:, None]
        xs[rows, pa] = self.x[src, pb]
        xs[rows, pb] = self.x[src, pa]
        return self._rows(xs)

    def bytes_per_sequence(self) -> int:
        """The swapped copy (plus the gathered blocks), the call's declared memory, the rows."""
        d_model, item = int(self.x.shape[2]), self.x.element_size()
        own = 2 * self.n * d_model * item + 6 * self.n_heads * self.n * FLOAT64
        return own + (int(self.declared(self.n)) if self.declared is not None else 0)


class _GroupTableSource:
    """Rows of a :class:`RopeAttention` whose logits are split over groups of head dims: group ``g``
    (row ``g`` of ``groups``, ``[G, w]``) has logits ``scale * (k_c . u_p)`` restricted to its dims, and is a
    head of its own (``n_heads = G``). The key of the content at ``p`` is ``k_c = x[c] W_K`` (unrotated) and
    ``u_p = R_{n-1-p} q`` the query rotated back to ``p`` (``q = x[n-1] W_Q``; rotations compose), so a
    swap changes only the logits at the swapped positions: ``k_{pb} . u_{pa}`` at ``pa`` and ``k_{pa} .
    u_{pb}`` at ``pb``, ``O(n + b h)`` per swapped row and no copy of the input.

    Shapes: x [batch, n, d_model]; groups [G, w]
    """

    def __init__(self, head: RopeAttention, x: torch.Tensor, groups: torch.Tensor, scale: float) -> None:
        self.head = head
        self.row_dtype = head.dtype  # its rows are computed in the head's dtype
        self.batch, self.n = int(x.shape[0]), int(x.shape[1])
        self.n_heads = int(groups.shape[0])
        x = x.to(device=head.device, dtype=head.dtype)
        m = self.n - 1
        q = x[:, -1, :] @ head.W_Q
        offsets = (self.n - 1) - torch.arange(m, device=head.device, dtype=torch.int64)
        u = apply_rope(q[:, None, :].expand(-1, m, -1), head.spec, offsets)  # u[b, p] = R_{n-1-p} q
        self.k = (x @ head.W_K)[..., groups]  # [batch, n, G, w], unrotated, by group
        self.u = u[..., groups]  # [batch, m, G, w]
        self.scale = scale
        # the unswapped logits [batch, G, m] and the query's own [batch, G]
        self.diag = (scale * (self.k[:, :m] * self.u).sum(-1)).transpose(1, 2).contiguous()
        self.self_logit = scale * (q[:, groups] * self.k[:, -1]).sum(-1)

    def last_logits(self) -> torch.Tensor:
        """Every group's last-token logit row, the query's own logit last: ``[batch, G, n]``."""
        return torch.cat([self.diag, self.self_logit[..., None]], -1)

    def _softmax(self, logits: torch.Tensor, b_idx: torch.Tensor) -> torch.Tensor:
        full = torch.cat([logits, self.self_logit[b_idx][..., None]], -1)  # [C, G, n]
        return torch.softmax(full, -1)[..., : self.n - 1].to(torch.float64)

    def base_rows(self, chunk: int) -> torch.Tensor:
        return self._softmax(self.diag, torch.arange(self.batch, device=self.head.device))

    def swapped_rows(self, b_idx: torch.Tensor, pa: torch.Tensor, pb: torch.Tensor) -> torch.Tensor:
        """See :meth:`~ropeproof.verify.measure.ps._swap_stream.SwapRowSource.swapped_rows`.

        Shapes: b_idx [C]; pa [C, b]; pb [C, b]; return [C, G, n - 1]
        """
        dev = self.head.device
        b_idx, pa, pb = b_idx.to(dev), pa.to(dev), pb.to(dev)
        src = b_idx[:, None]
        logits = self.diag[b_idx]  # a copy: [C, G, m]
        at_a = self.scale * (self.k[src, pb] * self.u[src, pa]).sum(-1)  # [C, b, G]
        at_b = self.scale * (self.k[src, pa] * self.u[src, pb]).sum(-1)
        shape = (-1, self.n_heads, -1)
        logits.scatter_(2, pa[:, None, :].expand(shape), at_a.transpose(1, 2))
        logits.scatter_(2, pb[:, None, :].expand(shape), at_b.transpose(1, 2))
        return self._softmax(logits, b_idx)

    def bytes_per_sequence(self) -> int:
        """The swapped logit rows, their softmax and the float64 copy, for every group."""
        return 6 * self.n * self.n_heads * FLOAT64


class TableSource(_GroupTableSource):
    """Rows of a :class:`RopeAttention` from its per-token key and rotated-query vectors (one group: every
    head dim).

    Shapes: x [batch, n, d_model]
    """

    def __init__(self, head: RopeAttention, x: torch.Tensor) -> None:
        every = torch.arange(head.spec.head_dim, device=head.device)[None, :]
        super().__init__(head, x, every, head.scale)


class PlaneTableSource(_GroupTableSource):
    """Rows of every plane of a :class:`RopeAttention` (``K = head_dim / 2`` heads, plane order): plane
    ``k`` with dims ``(a, b)`` (:attr:`RopeSpec.plane_dims`) has logits ``gain * scale * (k_c[a] u_p[a] +
    k_c[b] u_p[b])``, the logits of :func:`~ropeproof.verify.measure.ps._per_frequency.split_planes`' plane
    head with that ``gain``.

    Shapes: x [batch, n, d_model]
    """

    def __init__(self, head: RopeAttention, x: torch.Tensor, gain: float = 1.0) -> None:
        planes = torch.tensor(head.spec.plane_dims, dtype=torch.int64, device=head.device)  # [K, 2]
        super().__init__(head, x, planes, gain * head.scale)
