"""ps_scores streams swaps under ``memory_budget``; what cannot be streamed is refused before any work."""

from __future__ import annotations

import time

import pytest
import torch

from ropeproof.machinery._errors import InputError
from ropeproof.verify.measure._subjects import random_subject
from ropeproof.verify.measure.ps._scores import ps_scores


def test_long_inputs_with_per_swap_arrays_are_refused_at_once() -> None:
    """n = 5000 has S = 12,497,500 swaps: the per-swap arrays alone (2 inputs x S x 25 bytes) are far
    over the 64 MiB default budget, so the call is refused with the way out, before scoring."""
    x = torch.zeros(2, 5000, 4, dtype=torch.float64)
    subj = random_subject(n_inputs=1, length=3, head_dim=4, d_model=4, seed=0)
    start = time.perf_counter()
    with pytest.raises(InputError, match="per_swap=False"):
        ps_scores(subj.head, x)
    assert time.perf_counter() - start < 5
