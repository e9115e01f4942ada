"""A sympy constant as a rigorous ball: :func:`arb_of` evaluates an expression tree in Arb.

Every node is evaluated by python-flint's ``flint.arb`` at the working precision in force (the caller
sets it, :class:`~ropeproof.verify.measure.exact._certified.arb_precision`): integers and rationals
exactly (a rational as a quotient of exact integers), sympy ``Float``\\ s as their exact binary values,
``pi`` and ``E`` and the functions below by Arb's rigorous routines, so the ball contains the
expression's real value. Accepted: ``Integer``, ``Rational``, ``Float``, ``pi``, ``E``, ``Add``,
``Mul``, ``Pow`` (any real exponent of a positive base; integer exponents of any base), ``exp``,
``log``, ``sin``, ``cos``, ``sqrt``.
"""

from __future__ import annotations

import sympy as sp
from flint import arb

from ropeproof.machinery._errors import InputError


def arb_of(expr: sp.Expr) -> arb:
    """The ball of the constant ``expr`` at the current Arb precision (:class:`InputError` naming a node
    of another kind, or a symbol)."""
    e = sp.sympify(expr)
    if e.free_symbols:
        raise InputError(f"expr={e} has symbols {sorted(map(str, e.free_symbols))}; accepted: a constant")
    return _ball(e)


def _ball(e: sp.Expr) -> arb:
    if e.is_Integer:
        return arb(int(e))
    if e.is_Rational:
        return arb(int(e.p)) / int(e.q)
    if e.is_Float:
        man, exp = sp.Float(e)._mpf_[1], sp.Float(e)._mpf_[2]
        sign = -1 if sp.Float(e)._mpf_[0] else 1
        return arb(sign * int(man)) * arb(2) ** int(exp)
    if e == sp.pi:
        return arb.pi()
    if e == sp.E:
        return arb(1).exp()
    if e.is_Add:
        total = arb(0)
        for a in e.args:
            total += _ball(a)
        return total
    if e.is_Mul:
        total = arb(1)
        for a in e.args:
            total *= _ball(a)
        return total
    if e.is_Pow:
        base, ex = e.args
        if ex.is_Integer:
            return _ball(base) ** int(ex)
        b = _ball(base)
        if not b > 0:
            raise InputError(f"{e}: a non-integer power needs a positive base")
        return (b.log() * _ball(ex)).exp()
    functions = {sp.exp: arb.exp, sp.log: arb.log, sp.sin: arb.sin, sp.cos: arb.cos}
    if e.func in functions and len(e.args) == 1:
        return functions[e.func](_ball(e.args[0]))
    raise InputError(
        f"{e} ({e.func.__name__}) cannot be enclosed; accepted: {__doc__.split('Accepted: ')[1].strip()}"
    )
