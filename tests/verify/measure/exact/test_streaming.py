"""Streaming one query row: equals the full module row, and handles n = 2^20 in bounded memory."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from ropeproof.constructions._compile import compile_construction
from ropeproof.constructions._paper import index_construction
from ropeproof.machinery._errors import InputError
from ropeproof.theory._rope_spec import RopeSpec
from ropeproof.verify.kernel._attention import RopeAttention
from ropeproof.verify.kernel._compiled import head_module
from ropeproof.verify.measure.exact._streaming import stream_row_top2


def _random_head(device: str = "cpu") -> RopeAttention:
    g = torch.Generator().manual_seed(1)
    w = [torch.randn(6, 8, generator=g, dtype=torch.float64) for _ in range(3)]
    return RopeAttention(
        *w,
        torch.randn(8, 6, generator=g, dtype=torch.float64),
        RopeSpec(8, rotary_dim=6, layout="half"),
        scale=0.7,
        device=device,
    )


@pytest.mark.parametrize("chunk", [1, 7, 256, 5000])
def test_stream_equals_full_row(chunk: int) -> None:
    head = _random_head()
    x = torch.randn(3000, 6, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    row = head(x[None]).logits[0, -1]
    got = stream_row_top2(head, x, 3000, chunk)
    vals, idx = torch.topk(row, 2)
    assert got.top1 == pytest.approx(vals[0].item(), abs=1e-12) and got.top1_position == idx[0].item()
    assert got.top2 == pytest.approx(vals[1].item(), abs=1e-12) and got.top2_position == idx[1].item()
    assert got.top1_weight == pytest.approx(torch.softmax(row, -1).max().item(), rel=1e-12)


def test_index_row_at_two_to_the_twenty() -> None:
    """T_Index, query s at n - 1 = 2^20 - 1: the target s back wins with logit 1 and the runner-up is
    the closed-form best competitor max_{m} cos(m theta) over the window."""
    c = index_construction(theta=0.8660, max_int=3, letters=2)
    head = compile_construction(c)
    module = head_module(head, "cpu")
    n, s = 1 << 20, 3
    a, q = head.token_index("A"), head.token_index(str(s))

    def keys(start: int, stop: int) -> torch.Tensor:
        ids = np.full(stop - start, a)
        if start <= n - 1 < stop:
            ids[n - 1 - start] = q
        return torch.as_tensor(head.W_E[ids])

    got = stream_row_top2(module, keys, n, chunk=1 << 16)
    assert got.top1_position == n - 1 - s and got.top1 == pytest.approx(1.0, abs=1e-12)
    # the best competitor: offsets m = -s .. n-1-s from the target, m != 0; cos is even
    m = np.arange(1, n - s)
    best = max(np.cos(m * 0.8660).max(), max(math.cos(k * 0.8660) for k in range(1, s + 1)))
    assert got.top2 == pytest.approx(best, abs=1e-9)


def test_errors() -> None:
    head = _random_head()
    with pytest.raises(
        InputError,
        match=r"n=1 is out of range; accepted: an integer >= 2 \(a query and at least one other key\)",
    ):
        stream_row_top2(head, torch.zeros(1, 6), 1)
    with pytest.raises(InputError, match=r"keys\(3, 4\) must have shape \[1, 6\]"):
        stream_row_top2(head, lambda a, b: torch.zeros(b - a, 5), 4)


@pytest.mark.cuda
def test_cuda_stream_matches_cpu() -> None:
    x = torch.randn(5000, 6, dtype=torch.float64)
    cpu = stream_row_top2(_random_head("cpu"), x, 5000, 1024)
    gpu = stream_row_top2(_random_head("cuda"), x, 5000, 1024)
    assert gpu.top1_position == cpu.top1_position and gpu.top1 == pytest.approx(cpu.top1, abs=1e-12)
