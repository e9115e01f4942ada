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

**A bound's symbols are its own.** ``n``, ``pi``, ``E``, every name of :data:`FUNCTIONS` and the names
sympy's parser uses are :data:`RESERVED`: a parameter with such a name is refused, naming it, and so is
a parameter whose value is not a finite real number (:func:`bound_parameters`).

**Nothing is simplified away, nothing is evaluated unbounded.** Before sympy evaluates anything, the
text is read into an unevaluated tree (:func:`bound_tree`: sympy's operators unevaluated, the functions
inert) and every node of it is evaluated by :func:`check_tree` (exact rationals where the node is
rational, else mpmath at 128 bits): a node that is undefined (a division by zero, such as ``1/(n-5)``
or ``(n-5)/(n-5)`` at ``n = 5``; a logarithm of a number that is not positive or to a base 0 or 1; a
negative number to a non-integer power; ``asin``/``acos`` past 1; ``atan2(0, 0)``) is refused, and so is
a node whose exact value would need more than :data:`MAX_BITS` bits (``10**10**10``, ``exp(exp(100))``)
before it is computed. :func:`parse_bound` does this for the nodes that do not depend on ``n``;
:func:`check_lengths` for every length a bound is judged at.
"""

from __future__ import annotations

import io
import keyword
import math
import tokenize
from collections.abc import Iterable, Mapping
from fractions import Fraction
from numbers import Real

import mpmath
import sympy as sp
from sympy.parsing.sympy_parser import auto_number, auto_symbol, convert_xor, parse_expr, rationalize

from ropeproof.machinery._errors import InputError
from ropeproof.machinery._size_limits import limit

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
MAX_BITS = limit("bound bits")
"""The most bits any node of a bound may need, exactly or as a magnitude (about 1.26 million decimal
digits; float64 itself reaches 2^1024)."""
_PARSER_NAMES = ("Integer", "Float", "Rational", "Symbol", "Add", "Mul", "Pow")
RESERVED = frozenset({"n", *CONSTANTS, *FUNCTIONS, *_PARSER_NAMES})
"""Names a bound gives its own meaning: no parameter may be called so."""
_PREC = 128


def bound_parameters(parameters: Mapping[str, object] | None) -> dict[str, float]:
    """``parameters`` checked as a bound's parameters: each name an identifier that is not
    :data:`RESERVED` nor a Python keyword, each value a finite real number (not a bool or a string).
    Returns them as floats; an :class:`InputError` names the first parameter refused."""
    out: dict[str, float] = {}
    for name, value in (parameters or {}).items():
        if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
            raise InputError(f"parameter {name!r}: a bound's parameter must be named by an identifier")
        if name in RESERVED:
            raise InputError(
                f"parameter {name!r} has the name of a bound's own symbol; reserved: n, pi, E, the functions "
                f"{sorted(FUNCTIONS)}; rename the parameter"
            )
        out[name] = parameter_value(name, value)
    return out


def parameter_value(name: str, value: object) -> float:
    """``value`` as a float when it is a finite real number, else an :class:`InputError` naming
    parameter ``name`` (a bool, a string, NaN or an infinity is refused)."""
    if isinstance(value, bool | str) or value is None:
        raise InputError(f"parameter {name!r} = {value!r}; accepted: a finite real number")
    try:
        if isinstance(value, sp.Basic):
            number = float(value) if value.is_real and value.is_number else math.nan
        elif isinstance(value, Real) or hasattr(value, "__float__"):
            number = float(value)  # type: ignore[arg-type]
        else:
            number = math.nan
    except (TypeError, ValueError, OverflowError):
        number = math.nan
    if not math.isfinite(number):
        raise InputError(f"parameter {name!r} = {value!r}; accepted: a finite real number")
    return number


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
    params = bound_parameters(parameters)
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
    check_tree(text, bound_tree(text, params), None)  # the nodes without n, before sympy evaluates any
    namespace: dict[str, object] = {"n": N, **CONSTANTS, **FUNCTIONS}
    namespace.update({name: sp.Symbol(name, real=True) for name in params})
    expr = _parsed(text, namespace, evaluate=True)
    expr = expr.subs({sp.Symbol(name, real=True): sp.Rational(v) for name, v in params.items()})
    extra = sorted(s.name for s in expr.free_symbols if s != N)
    if extra:
        raise InputError(f"bound={text!r} has symbols {extra} with no value")
    if expr.is_real is False or expr.has(sp.zoo, sp.nan, sp.oo, -sp.oo):
        raise InputError(f"bound={text!r} is not a finite real expression")
    return expr


def _parsed(text: str, namespace: dict[str, object], evaluate: bool) -> sp.Expr:
    """``text`` parsed by sympy with ``namespace`` for its names (nothing else in reach), evaluated or
    kept as written; :class:`InputError` naming the bound unless it is an expression."""
    try:
        out = parse_expr(
            text,
            local_dict=namespace,
            global_dict=_globals(),
            transformations=(auto_symbol, auto_number, rationalize, convert_xor),
            evaluate=evaluate,
        )
    except (SyntaxError, TypeError, ValueError, AttributeError, ZeroDivisionError) as exc:
        raise InputError(f"bound={text!r} is not an expression in n: {exc}") from None
    if not isinstance(out, sp.Expr):
        raise InputError(f"bound={text!r} is not an expression (got {type(out).__name__})")
    return out


def _globals() -> dict[str, object]:
    return {"__builtins__": {}, **{name: getattr(sp, name) for name in _PARSER_NAMES}}


def bound_tree(text: str, parameters: Mapping[str, object] | None = None) -> sp.Expr:
    """``text`` (already accepted by :func:`parse_bound`) as an unevaluated sympy tree: operators
    unevaluated, functions inert (``sympy.Function`` of the same names), parameters in place as the exact
    rationals of their values. Nothing of it is simplified, so :func:`check_tree` sees every division."""
    params = bound_parameters(parameters)
    namespace: dict[str, object] = {"n": N, **CONSTANTS, **{name: sp.Function(name) for name in FUNCTIONS}}
    namespace.update({name: sp.Rational(v) for name, v in params.items()})
    return _parsed(text, namespace, evaluate=False)


class _Unknown:
    """The value of a node that depends on ``n`` when no length is given."""


_UNKNOWN = _Unknown()
Value = Fraction | mpmath.mpf | _Unknown


def check_tree(text: str, tree: sp.Expr, n: int | None) -> None:
    """Evaluate every node of ``tree`` at length ``n`` (``None``: only the nodes that do not depend on
    ``n``), exact where rational, refusing an undefined node or one past :data:`MAX_BITS` with an
    :class:`InputError` that names ``text``, the length and the node (module docstring)."""
    with mpmath.workprec(_PREC):
        _value(tree, n, text)


def check_lengths(text: str, tree: sp.Expr, lengths: Iterable[int]) -> None:
    """:func:`check_tree` at every length of ``lengths`` (once when ``tree`` does not depend on ``n``)."""
    if not any(getattr(s, "name", None) == "n" for s in tree.free_symbols):
        check_tree(text, tree, None)
        return
    with mpmath.workprec(_PREC):
        for n in lengths:
            _value(tree, int(n), text)


def _bits(q: Fraction) -> int:
    return max(1, abs(q.numerator).bit_length()) + q.denominator.bit_length()


def _real(v: Fraction | mpmath.mpf) -> mpmath.mpf:
    return mpmath.mpf(v.numerator) / v.denominator if isinstance(v, Fraction) else v


def _log2_abs(v: mpmath.mpf) -> float:
    return float(mpmath.log(abs(v), 2)) if v != 0 else -math.inf


def _value(node: sp.Basic, n: int | None, text: str) -> Value:
    at = "" if n is None else f" at n={n}"

    def undefined(why: str) -> InputError:
        return InputError(f"bound={text!r} is undefined{at}: {why} in {node}")

    def too_big(bits: float) -> InputError:
        try:
            size = f"{float(bits):.3g}"
        except OverflowError:
            size = f"2^{int(bits).bit_length() - 1}"
        return InputError(
            f"bound={text!r}{at}: {node} would need about {size} bits; the limit is {MAX_BITS} bits "
            "(a bound that large is beyond float64 anyway)"
        )

    if node.is_Rational:
        return Fraction(int(node.p), int(node.q))
    if node.is_Symbol:
        if node.name != "n":
            raise InputError(f"bound={text!r} has the symbol {node.name!r} with no value")
        return _UNKNOWN if n is None else Fraction(n)
    if node == sp.pi:
        return +mpmath.pi
    if node == sp.E:
        return +mpmath.e
    if node.is_Float:
        return mpmath.mpf(node)
    args = [_value(a, n, text) for a in node.args]
    name = node.func.__name__
    known_base = name == "log" and len(args) == 2 and not isinstance(args[1], _Unknown)
    if known_base and (_real(args[1]) <= 0 or args[1] == 1):  # type: ignore[arg-type]
        raise undefined("a logarithm to a base that is not positive or is 1")
    if any(isinstance(a, _Unknown) for a in args):
        return _UNKNOWN
    exact = all(isinstance(a, Fraction) for a in args)
    if node.is_Add or node.is_Mul:
        if exact:
            if node.is_Mul and sum(_bits(a) for a in args) > MAX_BITS:
                raise too_big(sum(_bits(a) for a in args))
            total = Fraction(0) if node.is_Add else Fraction(1)
            for a in args:
                total = total + a if node.is_Add else total * a
            return total
        reals = [_real(a) for a in args]
        return mpmath.fsum(reals) if node.is_Add else mpmath.fprod(reals)
    if node.is_Pow:
        base, exponent = args
        if exact and exponent.denominator == 1:
            if base == 0 and exponent < 0:
                raise undefined("a division by zero")
            bits = _bits(base) * abs(exponent.numerator)
            if bits > MAX_BITS:
                raise too_big(bits)
            return base**exponent.numerator
        b, e = _real(base), _real(exponent)
        if b == 0:
            if e < 0:
                raise undefined("a division by zero")
            return mpmath.mpf(1 if e == 0 else 0)  # 0^0 = 1, as for exact numbers
        if b < 0 and not (isinstance(exponent, Fraction) and exponent.denominator == 1):
            raise undefined("a negative number to a non-integer power")
        bits = abs(float(e)) * abs(_log2_abs(b))
        if bits > MAX_BITS:
            raise too_big(bits)
        return mpmath.power(b, e)
    x = [_real(a) for a in args]
    if name in ("exp", "sinh", "cosh"):
        if (x[0] if name == "exp" else abs(x[0])) > MAX_BITS * 0.69:  # exp of a negative number is small
            raise too_big(float(abs(x[0])) * 1.45)
        return {"exp": mpmath.exp, "sinh": mpmath.sinh, "cosh": mpmath.cosh}[name](x[0])
    if name == "log":
        if x[0] <= 0:
            raise undefined("the logarithm of a number that is not positive")
        if len(x) == 2 and (x[1] <= 0 or x[1] == 1):
            raise undefined("a logarithm to a base that is not positive or is 1")
        return mpmath.log(x[0]) / (mpmath.log(x[1]) if len(x) == 2 else 1)
    if name == "sqrt":
        if x[0] < 0:
            raise undefined("the square root of a negative number")
        return mpmath.sqrt(x[0])
    if name in ("asin", "acos"):
        if abs(x[0]) > 1:
            raise undefined(f"{name} of a number past 1 in absolute value")
        return mpmath.asin(x[0]) if name == "asin" else mpmath.acos(x[0])
    if name == "atan2":
        if x[0] == 0 and x[1] == 0:
            raise undefined("atan2(0, 0)")
        return mpmath.atan2(x[0], x[1])
    simple = {
        "sin": mpmath.sin,
        "cos": mpmath.cos,
        "tan": mpmath.tan,
        "atan": mpmath.atan,
        "tanh": mpmath.tanh,
    }
    if name in simple:
        return simple[name](x[0])
    if name in ("floor", "ceiling"):
        if exact:
            q = args[0]
            return Fraction(
                q.numerator // q.denominator if name == "floor" else -(-q.numerator // q.denominator)
            )
        if _log2_abs(x[0]) > MAX_BITS:
            raise too_big(_log2_abs(x[0]))
        return mpmath.floor(x[0]) if name == "floor" else mpmath.ceil(x[0])
    if name in ("Abs", "abs"):
        return abs(args[0])  # type: ignore[arg-type]
    if name in ("Min", "min", "Max", "max"):
        pick = min if name.lower() == "min" else max
        return pick(args) if exact else pick(x)
    return _UNKNOWN  # a node this check does not know (a sympy expression given directly): not judged


__all__ = [
    "FUNCTIONS",
    "MAX_BITS",
    "RESERVED",
    "N",
    "bound_parameters",
    "bound_tree",
    "check_lengths",
    "check_tree",
    "parameter_value",
    "parse_bound",
]
