"""The streaming engine: swap numbering, tiling under a budget, and the two-pass weights."""

from __future__ import annotations

import itertools

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from ropeproof.machinery._errors import InputError
from ropeproof.theory._rope_spec import RopeSpec
from ropeproof.verify.kernel._random_heads import random_head
from ropeproof.verify.measure.ps._scores import last_row_fn
from ropeproof.verify.measure.ps._swap_sources import CallableSource, TableSource
from ropeproof.verify.measure.ps._swap_stream import (
    DEFAULT_MEMORY_BUDGET,
    BlockPairs,
    check_max_skipped_weight,
    cos_sim,
    per_swap_bytes,
    stream_swap_scores,
)


@given(n=st.integers(3, 60), b=st.integers(1, 6))
def test_block_pairs_number_swaps_lexicographically(n: int, b: int) -> None:
    k = (n - 1) // b
    if k < 2:
        with pytest.raises(InputError, match="two blocks"):
            BlockPairs(n, b)
        return
    plan = BlockPairs(n, b)
    expected = list(itertools.combinations(range(k), 2))
    assert plan.n_blocks == k and plan.n_swaps == len(expected)
    i, j = plan.pairs(torch.arange(plan.n_swaps))
    assert list(zip(i.tolist(), j.tolist(), strict=True)) == expected
    pa, pb = plan.positions(torch.tensor([plan.n_swaps - 1]))
    assert pa.tolist() == [[(k - 2) * b + t for t in range(b)]]
    assert pb.tolist() == [[(k - 1) * b + t for t in range(b)]]


def test_block_pairs_errors() -> None:
    with pytest.raises(InputError, match="block_size"):
        BlockPairs(10, 0)
    with pytest.raises(InputError, match=r"n=10\.0 is not an integer"):
        BlockPairs(10.0, 1)  # type: ignore[arg-type]
    for bad in (-0.1, 1.0, "a"):
        with pytest.raises(InputError, match="max_skipped_weight"):
            check_max_skipped_weight(bad)  # type: ignore[arg-type]
    assert check_max_skipped_weight(None) is None


@pytest.mark.parametrize("tau", [1e-4, 1e-7, 10.0])
def test_tiles_and_chunks_do_not_change_anything(tau: float) -> None:
    """A budget that splits the swaps of one input over many tiles (pass 1's online log-sum-exp) and
    evaluates a few sequences per call gives the weights of one softmax over all swaps and the same
    scores. Reference weights: torch.softmax of the block gaps, computed here directly."""
    head = random_head(RopeSpec(8, layout="half"), 5, seed=4, scale=2.0)
    x = torch.randn(3, 23, 5, generator=torch.Generator().manual_seed(4), dtype=torch.float64)
    plan = BlockPairs(23, 2)
    big = stream_swap_scores(TableSource(head, x), plan, tau, per_swap=True, max_skipped_weight=None)
    src = TableSource(head, x)
    small = stream_swap_scores(src, plan, tau, memory_budget=2_000, per_swap=False, max_skipped_weight=None)
    assert small.chunk < 20 and small.calls > 5
    assert torch.allclose(small.s_pos, big.s_pos, rtol=0, atol=1e-13)
    assert torch.allclose(small.s_sym, big.s_sym, rtol=0, atol=1e-13)
    d = src.base_rows(3)[:, 0]
    pa, pb = plan.positions(torch.arange(plan.n_swaps))
    ref = torch.softmax((d[:, pa] - d[:, pb]).abs().sum(-1) / tau, -1)
    assert big.weights is not None
    assert torch.allclose(big.weights[:, 0], ref, rtol=1e-12, atol=1e-300)


def test_stream_reports_work_and_refuses_mismatched_plans() -> None:
    head = random_head(RopeSpec(4), 3, seed=2)
    x = torch.randn(2, 9, 3, dtype=torch.float64)
    out = stream_swap_scores(
        CallableSource(last_row_fn(head), x), BlockPairs(9, 1), 1e-4, max_skipped_weight=None
    )
    assert out.n_evaluated.tolist() == [28, 28] and out.calls == 1 and out.pos is None
    with pytest.raises(InputError, match="n=8"):
        stream_swap_scores(TableSource(head, x), BlockPairs(8, 1), 1e-4)
    assert per_swap_bytes(2, 3, 28) == 2 * 28 * (3 * 8 * 3 + 1)
    # the default budget's docstring: per-swap arrays of 100 inputs of one head fit for n <= 233
    fits = [per_swap_bytes(100, 1, BlockPairs(n, 1).n_swaps) <= DEFAULT_MEMORY_BUDGET for n in (233, 234)]
    assert fits == [True, False]


def test_cos_sim_conventions() -> None:
    z, e = torch.zeros(2), torch.tensor([1.0, 0.0])
    assert float(cos_sim(z, z)) == 1.0 and float(cos_sim(z, e)) == 0.0
    assert float(cos_sim(e, torch.tensor([3.0, 0.0]))) == 1.0
