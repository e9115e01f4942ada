"""The shared angle of an integer offset: ``m * theta mod 2 pi`` against mpmath, over the whole int64
range, for numpy and torch inputs alike (issue 32: every path forms ``m * theta`` one way)."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from ropeproof.machinery._errors import InputError
from ropeproof.verify.kernel._angles import (
    MAX_MULTIPLE,
    angle_error_bound,
    offset_angles,
    offset_angles_with_error,
    offset_error_cap,
    reduce_frequency,
)


def distance_mod_two_pi(theta: float, m: int, r: float) -> mpmath.mpf:
    """|r - m theta| taken mod 2 pi, in mpmath with enough bits for the exact product."""
    with mpmath.workprec(max(0, math.frexp(theta)[1]) + 64 + 200):
        d = mpmath.mpf(r) - mpmath.mpf(theta) * m
        d -= 2 * mpmath.pi * mpmath.nint(d / (2 * mpmath.pi))
        return abs(d)


BIG = [
    2**24 - 1,
    2**24 + 1,
    2**26,
    2**26 + 1,
    2**53 - 1,
    2**53,
    -(2**53),
    10**12,
    2**62 + 987,
    -(2**63) + 1,
    2**63 - 1,
]
THETAS = [0.866, 0.0027, 3.0, 1e-20, 5e-324, 1e12, -2.5e10, 1e300, 1.7976931348623157e308]


@pytest.mark.parametrize("theta", THETAS)
def test_large_offsets_are_within_their_bound(theta: float) -> None:
    m = np.array(BIG, dtype=np.int64)
    r, err = offset_angles_with_error(m, theta)
    for mi, ri, ei in zip(BIG, r.tolist(), err.tolist(), strict=True):
        assert distance_mod_two_pi(theta, mi, ri) <= ei, (mi, ri, ei)
    assert err.max() < 1e-14  # a few ulps of 2 pi: three pieces and the two roundings of their sum
    assert np.abs(r).max() <= 3 * math.pi + 1e-12


@settings(max_examples=60, deadline=None)
@given(
    m=st.integers(-(2**63) + 1, 2**63 - 1),
    theta=st.floats(allow_nan=False, allow_infinity=False, width=64),
)
def test_any_int64_offset_at_any_theta(m: int, theta: float) -> None:
    r, err = offset_angles_with_error(np.array([m], dtype=np.int64), theta)
    assert distance_mod_two_pi(theta, m, float(r[0])) <= err[0]
    assert float(err[0]) < 1e-14


def test_numpy_torch_int_and_float_inputs_agree_bit_for_bit() -> None:
    small = np.array([0, 1, -7, 1000, 2**25, 2**26 - 1])
    big = np.array(BIG, dtype=np.int64)
    for theta in (0.866, 1e300, 1e-20):
        for m in (small, big):
            want = offset_angles(m, theta)
            assert np.array_equal(offset_angles(torch.from_numpy(m), theta).numpy(), want)
        assert np.array_equal(offset_angles(small.astype(np.float64), theta), offset_angles(small, theta))
        assert np.array_equal(
            offset_angles(torch.from_numpy(small).to(torch.float64), theta).numpy(),
            offset_angles(small, theta),
        )


def test_a_sequence_of_frequencies_adds_a_last_axis() -> None:
    m = torch.tensor([[0, 5, 2**40], [3, -(2**53), 17]])
    thetas = [0.866, 0.0, 1e300]
    table = offset_angles(m, thetas)
    assert table.shape == (2, 3, 3) and table.dtype == torch.float64
    for k, t in enumerate(thetas):
        assert torch.equal(table[..., k], offset_angles(m, t))
    assert torch.equal(table[..., 1], torch.zeros(2, 3, dtype=torch.float64))  # theta = 0: angle 0


def test_the_reduction_ignores_the_global_mpmath_precision() -> None:
    """reduce_frequency sets its own precision: a user's mpmath.mp.prec = 12 changes nothing."""
    want = reduce_frequency(1e17)
    saved = mpmath.mp.prec
    try:
        mpmath.mp.prec = 12
        reduce_frequency.cache_clear()
        assert reduce_frequency(1e17) == want
        mpmath.mp.dps = 1000
        reduce_frequency.cache_clear()
        assert reduce_frequency(1e17) == want
    finally:
        mpmath.mp.prec = saved


def test_bad_offsets_are_refused() -> None:
    for bad, match in (
        (np.array([0.5]), "integers"),
        (np.array([math.nan]), "finite"),
        (np.array([1e19]), r"2\^63"),
        (torch.tensor([True]), "integers"),
        (torch.tensor([1.5]), "integers"),
        (torch.tensor([math.inf]), "finite"),
        (np.array(["1"]), "integers"),
    ):
        with pytest.raises(InputError, match=match):
            offset_angles(bad, 0.5)
    with pytest.raises(InputError, match="theta"):
        offset_angles(np.array([1]), math.nan)
    with pytest.raises(InputError, match="theta"):
        offset_angles(np.array([1]), "0.5")  # type: ignore[arg-type]


@settings(max_examples=200, deadline=None)
@given(
    m=st.integers(-(2**63) + 1, 2**63 - 1),
    theta=st.floats(allow_nan=False, allow_infinity=False, width=64),
)
def test_reported_bounds_are_within_the_stated_cap(m: int, theta: float) -> None:
    """angle_error_bound(|m theta|) = min(8 u |m theta|, 1e-14) covers every reported bound (which the
    tests above check against mpmath), so logit_error_bound may use it."""
    _, err = offset_angles_with_error(np.array([m], dtype=np.int64), theta)
    with mpmath.workprec(80):
        angle = float(abs(mpmath.mpf(m) * mpmath.mpf(theta)))
    assert float(err[0]) <= angle_error_bound(angle) + 1e-323


@settings(max_examples=60, deadline=None)
@given(
    max_m=st.integers(0, MAX_MULTIPLE - 1),
    theta=st.one_of(
        st.floats(allow_nan=False, allow_infinity=False, width=64),
        st.sampled_from([0.866, 2 * math.pi, math.pi, 1e-6, 2.0 * math.pi * 3 + 1e-9]),
    ),
)
def test_the_offset_error_cap_covers_every_reported_bound_below_it(max_m: int, theta: float) -> None:
    """offset_error_cap(M, theta) >= the bound reported at every 0 <= m <= M (all of them up to 2^16
    offsets, else the first and last 2^15 and 2^15 spread between): the sweeps skip the offsets whose
    gap is this far from the running minimum. It is also not loose by more than a constant where the
    reduction wraps (|m theta| past pi), so skipping still skips."""
    if max_m < 2**16:
        m = np.arange(max_m + 1)
    else:
        edges = np.r_[np.arange(2**15), np.arange(max_m - 2**15 + 1, max_m + 1)]
        m = np.unique(np.r_[edges, np.linspace(0, max_m, 2**15).astype(np.int64)])
    _, err = offset_angles_with_error(m, theta)
    cap = offset_error_cap(max_m, theta)
    assert float(err.max()) <= cap
    if abs(theta) * max_m > 10 and abs(theta) < 1e6:
        assert cap <= 8 * float(err.max()) + 1e-14


def test_the_offset_error_cap_covers_the_one_step_reduction_only() -> None:
    assert offset_error_cap(MAX_MULTIPLE - 1, 0.5) > 0
    with pytest.raises(InputError, match="max_m"):
        offset_error_cap(MAX_MULTIPLE, 0.5)
    with pytest.raises(InputError, match="theta"):
        offset_error_cap(10, math.inf)
