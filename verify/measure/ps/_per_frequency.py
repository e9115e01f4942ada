"""Per-frequency decomposition: one 2-D head per RoPE plane, each scored on its own ([B]).

Plane ``k`` of a head, with dims ``(a_k, b_k)`` (:attr:`RopeSpec.plane_dims`, either layout) and
frequency ``theta_k`` (:attr:`RopeSpec.plane_freqs`, 0 for pass-through planes), becomes the 2-D
head with

    W_Q^(k) = W_Q[:, (a_k, b_k)],  W_K^(k) = W_K[:, (a_k, b_k)],  spec = RopeSpec(2, freqs=[theta_k]),
    scale^(k) = gain * scale,      W_V^(k) = W_V[:, (a_k, b_k)],  W_O^(k) = W_O[(a_k, b_k), :].

RoPE rotates each plane on its own, so with ``gain = 1`` the planes' logits add up to the head's:
``l(i, j) = sum_k l^(k)(i, j)`` exactly. Scoring each plane head with
:func:`ropeproof.verify.measure.ps._scores.ps_scores` gives the behaviour-vs-frequency profile. ``gain`` only
rescales
the plane's logits before the softmax (a plane carries roughly ``1/sqrt(K)`` of a random head's logit
spread, so its attention is flatter and its scores sit closer to ``(1, 1)``); the exact deviations of
:mod:`ropeproof.verify.measure.ps._exact`, relative to the row variance, do not depend on it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch

from ropeproof.machinery._errors import InputError
from ropeproof.machinery._validate import integer
from ropeproof.theory._rope_spec import RopeSpec
from ropeproof.verify.kernel._attention import RopeAttention
from ropeproof.verify.measure.ps._exact import as_inputs, sampled_exclusion
from ropeproof.verify.measure.ps._scores import source_scores
from ropeproof.verify.measure.ps._swap_sources import PlaneTableSource
from ropeproof.verify.measure.ps._swap_stream import BlockPairs, check_block_size


@dataclass(frozen=True)
class PlaneHead:
    """Plane ``index`` of a head, at frequency ``freq``, from dims ``dims``, as a 2-D head."""

    index: int
    freq: float
    dims: tuple[int, int]
    head: RopeAttention


def _check_gain(gain: float) -> float:
    try:
        g = float(gain)
    except (TypeError, ValueError) as exc:
        raise InputError(f"gain={gain!r} must be a finite number") from exc
    if not math.isfinite(g):
        raise InputError(f"gain={gain} must be finite")
    return g


def split_planes(head: RopeAttention, gain: float = 1.0) -> list[PlaneHead]:
    """One :class:`PlaneHead` per plane of ``head`` (``head_dim / 2`` of them), in plane order.

    Each keeps the head's device and dtype; see the module docstring for the weights.
    """
    if not isinstance(head, RopeAttention):
        raise InputError(f"head must be a RopeAttention, got {type(head).__name__}")
    g = _check_gain(gain)
    out = []
    for k, ((a, b), freq) in enumerate(zip(head.spec.plane_dims, head.spec.plane_freqs, strict=True)):
        idx = [a, b]
        plane = RopeAttention(
            head.W_Q[:, idx],
            head.W_K[:, idx],
            head.W_V[:, idx],
            head.W_O[idx, :],
            RopeSpec(2, freqs=[float(freq)]),
            scale=g * head.scale,
            device=head.device,
            dtype=head.dtype,
        )
        out.append(PlaneHead(k, float(freq), (int(a), int(b)), plane))
    return out


@dataclass(frozen=True)
class FrequencyProfile:
    """Scores per plane (float64, CPU; one entry per plane, plane order).

    ``freqs``: ``[K]`` plane frequencies; ``dims``: the ``(a, b)`` dims of each plane;
    ``S_pos``/``S_sym``: ``[K]`` mean scores over inputs; ``s_pos``/``s_sym``: ``[K, batch]`` per
    input. When ``n_samples > 0`` was asked, ``rel_pos``/``rel_sym`` (``[K]``) are the exact
    deviations relative to the logit row's variance, ``mean_inputs(msd_pos) / mean_inputs(Var)`` and
    likewise for ``sym`` (sampled over ``n_samples`` permutations). The exclusion principle says
    ``rel_pos + rel_sym >= 1``; a NoPE plane has ``rel_sym = 0``. They are NaN when not computed or
    when the plane's logit rows are constant. ``row_spread`` (``[K, batch]``): the standard deviation of
    each plane's last-token logit row over its ``n`` positions (the query's own logit included).

    Shapes: freqs [K]; S_pos [K]; S_sym [K]; s_pos [K, batch]; s_sym [K, batch]; rel_pos [K]; rel_sym [K];
    row_spread [K, batch]
    """

    freqs: torch.Tensor
    dims: list[tuple[int, int]]
    S_pos: torch.Tensor
    S_sym: torch.Tensor
    s_pos: torch.Tensor
    s_sym: torch.Tensor
    rel_pos: torch.Tensor
    rel_sym: torch.Tensor
    row_spread: torch.Tensor
    tau: float
    block_size: int
    gain: float
    n_samples: int

    def to_dict(self) -> dict[str, Any]:
        """Plain-Python form for JSON (aggregates per plane)."""
        return {
            "freqs": self.freqs.tolist(),
            "dims": [list(d) for d in self.dims],
            "S_pos": self.S_pos.tolist(),
            "S_sym": self.S_sym.tolist(),
            "rel_pos": self.rel_pos.tolist(),
            "rel_sym": self.rel_sym.tolist(),
            "tau": self.tau,
            "block_size": self.block_size,
            "gain": self.gain,
            "n_samples": self.n_samples,
        }


def per_frequency_scores(
    head: RopeAttention,
    inputs: torch.Tensor,
    tau: float = 1e-4,
    block_size: int = 1,
    gain: float = 1.0,
    n_samples: int = 0,
    seed: int = 0,
) -> FrequencyProfile:
    """Score every plane of ``head`` on its own: the behaviour-vs-frequency profile.

    ``inputs``, ``tau`` and ``block_size`` are as for :func:`ropeproof.verify.measure.ps._scores.ps_scores`;
    ``gain``
    multiplies each plane's logits (module docstring). ``n_samples > 0`` also estimates the
    relative exact deviations ``rel_pos``/``rel_sym`` from that many random permutations (seeded
    by ``seed``).

    Shapes: inputs [batch, n, d_model]
    """
    x = as_inputs(inputs, "inputs", min_n=3)
    n_samples = integer(n_samples, "n_samples", low=0)
    planes = split_planes(head, gain)
    if x.shape[2] != head.d_model:
        raise InputError(f"inputs have d_model={x.shape[2]}; this head expects d_model={head.d_model}")
    # every plane's scores in one stream of swaps (PlaneTableSource: the plane heads' rows, all at once)
    plan = BlockPairs(int(x.shape[1]), check_block_size(block_size))
    source = PlaneTableSource(head, x, _check_gain(gain))
    scores = source_scores(source, plan, tau, per_swap=False)
    with torch.no_grad():  # the same rows' spreads: [batch, K, n] -> [K, batch]
        row_spread = source.last_logits().std(dim=-1).T.to("cpu", torch.float64)
    s_pos, s_sym, rel_pos, rel_sym = [], [], [], []
    first = scores[0]
    for plane, sc in zip(planes, scores, strict=True):
        s_pos.append(sc.s_pos)
        s_sym.append(sc.s_sym)
        if n_samples:
            rep = sampled_exclusion(plane.head, x, n_samples=int(n_samples), seed=seed)
            var = float(rep.variance.mean())
            rel_pos.append(float(rep.msd_pos.mean()) / var if var > 0 else math.nan)
            rel_sym.append(float(rep.msd_sym.mean()) / var if var > 0 else math.nan)
        else:
            rel_pos.append(math.nan)
            rel_sym.append(math.nan)
    sp, ss = torch.stack(s_pos), torch.stack(s_sym)
    return FrequencyProfile(
        freqs=torch.tensor([p.freq for p in planes], dtype=torch.float64),
        dims=[p.dims for p in planes],
        S_pos=sp.mean(1),
        S_sym=ss.mean(1),
        s_pos=sp,
        s_sym=ss,
        rel_pos=torch.tensor(rel_pos, dtype=torch.float64),
        rel_sym=torch.tensor(rel_sym, dtype=torch.float64),
        row_spread=row_spread,
        tau=first.tau,
        block_size=first.block_size,
        gain=_check_gain(gain),
        n_samples=int(n_samples),
    )
