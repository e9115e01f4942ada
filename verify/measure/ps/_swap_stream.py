"""[A]'s swap scores streamed under a memory budget: the engine behind
:func:`ropeproof.verify.measure.ps._scores.ps_scores` (formulas in that module's docstring).

Nothing of size ``batch x S x n`` (every swapped copy of every input) is ever built. The work runs in
two passes over *tiles* (a group of inputs times a range of swaps, sized by the budget):

1. the swap weights ``w = softmax_over_swaps(D / tau)``, ``D = ||d_I - d_J||_1``, need only the
   unswapped rows ``d``: a first pass accumulates each softmax's maximum and normaliser (the online
   log-sum-exp), a second pass forms ``w = exp(D / tau - max) / Z``;
2. swaps whose weight is at most ``max_skipped_weight / S`` for every head are *skipped* (never
   evaluated); the others are queued and evaluated ``C`` swapped sequences at a time (one call of the
   row source), ``C`` set by the budget, and ``w pos`` and ``w sym`` are added into the per-input sums.

**Skipping is exact to a stated bound.** Attention rows are non-negative, so ``pos`` and ``sym`` lie
in ``[0, 1]``, and the skipped swaps' share of a score is in ``[0, W]``, ``W`` their total weight
(reported per input and head, at most ``max_skipped_weight``). With ``max_skipped_weight = 0`` only
swaps whose float64 weight is exactly 0 are skipped; they add exactly 0 to the full sum, so the
scores equal those of evaluating every swap up to the order of summation. With ``None`` every swap
is evaluated.

**Memory.** ``memory_budget`` bytes are split in two halves: one for a tile's arrays (``D``, ``w``
and their temporaries, about ``(3 b + 8) x 8`` bytes per input, head and swap), one for a call's
swapped inputs, the row source's declared working memory and the returned rows. Beyond that, the
engine holds the unswapped rows (``batch x H x n`` float64) and, when ``per_swap`` is asked, the
per-swap arrays (``3 x batch x H x S`` float64 and a ``batch x S`` mask), which must fit in the
budget themselves.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

import torch

from ropeproof.machinery._errors import InputError, NonFiniteError, UnderflowError
from ropeproof.machinery._memory_budget import format_bytes
from ropeproof.machinery._validate import integer, real
from ropeproof.verify.kernel._finite import all_finite, finite_screen, passes

DEFAULT_MEMORY_BUDGET = 64 * 2**20
"""Default ``memory_budget``: 64 MiB, so a call gets up to 32 MiB of swapped copies and working
memory (larger chunks did not run faster on the CPU in the budget sweep of
``benchmarks/bench_ps.py``), and the per-swap arrays of 100 inputs of one head fit for ``n <= 233``."""


def check_block_size(block_size: int) -> int:
    """``block_size`` as an int; :class:`InputError` unless it is an integer >= 1."""
    return integer(block_size, "block_size", low=1)


def check_memory_budget(memory_budget: int) -> int:
    """``memory_budget`` in bytes as an int; :class:`InputError` unless it is an integer >= 1."""
    return integer(memory_budget, "memory_budget", low=1, note="bytes")


def check_max_skipped_weight(value: float | None) -> float | None:
    """``None`` or a float in ``[0, 1)``; :class:`InputError` otherwise."""
    if value is None:
        return None
    return real(value, "max_skipped_weight", low=0, high=1, high_open=True, note="or None")


@dataclass(frozen=True)
class BlockPairs:
    """The swaps of a length-``n`` input with blocks of ``block_size`` positions ([B]; 1 for [A]).

    ``K = floor((n - 1) / b)`` blocks, block ``I`` at positions ``I b .. I b + b - 1``; the last
    ``(n - 1) mod b`` non-query positions belong to no block. Swap ``s`` is the ``s``-th pair
    ``I < J`` in lexicographic order, ``S = K (K - 1) / 2`` in all.
    """

    n: int
    block_size: int

    def __post_init__(self) -> None:
        check_block_size(self.block_size)
        integer(self.n, "n")
        if self.n_blocks < 2:
            raise InputError(
                f"n={self.n} with block_size={self.block_size} leaves {self.n_blocks} block(s); "
                "accepted: n - 1 >= 2 * block_size (two blocks to swap)"
            )

    @property
    def n_blocks(self) -> int:
        return (int(self.n) - 1) // int(self.block_size)

    @property
    def n_swaps(self) -> int:
        k = self.n_blocks
        return k * (k - 1) // 2

    def pairs(self, swaps: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Block indices ``(I, J)`` of the swaps numbered ``swaps`` (int64, any shape).

        With ``off[I] = I K - I (I + 1) / 2`` swaps before row ``I``: ``I`` is the last row with
        ``off[I] <= s`` and ``J = s - off[I] + I + 1``, in exact integer arithmetic.

        Shapes: swaps [...]; return.0 [...]; return.1 [...] (the shape of swaps)
        """
        k = self.n_blocks
        rows = torch.arange(k, dtype=torch.int64)
        off = rows * k - rows * (rows + 1) // 2
        s = swaps.to(torch.int64).cpu()
        i = torch.searchsorted(off, s, right=True) - 1
        return i, s - off[i] + i + 1

    def positions(self, swaps: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Positions ``(pa, pb)`` of blocks ``I`` and ``J`` of each swap, shape ``[len(swaps), b]``.

        Shapes: swaps [C]; return.0 [C, b]; return.1 [C, b]
        """
        i, j = self.pairs(swaps)
        offs = torch.arange(self.block_size, dtype=torch.int64)
        return i[:, None] * self.block_size + offs, j[:, None] * self.block_size + offs


class SwapRowSource(Protocol):
    """Where the attention rows come from (:mod:`ropeproof.verify.measure.ps._swap_sources`).

    Bound to a batch of ``batch`` inputs of ``n`` tokens; rows are float64 ``[.., H, n - 1]``
    (non-query entries), on any device.
    """

    batch: int
    n: int
    n_heads: int

    def base_rows(self, chunk: int) -> torch.Tensor:
        """The unswapped rows ``d``, ``[batch, H, n-1]``, at most ``chunk`` sequences per call."""
        ...

    def swapped_rows(self, b_idx: torch.Tensor, pa: torch.Tensor, pb: torch.Tensor) -> torch.Tensor:
        """Rows ``d'`` of input ``b_idx[c]`` with the layer inputs at ``pa[c]`` and ``pb[c]``
        exchanged (``[C]``, ``[C, b]``, ``[C, b]``), ``[C, H, n-1]``.

        Shapes: b_idx [C] (input of each swapped copy); pa [C, b]; pb [C, b]; return [C, H, n - 1]
        """
        ...

    def bytes_per_sequence(self) -> int:
        """Working memory of one swapped sequence, in bytes (its copy, the call, the row)."""
        ...


@dataclass(frozen=True)
class StreamedScores:
    """What :func:`stream_swap_scores` returns (float64, on the rows' device), with a head axis.

    ``s_pos``, ``s_sym``, ``skipped_weight``: ``[batch, H]``; ``n_evaluated``: ``[batch]`` swaps
    evaluated per input. With ``per_swap``: ``pos``, ``sym``, ``weights`` ``[batch, H, S]`` (``pos``
    and ``sym`` NaN at skipped swaps) and ``evaluated`` ``[batch, S]`` bool; else ``None``.
    ``calls``: how many calls were made to the row source for swapped rows, ``chunk``: their size.

    Shapes: s_pos [batch, H]; s_sym [batch, H]; skipped_weight [batch, H]; n_evaluated [batch]; pos [batch,
        H, S]; sym [batch, H, S]; weights [batch, H, S]; evaluated [batch, S]
    """

    s_pos: torch.Tensor
    s_sym: torch.Tensor
    skipped_weight: torch.Tensor
    n_evaluated: torch.Tensor
    pos: torch.Tensor | None
    sym: torch.Tensor | None
    weights: torch.Tensor | None
    evaluated: torch.Tensor | None
    calls: int
    chunk: int


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


def per_swap_bytes(batch: int, n_heads: int, n_swaps: int) -> int:
    """Bytes of the per-swap arrays: ``pos``, ``sym``, ``weights`` (float64) and the mask."""
    return batch * n_swaps * (3 * 8 * n_heads + 1)


def _block_gap(d: torch.Tensor, pa: torch.Tensor, pb: torch.Tensor) -> torch.Tensor:
    """``D[g, h, s] = sum_t |d[g, h, pa[s, t]] - d[g, h, pb[s, t]]|`` for rows ``d`` ``[G, H, m]``."""
    return (d[:, :, pa] - d[:, :, pb]).abs().sum(-1)


MAX_UNRESOLVED_WEIGHT = 1e-12
"""The largest swap weight (per input and head) allowed on swaps whose attention entries all underflowed
(both vectors of the cosine similarity below the smallest normal number): their cosine is of lost digits
(``0/0`` read as 1), so a score moves by at most twice this weight; above it, the scores are refused
with :class:`UnderflowError` rather than reported (a row that put all its weight on the query used to
score a plausible ``(1, 1)``)."""


def _finite_rows(rows: torch.Tensor, what: str) -> torch.Tensor:
    """``rows`` unchanged if every entry is finite; else :class:`NonFiniteError`. The inputs were checked
    finite on entry, so a NaN or inf here is an overflow of the head's logits in its dtype (a softmax
    of an infinite logit is NaN), which would otherwise score as plausible zeros.

    Shapes: rows [...]
    """
    if not passes(finite_screen(rows), lambda: all_finite(rows)):
        raise NonFiniteError(
            f"{what} of the head contain NaN or inf although the inputs are finite: its logits "
            "overflowed in the head's dtype; rescale the inputs or the head's weights"
        )
    return rows


def stream_swap_scores(
    source: SwapRowSource,
    plan: BlockPairs,
    tau: float,
    memory_budget: int = DEFAULT_MEMORY_BUDGET,
    max_skipped_weight: float | None = 0.0,
    per_swap: bool = False,
    chunk_size: int | None = None,
) -> StreamedScores:
    """Scores of every head of ``source`` over the swaps of ``plan`` (module docstring).

    ``chunk_size`` caps the swapped sequences per call below what the budget allows.
    """
    budget = check_memory_budget(memory_budget)
    skip = check_max_skipped_weight(max_skipped_weight)
    batch, h, n_swaps, b = source.batch, source.n_heads, plan.n_swaps, plan.block_size
    if plan.n != source.n:
        raise InputError(f"the swap plan is for n={plan.n}, the inputs have n={source.n}")
    if per_swap and per_swap_bytes(batch, h, n_swaps) > budget:
        need = per_swap_bytes(batch, h, n_swaps)
        raise InputError(
            f"per_swap=True keeps {format_bytes(need)} of per-swap arrays (batch={batch}, heads={h}, "
            f"S={n_swaps} swaps), over memory_budget={format_bytes(budget)}; pass per_swap=False to "
            "keep only the per-input scores, or raise memory_budget"
        )
    half = max(1, budget // 2)
    chunk = max(1, half // max(1, source.bytes_per_sequence()))
    if chunk_size is not None:
        chunk = min(chunk, int(chunk_size))

    d = _finite_rows(source.base_rows(chunk), "the unswapped attention rows")  # [batch, H, m] float64
    dev = d.device
    per_elem = (3 * b + 8) * 8
    elems = max(1, half // per_elem)
    if n_swaps * h <= elems:
        group, span = max(1, elems // (n_swaps * h)), n_swaps
    else:
        group, span = 1, max(1, elems // h)
    tiles = [(g0, min(batch, g0 + group), s0, min(n_swaps, s0 + span))
             for g0 in range(0, batch, group) for s0 in range(0, n_swaps, span)]  # fmt: skip
    cache: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}

    def tile_gap(g0: int, g1: int, s0: int, s1: int) -> torch.Tensor:
        if s0 not in cache or span != n_swaps:
            cache.clear()
            pa, pb = plan.positions(torch.arange(s0, s1))
            cache[s0] = (pa.to(dev), pb.to(dev))
        pa, pb = cache[s0]
        return _block_gap(d[g0:g1], pa, pb) / tau

    # pass 1: maximum and normaliser of each (input, head) softmax over swaps (online log-sum-exp)
    top = torch.full((batch, h), -math.inf, dtype=torch.float64, device=dev)
    norm = torch.zeros(batch, h, dtype=torch.float64, device=dev)
    for g0, g1, s0, s1 in tiles:
        z = tile_gap(g0, g1, s0, s1)
        new_top = torch.maximum(top[g0:g1], z.amax(-1))
        rescaled = norm[g0:g1] * torch.exp(top[g0:g1] - new_top)
        norm[g0:g1] = rescaled + torch.exp(z - new_top[..., None]).sum(-1)
        top[g0:g1] = new_top

    s_pos = torch.zeros(batch, h, dtype=torch.float64, device=dev)
    s_sym = torch.zeros_like(s_pos)
    skipped = torch.zeros_like(s_pos)
    unresolved = torch.zeros_like(s_pos)  # swap weight on pairs whose entries all underflowed
    tiny = torch.finfo(getattr(source, "row_dtype", None) or torch.float64).tiny
    n_eval = torch.zeros(batch, dtype=torch.int64, device=dev)
    pos_all = sym_all = w_all = mask_all = None
    if per_swap:
        pos_all = torch.full((batch, h, n_swaps), math.nan, dtype=torch.float64, device=dev)
        sym_all = torch.full_like(pos_all, math.nan)
        w_all = torch.zeros_like(pos_all)
        mask_all = torch.zeros(batch, n_swaps, dtype=torch.bool, device=dev)
    calls = 0

    def evaluate(b_idx: torch.Tensor, s_idx: torch.Tensor, w: torch.Tensor) -> None:
        nonlocal calls
        pa, pb = plan.positions(s_idx)
        rows = _finite_rows(
            source.swapped_rows(b_idx, pa, pb).to(dev), "a swapped attention row"
        )  # [C, H, m]
        calls += 1
        pa, pb, bd = pa.to(dev), pb.to(dev), b_idx.to(dev)
        ia, ib = pa[:, None, :].expand(-1, h, -1), pb[:, None, :].expand(-1, h, -1)
        base = d[bd]
        d_a, d_b = base.gather(2, ia), base.gather(2, ib)
        new = torch.cat([rows.gather(2, ia), rows.gather(2, ib)], -1)
        old = torch.cat([d_a, d_b], -1)
        pos = cos_sim(new, old)  # [C, H]
        sym = cos_sim(new, torch.cat([d_b, d_a], -1))
        lost = (new.abs().amax(-1) < tiny) | (old.abs().amax(-1) < tiny)  # [C, H]: cos_sim of lost digits
        unresolved.index_add_(0, bd, w * lost)
        s_pos.index_add_(0, bd, w * pos)
        s_sym.index_add_(0, bd, w * sym)
        n_eval.index_add_(0, bd, torch.ones_like(bd))
        if pos_all is not None and sym_all is not None:
            sd = s_idx.to(dev)
            pos_all[bd, :, sd] = pos
            sym_all[bd, :, sd] = sym

    pending: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = []
    count = 0
    for g0, g1, s0, s1 in tiles:
        z = tile_gap(g0, g1, s0, s1)
        w = torch.exp(z - top[g0:g1, :, None]) / norm[g0:g1, :, None]  # [G, H, span]
        if skip is None:
            keep = torch.ones(w.shape[0], w.shape[2], dtype=torch.bool, device=dev)
        else:
            keep = (w > skip / n_swaps).any(1)
            skipped[g0:g1] += (w * (~keep)[:, None, :]).sum(-1)
        if w_all is not None and mask_all is not None:
            w_all[g0:g1, :, s0:s1] = w
            mask_all[g0:g1, s0:s1] = keep
        gi, si = keep.nonzero(as_tuple=True)
        if gi.numel() == 0:
            continue
        pending.append((gi + g0, si + s0, w[gi, :, si]))
        count += gi.numel()
        if count >= chunk:  # evaluate every full chunk; the rest waits for the next tile
            bi, sj, wk = (torch.cat(t) for t in zip(*pending, strict=True))
            start = 0
            while count - start >= chunk:
                evaluate(bi[start : start + chunk], sj[start : start + chunk], wk[start : start + chunk])
                start += chunk
            pending = [(bi[start:], sj[start:], wk[start:])]
            count -= start
    if count:
        bi, sj, wk = (torch.cat(t) for t in zip(*pending, strict=True))
        evaluate(bi, sj, wk)
    worst = float(unresolved.max()) if unresolved.numel() else 0.0
    if worst > MAX_UNRESOLVED_WEIGHT:
        raise UnderflowError(
            f"the scores are not resolved: up to {worst:.3g} of an input's swap weight lies on swaps whose "
            f"attention entries all underflow (below {tiny:.3g}, the smallest normal number of the rows' "
            "dtype), where the cosine similarities are of lost digits (logit gaps of about 745 in float64, "
            "87 in float32); lower the logit scale or rescale the inputs"
        )
    return StreamedScores(s_pos, s_sym, skipped, n_eval, pos_all, sym_all, w_all, mask_all, calls, chunk)
