"""The fast identity test: proves true trig identities, never proves a false one."""

from __future__ import annotations

import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from ropeproof.theory._trig_identity import (
    _admissible,
    disproved_by_witness,
    exponential_form_vanishes,
    vanishes_identically,
)

N = sp.Symbol("n", positive=True)
THETA = sp.Symbol("theta", positive=True)
OMEGA = sp.Symbol("omega", positive=True)

small = st.integers(-4, 4)


def _linear(a: int, b: int, c: int) -> sp.Expr:
    return a * N * THETA + b * THETA + c * OMEGA


@given(small, small, small, small, small, small)
def test_sum_to_product_identities_are_proved_by_the_exponential_form(
    a1: int, b1: int, c1: int, a2: int, b2: int, c2: int
) -> None:
    # cos x - cos y = -2 sin((x + y)/2) sin((x - y)/2), for linear forms x, y of random integer coefficients
    x, y = _linear(a1, b1, c1), _linear(a2, b2, c2)
    identity = sp.cos(x) - sp.cos(y) + 2 * sp.sin((x + y) / 2) * sp.sin((x - y) / 2)
    assert exponential_form_vanishes(identity)
    assert vanishes_identically(identity)


@settings(max_examples=25)  # each example evaluates a witness with 60-digit arithmetic
@given(small, small, small, st.integers(1, 3))
def test_a_perturbed_identity_is_never_proved(a: int, b: int, c: int, k: int) -> None:
    # the same identity plus a non-zero multiple of sin(theta)^2 (zero only where sin(theta) = 0)
    x, y = _linear(a, b, c), _linear(b, c, a)
    wrong = sp.cos(x) - sp.cos(y) + 2 * sp.sin((x + y) / 2) * sp.sin((x - y) / 2) + k * sp.sin(THETA) ** 2
    assert not exponential_form_vanishes(wrong)
    assert not vanishes_identically(wrong)


def test_the_simplify_fallback_proves_what_the_exponential_form_cannot() -> None:
    x = sp.Symbol("x", real=True)
    expr = sp.tan(x) * sp.cos(x) - sp.sin(x)
    assert not exponential_form_vanishes(expr)  # tan's exponential form is a quotient
    assert vanishes_identically(expr)


def test_zero_and_a_nonzero_constant() -> None:
    assert vanishes_identically(sp.Integer(0))
    assert not vanishes_identically(sp.cos(THETA) ** 2 + sp.sin(THETA) ** 2)
    assert vanishes_identically(sp.cos(THETA) ** 2 + sp.sin(THETA) ** 2 - 1)


def test_witness_points_respect_the_symbols_assumptions() -> None:
    # sqrt(x^2) - x vanishes for positive x only: a witness at a negative x would "disprove" a true identity
    x = sp.Symbol("x", positive=True)
    assert not disproved_by_witness(sp.sqrt(x**2) - x)
    k = sp.Symbol("k", integer=True)
    assert not disproved_by_witness(sp.sin(sp.pi * k))  # zero at every integer, not at rationals
    assert disproved_by_witness(sp.sin(sp.pi * sp.Symbol("y", real=True)))
    # the seeded integer points are odd here, so for an even symbol every point is skipped and nothing is
    # shown, though m is not identically zero; a plain integer symbol is disproved at the same points
    assert not disproved_by_witness(sp.Symbol("m", even=True))
    assert disproved_by_witness(sp.Symbol("m", integer=True))
    assert disproved_by_witness(sp.sqrt(sp.Symbol("z", negative=True) ** 2) - 1)  # points of the right sign
    assert not _admissible(sp.Symbol("m", even=True), sp.Integer(41))
    assert _admissible(sp.Symbol("m", even=True), sp.Integer(40))
