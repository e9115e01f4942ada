"""The positional and symbolic scores as used in practice ([A]'s code; blocks as in [B]).

For one input ``x`` of ``n`` tokens, let ``d`` be the last token's attention row (softmax over all
``n`` positions, the query's own included). The ``m = n - 1`` non-query positions are cut into
``K = floor(m / b)`` consecutive blocks of ``b = block_size`` positions, block ``I`` being positions
``I b .. I b + b - 1``; the last ``m mod b`` positions (those next to the query) belong to no block
and are never swapped. For every pair of blocks ``I < J`` (``S = K (K - 1) / 2`` swaps):

1. swap the *layer inputs* of the two blocks (``x'[I b + t] = x[J b + t]`` and back, ``t < b``),
   keep every RoPE position and the query fixed, and recompute the row: ``d'``;
2. with ``d_I = (d[I b], .., d[I b + b - 1])`` and ``(u, v)`` the concatenation,
   ``pos = cos_sim((d'_I, d'_J), (d_I, d_J))`` (the row stayed put: positional) and
   ``sym = cos_sim((d'_I, d'_J), (d_J, d_I))`` (the row moved with the contents: symbolic);
3. weight the swap by ``w = softmax_over_swaps(||d_I - d_J||_1 / tau)`` (``|d_i - d_j| / tau`` for
   ``b = 1``), so swaps between keys the head treats differently dominate.

Then ``S_pos = sum_swaps w pos`` and ``S_sym = sum_swaps w sym``, one point per input in the
positional-symbolic plane. The aggregate over inputs is the plain mean. A head with constant logits
scores exactly ``(1, 1)``. ``cos_sim(u, v) = u.v / (|u| |v|)``, taken as 1 when both vectors are
zero (nothing moved) and 0 when only one is.

A head is a :class:`~ropeproof.verify.runtime.attention.RopeAttention`, scored through its logit table
(every key
content at every key position, :func:`ropeproof.verify.ps.exact.key_logit_table`, so all swaps of the batch
are
one gather and one softmax), or any callable mapping layer inputs ``[batch, n, d_model]`` to the
last token's attention row ``[batch, n]`` (or ``[batch, n-1]``, the non-query positions), so that
trained models can be scored: all swapped copies of the batch are stacked into one call
(``chunk_size`` sequences per call when memory requires).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from ropeproof.theory.errors import InputError
from ropeproof.verify.ps._rows import (
    Head,
    RowFn,
    as_inputs,
    call_rows,
    check_chunk_size,
    key_logit_table,
)
from ropeproof.verify.runtime.attention import RopeAttention


def _check_block_size(block_size: int) -> int:
    if isinstance(block_size, bool) or not isinstance(block_size, int | np.integer) or block_size < 1:
        raise InputError(f"block_size={block_size} must be an integer >= 1")
    return int(block_size)


def swap_plan(n: int, block_size: int = 1) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The swaps of a length-``n`` input: ``(perms, block_a, block_b)``.

    ``perms[s]`` (``[S, n]`` int64) is the input permutation of swap ``s``: the swapped input is
    ``x[perms[s]]``, so position ``p`` receives the content of position ``perms[s, p]``; the query
    (``n - 1``) always maps to itself. ``block_a[s]`` and ``block_b[s]`` (``[S, b]``) list the
    positions of blocks ``I`` and ``J`` (``I < J``). Swaps are ordered lexicographically by
    ``(I, J)``. Raises :class:`InputError` when fewer than two blocks fit in ``n - 1`` positions.
    """
    b = _check_block_size(block_size)
    if isinstance(n, bool) or not isinstance(n, int | np.integer):
        raise InputError(f"n must be an int, got {type(n).__name__}")
    k = (n - 1) // b
    if k < 2:
        raise InputError(
            f"n={n} with block_size={b} leaves {k} block(s); accepted: n - 1 >= 2 * block_size "
            "(two blocks to swap)"
        )
    pairs = torch.combinations(torch.arange(k), 2)  # [S, 2], I < J
    offs = torch.arange(b)
    block_a = pairs[:, :1] * b + offs  # [S, b]
    block_b = pairs[:, 1:] * b + offs
    perms = torch.arange(n).repeat(pairs.shape[0], 1)
    perms.scatter_(1, block_a, block_b)
    perms.scatter_(1, block_b, block_a)
    return perms, block_a, block_b


def cos_sim(u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Cosine similarity over the last axis; 1 when both are zero vectors, 0 when only one is.

    Shapes: u [..., d]; v [..., d]; return [...]
    """
    dot = (u * v).sum(-1)
    nu, nv = torch.linalg.vector_norm(u, dim=-1), torch.linalg.vector_norm(v, dim=-1)
    denom = nu * nv
    both_zero = (nu == 0) & (nv == 0)
    out = torch.where(denom > 0, dot / torch.where(denom > 0, denom, 1.0), 0.0)
    return torch.where(both_zero, torch.ones_like(out), out)


@dataclass(frozen=True)
class PSScores:
    """Scores of one head on a batch of inputs (float64, CPU).

    ``s_pos``, ``s_sym``: ``[batch]``, the weighted scores of each input. ``pos``, ``sym``,
    ``weights``: ``[batch, S]`` per swap. ``block_a``, ``block_b``: ``[S, block_size]`` the swapped
    positions. ``S_pos``/``S_sym``: the aggregate, the mean over inputs.

    Shapes: s_pos [batch]; s_sym [batch]; pos [batch, S]; sym [batch, S]; weights [batch, S];
        block_a [S, block_size]; block_b [S, block_size]
    """

    s_pos: torch.Tensor
    s_sym: torch.Tensor
    pos: torch.Tensor
    sym: torch.Tensor
    weights: torch.Tensor
    block_a: torch.Tensor
    block_b: torch.Tensor
    tau: float
    block_size: int
    n: int

    @property
    def S_pos(self) -> float:
        """Mean of ``s_pos`` over inputs."""
        return float(self.s_pos.mean())

    @property
    def S_sym(self) -> float:
        """Mean of ``s_sym`` over inputs."""
        return float(self.s_sym.mean())

    @property
    def n_swaps(self) -> int:
        return int(self.block_a.shape[0])

    def to_dict(self, per_input: bool = True) -> dict[str, Any]:
        """Plain-Python summary for JSON: aggregate, spread, settings and (optionally) per input."""
        out: dict[str, Any] = {
            "S_pos": self.S_pos,
            "S_sym": self.S_sym,
            "n_inputs": int(self.s_pos.shape[0]),
            "n": self.n,
            "n_swaps": self.n_swaps,
            "tau": self.tau,
            "block_size": self.block_size,
            "s_pos_min": float(self.s_pos.min()),
            "s_pos_max": float(self.s_pos.max()),
            "s_sym_min": float(self.s_sym.min()),
            "s_sym_max": float(self.s_sym.max()),
        }
        if per_input:
            out["s_pos"] = self.s_pos.tolist()
            out["s_sym"] = self.s_sym.tolist()
        return out


def scores_from_rows(
    row: torch.Tensor,
    swapped: torch.Tensor,
    block_a: torch.Tensor,
    block_b: torch.Tensor,
    tau: float,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Scores from attention rows: ``(s_pos, s_sym, pos, sym, weights)``.

    ``row``: ``[..., >= m]`` the unswapped rows ``d``; ``swapped``: ``[..., S, >= m]`` the rows
    ``d'`` of every swap; ``block_a``/``block_b``: ``[S, b]`` from :func:`swap_plan`. Any leading
    batch shape. See the module docstring for the formulas. Computed in float64.

    Shapes: row [..., m]; swapped [..., S, m]; block_a [S, b]; block_b [S, b]; return.s_pos [...];
        return.s_sym [...]; return.pos [..., S]; return.sym [..., S]; return.weights [..., S]
    """
    tau = _check_tau(tau)
    row, swapped = row.to(torch.float64), swapped.to(torch.float64)
    ia, ib = block_a.to(row.device), block_b.to(row.device)
    d_a, d_b = row[..., ia], row[..., ib]  # [..., S, b]
    s_idx = torch.arange(ia.shape[0], device=row.device)[:, None]
    e_a, e_b = swapped[..., s_idx, ia], swapped[..., s_idx, ib]
    new = torch.cat([e_a, e_b], -1)
    pos = cos_sim(new, torch.cat([d_a, d_b], -1))
    sym = cos_sim(new, torch.cat([d_b, d_a], -1))
    weights = torch.softmax((d_a - d_b).abs().sum(-1) / tau, dim=-1)
    return (weights * pos).sum(-1), (weights * sym).sum(-1), pos, sym, weights


def _check_tau(tau: float) -> float:
    try:
        t = float(tau)
    except (TypeError, ValueError) as exc:
        raise InputError(f"tau={tau!r} must be a number > 0") from exc
    if not math.isfinite(t) or t <= 0:
        raise InputError(f"tau={tau} must be finite and > 0")
    return t


def _rope_rows(
    head: RopeAttention, x: torch.Tensor, perms: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    table, self_logit = key_logit_table(head, x)
    m = table.shape[1]
    p = perms[:, :m].to(table.device)
    pos = torch.arange(m, device=table.device)
    logits = torch.cat([table[:, p, pos], self_logit[:, None, None].expand(-1, p.shape[0], 1)], -1)
    row_logits = torch.cat([table.diagonal(dim1=1, dim2=2), self_logit[:, None]], -1)
    return torch.softmax(row_logits, -1), torch.softmax(logits, -1)


def swapped_rows(
    head: Head, x: torch.Tensor, perms: torch.Tensor, chunk_size: int | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """The attention rows ``d`` (``[batch, >= n-1]``) and ``d'`` of every swap (``[batch, S, >= n-1]``).

    For a :class:`RopeAttention` both are softmaxes of rows gathered from the logit table, computed
    in the head's dtype on its device; for a callable, the head is called on ``x`` and on all
    swapped inputs ``x[:, perms]`` stacked into one batch.

    Shapes: x [batch, n, d_model]; perms [S, n]; return.rows [batch, n-1]; return.swapped [batch, S, n-1]
    """
    if isinstance(head, RopeAttention):
        return _rope_rows(head, x, perms)
    if not callable(head):
        raise InputError(f"head must be a RopeAttention or a callable, got {type(head).__name__}")
    batch, n, d = x.shape
    perms = perms.to(x.device)
    row = call_rows(head, x, chunk_size, "an attention row")
    stacked = x[:, perms].reshape(batch * perms.shape[0], n, d)
    rows = call_rows(head, stacked, chunk_size, "an attention row")
    return row, rows.reshape(batch, perms.shape[0], n - 1).to(row.device)


def ps_scores(
    head: Head,
    inputs: torch.Tensor,
    tau: float = 1e-4,
    block_size: int = 1,
    chunk_size: int | None = None,
) -> PSScores:
    """Positional and symbolic scores ``(S_pos, S_sym)`` of ``head`` on each input, and their mean.

    ``inputs``: layer inputs ``[batch, n, d_model]`` (or one ``[n, d_model]``), with
    ``n - 1 >= 2 * block_size``. ``tau > 0``: softmax temperature of the swap weights (``1e-4`` as in
    [A]). ``block_size >= 1``: swap blocks of that many consecutive positions ([B]). ``chunk_size``:
    for a callable head, at most that many sequences per call (default: one call). See the module
    docstring for the exact formulas.

    Shapes: inputs [batch, n, d_model]
    """
    tau = _check_tau(tau)
    x = as_inputs(inputs, "inputs", min_n=3)
    check_chunk_size(chunk_size)
    n = x.shape[1]
    perms, block_a, block_b = swap_plan(n, block_size)
    row, swapped = swapped_rows(head, x, perms, chunk_size)
    s_pos, s_sym, pos, sym, weights = scores_from_rows(row, swapped, block_a, block_b, tau)
    return PSScores(
        s_pos=s_pos.cpu(),
        s_sym=s_sym.cpu(),
        pos=pos.cpu(),
        sym=sym.cpu(),
        weights=weights.cpu(),
        block_a=block_a,
        block_b=block_b,
        tau=tau,
        block_size=int(block_size),
        n=n,
    )


def attention_row_fn(head: RopeAttention) -> RowFn:
    """The callable form of a head: ``x -> head(x).pattern[:, -1, :]`` (``[batch, n]``), via forward."""

    def row(x: torch.Tensor) -> torch.Tensor:
        return head(x).pattern[:, -1, :]

    return row
