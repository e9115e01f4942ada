"""[A]'s layer-input swap procedure on a whole model, for every head of one layer at once.

For each input (``docs/theory.md`` section 2), take the hidden states ``h`` entering block ``l`` (the
residual stream before the block's first norm). For every pair of non-query positions ``i < j``
(or of blocks, [B]), exchange ``h_i`` and ``h_j``, keep every position id as it was, and re-run
**only block ``l``** -- the whole decoder layer with its norms -- from the swapped hidden states.
Each head's last-token attention row in that block, before (``d``) and after (``d'``) the swap, gives
[A]'s score, aggregated with ``softmax_over_swaps(|d_i - d_j| / tau)``, ``tau = 1e-4``
(:mod:`ropeproof.verify.measure.ps._scores` has the formulas). Swaps are batched: each call re-runs the block
on
a chunk of swapped copies sized by ``memory_budget`` (:mod:`ropeproof.verify.measure.ps._swap_stream`).

A model plugs in through a :class:`LayerSwapAdapter`, which knows how to reach block ``l``'s input
and how to re-run block ``l``; everything else is generic. Adapters:
:class:`ropeproof.verify.interop.hf._layer_swap.HFLayerSwap` (HF ``GPTJForCausalLM`` and
``LlamaForCausalLM``, with the one-call
:func:`~ropeproof.verify.interop.hf._layer_swap.hf_layer_swap_scores`);
a TransformerLens ``HookedTransformer`` fits the same interface (``layer_inputs``: the cached
``blocks.{l}.hook_resid_pre``; ``attention_rows``: ``blocks[l]`` on the given residual stream with a
hook on ``blocks.{l}.attn.hook_pattern``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import torch

from ropeproof.machinery._errors import InputError
from ropeproof.machinery._validate import integer_problem
from ropeproof.verify.measure.ps._row_functions import RowFunction
from ropeproof.verify.measure.ps._rows import as_inputs, check_chunk_size
from ropeproof.verify.measure.ps._scores import PSScores, check_tau, source_scores
from ropeproof.verify.measure.ps._swap_sources import CallableSource
from ropeproof.verify.measure.ps._swap_stream import (
    DEFAULT_MEMORY_BUDGET,
    BlockPairs,
    check_block_size,
    check_memory_budget,
)


@runtime_checkable
class LayerSwapAdapter(Protocol):
    """What :func:`layer_swap_scores` needs from a model.

    ``n_layers``, ``n_heads``: the model's blocks and the attention heads per block.
    ``softmax_dtype``: the floating format the model's attention softmax runs in (sets the tolerance
    of the probability check on its rows; ``None``: float32 or the rows' format if less precise).
    """

    n_layers: int
    n_heads: int
    softmax_dtype: torch.dtype | None

    def layer_inputs(self, tokens: Any, layer: int) -> torch.Tensor:
        """The hidden states entering block ``layer`` for ``tokens`` (``[batch, n]`` token ids, or
        whatever the model takes with batch and position as its first two axes), positions ``0 ..
        n-1``: ``[batch, n, d_model]``."""
        ...

    def attention_rows(self, hidden: torch.Tensor, layer: int) -> torch.Tensor:
        """Re-run block ``layer`` (norms, attention, and whatever else the block holds) on ``hidden``
        ``[batch, n, d_model]`` at positions ``0 .. n-1`` with a causal mask, and return the last
        token's attention row of every head, ``[batch, n_heads, n]`` (probabilities).

        Shapes: hidden [batch, n, d_model]; return [batch, n_heads, n]
        """
        ...

    def bytes_per_sequence(self, n: int, layer: int) -> int:
        """Estimated working memory of :meth:`attention_rows` per sequence of ``n`` tokens."""
        ...


@dataclass(frozen=True)
class LayerSwapScores:
    """[A]'s scores of the heads ``heads`` of block ``layer``, one :class:`PSScores` per head.

    ``s_pos``/``s_sym``: ``[len(heads), batch]`` per head and input; ``S_pos``/``S_sym``:
    ``[len(heads)]`` means over inputs; ``skipped_weight``: ``[len(heads), batch]`` (see
    :class:`PSScores`).
    """

    layer: int
    heads: tuple[int, ...]
    scores: tuple[PSScores, ...]

    def head(self, h: int) -> PSScores:
        """The scores of head ``h`` (a head index of the model, one of ``heads``)."""
        if h not in self.heads:
            raise InputError(f"head={h} was not scored; scored heads: {list(self.heads)}")
        return self.scores[self.heads.index(h)]

    @property
    def s_pos(self) -> torch.Tensor:
        return torch.stack([s.s_pos for s in self.scores])

    @property
    def s_sym(self) -> torch.Tensor:
        return torch.stack([s.s_sym for s in self.scores])

    @property
    def S_pos(self) -> torch.Tensor:
        return self.s_pos.mean(1)

    @property
    def S_sym(self) -> torch.Tensor:
        return self.s_sym.mean(1)

    @property
    def skipped_weight(self) -> torch.Tensor:
        return torch.stack([s.skipped_weight for s in self.scores])

    def to_dict(self, per_input: bool = False) -> dict[str, Any]:
        """Plain-Python form for JSON: layer, and each head's :meth:`PSScores.to_dict`."""
        return {
            "layer": self.layer,
            "heads": {str(h): s.to_dict(per_input) for h, s in zip(self.heads, self.scores, strict=True)},
        }


def _check_heads(heads: Any, n_heads: int) -> tuple[int, ...]:
    if heads is None:
        return tuple(range(n_heads))
    try:
        out = tuple(int(h) for h in heads)
    except (TypeError, ValueError) as exc:
        raise InputError(f"heads={heads!r} must be None or a sequence of head indices") from exc
    if not out or len(set(out)) != len(out) or any(not 0 <= h < n_heads for h in out):
        raise InputError(f"heads={heads!r} must be distinct indices in 0..{n_heads - 1} (at least one)")
    return out


def layer_swap_scores(
    model: LayerSwapAdapter,
    tokens: Any,
    layer: int,
    heads: Any = None,
    tau: float = 1e-4,
    block_size: int = 1,
    memory_budget: int = DEFAULT_MEMORY_BUDGET,
    max_skipped_weight: float | None = 0.0,
    per_swap: bool = False,
    chunk_size: int | None = None,
) -> LayerSwapScores:
    """[A]'s layer-input swap scores of block ``layer`` of ``model`` on every input of ``tokens``.

    Parameters
    ----------
    model:
        A :class:`LayerSwapAdapter` (for HF models,
        :class:`~ropeproof.verify.interop.hf._layer_swap.HFLayerSwap`, or directly
        :func:`~ropeproof.verify.interop.hf._layer_swap.hf_layer_swap_scores`).
    tokens:
        The inputs, ``[batch, n]`` token ids (what ``model.layer_inputs`` takes); the query is the
        last token, ``n - 1 >= 2 * block_size``.
    layer:
        The block, ``0 .. n_layers - 1``; its input hidden states are swapped, it alone is re-run.
    heads:
        Head indices of that block to score (default: all). One re-run of the block serves all.
    tau, block_size, memory_budget, max_skipped_weight, chunk_size:
        As for :func:`ropeproof.verify.measure.ps._scores.ps_scores`: swap-weight temperature (``1e-4`` as in
        [A]), [B]'s blocks of positions, bytes the streaming may use (chunks of swapped copies are
        sized with ``model.bytes_per_sequence``), skipping of swaps of weight ``<= W / S`` (default
        0: only zero-weight swaps, which changes no score), and a cap on copies per call.
    per_swap:
        Keep every head's ``[batch, S]`` per-swap arrays (default ``False``: per-input scores only).

    Returns
    -------
    LayerSwapScores
        One :class:`~ropeproof.verify.measure.ps._scores.PSScores` per scored head, ``s_pos``/``s_sym``
        ``[len(heads), batch]``, with the skipped weight (an error bound) per head and input.
    """
    if not isinstance(model, LayerSwapAdapter):
        raise InputError(
            f"model must be a LayerSwapAdapter (layer_inputs, attention_rows, bytes_per_sequence, n_layers, "
            f"n_heads, softmax_dtype), got {type(model).__name__}; for HF models use HFLayerSwap(model)"
        )
    top = int(model.n_layers) - 1
    if integer_problem(layer, low=0, high=top) is not None:  # this wording is matched by the HF tests
        raise InputError(f"layer={layer!r} must be an integer in 0..{top} (the model's layers)")
    layer = int(layer)
    heads_t = _check_heads(heads, int(model.n_heads))
    tau = check_tau(tau)
    block_size = check_block_size(block_size)
    budget = check_memory_budget(memory_budget)
    check_chunk_size(chunk_size)
    shape = tuple(getattr(tokens, "shape", ()))
    if len(shape) < 2 or shape[0] < 1:
        raise InputError(f"tokens must have shape [batch, n, ...] with batch >= 1, got {shape}")
    n = int(shape[1])
    plan = BlockPairs(n, block_size)
    per_seq = max(1, int(model.bytes_per_sequence(n, layer)))
    step = max(1, (budget // 2) // per_seq)
    hidden = torch.cat([model.layer_inputs(tokens[i : i + step], layer) for i in range(0, shape[0], step)], 0)
    hidden = as_inputs(hidden, "the layer inputs", min_n=3)
    index = torch.tensor(heads_t)
    all_heads = heads_t == tuple(range(int(model.n_heads)))

    def rows(h: torch.Tensor) -> torch.Tensor:
        out = model.attention_rows(h, layer)
        return out if all_heads or out.ndim != 3 else out[:, index.to(out.device)]

    fn = RowFunction(
        rows,
        "attention",
        n_heads=len(heads_t),
        softmax_dtype=model.softmax_dtype,
        bytes_per_sequence=lambda m: int(model.bytes_per_sequence(m, layer)),
        name=f"{type(model).__name__} layer {layer}",
    )
    scores = source_scores(
        CallableSource(fn, hidden), plan, tau, budget, max_skipped_weight, per_swap, chunk_size
    )
    return LayerSwapScores(layer, heads_t, tuple(scores))
