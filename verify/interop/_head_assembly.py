"""The one skeleton both importers share: a head's four projections, already in
:class:`~ropeproof.verify.kernel.RopeAttention`'s orientation, become a ``RopeAttention`` restricted to the
residual dims it reads and writes, with the logit scale folded into ``W_Q`` or kept apart. The HF importer
(``verify/interop/hf``) and the TransformerLens importer (``verify/interop/tl``) differ only in where they
find the projections, the RoPE spec and the scale; everything after that is here."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from ropeproof.theory._rope_spec import RopeSpec
from ropeproof.verify.interop._errors import HeadImportError
from ropeproof.verify.kernel._attention import RopeAttention
from ropeproof.verify.kernel._devices import DeviceLike, DtypeLike, resolve_device

Dims = slice | Sequence[int] | None
"""A selection of residual dims: ``None`` (all), a slice, or a sequence of indices."""


def select_dims(name: str, dims: Dims, hidden: int) -> np.ndarray:
    """The residual dims ``dims`` selects out of ``0 .. hidden - 1`` as an index array (``None``: all);
    :class:`HeadImportError` naming ``name`` for an empty selection or one out of range."""
    if dims is None:
        return np.arange(hidden)
    idx = np.arange(hidden)[dims] if isinstance(dims, slice) else np.asarray(dims, dtype=np.int64)
    if idx.ndim != 1 or idx.size == 0 or idx.min() < 0 or idx.max() >= hidden:
        raise HeadImportError(f"{name} must select dims in 0..{hidden - 1}, got {dims!r}")
    return idx


def assemble_head(
    w_q: torch.Tensor,
    w_k: torch.Tensor,
    w_v: torch.Tensor,
    w_o: torch.Tensor,
    spec: RopeSpec,
    divisor: float,
    score_scale: float | None = None,
    *,
    read_dims: Dims = None,
    write_dims: Dims = None,
    fold_scale: bool = True,
    device: DeviceLike = "auto",
    dtype: DtypeLike = torch.float64,
) -> RopeAttention:
    """A :class:`RopeAttention` from one head's projections.

    ``w_q``, ``w_k``, ``w_v``: ``[hidden, d_head]``; ``w_o``: ``[d_head, hidden]`` (float64 on the CPU);
    ``divisor``: what the source model divides ``q . k`` by (``sqrt(head_dim)`` for HF, ``attn_scale`` for
    TransformerLens), and ``score_scale`` the same as a factor as the source writes it (default
    ``1 / divisor``). ``read_dims``/``write_dims`` keep the rows of
    ``W_Q/W_K/W_V`` and the columns of ``W_O`` of the residual dims the head reads and writes; both must
    have the same size. ``fold_scale=True`` divides ``W_Q`` by ``divisor`` and sets ``scale = 1``
    (the constructions' convention); ``False`` keeps the weights and sets ``scale = score_scale``.

    Shapes: w_q [hidden, d_head]; w_k [hidden, d_head]; w_v [hidden, d_head]; w_o [d_head, hidden]
    """
    hidden = int(w_q.shape[0])
    read, write = select_dims("read_dims", read_dims, hidden), select_dims("write_dims", write_dims, hidden)
    if read.size != write.size:
        raise HeadImportError(f"read_dims has {read.size} dims and write_dims {write.size}; they must match")
    w_q, w_k, w_v, w_o = w_q[read], w_k[read], w_v[read], w_o[:, write]
    if fold_scale:
        w_q, scale = w_q / divisor, 1.0
    else:
        scale = 1.0 / divisor if score_scale is None else score_scale
    return RopeAttention(w_q, w_k, w_v, w_o, spec, scale, resolve_device(device), dtype)
