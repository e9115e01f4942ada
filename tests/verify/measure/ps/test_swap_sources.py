"""Row sources: the swapped copies a callable receives, and the table source's rows, against the
head's forward pass on the swapped input built by hand."""

from __future__ import annotations

import pytest
import torch

from ropeproof.theory._rope_spec import RopeSpec
from ropeproof.verify.kernel._random_heads import random_head
from ropeproof.verify.measure.ps._swap_sources import CallableSource, TableSource
from ropeproof.verify.measure.ps._swap_stream import BlockPairs


def _by_hand(x: torch.Tensor, b: int, pa: list[int], pb: list[int]) -> torch.Tensor:
    order = list(range(x.shape[1]))
    for p, q in zip(pa, pb, strict=True):
        order[p], order[q] = q, p
    return x[b, order]


def test_callable_source_sends_the_swapped_inputs() -> None:
    x = torch.randn(3, 11, 4, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    seen: list[torch.Tensor] = []

    def uniform(t: torch.Tensor) -> torch.Tensor:
        seen.append(t.clone())
        return torch.full(t.shape[:2], 1.0 / t.shape[1], dtype=torch.float64)

    src = CallableSource(uniform, x)
    plan = BlockPairs(11, 3)
    swaps = torch.tensor([0, 2, 1])
    b_idx = torch.tensor([2, 0, 2])
    pa, pb = plan.positions(swaps)
    rows = src.swapped_rows(b_idx, pa, pb)
    assert rows.shape == (3, 1, 10)
    for c in range(3):
        assert torch.equal(seen[-1][c], _by_hand(x, int(b_idx[c]), pa[c].tolist(), pb[c].tolist()))
    assert torch.equal(
        x, torch.randn(3, 11, 4, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    )
    assert src.bytes_per_sequence() == 2 * 11 * 4 * 8 + 6 * 11 * 8


@pytest.mark.parametrize(
    ("layout", "dtype", "tol"), [("interleaved", torch.float64, 1e-15), ("half", torch.float32, 2e-6)]
)
def test_table_source_rows_equal_the_forward_pass(layout: str, dtype: torch.dtype, tol: float) -> None:
    """Tolerance: float64 rows by two routes agree to a few ulps of 1; float32 to a few float32 ulps
    of the logits (|l| <~ 10, eps32 ~ 1.2e-7) times the row, hence 2e-6."""
    head = random_head(
        RopeSpec(8, freqs=[0.8, 0.1, 0.0, 2.5], layout=layout), 5, seed=1, scale=1.3, dtype=dtype
    )
    x = torch.randn(2, 13, 5, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    src = TableSource(head, x)
    base = src.base_rows(2)[:, 0]
    assert torch.allclose(base, head(x).pattern[:, -1, :-1].double(), rtol=0, atol=tol)
    plan = BlockPairs(13, 2)
    swaps = torch.arange(plan.n_swaps)
    b_idx = swaps % 2
    pa, pb = plan.positions(swaps)
    rows = src.swapped_rows(b_idx, pa, pb)[:, 0]
    for c in range(plan.n_swaps):
        xs = _by_hand(x, int(b_idx[c]), pa[c].tolist(), pb[c].tolist())
        ref = head(xs[None]).pattern[0, -1, :-1].double()
        assert torch.allclose(rows[c], ref, rtol=0, atol=tol)
