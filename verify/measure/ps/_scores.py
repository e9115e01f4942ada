"""The positional and symbolic scores as used in practice ([A]'s code; blocks as in [B];
``docs/theory.md`` section 2).

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

A head is a :class:`~ropeproof.verify.kernel._attention.RopeAttention` (its swapped rows come from
per-token key and rotated-query vectors, :class:`~ropeproof.verify.measure.ps._swap_sources.TableSource`) or a
function of the layer inputs returning the last token's attention row: a
:class:`~ropeproof.verify.measure.ps._row_functions.RowFunction` of kind ``"attention"`` (a ``"logit"`` one is
refused) or a plain callable, ``[batch, n, d_model] -> [batch, n]`` (or ``[batch, n-1]``, the
non-query positions), so that trained models can be scored. Every row a callable returns is checked
to be a probability vector (non-negative, summing to 1 within a tolerance derived from its precision,
:func:`~ropeproof.verify.measure.ps._row_functions.check_probability_rows`).

Swaps are streamed (:mod:`ropeproof.verify.measure.ps._swap_stream`): swapped copies are built and scored a
chunk at a time, the chunk sized by ``memory_budget``, so memory stays bounded at any ``n``; swaps
whose weight is at most ``max_skipped_weight / S`` are not evaluated, and the skipped weight, an upper
bound on what they could add to a score, is reported per input (default 0: only swaps of weight
exactly 0 are skipped, which changes no score).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from ropeproof.machinery._errors import InputError
from ropeproof.machinery._validate import real
from ropeproof.verify.kernel._attention import RopeAttention
from ropeproof.verify.measure.ps._row_functions import RowFunction, require_kind
from ropeproof.verify.measure.ps._rows import Head, as_inputs, check_chunk_size
from ropeproof.verify.measure.ps._swap_sources import CallableSource, TableSource
from ropeproof.verify.measure.ps._swap_stream import (
    DEFAULT_MEMORY_BUDGET,
    BlockPairs,
    SwapRowSource,
    check_block_size,
    cos_sim,
    stream_swap_scores,
)


def swap_plan(n: int, block_size: int = 1) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The swaps of a length-``n`` input: ``(perms, block_a, block_b)``.

    ``perms[s]`` (``[S, n]`` int64) is the input permutation of swap ``s``: the swapped input is
    ``x[perms[s]]``, so position ``p`` receives the content of position ``perms[s, p]``; the query
    (``n - 1``) always maps to itself. ``block_a[s]`` and ``block_b[s]`` (``[S, b]``) list the
    positions of blocks ``I`` and ``J`` (``I < J``). Swaps are ordered lexicographically by
    ``(I, J)``. Raises :class:`InputError` when fewer than two blocks fit in ``n - 1`` positions.
    ``perms`` holds ``S n = O(n^3 / b^2)`` integers: for inspection and loops at small ``n``;
    :func:`ps_scores` never builds it.
    """
    plan = BlockPairs(n, check_block_size(block_size))
    block_a, block_b = plan.positions(torch.arange(plan.n_swaps))
    perms = torch.arange(n).repeat(plan.n_swaps, 1)
    perms.scatter_(1, block_a, block_b)
    perms.scatter_(1, block_b, block_a)
    return perms, block_a, block_b


@dataclass(frozen=True)
class PSScores:
    """Scores of one head on a batch of inputs (float64, CPU).

    ``s_pos``, ``s_sym``: ``[batch]``, the weighted scores of each input. ``skipped_weight``:
    ``[batch]``, the total weight of the swaps not evaluated; the exact score (every swap evaluated)
    lies in ``[s, s + skipped_weight]`` (``pos``, ``sym`` are in ``[0, 1]``). ``n_evaluated``:
    ``[batch]`` swaps evaluated. ``pos``, ``sym``, ``weights``: ``[batch, S]`` per swap (``pos``,
    ``sym`` NaN where skipped) and ``evaluated`` ``[batch, S]``, or all ``None`` when
    ``per_swap=False``. ``block_a``, ``block_b``: ``[S, block_size]`` the swapped positions.
    ``S_pos``/``S_sym``: the aggregate, the mean over inputs.

    Shapes: s_pos [batch]; s_sym [batch]; skipped_weight [batch]; n_evaluated [batch];
        pos [batch, S]; sym [batch, S]; weights [batch, S]; evaluated [batch, S]
    """

    s_pos: torch.Tensor
    s_sym: torch.Tensor
    skipped_weight: torch.Tensor
    n_evaluated: torch.Tensor
    pos: torch.Tensor | None
    sym: torch.Tensor | None
    weights: torch.Tensor | None
    evaluated: torch.Tensor | None
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
        return BlockPairs(self.n, self.block_size).n_swaps

    @property
    def block_a(self) -> torch.Tensor:
        """``[S, block_size]``: positions of the first block of every swap."""
        return BlockPairs(self.n, self.block_size).positions(torch.arange(self.n_swaps))[0]

    @property
    def block_b(self) -> torch.Tensor:
        """``[S, block_size]``: positions of the second block of every swap."""
        return BlockPairs(self.n, self.block_size).positions(torch.arange(self.n_swaps))[1]

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
            "max_skipped_weight": float(self.skipped_weight.max()),
            "mean_swaps_evaluated": float(self.n_evaluated.double().mean()),
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
    """Scores from materialised attention rows: ``(s_pos, s_sym, pos, sym, weights)``.

    ``row``: ``[..., >= m]`` the unswapped rows ``d``; ``swapped``: ``[..., S, >= m]`` the rows
    ``d'`` of every swap; ``block_a``/``block_b``: ``[S, b]`` from :func:`swap_plan`. Any leading
    batch shape. See the module docstring for the formulas. Computed in float64, every swap
    evaluated; for loops and small inputs (:func:`ps_scores` streams instead).

    Shapes: row [..., m]; swapped [..., S, m]; block_a [S, b]; block_b [S, b]; return.0 [...]; return.1
        [...]; return.2 [..., S]; return.3 [..., S]; return.4 [..., S]
    """
    tau = check_tau(tau)
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


def check_tau(tau: float) -> float:
    """``tau`` as a float; :class:`InputError` unless finite and > 0."""
    return real(tau, "tau", low=0, low_open=True)


def source_scores(
    source: SwapRowSource,
    plan: BlockPairs,
    tau: float = 1e-4,
    memory_budget: int = DEFAULT_MEMORY_BUDGET,
    max_skipped_weight: float | None = 0.0,
    per_swap: bool = True,
    chunk_size: int | None = None,
) -> list[PSScores]:
    """One :class:`PSScores` per head of ``source`` (a swap row source bound to the inputs)."""
    tau = check_tau(tau)
    check_chunk_size(chunk_size)
    st = stream_swap_scores(source, plan, tau, memory_budget, max_skipped_weight, per_swap, chunk_size)

    def cpu(t: torch.Tensor | None, h: int) -> torch.Tensor | None:
        return None if t is None else t[:, h].cpu()

    return [
        PSScores(
            s_pos=st.s_pos[:, h].cpu(),
            s_sym=st.s_sym[:, h].cpu(),
            skipped_weight=st.skipped_weight[:, h].cpu(),
            n_evaluated=st.n_evaluated.cpu(),
            pos=cpu(st.pos, h),
            sym=cpu(st.sym, h),
            weights=cpu(st.weights, h),
            evaluated=None if st.evaluated is None else st.evaluated.cpu(),
            tau=tau,
            block_size=plan.block_size,
            n=plan.n,
        )
        for h in range(source.n_heads)
    ]


def ps_scores(
    head: Head,
    inputs: torch.Tensor,
    tau: float = 1e-4,
    block_size: int = 1,
    chunk_size: int | None = None,
    memory_budget: int = DEFAULT_MEMORY_BUDGET,
    max_skipped_weight: float | None = 0.0,
    per_swap: bool = True,
) -> PSScores:
    """Positional and symbolic scores ``(S_pos, S_sym)`` of ``head`` on each input, and their mean.

    ``head``: a :class:`RopeAttention`, a :class:`RowFunction` of kind ``"attention"`` with one head,
    or a plain callable returning the last token's attention row (module docstring).
    ``inputs``: layer inputs ``[batch, n, d_model]`` (or one ``[n, d_model]``), with
    ``n - 1 >= 2 * block_size``. ``tau > 0``: softmax temperature of the swap weights (``1e-4`` as in
    [A]). ``block_size >= 1``: swap blocks of that many consecutive positions ([B]).
    ``memory_budget``: bytes the streaming may use (default 64 MiB; see
    :mod:`ropeproof.verify.measure.ps._swap_stream`); ``chunk_size`` caps the swapped sequences per call of a
    callable head below that. ``max_skipped_weight``: ``None`` evaluates every swap; a number ``W``
    in ``[0, 1)`` skips swaps of weight ``<= W / S``, so each score is exact to within its reported
    ``skipped_weight <= W`` (``0``, the default, skips only zero-weight swaps). ``per_swap``: keep the
    ``[batch, S]`` per-swap arrays (they must fit in ``memory_budget``; ``False`` keeps only the
    per-input scores).

    Shapes: inputs [batch, n, d_model]
    """
    tau = check_tau(tau)
    x = as_inputs(inputs, "inputs", min_n=3)
    check_chunk_size(chunk_size)
    plan = BlockPairs(int(x.shape[1]), check_block_size(block_size))
    source: SwapRowSource
    if isinstance(head, RopeAttention):
        if x.shape[2] != head.d_model:
            raise InputError(f"inputs have d_model={x.shape[2]}; this head expects d_model={head.d_model}")
        source = TableSource(head, x)
    elif callable(head):
        require_kind(head, "attention", "ps_scores")
        if isinstance(head, RowFunction) and head.n_heads is not None:
            raise InputError(
                f"ps_scores scores one head, but the row function returns n_heads={head.n_heads}; "
                "use ropeproof.verify.measure.ps._scores.source_scores for several heads at once"
            )
        source = CallableSource(head, x)
    else:
        raise InputError(f"head must be a RopeAttention or a callable, got {type(head).__name__}")
    return source_scores(source, plan, tau, memory_budget, max_skipped_weight, per_swap, chunk_size)[0]


def attention_row_fn(head: RopeAttention) -> RowFunction:
    """The callable form of a head, via its full forward pass: ``x -> head(x).pattern[:, -1, :]``
    (``[batch, n]``), an attention row (:class:`RowFunction` of kind ``"attention"``)."""

    def row(x: torch.Tensor) -> torch.Tensor:
        return head(x).pattern[:, -1, :]

    return RowFunction(row, "attention", softmax_dtype=head.dtype, bytes_per_sequence=head.forward_bytes,
                       name="attention_row_fn")  # fmt: skip


def last_row_fn(head: RopeAttention) -> RowFunction:
    """The last token's attention row of ``head`` computed alone, ``[batch, n]`` (a
    :class:`RowFunction` of kind ``"attention"``), at about the cost of the key projection.

    The logit of key ``p`` is ``scale * (R_{n-1} q) . (R_p k_p) = scale * k_p . R((n-1-p) theta) q``
    (``q = x_{n-1} W_Q``, ``k_p = x_p W_K``). Plane ``k`` with dims ``(a, b)`` and angle
    ``phi = (n-1-p) theta_k`` contributes ``cos(phi) A_pk + sin(phi) B_pk`` with ``A_pk = k_a q_a +
    k_b q_b`` and ``B_pk = k_b q_a - k_a q_b`` (angles formed in float64). No key is rotated, so this
    route to the row is independent of the head's forward pass and of
    :class:`~ropeproof.verify.measure.ps._swap_sources.TableSource`. ``A`` and ``B`` are formed from
    ``k = x W_K`` when ``n <= d_model``; for longer inputs from ``x_p . alpha_k`` and ``x_p . beta_k``,
    ``alpha_k = W_K[:, a] q_a + W_K[:, b] q_b`` and ``beta_k = W_K[:, b] q_a - W_K[:, a] q_b`` (the
    brackets are linear in ``x_p``), which moves the elementwise work from ``n`` rows to ``d_model``.
    """
    dims = torch.tensor(head.spec.plane_dims, dtype=torch.int64, device=head.device)
    a, b = dims[:, 0], dims[:, 1]
    freqs = torch.tensor(head.spec.plane_freqs, dtype=torch.float64, device=head.device)
    wa, wb = head.W_K[:, a], head.W_K[:, b]  # [d_model, K]
    planes = int(a.shape[0])

    def row(x: torch.Tensor) -> torch.Tensor:
        x = head._input(x)  # shape, d_model, dtype and device, as the forward pass checks them
        if not torch.isfinite(x).all():
            raise InputError("x contains NaN or inf; inputs must be finite")
        n = x.shape[1]
        q = x[:, -1, :] @ head.W_Q  # [batch, h]
        if n <= head.d_model:
            k = x @ head.W_K  # [batch, n, h]
            qa, qb, ka, kb = q[:, None, a], q[:, None, b], k[..., a], k[..., b]
            bracket_a, bracket_b = ka * qa + kb * qb, kb * qa - ka * qb  # [batch, n, K]
        else:
            qa, qb = q[:, None, a], q[:, None, b]  # [batch, 1, K]
            proj = torch.cat([wa * qa + wb * qb, wb * qa - wa * qb], -1)  # [batch, d_model, 2K]
            ab = x @ proj  # [batch, n, 2K]
            bracket_a, bracket_b = ab[..., :planes], ab[..., planes:]
        phi = ((n - 1) - torch.arange(n, device=x.device, dtype=torch.float64))[:, None] * freqs  # [n, K]
        cos, sin = torch.cos(phi).to(x.dtype), torch.sin(phi).to(x.dtype)
        return torch.softmax(head.scale * (bracket_a * cos + bracket_b * sin).sum(-1), -1)

    h, d, item = head.spec.head_dim, head.d_model, head.dtype.itemsize

    def working(n: int) -> int:
        """k or the [n, 2K] product and four [n, K] terms; for n > d_model also the [d_model, 2K]
        projection and its four [d_model, K] terms; the logit row and its softmax."""
        return ((3 * h + 4) * n + (3 * d * h if n > d else 0)) * item

    return RowFunction(row, "attention", softmax_dtype=head.dtype, bytes_per_sequence=working,
                       name="last_row_fn")  # fmt: skip
