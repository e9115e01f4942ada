"""Stable rewrites of cosine differences: identical to the raw form, and accurate where it is not."""

from __future__ import annotations

import math

import mpmath
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

from ropeproof.theory._stable import stabilize, stable_cos_difference

A, B, T = sp.symbols("a b t", real=True)


def test_product_forms_are_identities() -> None:
    assert sp.simplify(sp.expand_trig(stable_cos_difference(A, B) - (sp.cos(A) - sp.cos(B)))) == 0
    assert stable_cos_difference(0, T) == 2 * sp.sin(T / 2) ** 2
    assert stable_cos_difference(T, 0) == -2 * sp.sin(T / 2) ** 2


def test_stabilize_turns_one_minus_cos_into_sines() -> None:
    expr = 3 - 2 * sp.cos(A) - sp.cos(B)
    stable = stabilize(expr)
    assert not stable.has(sp.cos)
    assert sp.simplify(sp.expand_trig(stable - expr)) == 0


@given(t=st.floats(1e-12, 1e-3))
def test_stable_form_keeps_relative_precision(t: float) -> None:
    # 1 - cos(t) in float64 loses every digit below t ~ 1e-8; the stable form stays within a few ulps
    f = sp.lambdify([T], stabilize(1 - sp.cos(T)), "math")
    with mpmath.workdps(50):
        exact = float(1 - mpmath.cos(mpmath.mpf(t)))
    assert math.isclose(f(t), exact, rel_tol=8 * 2**-53)
