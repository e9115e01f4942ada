"""RopeAttention: module logits vs rope_logits, causal mask, softmax rows, output, dtypes."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from ropeproof.theory.rope_spec import RopeSpec
from ropeproof.verify.runtime.attention import RopeAttention
from ropeproof.verify.runtime.rope import rope_logits
from ropeproof.verify.testing.random_heads import random_head
from ropeproof.verify.testing.strategies import rope_heads


@given(
    head=rope_heads(max_head_dim=64, max_d_model=12),
    n=st.integers(1, 7),
    batch=st.integers(1, 3),
    seed=st.integers(0, 2**16),
)
def test_module_matches_rope_logits_masked(head, n, batch, seed) -> None:
    d_model = head.d_model
    x = torch.randn(batch, n, d_model, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))
    res = head(x)
    expected = rope_logits(x @ head.W_Q, x @ head.W_K, head.spec, scale=head.scale)
    causal = torch.tril(torch.ones(n, n, dtype=torch.bool))
    torch.testing.assert_close(res.logits[:, causal], expected[:, causal], rtol=0, atol=1e-10)
    assert torch.isneginf(res.logits[:, ~causal]).all()
    torch.testing.assert_close(res.pattern.sum(-1), torch.ones(batch, n, dtype=torch.float64))
    assert (res.pattern[:, ~causal] == 0).all()
    # output = pattern @ v @ W_O, recomputed by hand from the softmax of the masked logits
    manual = torch.softmax(expected.masked_fill(~causal, float("-inf")), -1) @ (x @ head.W_V) @ head.W_O
    torch.testing.assert_close(res.output, manual, rtol=1e-10, atol=1e-10)
    assert res.output.shape == (batch, n, d_model)


def test_first_token_attends_to_itself_only() -> None:
    head = random_head(RopeSpec(4), 3, 0)
    res = head(torch.randn(1, 5, 3, dtype=torch.float64))
    assert res.pattern[0, 0, 0].item() == 1.0


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "bfloat16"])
def test_dtypes(dtype: str) -> None:
    head = random_head(RopeSpec(8), 4, 1, dtype=dtype)
    res = head(torch.randn(2, 6, 4))
    want = getattr(torch, dtype)
    assert res.logits.dtype == res.pattern.dtype == res.output.dtype == want
    ref = random_head(RopeSpec(8), 4, 1)(
        torch.randn(2, 6, 4, generator=torch.Generator().manual_seed(0)).double()
    )
    low = head(torch.randn(2, 6, 4, generator=torch.Generator().manual_seed(0)))
    tol = {"float64": 1e-12, "float32": 1e-4, "float16": 5e-2, "bfloat16": 2e-1}[dtype]
    torch.testing.assert_close(low.pattern.double(), ref.pattern, rtol=0, atol=tol)


def test_auto_device_is_cpu_without_cuda() -> None:
    head = RopeAttention(torch.eye(2), torch.eye(2), torch.eye(2), torch.eye(2), RopeSpec(2))
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert head.device.type == expected


def test_positions_argument_shifts_nothing() -> None:
    head = random_head(RopeSpec(6, freqs=[0.7, 0.2, 0.0]), 5, 2)
    x = torch.randn(2, 4, 5, dtype=torch.float64)
    torch.testing.assert_close(head(x, positions=torch.arange(4) + 123).logits, head(x).logits)


@pytest.mark.cuda
def test_cuda_forward_matches_cpu() -> None:
    spec = RopeSpec(16, rotary_dim=8, layout="half")
    cpu = random_head(spec, 6, 4)
    gpu = RopeAttention(cpu.W_Q, cpu.W_K, cpu.W_V, cpu.W_O, spec, device="cuda")
    x = torch.randn(2, 9, 6, dtype=torch.float64)
    torch.testing.assert_close(gpu(x).output.cpu(), cpu(x).output, rtol=0, atol=1e-12)
