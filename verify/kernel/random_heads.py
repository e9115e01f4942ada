"""Random RoPE heads: the one generator of random test subjects."""

from __future__ import annotations

import math
from typing import Literal

import torch

from ropeproof.theory.errors import InputError
from ropeproof.theory.rope_spec import RopeSpec
from ropeproof.theory.validate import integer
from ropeproof.verify.kernel.attention import RopeAttention
from ropeproof.verify.kernel.devices import DeviceLike, DtypeLike


def random_head(
    spec: RopeSpec,
    d_model: int,
    seed: int = 0,
    scale: float = 1.0,
    init: Literal["normal", "fan_in"] = "normal",
    device: DeviceLike = "cpu",
    dtype: DtypeLike = torch.float64,
) -> RopeAttention:
    """A :class:`~ropeproof.verify.kernel.attention.RopeAttention` with random weights.

    ``W_Q, W_K, W_V`` (``[d_model, head_dim]``) and ``W_O`` (``[head_dim, d_model]``) are drawn in
    that order from ``torch.Generator().manual_seed(seed)`` in float64 (then cast to ``dtype``):
    ``init="normal"`` draws ``N(0, 1)`` entries, ``init="fan_in"`` draws ``N(0, 1/fan_in)`` with
    ``fan_in`` the matrix's first dimension.
    """
    d_model = integer(d_model, "d_model", low=1)
    if init not in ("normal", "fan_in"):
        raise InputError(f"init={init!r} is unknown; accepted: 'normal', 'fan_in'")
    g = torch.Generator().manual_seed(int(seed))
    h = spec.head_dim

    def w(*shape: int) -> torch.Tensor:
        m = torch.randn(*shape, generator=g, dtype=torch.float64)
        return m / math.sqrt(shape[0]) if init == "fan_in" else m

    w_q, w_k, w_v, w_o = w(d_model, h), w(d_model, h), w(d_model, h), w(h, d_model)
    return RopeAttention(w_q, w_k, w_v, w_o, spec, scale, device=device, dtype=dtype)
