"""Interval branch-and-bound in Arb (ropeproof.theory._arb_bounds): a sign is decided over a whole compact
interval, a function that crosses the bound is refused, and the Taylor enclosure of (x cos x - sin x)/x^3
at its removable singularity holds its values (compared with mpmath at high precision)."""

from __future__ import annotations

import mpmath
import pytest
from flint import arb
from hypothesis import given, settings
from hypothesis import strategies as st

from ropeproof.machinery._errors import InputError
from ropeproof.theory._arb_bounds import below_on, sinc_decreasing_on, sinc_slope_factor


def test_signs_over_a_whole_interval_and_counterexamples_refused() -> None:
    eps = arb(1) / 10**6
    assert below_on(lambda x: -x.sin(), eps, arb.pi() - eps)  # sin > 0 inside (0, pi)
    assert not below_on(lambda x: x.sin(), eps, arb.pi() - eps)  # a function above the bound
    assert not below_on(lambda x: x.cos(), 0, arb.pi())  # crosses 0 at pi/2
    assert not below_on(lambda x: -x * x, 0, 1)  # touches 0 at the end: not strictly below
    assert below_on(lambda x: x * x, 0, 1, bound=arb(1) + eps)
    with pytest.raises(InputError, match="low="):
        below_on(lambda x: x, 1, 0)


def test_sinc_decreases_up_to_pi_and_not_past_the_first_root_of_tan_x_equal_x() -> None:
    assert sinc_decreasing_on((1, 2)) and sinc_decreasing_on((1, 1))
    # x cos x - sin x changes sign at the root 4.4934... of tan x = x, inside [0, 3 pi/2]
    assert not below_on(sinc_slope_factor, 0, arb.pi() * 3 / 2)
    with pytest.raises(InputError, match="high_over_pi"):
        sinc_decreasing_on((3, 2))


@settings(deadline=None, max_examples=60)
@given(st.floats(min_value=1e-6, max_value=3.14), st.floats(min_value=0.0, max_value=0.05))
def test_the_enclosure_holds_the_function(x: float, width: float) -> None:
    """Over a ball around x, the enclosure contains the value at three points of the ball (mpmath, 50
    digits), near 0 (the Taylor enclosure) and away from it (the formula)."""
    ball = arb(x, width)
    enclosure = sinc_slope_factor(ball)
    with mpmath.workdps(50):  # a local precision: the global one is every later test's
        for t in (x - width, x, x + width):
            if t == 0:
                continue
            u = mpmath.mpf(t)
            exact = (u * mpmath.cos(u) - mpmath.sin(u)) / u**3
            assert enclosure.lower() <= arb(str(exact + mpmath.mpf(10) ** -40))
            assert enclosure.upper() >= arb(str(exact - mpmath.mpf(10) ** -40))
