"""Deciding identities ``expr == 0`` quickly and soundly, in both directions.

**Proof of an identity.** A sum of products of ``cos`` and ``sin`` of linear forms in the symbols
(``cos((n-1) theta)``, ``sin((omega - (2n-3) theta)/2)``, ...) vanishes identically exactly when its
exponential form does: with ``cos x = (e^{ix} + e^{-ix})/2`` and ``sin x = (e^{ix} - e^{-ix})/(2i)``,
expanding products and splitting every ``e^{i(a + b)}`` into ``e^{ia} e^{ib}`` gives a Laurent
polynomial in the exponentials of the individual terms, and sympy's ``expand`` collects equal
monomials. If that expansion is the number ``0``, the identity is proved (every step is an identity
transformation). This takes tens of milliseconds on the toolkit's identities, where
``sympy.simplify`` with ``trigsimp`` takes seconds.

**Proof of a non-identity.** ``expr`` evaluated at seeded rational points (of the declared sign where
a symbol has one, integers for integer symbols; a point that breaks another assumption is skipped)
with 60-digit arithmetic and found far above that precision (``|expr| > 1e-40``) is not identically
zero. ``simplify`` can run for minutes or hours before giving up on a false identity; the witness
answers at once.

:func:`vanishes_identically` tries the exponential form, then the witnesses, and only then
``simplify`` (expressions with ``tan``, ``sqrt``, ``atan2``, ``Abs``, ...).
"""

from __future__ import annotations

import sympy as sp

WITNESS_DIGITS = 60
"""Working digits of the witness evaluation."""

WITNESS_FLOOR = sp.Float("1e-40")
"""A witness value above this (far above 60-digit rounding of O(1) terms) disproves the identity."""


def exponential_form_vanishes(expr: sp.Expr) -> bool:
    """``True`` when ``expand(expr.rewrite(exp))`` is exactly ``0`` (a proof that ``expr == 0``);
    ``False`` says nothing either way."""
    return sp.expand(sp.sympify(expr).rewrite(sp.exp)) == 0


def _witness_value(symbol: sp.Symbol, seed: int, index: int) -> sp.Rational:
    k = ((seed + 1) * 7919 * (index + 3)) % 97
    if symbol.is_positive or symbol.is_nonnegative:
        value = k + 1
    elif symbol.is_negative or symbol.is_nonpositive:
        value = -(k + 1)
    else:
        value = k - 48
    return sp.Integer(value) if symbol.is_integer else sp.Rational(value, 29)


def _admissible(symbol: sp.Symbol, value: sp.Rational) -> bool:
    """Whether ``value`` satisfies every assumption declared on ``symbol`` (``odd``, ``prime``, ...)."""
    for name, wanted in symbol.assumptions0.items():
        got = getattr(value, f"is_{name}", None)
        if got is not None and got != wanted:
            return False
    return True


def disproved_by_witness(expr: sp.Expr, witnesses: int = 3) -> bool:
    """``True`` when ``|expr| > 1e-40`` at one of ``witnesses`` seeded rational points, evaluated with
    60-digit arithmetic (a proof that ``expr`` is not identically zero); ``False`` says nothing. A point
    that breaks a symbol's declared assumptions (an even value for an ``odd`` symbol, say) is skipped."""
    expr = sp.sympify(expr)
    symbols = sorted(expr.free_symbols, key=str)
    for seed in range(witnesses):
        point = {s: _witness_value(s, seed, i) for i, s in enumerate(symbols)}
        if not all(_admissible(s, v) for s, v in point.items()):
            continue
        value = sp.N(expr.subs(point), WITNESS_DIGITS)
        if value.is_finite and abs(value) > WITNESS_FLOOR:
            return True
    return False


def vanishes_identically(expr: sp.Expr) -> bool:
    """Whether sympy proves ``expr == 0`` for every value of its symbols (module docstring): ``True``
    from the exponential form or ``simplify(expand(expand_trig(expand(expr))))``; ``False`` when a
    witness disproves it or neither reduction reaches ``0`` ("not proved")."""
    expr = sp.sympify(expr)
    if expr == 0 or exponential_form_vanishes(expr):
        return True
    if disproved_by_witness(expr):
        return False
    return bool(sp.simplify(sp.expand(sp.expand_trig(sp.expand(expr)))) == 0)
