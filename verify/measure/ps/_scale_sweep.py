"""Positional/symbolic scores as a function of the logit scale, and the scale a head works at.

[A]'s score weights each swap by ``softmax(|d_i - d_j| / tau)`` with ``tau = 1e-4``: an argmax over
swaps of the pair with the largest attention difference. At logit scale 1 a construction's logits
lie in ``[-1, 1]`` and its attention is nearly uniform, so that pair and its cosine reflect the
logit *range* rather than whether the head follows positions or contents. The head works at the scale
that puts most of its attention on the target: with worst-case margin ``Delta`` over inputs of
length ``n``, weight ``1 - eps`` needs ``s* = ln((n - 1)(1 - eps) / eps) / Delta``
(:func:`ropeproof.theory._bounds.softmax_scale_needed`). :func:`scores_over_scales` scores a head at
several scales so a classification can be judged where the head works.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import sympy as sp
import torch

from ropeproof.machinery._validate import integer, real
from ropeproof.theory._bounds import softmax_scale_needed
from ropeproof.verify.kernel._attention import RopeAttention
from ropeproof.verify.measure.ps._scores import ps_scores


def working_scale(margin: float, n: int, eps: float = 0.01) -> float:
    """``ln((n - 1)(1 - eps) / eps) / margin``: the logit scale giving weight ``>= 1 - eps`` on the
    target of every input of length ``n`` whose worst-case margin is ``margin > 0``."""
    margin = real(margin, "margin", low=0, low_open=True, note="the head must separate the target")
    n = integer(n, "n", low=2)
    eps = real(eps, "eps", low=0, high=1, low_open=True, high_open=True)
    return float(softmax_scale_needed(sp.Integer(n), sp.Float(margin, 30), sp.Float(eps, 30)))


@dataclass(frozen=True)
class ScaleScores:
    """``S_pos`` and ``S_sym`` (means over the inputs) at one logit scale."""

    scale: float
    S_pos: float
    S_sym: float


def scores_over_scales(
    head: RopeAttention, inputs: torch.Tensor, scales: Sequence[float], tau: float = 1e-4
) -> list[ScaleScores]:
    """[A]'s scores of ``head`` on ``inputs`` with its logits multiplied by each of ``scales``
    (relative to the head's own ``scale``); the head is left as it was.

    Shapes: inputs [batch, n, d_model]
    """
    factors = [real(s, f"scales[{i}]", low=0, low_open=True) for i, s in enumerate(scales)]
    base = head.scale
    out = []
    try:
        for s in factors:
            head.scale = base * s
            sc = ps_scores(head, inputs, tau=tau)
            out.append(ScaleScores(s, sc.S_pos, sc.S_sym))
    finally:
        head.scale = base
    return out
