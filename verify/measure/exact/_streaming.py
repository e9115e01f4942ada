"""One query row of a :class:`~ropeproof.verify.kernel._attention.RopeAttention` over very long inputs, in
bounded memory.

For the query at position ``n - 1`` the row is ``l_j = scale * (R_{n-1} q) . (R_j k_j)``,
``j = 0 .. n-1``. Keys are produced ``chunk`` at a time (from a tensor or a callable), rotated with
the module's own :func:`~ropeproof.verify.kernel._rope.apply_rope`, and reduced on the fly to the running
top-2
(value and position) and the softmax normaliser ``sum_j exp(l_j - l_max)``. Memory is
``O(chunk * (d_model + head_dim))`` whatever ``n`` is; the same code runs on CPU and CUDA.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch

from ropeproof.machinery._errors import InputError
from ropeproof.machinery._validate import integer
from ropeproof.verify.kernel._attention import RopeAttention

KeySource = torch.Tensor | Callable[[int, int], torch.Tensor]
"""Layer inputs ``x[start:stop]`` (``[stop - start, d_model]``): a tensor, or a callable producing them."""


@dataclass(frozen=True)
class RowTop2:
    """The query row's two largest logits, their positions, and the softmax weight of the top one."""

    n: int
    top1: float
    top1_position: int
    top2: float
    top2_position: int
    top1_weight: float

    @property
    def gap(self) -> float:
        return self.top1 - self.top2


def stream_row_top2(head: RopeAttention, keys: KeySource, n: int, chunk: int = 1 << 16) -> RowTop2:
    """Top-2 of the last query's logits over ``n`` positions; ``keys`` yields layer inputs by range.

    The query is the input at position ``n - 1`` (taken from ``keys`` too). Ties keep the earlier
    position first.
    """
    n = integer(n, "n", low=2, note="a query and at least one other key")
    chunk = integer(chunk, "chunk", low=1)

    def load(start: int, stop: int) -> torch.Tensor:
        x = keys[start:stop] if isinstance(keys, torch.Tensor) else keys(start, stop)
        if x.ndim != 2 or x.shape != (stop - start, head.d_model):
            raise InputError(f"keys({start}, {stop}) must have shape [{stop - start}, {head.d_model}]")
        return x.to(device=head.device, dtype=head.dtype)

    spec, dev = head.spec, head.device
    from ropeproof.verify.kernel._rope import apply_rope

    q = apply_rope((load(n - 1, n) @ head.W_Q), spec, torch.tensor([n - 1], device=dev))[0]
    best_v = torch.full((2,), -math.inf, dtype=torch.float64, device=dev)
    best_i = torch.full((2,), -1, dtype=torch.int64, device=dev)
    running_max = torch.tensor(-math.inf, dtype=torch.float64, device=dev)
    running_sum = torch.tensor(0.0, dtype=torch.float64, device=dev)
    for start in range(0, n, chunk):
        stop = min(n, start + chunk)
        pos = torch.arange(start, stop, device=dev)
        k = apply_rope(load(start, stop) @ head.W_K, spec, pos)
        logits = (head.scale * (k @ q)).double()
        cand_v = torch.cat([best_v, logits])
        cand_i = torch.cat([best_i, pos])
        # stable order: value descending, then position ascending
        order = torch.argsort(cand_i.double(), stable=True)
        order = order[torch.argsort(-cand_v[order], stable=True)]
        best_v, best_i = cand_v[order[:2]], cand_i[order[:2]]
        new_max = torch.maximum(running_max, logits.max())
        running_sum = running_sum * torch.exp(running_max - new_max) + torch.exp(logits - new_max).sum()
        running_max = new_max
    top1_weight = float(torch.exp(best_v[0] - running_max) / running_sum)
    return RowTop2(n, float(best_v[0]), int(best_i[0]), float(best_v[1]), int(best_i[1]), top1_weight)
