"""Bounds stated as text: what parses (exact decimals, parameters, ^), and everything refused."""

from __future__ import annotations

import math

import mpmath
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from ropeproof.machinery._errors import InputError
from ropeproof.theory._bound_expression import MAX_BITS, N, bound_tree, check_lengths, parse_bound


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
        ("1/0", "undefined: a division by zero"),
        ("n" * 1001, "at most 1000"),
    ],
)
def test_refuses_anything_else(text: str, match: str) -> None:
    with pytest.raises(InputError, match=match):
        parse_bound(text)


@pytest.mark.parametrize(
    ("parameters", "match"),
    [
        ({"n": 5}, "parameter 'n' has the name of a bound's own symbol"),
        ({"pi": 3}, "parameter 'pi' has the name"),
        ({"E": 2}, "parameter 'E' has the name"),
        ({"sqrt": 2}, "parameter 'sqrt' has the name"),
        ({"Integer": 2}, "parameter 'Integer' has the name"),
        ({"theta": float("nan")}, "parameter 'theta' = nan; accepted: a finite real number"),
        ({"theta": float("inf")}, "parameter 'theta' = inf"),
        ({"theta": "abc"}, "parameter 'theta' = 'abc'"),
        ({"theta": True}, "parameter 'theta' = True"),
        ({"theta": sp.zoo}, "parameter 'theta' = zoo"),
        ({"not a name": 1}, "must be named by an identifier"),
    ],
)
def test_parameters_never_replace_a_bound_symbol_and_are_finite(parameters: dict, match: str) -> None:
    with pytest.raises(InputError, match=match):
        parse_bound("pi^2/(2*n^2)", parameters)


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("log(n, 0)", "a logarithm to a base that is not positive or is 1"),
        ("log(n, 1)", "a logarithm to a base that is not positive or is 1"),
        ("1/log(0)", "the logarithm of a number that is not positive"),
        ("n/log(-2)", "the logarithm of a number that is not positive"),
        ("0/0", "a division by zero"),
        ("n*(1 - 1)^-1", "a division by zero"),
        ("(-8)^(1/3)", "a negative number to a non-integer power"),
        ("asin(2)", "asin of a number past 1"),
        ("atan2(0, 0)", r"atan2\(0, 0\)"),
    ],
)
def test_undefined_constants_are_refused_not_simplified_away(text: str, match: str) -> None:
    with pytest.raises(InputError, match=match):
        parse_bound(text)


@pytest.mark.parametrize(
    "text",
    ["10**10**10", "9**9**9", "10^10^10", "2**2**2**2**2**2", "(10**10)**(10**10)", "10**-10**10",
     "floor(exp(exp(100)))", "exp(10^7)", "(1/3)^(-10^8)"],
)  # fmt: skip
def test_sizes_are_bounded_before_evaluation(text: str) -> None:
    with pytest.raises(InputError, match=f"the limit is {MAX_BITS} bits"):
        parse_bound(text)


def test_lengths_are_checked_one_by_one() -> None:
    """A bound undefined at one length is refused with that length; one whose size passes the limit
    at a length, with it; a bound defined everywhere passes."""
    for text, lengths, match in (
        ("(n-5)/(n-5)", range(4, 7), "undefined at n=5: a division by zero"),
        ("log(n - 3)", range(2, 9), "undefined at n=2: the logarithm"),
        ("sqrt(n - 4)", range(2, 9), "undefined at n=2"),  # (n-4)^(1/2): a negative base
        ("n^n^n", range(2, 20), "at n=8"),
    ):
        assert parse_bound(text) is not None  # accepted before a length is known
        with pytest.raises(InputError, match=match):
            check_lengths(text, bound_tree(text), lengths)
    check_lengths("(n-5)/(n-5)", bound_tree("(n-5)/(n-5)"), range(6, 100))
    check_lengths("exp(-n^2)", bound_tree("exp(-n^2)"), range(2, 3000))  # small, not large


# ------------------------------------------------------------------------- fuzz against an oracle

_LEAVES = st.one_of(st.integers(0, 5).map(str), st.just("n"), st.just("theta"))


def _trees(leaves: st.SearchStrategy) -> st.SearchStrategy:
    return st.recursive(
        leaves,
        lambda sub: st.one_of(
            st.tuples(st.sampled_from(["+", "-", "*", "/"]), sub, sub),
            st.tuples(st.just("^"), sub, st.integers(-2, 3).map(str)),
            st.tuples(st.sampled_from(["sin", "cos", "exp", "log", "sqrt", "atan", "abs"]), sub),
        ),
        max_leaves=6,
    )


def _text(tree: object) -> str:
    if isinstance(tree, str):
        return tree
    op, *args = tree  # type: ignore[misc]
    if len(args) == 1:
        return f"{op}({_text(args[0])})"
    return f"({_text(args[0])}) {op} ({_text(args[1])})"


class _Undefined(Exception):
    pass


def _oracle(tree: object, n: int, theta: float) -> object:
    """The tree's value at ``n``: exact Fractions for rational arithmetic, mpmath at 200 bits for the
    functions; :class:`_Undefined` where a step is undefined (a division by zero, a logarithm of a
    number that is not positive, a negative square root, a negative base to a non-integer power)."""
    from fractions import Fraction

    if isinstance(tree, str):
        return Fraction(n) if tree == "n" else Fraction(theta) if tree == "theta" else Fraction(int(tree))
    op, *args = tree  # type: ignore[misc]
    if op == "^":
        base, k = _oracle(args[0], n, theta), int(args[1])
        if base == 0 and k < 0:
            raise _Undefined
        return base**k
    vals = [_oracle(a, n, theta) for a in args]
    if op in "+-*/":
        a, b = vals
        both = all(not isinstance(v, mpmath.mpf) for v in vals)
        if op == "/" and b == 0:
            raise _Undefined
        if not both:
            a, b = (v if isinstance(v, mpmath.mpf) else mpmath.mpf(v.numerator) / v.denominator for v in vals)
        return {"+": a + b, "-": a - b, "*": a * b, "/": a / b if b != 0 else None}[op]
    (x,) = (v if isinstance(v, mpmath.mpf) else mpmath.mpf(v.numerator) / v.denominator for v in vals)
    if (op == "log" and x <= 0) or (op == "sqrt" and x < 0):
        raise _Undefined
    if op == "exp" and x > 700:
        raise OverflowError
    return {"sin": mpmath.sin, "cos": mpmath.cos, "exp": mpmath.exp, "log": mpmath.log,
            "sqrt": mpmath.sqrt, "atan": mpmath.atan, "abs": abs}[op](x)  # fmt: skip


@settings(max_examples=40, deadline=None)
@given(_trees(_LEAVES), st.floats(0.05, 3.0))
def test_fuzz_bounds_against_an_mpmath_oracle(tree: object, theta: float) -> None:
    """Random expression trees in n and a parameter: refused exactly where the oracle finds a step
    undefined at some length of 2..12, and otherwise equal to the oracle at every length."""
    text = _text(tree)
    lengths = range(2, 13)
    truth: dict[int, object] = {}
    undefined = False
    with mpmath.workprec(200):
        for n in lengths:
            try:
                truth[n] = _oracle(tree, n, theta)
            except _Undefined:
                undefined = True
            except OverflowError:
                return  # beyond float64: not what this compares
    try:
        expr = parse_bound(text, {"theta": theta})
        check_lengths(text, bound_tree(text, {"theta": theta}), lengths)
    except InputError as exc:
        assert undefined, (text, str(exc))
        return
    assert not undefined, text
    for n, value in truth.items():
        got = complex(expr.subs(N, n).evalf(40))
        want = float(value)
        assert got.imag == 0 and math.isclose(got.real, want, rel_tol=1e-12, abs_tol=1e-12), (text, n)
