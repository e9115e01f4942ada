"""The letter-code lemmas (ropeproof.theory._letter_code_lemmas): every check passes, and each lemma's
statement holds on random values in float64 (an independent reference: no sympy, no reduction)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ropeproof.theory import _letter_code_lemmas as L

LEMMAS = [
    L.cos_decreasing,
    L.omega_at_most_pi,
    L.far_from_zero,
    L.competitor_lemma,
    L.worst_input,
    L.switch_sign,
    L.least_competitor,
    L.target_on_top,
    L.nearest_target,
    L.earlier_y,
    L.recency_least_at_1,
    L.target_below_one,
    L.sin_positive_inside,
    L.positive_below_horizon,
    L.fails_at_next_length,
]
EPS = 1e-12


@pytest.mark.parametrize("lemma", LEMMAS, ids=lambda f: f.__name__)
def test_every_lemma_is_proved(lemma) -> None:
    assert lemma() is True


@settings(max_examples=200, deadline=None)
@given(alphabet=st.integers(2, 40), c=st.integers(1, 39), frac=st.floats(0, 1))
def test_competitor_lemma_on_numbers(alphabet: int, c: int, frac: float) -> None:
    c = 1 + (c - 1) % (alphabet - 1)
    omega = 2 * math.pi / alphabet
    x = frac * omega
    assert math.cos(c * omega - x) <= math.cos(omega - x) + EPS


@settings(max_examples=200, deadline=None)
@given(half=st.integers(2, 20), c=st.integers(1, 39), frac=st.floats(0, 1))
def test_least_competitor_on_numbers(half: int, c: int, frac: float) -> None:
    c = 1 + (c - 1) % (2 * half - 1)
    omega = math.pi / half
    x = frac * omega / 2
    assert math.cos(c * omega - x) >= -math.cos(x) - EPS


@settings(max_examples=200, deadline=None)
@given(alpha=st.floats(0, math.pi), frac=st.floats(0, 1))
def test_far_from_zero_on_numbers(alpha: float, frac: float) -> None:
    phi = alpha + frac * (2 * math.pi - 2 * alpha)
    assert math.cos(phi) <= math.cos(alpha) + EPS


@settings(max_examples=200, deadline=None)
@given(alphabet=st.integers(2, 40), n=st.integers(2, 60), frac=st.floats(0, 1))
def test_switch_sign_on_numbers(alphabet: int, n: int, frac: float) -> None:
    omega = 2 * math.pi / alphabet
    theta = frac * omega / (n - 1)
    diff = 4 * math.sin(theta / 2) * math.cos(omega / 2) * math.sin((omega - (2 * n - 3) * theta) / 2)
    if omega - (2 * n - 3) * theta > 1e-9:
        assert diff >= -EPS
    elif omega - (2 * n - 3) * theta < -1e-9:
        assert diff <= EPS


@settings(max_examples=200, deadline=None)
@given(alphabet=st.integers(2, 40), n=st.integers(2, 60), frac=st.floats(0.001, 0.999))
def test_partial_induction_margin_is_positive_below_the_horizon(alphabet: int, n: int, frac: float) -> None:
    omega = 2 * math.pi / alphabet
    theta = frac * omega / (2 * n - 3)
    shared = math.sin((omega - (2 * n - 3) * theta) / 2)
    assert 2 * math.sin((omega + theta) / 2) * shared > 0 and 2 * math.sin((omega - theta) / 2) * shared > 0
    if n >= 3:
        assert math.sin(theta / 2) * math.sin(1.5 * theta) > 0
