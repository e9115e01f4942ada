"""The norm-bypass constants: normalise-then-scale is exact in float32, and ``var + eps`` rounds to ``eps``
for every variance below the documented limits, in float32 and float64 (the bypass's premise)."""

from __future__ import annotations

import numpy as np
import torch

from ropeproof.verify.interop.hf._norm_bypass import NORM_EPS, NORM_GAIN


def test_gain_undoes_the_normaliser_exactly() -> None:
    assert NORM_GAIN**2 == NORM_EPS == 2.0**80
    for dtype in (np.float32, np.float64):
        eps, gain = dtype(NORM_EPS), dtype(NORM_GAIN)
        assert gain / np.sqrt(eps) == 1  # the normaliser 2^-40 times the gain 2^40, no rounding


def test_the_variance_vanishes_below_the_limits() -> None:
    for dtype, limit in ((torch.float32, 2.0**55), (torch.float64, 2.0**27)):
        eps = torch.tensor(NORM_EPS, dtype=dtype)
        var = torch.tensor([0.0, 1.0, limit / 2, np.nextafter(limit, 0)], dtype=dtype)
        assert torch.equal(var + eps, eps.expand(4))  # what LayerNorm / RMSNorm add before the root
    # the float32 limit has a factor 2 to spare (2^56 is half an ulp of eps, a tie to even); a variance of
    # one ulp of eps, 2^57, no longer rounds away
    one_ulp, eps32 = torch.tensor(2.0**57), torch.tensor(NORM_EPS)
    assert one_ulp + eps32 != eps32 and torch.tensor(2.0**56) + eps32 == eps32
