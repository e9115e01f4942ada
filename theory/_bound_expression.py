"""A bound stated as text, such as ``'1.886'``, ``'pi^2 / (2 n^2)'`` or ``'1 - cos(theta)'``, as a sympy
expression in the length ``n``.

:func:`parse_bound` checks the text token by token before sympy sees it: numbers, ``n``, the
parameter names it is given (a construction's ``theta``, ...), the constants ``pi`` and ``E``, the
functions of :data:`FUNCTIONS`, the operators ``+ - * / ^ **`` and parentheses; anything else (an
attribute, a string, an unknown name, ``__``) is refused with an :class:`InputError` naming it. Then
``sympy.parse_expr`` reads it with a namespace holding only those names and no Python builtins, and
with only the transformations that turn numbers and names into sympy objects (a decimal such as
``1.886`` into the exact rational ``943/500``) and ``^`` into a power (never Python's ``eval`` of the
user's text). ``n`` is a positive integer symbol.
"""

from __future__ import annotations

import io
import keyword
import tokenize
from collections.abc import Mapping

import sympy as sp
from sympy.parsing.sympy_parser import auto_number, auto_symbol, convert_xor, parse_expr, rationalize

from ropeproof.machinery._errors import InputError

N = sp.Symbol("n", integer=True, positive=True)
"""The length symbol of a stated bound."""

FUNCTIONS: dict[str, object] = {
    "sqrt": sp.sqrt,
    "sin": sp.sin,
    "cos": sp.cos,
    "tan": sp.tan,
    "asin": sp.asin,
    "acos": sp.acos,
    "atan": sp.atan,
    "atan2": sp.atan2,
    "sinh": sp.sinh,
    "cosh": sp.cosh,
    "tanh": sp.tanh,
    "exp": sp.exp,
    "log": sp.log,
    "abs": sp.Abs,
    "Abs": sp.Abs,
    "min": sp.Min,
    "Min": sp.Min,
    "max": sp.Max,
    "Max": sp.Max,
    "floor": sp.floor,
    "ceiling": sp.ceiling,
}
"""The functions a bound may use, by name."""
CONSTANTS: dict[str, object] = {"pi": sp.pi, "E": sp.E}
OPERATORS = frozenset({"+", "-", "*", "/", "**", "^", "(", ")", ","})
MAX_LENGTH = 1000
"""Longest bound text accepted (characters)."""


def parse_bound(text: str, parameters: Mapping[str, float] | None = None) -> sp.Expr:
    """``text`` as a sympy expression in :data:`N` (see the module docstring).

    ``parameters`` maps names the bound may use (a construction's ``theta``) to their values; each is
    substituted as the exact rational of its float64 value. The result's only free symbol is ``n``
    (or none); it must be real.
    """
    if not isinstance(text, str) or not text.strip():
        raise InputError(f"bound={text!r} must be a non-empty expression in n")
    if len(text) > MAX_LENGTH:
        raise InputError(f"bound has {len(text)} characters; accepted: at most {MAX_LENGTH}")
    params = {str(k): float(v) for k, v in (parameters or {}).items()}
    allowed = {"n", *params, *FUNCTIONS, *CONSTANTS}
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError) as exc:
        raise InputError(f"bound={text!r} is not an expression: {exc}") from None
    for tok in tokens:
        if tok.type in (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER, tokenize.INDENT, tokenize.DEDENT):
            continue
        if tok.type == tokenize.NUMBER:
            if tok.string.lower().endswith("j") or tok.string.lower().startswith(("0x", "0o", "0b")):
                raise InputError(f"bound={text!r}: number {tok.string!r}; accepted: decimal real numbers")
            continue
        if tok.type == tokenize.NAME and tok.string in allowed and not keyword.iskeyword(tok.string):
            continue
        if tok.type == tokenize.OP and tok.string in OPERATORS:
            continue
        names = sorted(allowed - set(CONSTANTS) - set(FUNCTIONS))
        raise InputError(
            f"bound={text!r}: {tok.string!r} is not allowed; accepted: numbers, the names {names}, the "
            f"constants {sorted(CONSTANTS)}, the functions {sorted(FUNCTIONS)}, + - * / ^ ** ( ) ,"
        )
    namespace: dict[str, object] = {"n": N, **CONSTANTS, **FUNCTIONS}
    namespace.update({name: sp.Symbol(name, real=True) for name in params})
    globals_: dict[str, object] = {
        "__builtins__": {},
        "Integer": sp.Integer,
        "Float": sp.Float,
        "Rational": sp.Rational,
        "Symbol": sp.Symbol,
    }
    try:
        expr = parse_expr(
            text,
            local_dict=namespace,
            global_dict=globals_,
            transformations=(auto_symbol, auto_number, rationalize, convert_xor),
            evaluate=True,
        )
    except (SyntaxError, TypeError, ValueError, AttributeError, ZeroDivisionError) as exc:
        raise InputError(f"bound={text!r} is not an expression in n: {exc}") from None
    if not isinstance(expr, sp.Expr):
        raise InputError(f"bound={text!r} is not an expression (got {type(expr).__name__})")
    expr = expr.subs({sp.Symbol(name, real=True): sp.Rational(v) for name, v in params.items()})
    extra = sorted(s.name for s in expr.free_symbols if s != N)
    if extra:
        raise InputError(f"bound={text!r} has symbols {extra} with no value")
    if expr.is_real is False or expr.has(sp.zoo, sp.nan, sp.oo, -sp.oo):
        raise InputError(f"bound={text!r} is not a finite real expression")
    return expr


__all__ = ["FUNCTIONS", "N", "parse_bound"]
