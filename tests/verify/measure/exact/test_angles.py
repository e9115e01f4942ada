"""Angle reduction at any finite theta (issue 12: large |theta|), checked against mpmath."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ropeproof.machinery._errors import InputError
from ropeproof.verify.measure.exact._angles import (
    P1,
    P2,
    P3,
    P_ERROR,
    reduce_frequency,
    reduced_angles,
    reduced_angles_with_error,
)
from ropeproof.verify.measure.exact._index_sweep import SIN_ULPS, index_sweep


def exact_offset(theta: float, m: int, r: float) -> mpmath.mpf:
    """|r - (m theta mod 2 pi)|, with the difference itself taken mod 2 pi (mpmath, enough bits)."""
    bits = max(0, math.frexp(theta)[1]) + 200
    with mpmath.workprec(bits):
        x = mpmath.mpf(theta) * m
        d = mpmath.mpf(r) - x
        d -= 2 * mpmath.pi * mpmath.nint(d / (2 * mpmath.pi))
        return abs(d)


THETAS = (0.866, 0.0027, 3.0, 1e-9, 1e6, 1e12, 1e17, -2.5e10, 1e300, 5e-324)
MS = np.array([1, 2, 3, 1000, 123457, 2**25 - 1, 2**26 - 1])


@pytest.mark.parametrize("theta", THETAS)
def test_reduction_error_is_within_its_bound(theta: float) -> None:
    r, err = reduced_angles_with_error(MS, theta)
    for m, ri, ei in zip(MS.tolist(), r.tolist(), err.tolist(), strict=True):
        assert exact_offset(theta, m, ri) <= ei
    # the bound is a few ulps of 2 pi at worst (u * the magnitudes of ~7 rounded intermediates)
    assert err.max() < 2e-15
    assert np.all(np.abs(r) <= math.pi + 1e-12)


@settings(max_examples=40)
@given(
    theta=st.floats(-1e18, 1e18, allow_nan=False, allow_infinity=False),
    m=st.integers(-(2**26) + 1, 2**26 - 1),
)
def test_reduction_property(theta: float, m: int) -> None:
    r, err = reduced_angles_with_error(np.array([m]), theta)
    assert exact_offset(theta, m, float(r[0])) <= err[0]


def test_the_pieces_of_two_pi() -> None:
    with mpmath.workprec(300):
        assert abs(2 * mpmath.pi - (mpmath.mpf(P1) + P2 + P3)) <= P_ERROR
    for piece in (P1, P2):  # 26 significant bits each, so k * piece is exact for |k| < 2^26
        mant, _ = math.frexp(piece)
        assert float(mant * 2**26) == round(mant * 2**26)


def test_reduced_frequency_splits_exactly() -> None:
    red = reduce_frequency(1e17)
    with mpmath.workprec(400):
        exact = mpmath.mpf(1e17) - 2 * mpmath.pi * mpmath.nint(mpmath.mpf(1e17) / (2 * mpmath.pi))
        assert abs(exact - (mpmath.mpf(red.hi) + red.mid + red.lo)) <= red.error
    assert reduce_frequency(0.5).value == 0.5 and reduce_frequency(0.5).lo == 0.0


def test_bad_inputs_name_the_parameter() -> None:
    with pytest.raises(InputError, match="theta"):
        reduced_angles(np.array([1]), float("nan"))
    with pytest.raises(InputError, match="2\\^63"):
        reduced_angles(np.array([1e19]), 0.5)
    with pytest.raises(InputError, match="finite"):
        reduced_angles(np.array([math.inf]), 0.5)
    with pytest.raises(InputError, match="integers"):
        reduced_angles(np.array([1.5]), 0.5)


def test_libm_accuracy_assumption() -> None:
    """The error bounds assume np.sin / np.cos within SIN_ULPS ulps; check a sample against mpmath."""
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.uniform(-4, 4, 1500), 10.0 ** rng.uniform(-15, 0, 500)])
    worst = 0.0
    with mpmath.workprec(120):
        for xi, s, c in zip(x.tolist(), np.sin(x).tolist(), np.cos(x).tolist(), strict=True):
            for got, want in ((s, mpmath.sin(xi)), (c, mpmath.cos(xi))):
                ulp = math.ulp(float(want))
                worst = max(worst, float(abs(got - want)) / ulp)
    print(f"largest np.sin/np.cos error on the sample: {worst:.3f} ulp (assumed <= {SIN_ULPS})")
    assert worst <= SIN_ULPS


@pytest.mark.parametrize("theta", [1e6, 1e12, 1e17])
def test_large_theta_sweep_margins_match_mpmath(theta: float) -> None:
    """Issue 12: at theta = 1e17 the n = 2 margin was 0.00729 against 1.886. Now every margin_inf(n),
    n <= 300, equals min_{m <= n-1} 2 sin(m theta / 2)^2 evaluated in mpmath at 60 digits."""
    sweep = index_sweep([theta], [1.0], 300)
    with mpmath.workdps(60):
        best = mpmath.inf
        want = []
        for m in range(1, 300):
            best = min(best, 2 * mpmath.sin(m * mpmath.mpf(theta) / 2) ** 2)
            want.append(float(best))
    # g is accurate to ~1e-15 absolute (reduction) and a few ulps relative (sin, square)
    np.testing.assert_allclose(sweep.margin_inf, want, rtol=1e-13, atol=4e-15)
    if theta == 1e17:
        assert sweep.margin_inf[0] == pytest.approx(1.886, abs=5e-4)
