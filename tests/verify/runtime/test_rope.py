"""RoPE core: golden values, an independent block-diagonal reference, and properties."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from ropeproof.theory.rope_spec import RopeSpec
from ropeproof.verify.runtime.rope import apply_rope, rope_logits
from ropeproof.verify.testing.strategies import rope_specs


def block_diag_reference(q: np.ndarray, k: np.ndarray, dims, thetas, scale=1.0) -> np.ndarray:
    """Written here, independently: logits[i, j] = scale * q_i^T R(j - i) k_j with R explicit."""
    h = q.shape[1]
    out = np.zeros((len(q), len(k)))
    for i in range(len(q)):
        for j in range(len(k)):
            r = np.eye(h)
            for (a, b), t in zip(dims, thetas, strict=True):
                c, s = math.cos((j - i) * t), math.sin((j - i) * t)
                r[a, a], r[a, b], r[b, a], r[b, b] = c, -s, s, c
            out[i, j] = scale * q[i] @ r @ k[j]
    return out


# ---- golden values, hand-computed -------------------------------------------------------------


def test_default_frequencies_and_planes() -> None:
    spec = RopeSpec(8)
    assert np.allclose(spec.plane_freqs, [1.0, 10000**-0.25, 10000**-0.5, 10000**-0.75])
    assert spec.plane_dims == [(0, 1), (2, 3), (4, 5), (6, 7)]
    half = RopeSpec(8, layout="half")
    assert half.plane_dims == [(0, 4), (1, 5), (2, 6), (3, 7)]


def test_partial_rotary_planes_are_pass_through() -> None:
    spec = RopeSpec(8, rotary_dim=4, base=100.0)
    assert np.allclose(spec.plane_freqs, [1.0, 0.1, 0.0, 0.0])
    assert spec.plane_dims == [(0, 1), (2, 3), (4, 5), (6, 7)]
    half = RopeSpec(8, rotary_dim=4, base=100.0, layout="half")
    assert half.plane_dims == [(0, 2), (1, 3), (4, 6), (5, 7)]


@pytest.mark.parametrize("layout", ["interleaved", "half"])
@pytest.mark.parametrize("rotary_dim", [4, 2])
def test_golden_two_plane_values(layout: str, rotary_dim: int) -> None:
    """Hand-computed: 2 planes, theta = (0.5, 2.0), q = (1, 2 | 3, -1), k = (0, 1 | 2, 2) in plane
    coordinates, at i = 1, j = 3 (offset u = 2).

    Plane p with q = (q1, q2), k = (k1, k2) contributes (q.k) cos(u t) + (q2 k1 - q1 k2) sin(u t):
      plane 0, t = 0.5: q.k = 2, q2k1 - q1k2 = -1  ->  2 cos(1) - sin(1)
      plane 1, t = 2.0: q.k = 4, q2k1 - q1k2 = -8  ->  4 cos(4) - 8 sin(4)   (rotary_dim 4)
      plane 1 pass-through (rotary_dim 2): 4.
    """
    freqs = [0.5, 2.0][: rotary_dim // 2]
    spec = RopeSpec(4, rotary_dim=rotary_dim, freqs=freqs, layout=layout)
    plane_q, plane_k = [(1.0, 2.0), (3.0, -1.0)], [(0.0, 1.0), (2.0, 2.0)]
    q = torch.zeros(4, 4, dtype=torch.float64)
    k = torch.zeros(4, 4, dtype=torch.float64)
    for (a, b), pq, pk in zip(spec.plane_dims, plane_q, plane_k, strict=True):
        q[1, a], q[1, b] = pq
        k[3, a], k[3, b] = pk
    plane1 = 4 * math.cos(4) - 8 * math.sin(4) if rotary_dim == 4 else 4.0
    expected = 2 * math.cos(1) - math.sin(1) + plane1
    got = rope_logits(q, k, spec)[1, 3].item()
    assert got == pytest.approx(expected, abs=1e-14)
    ref = block_diag_reference(q.numpy(), k.numpy(), spec.plane_dims, spec.plane_freqs)
    assert ref[1, 3] == pytest.approx(expected, abs=1e-14)


def test_layouts_are_not_interchangeable() -> None:
    """Feeding interleaved-ordered rows to a half-layout spec gives different logits: the bug
    docs/theory.md section 1 warns about is detectable."""
    spec = RopeSpec(8, freqs=[1.0, 0.3, 0.1, 0.0])
    rng = np.random.default_rng(0)
    q, k = torch.as_tensor(rng.standard_normal((5, 8))), torch.as_tensor(rng.standard_normal((5, 8)))
    assert not torch.allclose(rope_logits(q, k, spec), rope_logits(q, k, spec.to_layout("half")))


# ---- properties -------------------------------------------------------------------------------


def _qk(spec: RopeSpec, n: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return (
        torch.randn(n, spec.head_dim, generator=g, dtype=torch.float64),
        torch.randn(n, spec.head_dim, generator=g, dtype=torch.float64),
    )


@given(spec=rope_specs(), n=st.integers(1, 6), shift=st.integers(-50, 500), seed=st.integers(0, 2**16))
def test_relative_position(spec: RopeSpec, n: int, shift: int, seed: int) -> None:
    q, k = _qk(spec, n, seed)
    pos = torch.arange(n) + shift
    moved = rope_logits(q, k, spec, q_positions=pos, k_positions=pos)
    torch.testing.assert_close(moved, rope_logits(q, k, spec), rtol=0, atol=1e-10)


@given(spec=rope_specs(), n=st.integers(1, 5), seed=st.integers(0, 2**16))
def test_matches_block_diagonal_reference(spec: RopeSpec, n: int, seed: int) -> None:
    q, k = _qk(spec, n, seed)
    ref = block_diag_reference(q.numpy(), k.numpy(), spec.plane_dims, spec.plane_freqs)
    np.testing.assert_allclose(rope_logits(q, k, spec).numpy(), ref, rtol=0, atol=1e-11)


@given(spec=rope_specs(), n=st.integers(1, 6), seed=st.integers(0, 2**16))
def test_layout_equivalence_under_permutation(spec: RopeSpec, n: int, seed: int) -> None:
    other = spec.to_layout("half" if spec.layout == "interleaved" else "interleaved")
    perm = torch.as_tensor(spec.permutation_to(other))
    q, k = _qk(spec, n, seed)
    torch.testing.assert_close(
        rope_logits(q[:, perm], k[:, perm], other), rope_logits(q, k, spec), rtol=0, atol=1e-12
    )


@given(spec=rope_specs(), n=st.integers(1, 6), seed=st.integers(0, 2**16))
def test_rotation_preserves_norms(spec: RopeSpec, n: int, seed: int) -> None:
    x, _ = _qk(spec, n, seed)
    y = apply_rope(x, spec, torch.arange(n) * 37 + 3)
    torch.testing.assert_close(y.norm(dim=-1), x.norm(dim=-1), rtol=1e-13, atol=0)
    # and plane by plane
    for a, b in spec.plane_dims:
        torch.testing.assert_close(y[:, [a, b]].norm(dim=-1), x[:, [a, b]].norm(dim=-1))


@given(spec=rope_specs(), n=st.integers(1, 6), seed=st.integers(0, 2**16))
def test_zero_frequency_plane_is_plain_dot_product(spec: RopeSpec, n: int, seed: int) -> None:
    q, k = _qk(spec, n, seed)
    zero = [d for d, t in zip(spec.plane_dims, spec.plane_freqs, strict=True) if t == 0.0]
    mask = torch.zeros(spec.head_dim, dtype=torch.float64)
    for a, b in zero:
        mask[a] = mask[b] = 1.0
    got = rope_logits(q * mask, k * mask, spec)
    torch.testing.assert_close(got, (q * mask) @ (k * mask).T, rtol=0, atol=1e-12)


def _devices() -> list[str]:
    return ["cpu", "cuda"] if torch.cuda.is_available() else ["cpu"]


@pytest.mark.parametrize("device", _devices())
@pytest.mark.parametrize("dtype", [torch.float16, torch.float32, torch.bfloat16, torch.float64])
def test_dtype_and_device_preserved(dtype: torch.dtype, device: str) -> None:
    """Outputs keep the input's dtype and device, and their values match the independent float64
    reference within the dtype's rounding: each rotated component is ``x cos - y sin`` with cos/sin
    rounded to the dtype (``u``), two products and a sum, so ``|err| <= 3u (|x| + |y|)`` per component
    (``|cos|, |sin| <= 1``); a logit adds the ``h``-term dot product's ``gamma_h |Rq|.|Rk|`` and
    inherits ``6u ||q|| ||k||`` from the rotations (as derived in test_attention.test_dtypes), so
    ``|dl| <= (h + 12) u ||q|| ||k|| / (1 - (h + 12) u)``."""
    spec = RopeSpec(8, freqs=[1.0, 0.3, 0.05, 0.0])
    x = torch.randn(2, 3, 8, generator=torch.Generator().manual_seed(0)).to(dtype).to(device)
    u = torch.finfo(dtype).eps / 2
    y = apply_rope(x, spec)
    logits = rope_logits(x, x, spec)
    assert (y.dtype, y.device.type) == (dtype, device)
    assert (logits.dtype, logits.device.type) == (dtype, device)
    assert logits.shape == (2, 3, 3)
    x64 = x.double().cpu()
    y64 = apply_rope(x64, spec)
    pairs = torch.tensor(spec.plane_dims)
    xa, xb = x64[..., pairs[:, 0]].abs(), x64[..., pairs[:, 1]].abs()
    comp = torch.zeros_like(x64)
    comp[..., pairs[:, 0]] = comp[..., pairs[:, 1]] = 3 * u * (xa + xb)
    assert ((y.double().cpu() - y64).abs() <= comp).all()
    for b in range(2):
        ref = block_diag_reference(x64[b].numpy(), x64[b].numpy(), spec.plane_dims, spec.plane_freqs)
        norms = x64[b].norm(dim=-1)
        c = spec.head_dim + 12
        bound = c * u * norms[:, None] * norms[None, :] / (1 - c * u)
        assert ((logits[b].double().cpu() - torch.as_tensor(ref)).abs() <= bound).all()


def test_large_positions_keep_float32_accuracy() -> None:
    """Angles are formed in float64: at position 2^20 a float32 angle would be off by ~0.06 rad."""
    spec = RopeSpec(2, freqs=[1.0])
    x = torch.tensor([[1.0, 0.0]], dtype=torch.float32)
    p = 2**20
    y = apply_rope(x, spec, [p])
    assert y[0, 0].item() == pytest.approx(math.cos(p), abs=1e-6)
    assert y[0, 1].item() == pytest.approx(math.sin(p), abs=1e-6)


@pytest.mark.cuda
def test_cuda_matches_cpu() -> None:
    spec = RopeSpec(16, rotary_dim=8, layout="half")
    q, k = _qk(spec, 7, 3)
    torch.testing.assert_close(
        rope_logits(q.cuda(), k.cuda(), spec).cpu(), rope_logits(q, k, spec), rtol=0, atol=1e-12
    )
