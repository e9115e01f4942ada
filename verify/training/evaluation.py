"""Accuracy of a trained model per hop count: greedy answer at the last position (argmax of the
last-token logits over the whole vocabulary) compared with the instance's answer."""

from __future__ import annotations

from typing import Any

import torch

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


def accuracy_per_hop(model: Any, batch: Batch) -> dict[int, float]:
    """``{hops: fraction of instances with that hop count answered correctly}`` plus key ``0``: all."""
    right = predictions(model, batch.input_ids) == batch.answers
    out = {0: float(right.double().mean())}
    for h in sorted(set(batch.hops.tolist())):
        sel = batch.hops == h
        out[int(h)] = float(right[sel].double().mean())
    return out
