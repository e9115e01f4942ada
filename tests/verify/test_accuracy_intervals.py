"""Wilson intervals against the closed form, and thresholds decided only when the interval is clear."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ropeproof.theory.errors import InputError
from ropeproof.verify.accuracy_intervals import compare_to_level, wilson_interval


@given(trials=st.integers(1, 500), frac=st.floats(0, 1))
def test_wilson_interval_is_the_closed_form(trials: int, frac: float) -> None:
    """(p + z^2/2n +- z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n), z = 1.959964 (95%)."""
    k = round(frac * trials)
    z = 1.959963984540054
    p = k / trials
    centre = (p + z * z / (2 * trials)) / (1 + z * z / trials)
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / (1 + z * z / trials)
    lo, hi = wilson_interval(k, trials)
    assert math.isclose(lo, max(0.0, centre - half), abs_tol=1e-9)
    assert math.isclose(hi, min(1.0, centre + half), abs_tol=1e-9)
    assert 0 <= lo <= p <= hi <= 1


def test_thresholds_are_decided_only_when_clear() -> None:
    assert compare_to_level(0, 32, 0.25) == "below"  # upper end 0.107
    assert compare_to_level(0, 4, 0.25) == "undecided"  # upper end 0.49: four inputs say little
    assert compare_to_level(32, 32, 0.85) == "above"  # lower end 0.893
    assert compare_to_level(32, 32, 0.9) == "undecided"
    assert compare_to_level(8, 32, 0.25) == "undecided"
    with pytest.raises(InputError, match="trials"):
        wilson_interval(0, 0)
    with pytest.raises(InputError, match="successes"):
        wilson_interval(5, 4)
