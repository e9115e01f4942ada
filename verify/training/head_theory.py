"""Trained heads against the theory: which RoPE frequencies carry each trained layer's attention, and
how each frequency behaves on its own ([B]'s per-frequency scores; ``docs/theory.md`` sections 2 and 6).

For layer ``l`` of a GPT-J model, the head is imported in float64
(:func:`ropeproof.verify.interop.hf.head_import.import_model_head`) and run on its real inputs: the
hidden states entering block ``l`` on the given prompts, through the block's ``ln_1`` in float64. The
head splits exactly into one 2-D head per rotary plane
(:func:`ropeproof.verify.ps.per_frequency.split_planes`, logits add up). Per plane ``k`` (frequency
``theta_k = 10000^(-2k/d)``, [A]'s frequency id ``k + 1``,
so that id 2 of a 128-dim head is ``0.8660`` and id 42 is ``0.0027``):

- ``spread_k``: the standard deviation of the plane's last-token logit row over the positions it sees,
  averaged over prompts; ``share_k = spread_k / sum_j spread_j`` (which planes move the logits);
- ``S_pos_k``, ``S_sym_k``: [A]'s swap scores of the plane on its own (``tau = 1e-4``).
"""

from __future__ import annotations

import copy
import math
from typing import Any

import torch

from ropeproof.verify.interop.hf.head_import import import_model_head
from ropeproof.verify.interop.hf.layer_swap import HFLayerSwap
from ropeproof.verify.ps.per_frequency import per_frequency_scores, split_planes


def layer_head_inputs(model: Any, input_ids: torch.Tensor, layer: int) -> torch.Tensor:
    """``ln_1`` (in float64) of the hidden states entering block ``layer``: ``[batch, n, n_embd]``."""
    hidden = HFLayerSwap(model).layer_inputs(input_ids, layer).to("cpu", torch.float64)
    norm = copy.deepcopy(model.transformer.h[layer].ln_1).to("cpu", torch.float64)
    with torch.no_grad():
        return norm(hidden)


def frequency_profile(
    model: Any, input_ids: torch.Tensor, layer: int, tau: float = 1e-4
) -> list[dict[str, Any]]:
    """One row per rotary plane of layer ``layer`` (module docstring): ``plane``, ``freq_id``, ``theta``,
    ``share``, ``S_pos``, ``S_sym``."""
    head = import_model_head(model, layer=layer, device="cpu", dtype=torch.float64)
    x = layer_head_inputs(model, input_ids, layer)
    profile = per_frequency_scores(head, x, tau=tau)
    spreads = []
    with torch.no_grad():
        for plane in split_planes(head):
            row = plane.head(x).logits[:, -1, :]
            spreads.append(float(row.std(dim=-1).mean()))
    total = sum(spreads)
    return [
        {
            "layer": layer,
            "plane": k,
            "freq_id": k + 1,
            "theta": float(profile.freqs[k]),
            "share": spreads[k] / total if total > 0 else math.nan,
            "S_pos": float(profile.S_pos[k]),
            "S_sym": float(profile.S_sym[k]),
        }
        for k in range(len(spreads))
    ]


def dominant_plane(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The plane with the largest logit share."""
    return max(rows, key=lambda r: r["share"])
