"""Logits by distance back from the query equal the module's logits at the same offsets."""

from __future__ import annotations

import numpy as np
import torch

from ropeproof.theory._rope_spec import RopeSpec
from ropeproof.verify.kernel._rope import rope_logits
from ropeproof.verify.measure.exact._offset_logits import distance_logits


def test_distance_logits_equal_rope_logits() -> None:
    rng = np.random.default_rng(0)
    spec = RopeSpec(8, freqs=[0.9, 0.3, 0.0, 2.2])
    q = rng.standard_normal(8)
    q[2:4] = 0.0  # a plane with zero query weight is skipped and must still contribute nothing
    keys = rng.standard_normal((3, 8))
    n = 12
    got = distance_logits(q, keys, spec, np.arange(n), scale=0.5)
    for g in range(3):
        x_q = torch.as_tensor(q)[None].double()
        x_k = torch.as_tensor(keys[g])[None].expand(n, 8).double()
        # the query at n - 1 against a key at n - 1 - d
        row = rope_logits(x_q, x_k, spec, 0.5, q_positions=[n - 1], k_positions=list(range(n)))[0].numpy()
        np.testing.assert_allclose(got[g], row[::-1], rtol=0, atol=1e-13)


def test_zero_query_gives_exact_zeros() -> None:
    out = distance_logits(np.zeros(4), np.ones((2, 4)), RopeSpec(4), np.arange(5))
    assert out.shape == (2, 5) and not out.any()
