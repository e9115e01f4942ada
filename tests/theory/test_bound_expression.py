"""Bounds stated as text: what parses (exact decimals, parameters, ^), and everything refused."""

from __future__ import annotations

import pytest
import sympy as sp

from ropeproof.machinery._errors import InputError
from ropeproof.theory._bound_expression import N, parse_bound


def test_parses_into_exact_sympy() -> None:
    assert parse_bound("1.886") == sp.Rational(943, 500)  # the decimal typed, not its float
    assert parse_bound("pi^2/(2*n^2)") == sp.pi**2 / (2 * N**2)
    assert parse_bound("1 - cos(theta)", {"theta": 0.5}) == 1 - sp.cos(sp.Rational(1, 2))
    assert parse_bound("min(1, 3/n)").subs(N, 6) == sp.Rational(1, 2)
    assert parse_bound("1e-3 * n") == N / 1000


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("__import__('os')", "'__import__' is not allowed"),
        ("n.evalf()", "'.' is not allowed"),
        ("lambda n: n", "'lambda' is not allowed"),
        ("open('f')", "'open' is not allowed"),
        ("theta", "'theta' is not allowed"),  # no parameter given
        ("2j", "accepted: decimal real numbers"),
        ("[n]", r"'\[' is not allowed"),
        ("n; 1", "';' is not allowed"),
        ("2 n", "not an expression in n"),
        ("", "non-empty"),
        ("1/0", "not a finite real"),
        ("n" * 1001, "at most 1000"),
    ],
)
def test_refuses_anything_else(text: str, match: str) -> None:
    with pytest.raises(InputError, match=match):
        parse_bound(text)
