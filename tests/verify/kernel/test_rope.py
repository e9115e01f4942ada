"""RoPE core: golden values, an independent block-diagonal reference, and properties."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from ropeproof.machinery._errors import InputError
from ropeproof.theory._rope_spec import RopeSpec
from ropeproof.verify.kernel._attention import RopeAttention
from ropeproof.verify.kernel._rope import (
    apply_rope,
    rope_logits,
    rotate_by_table,
    rotation_cos_sin,
    rotation_table,
)
from ropeproof.verify.testing._strategies import rope_specs


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


@given(spec=rope_specs(), n=st.integers(1, 6), seed=st.integers(0, 2**16))
@settings(deadline=None)
def test_rotation_by_a_reused_table_is_apply_rope(spec: RopeSpec, n: int, seed: int) -> None:
    q, _k = _qk(spec, n, seed)
    table = rotation_table(spec, torch.arange(n), n, q.device, q.dtype, shifted=True)
    # every layout (interleaved, halves, gathered planes): the very same floats as apply_rope
    assert torch.equal(rotate_by_table(q, spec, table), apply_rope(q, spec))
    rows = torch.arange(n - 1, -1, -2)
    sub = type(table)(table.cos[rows], table.sin[rows])
    assert torch.equal(rotate_by_table(q[rows], spec, sub), apply_rope(q, spec)[rows])


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


# ---- integer inputs, layouts and strides, the table cache ---------------------------------------


def test_integer_inputs_are_promoted_to_float64() -> None:
    """Regression: integer q/k used to cast cos/sin to int, so the logit at (1, 1) came out 0.

    q = k = (1, 0) at positions 0 and 1 with theta = 1: logit(i, j) = cos(j - i), so logit(1, 1) = 1
    and logit(0, 1) = cos(1)."""
    spec = RopeSpec(2, freqs=[1.0])
    q = torch.tensor([[1, 0], [1, 0]])
    got = rope_logits(q, q, spec)
    assert got.dtype == torch.float64
    assert got[1, 1].item() == 1.0
    assert got[0, 1].item() == pytest.approx(math.cos(1.0), abs=1e-15)
    rotated = apply_rope(q, spec)
    assert rotated.dtype == torch.float64
    assert rotated[1].tolist() == pytest.approx([math.cos(1.0), math.sin(1.0)], abs=1e-15)
    assert rope_logits(q.to(torch.int32), q.to(torch.int16), spec)[1, 1].item() == 1.0


@pytest.mark.parametrize("dtype", [torch.bool, torch.complex64])
def test_bool_and_complex_inputs_raise(dtype: torch.dtype) -> None:
    with pytest.raises(InputError, match=rf"x must hold real numbers .*got dtype {dtype}"):
        apply_rope(torch.ones(2, 2, dtype=dtype), RopeSpec(2))
    with pytest.raises(InputError, match=r"q must hold real numbers"):
        rope_logits(torch.ones(2, 2, dtype=dtype), torch.ones(2, 2), RopeSpec(2))


@pytest.mark.parametrize("layout", ["interleaved", "half"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_low_precision_rotation_within_rounding(layout: str, dtype: torch.dtype) -> None:
    """Each rotated component a cos - b sin (or a sin + b cos) in a dtype with unit roundoff u: cos
    and sin are rounded once (relative u each), each product once (u) and the sum once (u), so the
    error is at most about 3 u (|a| + |b|) (first order); 4 u (|a| + |b|) leaves room for the float64
    angle's own rounding. The reference is the same rotation in float64."""
    spec = RopeSpec(8, rotary_dim=6, layout=layout)
    x64 = torch.randn(3, 40, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(4))
    x = x64.to(dtype)
    got = apply_rope(x, spec, torch.arange(40) * 7 + 11).double()
    want = apply_rope(x.double(), spec, torch.arange(40) * 7 + 11)
    u = torch.finfo(dtype).eps / 2
    pair_size = torch.zeros_like(want)
    for a, b in spec.plane_dims:
        s = x.double()[..., a].abs() + x.double()[..., b].abs()
        pair_size[..., a] = pair_size[..., b] = s
    assert ((got - want).abs() <= 4 * u * pair_size).all()


def test_rotation_tables_are_cached_and_correct() -> None:
    spec = RopeSpec(6, freqs=[1.0, 0.25, 0.0])
    cpu = torch.device("cpu")
    first = rotation_table(spec, None, 9, cpu, torch.float64)
    assert rotation_table(spec, None, 9, cpu, torch.float64) is first  # default positions: cached
    short = rotation_table(spec, [3, 5], 2, cpu, torch.float64)
    assert rotation_table(spec, (3, 5), 2, cpu, torch.float64) is short  # short sequences: cached
    assert rotation_table(spec, None, 9, cpu, torch.float32) is not first  # per dtype
    other = rotation_table(RopeSpec(6, freqs=[1.0, 0.5, 0.0]), None, 9, cpu, torch.float64)
    assert not torch.equal(other.cos, first.cos)  # per frequencies
    tensor_pos = rotation_table(spec, torch.arange(9), 9, cpu, torch.float64)
    assert tensor_pos is not first and torch.equal(tensor_pos.cos, first.cos)  # tensors: not cached
    for p in range(9):
        for k, t in enumerate(spec.plane_freqs):  # angles reduced mod 2 pi: within an ulp or two of mpmath
            assert abs(first.cos[p, k].item() - float(mpmath.cos(p * mpmath.mpf(t)))) <= 4e-16
            assert abs(first.sin[p, k].item() - float(mpmath.sin(p * mpmath.mpf(t)))) <= 4e-16
    c, s = first.halves
    assert torch.equal(c[:, 1], first.cos) and torch.equal(s[:, 0], first.sin)
    assert torch.equal(s[:, 1], -first.sin)
    assert first.halves is first.halves  # built once per table
    cos, sin = rotation_cos_sin(spec, None, 9, cpu, torch.float64)
    assert cos is first.cos and sin is first.sin


def test_non_contiguous_and_expanded_inputs() -> None:
    """Views with odd offsets, transposes and stride-0 expansions rotate like their copies."""
    spec = RopeSpec(4, freqs=[0.7, 0.1])
    base = torch.randn(5, 9, dtype=torch.float64)
    for view in (base[:, 1:5], base[:, 5:].T[:4].T, base[:1, :4].expand(5, 4)):
        assert torch.equal(apply_rope(view, spec), apply_rope(view.contiguous(), spec))


@settings(max_examples=25)
@given(
    base=st.integers(min_value=0, max_value=2**53 - 64),
    offsets=st.lists(st.integers(min_value=0, max_value=63), min_size=2, max_size=6),
    theta=st.floats(min_value=1e-3, max_value=3.0),
)
def test_logits_at_huge_positions_depend_only_on_the_offset(
    base: int, offsets: list[int], theta: float
) -> None:
    """Positions up to 2^53 give the logits of their offsets (a common shift is exact), checked against
    mpmath's cos(theta (j - i)); the angle p * theta itself would be noise near 2^53."""
    spec = RopeSpec(2, freqs=[theta])
    v = torch.tensor([[1.0, 0.0]], dtype=torch.float64)
    q, k = v.expand(len(offsets), 2), v.expand(len(offsets), 2)
    positions = [base + o for o in offsets]
    got = rope_logits(q, k, spec, q_positions=positions, k_positions=torch.tensor(positions))
    want = [[float(mpmath.cos(mpmath.mpf(theta) * (j - i))) for j in offsets] for i in offsets]
    assert torch.allclose(got, torch.tensor(want, dtype=torch.float64), rtol=0, atol=1e-13)
    eye = torch.eye(2, dtype=torch.float64)
    head = RopeAttention(eye, eye, eye, eye, spec)
    x = v.expand(len(offsets), 2)[None]
    assert torch.equal(
        head(x, positions=positions).logits,
        head(x, positions=[p - base for p in positions]).logits,
    )


def test_positions_past_two_to_the_53_are_refused() -> None:
    spec = RopeSpec(2, freqs=[1.0])
    v = torch.tensor([[1.0, 0.0]], dtype=torch.float64)
    for bad in ([2**53 + 1], torch.tensor([2**53 + 1]), [-(2.0**60)]):
        with pytest.raises(InputError, match=r"positions must satisfy \|p\| <= 2\^53"):
            rope_logits(v, v, spec, q_positions=bad, k_positions=[0])
        with pytest.raises(InputError, match=r"\|p\| <= 2\^53"):
            apply_rope(v, spec, bad)
    assert float(rope_logits(v, v, spec, q_positions=[2**53], k_positions=[2**53 - 1])) == pytest.approx(
        math.cos(1.0), abs=1e-15
    )


# ---- positions are exact integers on every path (issue 32, case 1) -------------------------------


def _mp_rotation(p: int, theta: float) -> tuple[float, float]:
    with mpmath.workprec(max(0, math.frexp(theta)[1]) + 300):
        a = mpmath.mpf(p) * mpmath.mpf(theta)
        return float(mpmath.cos(a)), float(mpmath.sin(a))


EXACT_EDGE = [2**24 - 1, 2**24, 2**24 + 1, 10**12, 2**53 - 1, 2**53, -(2**53)]


@pytest.mark.parametrize("p", EXACT_EDGE)
@pytest.mark.parametrize("theta", [0.866, 1.0, 1e-3, 1e300])
def test_list_and_tensor_positions_agree_with_mpmath(p: int, theta: float) -> None:
    """``rope_logits(q, q, RopeSpec(2, freqs=[0.866]), q_positions=[0], k_positions=[2^24 + 1])`` gave
    0.5423 (the list went through float32); the truth is cos((2^24 + 1) 0.866) = -0.2887. Every way of
    giving the same integer positions gives the same result, within 4e-16 of mpmath."""
    spec = RopeSpec(2, freqs=[theta])
    v = torch.tensor([[1.0, 0.0]], dtype=torch.float64)
    want_cos, want_sin = _mp_rotation(p, theta)
    ways = [
        [p],
        [float(p)],
        (p,),
        torch.tensor([p]),
        torch.tensor([float(p)], dtype=torch.float64),
        np.array([p]),
    ]
    logits = [float(rope_logits(v, v, spec, q_positions=[0], k_positions=w)) for w in ways]
    rotated = [apply_rope(v, spec, w)[0].tolist() for w in ways]
    assert len(set(logits)) == 1 and all(r == rotated[0] for r in rotated)
    assert abs(logits[0] - want_cos) <= 4e-16
    assert abs(rotated[0][0] - want_cos) <= 4e-16 and abs(rotated[0][1] - want_sin) <= 4e-16
    # the reported case itself
    if p == 2**24 + 1 and theta == 0.866:
        assert logits[0] == pytest.approx(-0.2887, abs=1e-4)


def test_float32_checks_form_their_angles_in_float64_too() -> None:
    spec = RopeSpec(2, freqs=[0.866])
    v = torch.tensor([[1.0, 0.0]], dtype=torch.float32)
    want = _mp_rotation(2**24 + 1, 0.866)
    for way in ([2**24 + 1], [float(2**24 + 1)], torch.tensor([2**24 + 1])):
        got = apply_rope(v, spec, way)[0].double()
        assert abs(got[0].item() - want[0]) <= 2**-24 and abs(got[1].item() - want[1]) <= 2**-24


def test_positions_that_are_not_exact_integers_are_refused() -> None:
    spec = RopeSpec(2, freqs=[1.0])
    v = torch.tensor([[1.0, 0.0]], dtype=torch.float64)
    cases = [
        ([0.5], r"^k_positions must be integers .*0\.5"),
        (torch.tensor([2.25]), r"^k_positions must be integers"),
        ([math.nan], r"^k_positions must be finite$"),
        ([True], r"^k_positions must be integers"),
        (["3"], r"^k_positions must be integers"),
        ([2**53 + 1, 0.0], r"^k_positions must satisfy \|p\| <= 2\^53"),  # mixed: not rounded to 2^53
        ([2**70], r"^k_positions must satisfy \|p\| <= 2\^53"),
        (np.array([2**63 - 1], dtype=np.uint64), r"^k_positions must satisfy \|p\| <= 2\^53"),
    ]
    for bad, match in cases:
        with pytest.raises(InputError, match=match):
            rope_logits(v, v.expand(len(bad), 2), spec, q_positions=[0], k_positions=bad)
    with pytest.raises(InputError, match=r"^positions must be integers"):
        apply_rope(v, spec, [0.5])
    eye = torch.eye(2, dtype=torch.float64)
    with pytest.raises(InputError, match=r"^positions must be integers"):
        RopeAttention(eye, eye, eye, eye, spec)(v[None], positions=[0.5])
