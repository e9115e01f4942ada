"""Order facts (ropeproof.theory._order_facts): linear implications are decided both ways, the definitions
agree with a direct computation on numbers, and a restatement holds exactly when it holds on every
ordering."""

from __future__ import annotations

import itertools

import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

from ropeproof.theory._order_facts import (
    DEFINITIONS,
    Restatement,
    best,
    gap,
    holds_in_every_order,
    implies,
    margin,
    nonnegative,
    order_only,
    second_largest,
    worst,
)

A, B, C, T = sp.symbols("a b c t", real=True)


def test_linear_implications() -> None:
    assert implies([sp.Le(T, 3)], sp.Le(T, 4)) and not implies([sp.Le(T, 3)], sp.Le(T, 2))
    assert implies([sp.Le(A, sp.pi)], sp.Le(A / 2, sp.pi))  # pi is positive
    assert not implies([sp.Le(A, sp.pi)], sp.Le(A, 3))  # but its value is not used
    assert not implies([], sp.Ge(A * B, 0))  # a product is not linear: undecided, so not proved
    assert implies([sp.Ge(A, 0), sp.Ge(B, 0), sp.Le(A + B, 0)], [sp.Le(A, 0), sp.Ge(A, 0)])
    k = sp.Symbol("k", nonnegative=True)
    assert implies([], sp.Ge(k, 0)) and nonnegative(k * sp.pi + 1) and not nonnegative(k - 1)
    with pytest.raises(ValueError, match="needs relations"):
        implies([A], sp.Ge(A, 0))


@given(st.lists(st.integers(-5, 5), min_size=4, max_size=4))  # the profile's count (thorough: 500)
def test_definitions_agree_with_numbers(values: list[int]) -> None:
    t, a, b, c = values
    subs = {T: t, A: a, B: b, C: c}
    row = sorted([t, a, b, c], reverse=True)
    assert best((T, A, B, C)).subs(subs) == row[0] and worst((T, A, B, C)).subs(subs) == row[-1]
    assert second_largest((T, A, B, C)).subs(subs) == row[1]
    assert gap((T, A, B, C)).subs(subs) == row[0] - row[1]
    assert margin(T, (A, B, C)).subs(subs) == t - max(a, b, c)


def test_every_listed_definition_holds_and_a_false_one_does_not() -> None:
    assert all(r.holds() for r in DEFINITIONS.values())
    assert not holds_in_every_order(best((A, B)), "<=", A)
    assert not holds_in_every_order(margin(T, (A, B)), "==", gap((T, A, B)))  # without the target on top
    assert not Restatement("x", worst((A, B, C)), ">=", A).holds()
    assert order_only(best((A, B)) - 2 * A) and not order_only(A * B) and not order_only(sp.cos(A))


def test_orderings_cover_ties_by_continuity() -> None:
    """A relation between continuous expressions that holds on every strict ordering holds with ties: check
    the listed definitions at every tie pattern of integers in 0..2."""
    for r in DEFINITIONS.values():
        symbols = sorted(set().union(r.lhs.free_symbols, r.rhs.free_symbols), key=lambda s: s.name)
        for values in itertools.product(range(3), repeat=len(symbols)):
            subs = dict(zip(symbols, values, strict=True))
            if not all(bool(g.subs(subs)) for g in r.given):
                continue
            lhs, rhs = r.lhs.subs(subs), r.rhs.subs(subs)
            assert {"==": lhs == rhs, "<=": lhs <= rhs, ">=": lhs >= rhs}[r.relation], (r.name, subs)
