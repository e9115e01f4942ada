"""Accuracy of a trained model per hop count, whole or with one layer's attention ablated: the greedy
answer at the last position (argmax of the last-token logits over the whole vocabulary) compared with
the instance's answer."""

from __future__ import annotations

from typing import Any

import torch

from ropeproof.theory.errors import InputError
from ropeproof.verify.training.data import Batch
from ropeproof.verify.training.model import last_token_logits


def predictions(model: Any, input_ids: torch.Tensor, chunk: int = 512) -> torch.Tensor:
    """Greedy last-token predictions ``[batch]`` (model in eval mode, no gradients, in chunks)."""
    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    out = []
    try:
        with torch.no_grad():
            for start in range(0, input_ids.shape[0], chunk):
                ids = input_ids[start : start + chunk].to(device)
                out.append(last_token_logits(model, ids).argmax(-1).cpu())
    finally:
        model.train(was_training)
    return torch.cat(out)


def counts_per_hop(model: Any, batch: Batch) -> dict[int, tuple[int, int]]:
    """``{hops: (answered correctly, instances)}`` per hop count, plus key ``0``: all instances (the
    counts a confidence interval needs, :func:`ropeproof.verify.statistics.proportion_interval`)."""
    right = predictions(model, batch.input_ids) == batch.answers
    out = {0: (int(right.sum()), int(right.numel()))}
    for h in sorted(set(batch.hops.tolist())):
        sel = batch.hops == h
        out[int(h)] = (int(right[sel].sum()), int(sel.sum()))
    return out


def accuracy_per_hop(model: Any, batch: Batch) -> dict[int, float]:
    """``{hops: fraction of instances with that hop count answered correctly}`` plus key ``0``: all."""
    return {h: k / n for h, (k, n) in counts_per_hop(model, batch).items()}


def ablated_accuracy_per_hop(model: Any, batch: Batch, layer: int) -> dict[int, float]:
    """:func:`accuracy_per_hop` with block ``layer``'s attention output set to zero (a forward hook on
    the GPT-J block's ``attn`` module replaces its output tensor by zeros; the MLP still runs)."""
    blocks = model.transformer.h
    if not 0 <= layer < len(blocks):
        raise InputError(f"layer={layer} is out of range; the model has layers 0..{len(blocks) - 1}")

    def zero(module: Any, args: Any, output: Any) -> Any:
        if isinstance(output, tuple):
            return (torch.zeros_like(output[0]), *output[1:])
        return torch.zeros_like(output)

    handle = blocks[layer].attn.register_forward_hook(zero)
    try:
        return accuracy_per_hop(model, batch)
    finally:
        handle.remove()
