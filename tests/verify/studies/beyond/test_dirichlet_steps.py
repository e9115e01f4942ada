"""Theorem D's counting steps: exhibited pigeonhole pairs, certified box widths."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ropeproof.machinery._errors import InputError
from ropeproof.theory._dirichlet import dirichlet_q
from ropeproof.verify.studies.beyond._dirichlet_steps import dirichlet_witnesses, q_values


def test_q_values_cover_every_length() -> None:
    assert q_values(1, 6) == [2, 3, 4, 5]  # K = 1: Q = M for M = 1..5, and Q = 1 (trivial) dropped
    assert q_values(2, 40) == sorted({dirichlet_q(m, 2) for m in range(1, 40)} - {1})


@given(freqs=st.lists(st.floats(0.01, 6.0), min_size=1, max_size=3), max_n=st.integers(5, 60))
def test_witnesses_satisfy_the_box_width_step(freqs: list[float], max_n: int) -> None:
    for w in dirichlet_witnesses(freqs, max_n):
        assert 1 <= w.d <= w.q ** len(freqs) <= max_n - 1  # the difference lies in 1 .. M
        with mpmath.workdps(40):  # independent: the reduced angle of d theta_k, every plane
            for th in freqs:
                x = w.d * mpmath.mpf(th)
                r = x - 2 * mpmath.pi * mpmath.nint(x / (2 * mpmath.pi))
                assert abs(r) < 2 * mpmath.pi / w.q
        assert w.certified


@given(freqs=st.lists(st.floats(0.01, 6.0), min_size=1, max_size=3), max_n=st.integers(5, 300))
def test_largest_reduced_angle_encloses_a_200_bit_value(freqs: list[float], max_n: int) -> None:
    """``max_abs_reduced`` is an upper end of ``max_k |d theta_k mod 2 pi|`` (arb, rounded up) and at most
    ``2^-40`` relative above it: an 80-bit ball, then one float64 rounding (``2^-52``), with room."""
    for w in dirichlet_witnesses(freqs, max_n):
        with mpmath.workprec(200):
            angles = [w.d * mpmath.mpf(th) for th in freqs]
            worst = max(abs(x - 2 * mpmath.pi * mpmath.nint(x / (2 * mpmath.pi))) for x in angles)
            assert worst <= w.max_abs_reduced <= worst * (1 + 2.0**-40)


def test_errors() -> None:
    with pytest.raises(InputError, match="max_n"):
        dirichlet_witnesses([0.5], 1)
    with pytest.raises(InputError, match="finite"):
        dirichlet_witnesses([math.nan], 10)
    assert dirichlet_witnesses(np.array([1.0, 2.0]), 3) == []  # Q_2(M) = 1 for M <= 3: trivial bound only
