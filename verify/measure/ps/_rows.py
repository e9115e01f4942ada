"""Row plumbing shared by the positional/symbolic checks: inputs, head calls and logit tables.

A *head* is a :class:`~ropeproof.verify.kernel._attention.RopeAttention` or any callable mapping
layer inputs ``[batch, n, d_model]`` to the last token's row ``[batch, n]`` (the query's own entry
last) or ``[batch, n - 1]``; :class:`~ropeproof.verify.measure.ps._row_functions.RowFunction` says which row
(attention or logit) a callable returns.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from ropeproof.machinery._errors import InputError
from ropeproof.machinery._validate import integer
from ropeproof.verify.kernel._attention import RopeAttention
from ropeproof.verify.kernel._rope import apply_rope

RowFn = Callable[[torch.Tensor], torch.Tensor]
"""``f(x: [batch, n, d_model]) -> [batch, n]`` (or ``[batch, n-1]``): the last token's row."""
Head = RopeAttention | RowFn


def as_inputs(x: Any, name: str = "x", min_n: int = 2) -> torch.Tensor:
    """``x`` as a ``[batch, n, d_model]`` tensor (a single ``[n, d_model]`` input gets batch 1).

    Raises :class:`InputError` for another rank, ``n < min_n``, an empty batch or non-finite values.
    """
    if not isinstance(x, torch.Tensor):
        try:
            x = torch.as_tensor(np.asarray(x, dtype=np.float64))
        except (TypeError, ValueError) as exc:
            raise InputError(f"{name} must be a real array of shape [batch, n, d_model]") from exc
    if x.dtype.is_complex or x.dtype == torch.bool or not x.dtype.is_floating_point:
        x = x.to(torch.float64)
    if x.ndim == 2:
        x = x[None]
    if x.ndim != 3:
        raise InputError(f"{name} must have shape [batch, n, d_model] or [n, d_model], got {tuple(x.shape)}")
    if x.shape[0] == 0:
        raise InputError(f"{name} has an empty batch; accepted: batch >= 1")
    if x.shape[1] < min_n:
        raise InputError(f"{name} has n={x.shape[1]} tokens; accepted: n >= {min_n} (keys plus the query)")
    if not torch.isfinite(x).all():
        raise InputError(f"{name} contains NaN or inf; inputs must be finite")
    return x


def key_logit_table(head: RopeAttention, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Every key content at every key position, for a :class:`RopeAttention` head.

    Returns ``(T, self_logit)`` with ``T[b, c, p] = scale * (R_{n-1} q_b) . (R_p k_{b,c})`` for key
    contents ``c`` and key positions ``p`` in ``0 .. n-2`` (``q_b = x_b[n-1] W_Q``, ``k_{b,c} =
    x_b[c] W_K``), shape ``[batch, n-1, n-1]``, and ``self_logit[b] = scale * (R_{n-1} q_b) .
    (R_{n-1} k_{b,n-1})``, shape ``[batch]``. Computed as ``(R_{n-1-p} q) . k`` (rotations compose),
    in the head's dtype and on its device. The unpermuted row is ``T.diagonal(dim1=1, dim2=2)``, and
    the row of any content permutation ``sigma`` is ``T[b, sigma(p), p]``: with the query fixed, a
    RoPE logit depends only on the key's content and position.

    Shapes: x [batch, n, d_model]; return.0 [batch, n-1, n-1]; return.1 [batch]
    """
    x = as_inputs(x)
    if x.shape[2] != head.d_model:
        raise InputError(f"x has d_model={x.shape[2]}; this head expects d_model={head.d_model}")
    x = x.to(device=head.device, dtype=head.dtype)
    n = x.shape[1]
    m = n - 1
    q = x[:, -1, :] @ head.W_Q  # only the query's projection is needed
    k = x @ head.W_K
    offsets = (n - 1) - torch.arange(m, device=q.device, dtype=torch.int64)
    u = apply_rope(q[:, None, :].expand(-1, m, -1), head.spec, offsets)  # u[b, p] = R_{n-1-p} q_b
    table = head.scale * torch.einsum("bch,bph->bcp", k[:, :m, :], u)
    self_logit = head.scale * (q * k[:, -1, :]).sum(-1)
    return table, self_logit


def check_row(row: torch.Tensor, batch: int, n: int, what: str) -> torch.Tensor:
    """A head's returned row, checked to be ``[batch, n]`` or ``[batch, n-1]`` (``InputError`` naming ``what``
    otherwise), cut to its first ``n - 1`` entries.

    Shapes: row [batch, n]; return [batch, n-1]
    """
    if not isinstance(row, torch.Tensor):
        row = torch.as_tensor(np.asarray(row))
    if row.ndim != 2 or row.shape[0] != batch or row.shape[1] not in (n, n - 1):
        raise InputError(
            f"the head returned {what} of shape {tuple(row.shape)}; expected [batch={batch}, n={n}] "
            f"or [batch={batch}, n-1={n - 1}]"
        )
    return row[:, : n - 1]


def call_rows(fn: RowFn, x: torch.Tensor, chunk_size: int | None = None, what: str = "a row") -> torch.Tensor:
    """``fn`` on ``x [batch, n, d_model]`` in chunks of ``chunk_size`` sequences; ``[batch, n-1]``.

    Shapes: x [batch, n, d_model]; return [batch, n-1]
    """
    batch, n = x.shape[0], x.shape[1]
    if chunk_size is None or chunk_size >= batch:
        return check_row(fn(x), batch, n, what)
    parts = [fn(x[i : i + chunk_size]) for i in range(0, batch, chunk_size)]
    rows = [check_row(p, min(chunk_size, batch - i * chunk_size), n, what) for i, p in enumerate(parts)]
    return torch.cat(rows, 0)


def check_chunk_size(chunk_size: int | None) -> None:
    """Raise :class:`InputError` unless ``chunk_size`` is ``None`` or an integer >= 1."""
    if chunk_size is not None:
        integer(chunk_size, "chunk_size", low=1, note="or None")
