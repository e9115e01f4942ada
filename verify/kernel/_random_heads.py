"""Random RoPE heads: the one generator of random test subjects."""

from __future__ import annotations

import math
from typing import Literal

import torch

from ropeproof.machinery._errors import InputError
from ropeproof.machinery._memory_budget import check_allocation
from ropeproof.machinery._validate import integer
from ropeproof.theory._rope_spec import RopeSpec
from ropeproof.verify.kernel._attention import RopeAttention
from ropeproof.verify.kernel._devices import DeviceLike, DtypeLike

RANDOM_HEAD_BYTES_PER_ENTRY = 64
"""Peak bytes per entry of one ``d_model x head_dim`` matrix while a random head is built (about eight
float64 matrices of that size: the four weights, a scaled draw, the fused q/k/v weight)."""


def random_head(
    spec: RopeSpec,
    d_model: int,
    seed: int = 0,
    scale: float = 1.0,
    init: Literal["normal", "fan_in"] = "normal",
    device: DeviceLike = "cpu",
    dtype: DtypeLike = torch.float64,
) -> RopeAttention:
    """A :class:`~ropeproof.verify.kernel._attention.RopeAttention` with random weights.

    ``W_Q, W_K, W_V`` (``[d_model, head_dim]``) and ``W_O`` (``[head_dim, d_model]``) are drawn in
    that order from ``torch.Generator().manual_seed(seed)`` in float64 (then cast to ``dtype``):
    ``init="normal"`` draws ``N(0, 1)`` entries, ``init="fan_in"`` draws ``N(0, 1/fan_in)`` with
    ``fan_in`` the matrix's first dimension. The memory is estimated against the machine's limit
    (:func:`~ropeproof.machinery._memory_budget.check_allocation`) before anything is drawn.
    """
    d_model = integer(d_model, "d_model", low=1)
    if init not in ("normal", "fan_in"):
        raise InputError(f"init={init!r} is unknown; accepted: 'normal', 'fan_in'")
    h = spec.head_dim
    # before any draw: the four float64 matrices, a scaled copy while drawing, and the module's fused
    # [W_Q | W_K | W_V] (and a cast, where the dtype differs) come to about 8 matrices of 8 bytes an entry
    check_allocation(
        f"a random head with d_model = {d_model} and head_dim = {h} (4 matrices of d_model x head_dim)",
        RANDOM_HEAD_BYTES_PER_ENTRY * d_model * h,
    )
    g = torch.Generator().manual_seed(int(seed))

    def w(*shape: int) -> torch.Tensor:
        m = torch.randn(*shape, generator=g, dtype=torch.float64)
        return m / math.sqrt(shape[0]) if init == "fan_in" else m

    w_q, w_k, w_v, w_o = w(d_model, h), w(d_model, h), w(d_model, h), w(h, d_model)
    return RopeAttention(w_q, w_k, w_v, w_o, spec, scale, device=device, dtype=dtype)
