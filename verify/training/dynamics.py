"""Learning dynamics at a checkpoint, as [A] measured them (``docs/theory.md`` section 6): per layer,
[A]'s layer-input swap scores ``S_pos``, ``S_sym``
(:func:`ropeproof.verify.interop.hf.layer_swap.hf_layer_swap_scores`, ``tau = 1e-4``, on the scoring
prompts) and the normalised attention entropy of the last token's row,

    H_l = mean over prompts of  -sum_j a_j log a_j / log n,

``a`` = layer ``l``'s last-token attention row over the ``n`` positions it sees (1: uniform, 0: one-hot).
"""

from __future__ import annotations

import math
from typing import Any

import torch

from ropeproof.verify.interop.hf.layer_swap import hf_layer_swap_scores


def attention_entropy(model: Any, input_ids: torch.Tensor) -> list[float]:
    """Per layer, the normalised entropy of the last token's attention row, averaged over prompts."""
    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    try:
        with torch.no_grad():
            att = model(input_ids=input_ids.to(device), output_attentions=True, use_cache=False).attentions
    finally:
        model.train(was_training)
    n = input_ids.shape[1]
    out = []
    for a in att:
        row = a[:, 0, -1, :].double().clamp_min(0)
        h = -(row * torch.log(row.clamp_min(1e-300))).sum(-1) / math.log(n)
        out.append(float(h.mean()))
    return out


def layer_dynamics(model: Any, input_ids: torch.Tensor) -> dict[str, list[float]]:
    """``{"S_pos": [...], "S_sym": [...], "entropy": [...]}``, one value per layer (module docstring)."""
    was_training = model.training
    model.eval()
    try:
        s_pos, s_sym = [], []
        for layer in range(model.config.n_layer):
            scores = hf_layer_swap_scores(model, input_ids, layer)
            s_pos.append(float(scores.S_pos[0]))
            s_sym.append(float(scores.S_sym[0]))
    finally:
        model.train(was_training)
    return {"S_pos": s_pos, "S_sym": s_sym, "entropy": attention_entropy(model, input_ids)}
