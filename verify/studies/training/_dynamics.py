"""Learning dynamics at a checkpoint, as [A] measured them (``docs/theory.md`` section 6): per layer,
[A]'s layer-input swap scores ``S_pos``, ``S_sym``
(:func:`ropeproof.verify.interop.hf._layer_swap.hf_layer_swap_scores`, ``tau = 1e-4``, on the scoring
prompts) with 95% bootstrap intervals over the prompts
(:func:`ropeproof.verify.measure._statistics.mean_interval`),
and the normalised attention entropy of the last token's row,

    H_l = mean over prompts of  -sum_j a_j log a_j / log n,

``a`` = layer ``l``'s last-token attention row over the ``n`` positions it sees (1: uniform, 0: one-hot).

A layer whose scores the model's dtype cannot resolve (its attention rows underflow,
:class:`~ropeproof.machinery._errors.UnderflowError`) is recorded with ``None`` scores and intervals: it is
never read as a number.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from ropeproof.machinery._errors import UnderflowError
from ropeproof.verify.interop.hf._layer_swap import hf_layer_swap_scores
from ropeproof.verify.measure._statistics import mean_interval


def attention_entropy_per_prompt(model: Any, input_ids: torch.Tensor) -> list[torch.Tensor]:
    """Per layer, the normalised entropy of the last token's attention row of every prompt ``[batch]``."""
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
        out.append((-(row * torch.log(row.clamp_min(1e-300))).sum(-1) / math.log(n)).cpu())
    return out


def attention_entropy(model: Any, input_ids: torch.Tensor) -> list[float]:
    """Per layer, the normalised entropy of the last token's attention row, averaged over prompts."""
    return [float(h.mean()) for h in attention_entropy_per_prompt(model, input_ids)]


def _interval(values: torch.Tensor) -> list[float]:
    est = mean_interval(values.double().numpy())
    return [est.low, est.high]


def layer_dynamics(model: Any, input_ids: torch.Tensor) -> dict[str, list[Any]]:
    """``{"S_pos", "S_sym", "entropy"}``: one mean per layer, and ``"S_pos_ci"``, ``"S_sym_ci"``,
    ``"entropy_ci"``: one 95% bootstrap interval ``[low, high]`` over the prompts per layer (module
    docstring; ``None`` for a layer whose scores are not resolved)."""
    was_training = model.training
    model.eval()
    out: dict[str, list[Any]] = {"S_pos": [], "S_sym": [], "S_pos_ci": [], "S_sym_ci": []}
    try:
        for layer in range(model.config.n_layer):
            try:
                scores = hf_layer_swap_scores(model, input_ids, layer)
            except UnderflowError:
                for key in out:
                    out[key].append(None)
                continue
            out["S_pos"].append(float(scores.S_pos[0]))
            out["S_sym"].append(float(scores.S_sym[0]))
            out["S_pos_ci"].append(_interval(scores.s_pos[0]))
            out["S_sym_ci"].append(_interval(scores.s_sym[0]))
    finally:
        model.train(was_training)
    entropy = attention_entropy_per_prompt(model, input_ids)
    out["entropy"] = [float(h.mean()) for h in entropy]
    out["entropy_ci"] = [_interval(h) for h in entropy]
    return out
