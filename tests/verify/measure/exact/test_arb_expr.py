"""sympy constants as Arb balls: each ball contains sympy's 60-digit value and is tight."""

from __future__ import annotations

import pytest
import sympy as sp

from ropeproof.machinery._errors import InputError
from ropeproof.verify.measure.exact._arb_expr import arb_of
from ropeproof.verify.measure.exact._certified import arb_exact_ends, arb_precision

CASES = [
    sp.Rational(310000) ** sp.Rational(-17, 64),
    sp.Rational(10) ** sp.Rational(-4, 1),
    sp.sqrt(2) * sp.pi + sp.log(3) - sp.exp(sp.Rational(1, 7)),
    sp.cos(sp.Rational(1, 3)) * sp.sin(2) / sp.E,
    sp.Float(0.1) + sp.Integer(-3) ** 5,
    2 * sp.pi / 7,
]


@pytest.mark.parametrize("expr", CASES)
def test_ball_contains_the_value(expr: sp.Expr) -> None:
    with arb_precision(200):
        lo, hi = arb_exact_ends(arb_of(expr))
    value = sp.Rational(sp.N(expr, 80))  # 80 digits: far inside the 200-bit ball's width
    assert lo <= value <= hi and hi - lo < sp.Rational(1, 10**50)


def test_symbols_and_unknown_functions_are_refused() -> None:
    with pytest.raises(InputError, match="symbols"):
        arb_of(sp.Symbol("x") + 1)
    with pytest.raises(InputError, match="cannot be enclosed"):
        arb_of(sp.gamma(sp.Rational(1, 3)))
