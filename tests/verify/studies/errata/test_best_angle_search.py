"""The best angle found without the lemma (ropeproof.verify.studies.errata._best_angle_search): the exact
candidate search and the interval branch-and-bound agree with each other, with a dense mpmath grid (a
third, independent reference) and with the lemma's 2 sin(pi/n)^2."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import pytest

from ropeproof.machinery._errors import InputError
from ropeproof.verify.studies.errata._best_angle_search import candidate_maximum, certified_maximum


def _grid_max(big_m: int, points: int) -> mpmath.mpf:
    return max(
        min(1 - mpmath.cos(m * mpmath.pi * i / points) for m in range(1, big_m + 1))
        for i in range(points + 1)
    )


@pytest.mark.parametrize("big_m", [1, 2, 3, 4, 5, 7, 11])
def test_candidates_against_a_dense_grid(big_m: int) -> None:
    """F_M is pi M-Lipschitz in t = theta/pi, so the grid maximum is within pi M / (2 points) of the true one,
    and never above it."""
    found = candidate_maximum(big_m)
    points = 3000
    with mpmath.workdps(30):
        grid = _grid_max(big_m, points)
        exact = 1 - mpmath.cos(mpmath.pi * found.x.numerator / found.x.denominator)
        assert grid <= exact + mpmath.mpf(10) ** -25
        assert exact - grid <= mpmath.pi * big_m / (2 * points)
    assert found.value == pytest.approx(float(exact), rel=1e-15)


@pytest.mark.parametrize("n", range(2, 31))
def test_both_searches_find_the_lemma_value_up_to_the_referees_range(n: int) -> None:
    found = candidate_maximum(n - 1)
    assert found.x == Fraction(2, n)
    assert set(found.maximisers) == {
        Fraction(2 * k, n) for k in range(1, n) if 2 * k <= n and math.gcd(k, n) == 1
    }
    if n <= 16:  # the branch-and-bound costs about M^2 / F* box evaluations
        enclosure = certified_maximum(n - 1)
        value = 2 * math.sin(math.pi / n) ** 2
        assert enclosure.low <= value + 1e-15 and value - 1e-15 <= enclosure.high
        assert enclosure.high - enclosure.low <= 2e-10


def test_the_branch_and_bound_separates_the_neighbouring_values() -> None:
    """The enclosure is tight enough to tell the lemma's value from the one a length off."""
    enclosure = certified_maximum(9)
    assert enclosure.high < 2 * math.sin(math.pi / 9) ** 2 and enclosure.low > 2 * math.sin(math.pi / 11) ** 2


def test_bad_input_is_named() -> None:
    with pytest.raises(InputError, match="big_m"):
        candidate_maximum(0)
    with pytest.raises(InputError, match="tol"):
        certified_maximum(3, tol=0.0)
