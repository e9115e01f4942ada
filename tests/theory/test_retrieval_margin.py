"""T_Retrieval's closed-form margin: the sympy identities, the switch point, golden values."""

from __future__ import annotations

import math

import mpmath
import pytest
import sympy as sp

from ropeproof.machinery._errors import InputError
from ropeproof.theory._retrieval_margin import (
    OMEGA,
    THETA,
    difference_identity,
    product_forms_hold,
    retrieval_margin_closed_form,
    switch_length,
)


def test_identities_and_switch_point() -> None:
    assert product_forms_hold()
    assert difference_identity()
    assert sp.simplify(switch_length() - (OMEGA / THETA + 3) / 2) == 0


def _mp_margin(n: int, theta: float, alphabet: int) -> float:
    """Brute force at 40 digits: every target distance t and competitor (c, d), written out."""
    with mpmath.workdps(40):
        th, om = mpmath.mpf(theta), 2 * mpmath.pi / alphabet
        worst = mpmath.inf
        for t in range(1, n):
            comp = max(mpmath.cos(c * om - d * th) for d in range(n) if d != t for c in range(1, alphabet))
            worst = min(worst, mpmath.cos(t * th) - comp)
        return float(worst)


CASES = [(2, 0.0027), (3, 0.0027), (100, 0.0027), (146, 0.0027), (147, 0.0027)]
CASES += [(2, 0.05), (9, 0.05), (10, 0.05), (16, 0.05), (5, 0.0)]


@pytest.mark.parametrize(("n", "theta"), CASES)
def test_closed_form_equals_brute_force(n: int, theta: float) -> None:
    got = retrieval_margin_closed_form(n, theta, 8)
    assert got == pytest.approx(_mp_margin(n, theta, 8), rel=1e-13, abs=1e-15)


def test_first_failure_is_the_ceiling_of_the_switch_point() -> None:
    for theta in (0.0027, 0.01, 0.05):
        omega = 2 * math.pi / 8
        first = next(n for n in range(2, 10**4) if retrieval_margin_closed_form(n, theta, 8) <= 0)
        assert first == math.ceil((omega / theta + 3) / 2)
    assert math.ceil((math.pi / 4 / 0.0027 + 3) / 2) == 147


def test_domain_is_enforced() -> None:
    with pytest.raises(InputError, match=r"\(n - 1\) theta <= omega"):
        retrieval_margin_closed_form(17, 0.05, 8)
    with pytest.raises(InputError, match="n=1"):
        retrieval_margin_closed_form(1, 0.01, 8)
