"""Symbolic constructions: a RoPE head declared token by token.

A :class:`Construction` declares

- a vocabulary of named :class:`Token` s, each of a kind with symbolic parameters (the built-in
  kinds, :data:`TOKEN_KINDS`: a letter's code ``phi``, an integer's value ``s``, a pair's two codes;
  any other non-empty name declares a kind of the user's own, with its own rules);
- a list of RoPE :class:`Plane` s, each with a frequency and an amplitude ``a_k >= 0``;
- per-kind query and key rules: a function from the token's parameters and the plane to a 2-D
  vector, written as a rotation of the base vector (:class:`Rotated`) or as a general vector;
- a value map (token -> weights on output tokens) and a readout;
- optionally its input :class:`~ropeproof.theory._family.Family` (``family=`` or
  :meth:`Construction.with_family`): which inputs it must answer, read by every sweep and check.

The query of plane ``k`` is scaled by ``a_k``, so the logit between query token ``x`` at position
``i`` and key token ``y`` at ``j`` is ``sum_k a_k q_k(x)^T rho((j - i) theta_k) k_k(y)``. For rotated
vectors ``q_k = rho(beta_q) v`` and ``k_k = rho(beta_k) v`` this is
``sum_k a_k cos((j - i) theta_k + beta_k - beta_q)``.
"""

from __future__ import annotations

import dataclasses
import numbers
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import sympy as sp

from ropeproof.machinery._errors import ConstructionError, RopeproofError
from ropeproof.machinery._validate import integer
from ropeproof.theory._family import Family
from ropeproof.theory._rope_symbolic import rotation

TokenKind = str
"""A token kind: one of :data:`TOKEN_KINDS` or a name of the user's own."""
TOKEN_KINDS: tuple[str, ...] = ("letter", "integer", "pair")
"""The kinds the paper's constructions use. Kinds are open: any non-empty identifier (letters, digits,
``_``) names a kind, and a token of a new kind needs query and key rules under its ``rule`` (which
defaults to the kind)."""


@dataclass(frozen=True)
class Token:
    """A vocabulary entry: ``name`` (unique), ``kind``, and its parameters by name.

    ``kind`` is one of :data:`TOKEN_KINDS` or a non-empty identifier of the user's own. ``rule``
    selects which query/key/value rule applies (defaults to ``kind``); pairs use it to tell (letter,
    letter) from (letter, integer).
    """

    name: str
    kind: TokenKind
    params: Mapping[str, Any] = field(default_factory=dict)
    rule: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.kind, str) or not self.kind.isidentifier():
            raise ConstructionError(
                f"token {self.name!r}: kind={self.kind!r}; accepted: one of {TOKEN_KINDS} or another "
                "non-empty identifier (a kind of your own)"
            )
        if not self.rule:
            object.__setattr__(self, "rule", self.kind)
        object.__setattr__(self, "params", dict(self.params))


@dataclass(frozen=True)
class Plane:
    """One RoPE plane: frequency ``freq`` (radians per position) and amplitude ``amplitude >= 0``."""

    freq: sp.Expr
    amplitude: sp.Expr = 1  # type: ignore[assignment]  (sympified in __post_init__)

    def __post_init__(self) -> None:
        object.__setattr__(self, "freq", sp.sympify(self.freq))
        amp = sp.sympify(self.amplitude)
        if amp.is_number and bool(amp < 0):
            raise ConstructionError(f"plane amplitude={amp} must be >= 0")
        object.__setattr__(self, "amplitude", amp)


@dataclass(frozen=True)
class Rotated:
    """The vector ``scale * rho(angle) v`` for the construction's base unit vector ``v``."""

    angle: sp.Expr
    scale: sp.Expr = 1  # type: ignore[assignment]  (sympified in __post_init__)

    def __post_init__(self) -> None:
        object.__setattr__(self, "angle", sp.sympify(self.angle))
        object.__setattr__(self, "scale", sp.sympify(self.scale))

    def vector(self, base: sp.Matrix) -> sp.Matrix:
        return self.scale * rotation(self.angle) * base


PlaneVector = Rotated | sp.Matrix
VectorRule = Callable[[Mapping[str, Any], int, Plane], PlaneVector]
"""``rule(params, plane_index, plane) -> vector``: a token's query or key in one plane."""
ValueRule = Callable[[Token], Mapping[str, Any]]
"""``value(token) -> {output token name: weight}``: what attending to ``token`` writes."""


@dataclass(frozen=True)
class Construction:
    """A symbolic single-head RoPE construction (see the module docstring).

    ``query_rules`` and ``key_rules`` map a token's ``rule`` to a :data:`VectorRule`.
    ``generic`` maps a rule name to a token whose parameters are sympy symbols; :func:`derive` uses
    them to state logits for a whole kind at once. ``parameters`` binds free symbols (such as
    ``theta``) to numbers for compilation. ``readout`` names how answers are read
    (``"argmax"``: the output token with the largest unembedded score).
    """

    name: str
    tokens: tuple[Token, ...]
    planes: tuple[Plane, ...]
    query_rules: Mapping[str, VectorRule]
    key_rules: Mapping[str, VectorRule]
    value: ValueRule
    generic: Mapping[str, Token]
    parameters: Mapping[sp.Symbol, float] = field(default_factory=dict)
    base: sp.Matrix = field(default_factory=lambda: sp.Matrix([1, 0]))
    readout: str = "argmax"
    description: str = ""
    family: Family | None = None

    def __post_init__(self) -> None:
        if not self.planes:
            raise ConstructionError(f"construction {self.name!r} needs at least one plane")
        if not self.tokens:
            raise ConstructionError(f"construction {self.name!r} needs at least one token")
        names = [t.name for t in self.tokens]
        if len(set(names)) != len(names):
            dup = sorted({n for n in names if names.count(n) > 1})
            raise ConstructionError(f"construction {self.name!r}: duplicate token names {dup[:5]}")
        for t in self.tokens:
            for rules, what in ((self.query_rules, "query"), (self.key_rules, "key")):
                if t.rule not in rules:
                    raise ConstructionError(f"token {t.name!r}: no {what} rule for rule={t.rule!r}")
        base = sp.Matrix(self.base).reshape(2, 1)
        if sp.simplify(base.dot(base) - 1) != 0:
            raise ConstructionError(f"base vector {list(base)} must be a unit vector")
        object.__setattr__(self, "base", base)
        object.__setattr__(self, "tokens", tuple(self.tokens))
        object.__setattr__(self, "planes", tuple(self.planes))
        object.__setattr__(self, "parameters", dict(self.parameters))
        if self.family is not None:
            if not isinstance(self.family, Family):
                raise ConstructionError(
                    f"construction {self.name!r}: family must be a Family, got {type(self.family).__name__}"
                )
            try:
                self.family.check_tokens(names, f"construction {self.name!r}")
            except RopeproofError as exc:
                raise ConstructionError(str(exc)) from None

    def with_family(self, family: Family | None) -> Construction:
        """This construction with ``family`` as its input family (``None``: none stated)."""
        return dataclasses.replace(self, family=family)

    @property
    def token_names(self) -> list[str]:
        return [t.name for t in self.tokens]

    def token(self, name: str) -> Token:
        """The token called ``name``."""
        for t in self.tokens:
            if t.name == name:
                return t
        raise ConstructionError(f"construction {self.name!r} has no token {name!r}")

    def plane_vectors(self, token: Token, which: Literal["query", "key"]) -> list[sp.Matrix]:
        """The token's query (scaled by each plane's amplitude) or key vector in every plane."""
        rules = self.query_rules if which == "query" else self.key_rules
        out = []
        for index, plane in enumerate(self.planes):
            vec = rules[token.rule](token.params, index, plane)
            m = vec.vector(self.base) if isinstance(vec, Rotated) else sp.Matrix(vec).reshape(2, 1)
            out.append(plane.amplitude * m if which == "query" else m)
        return out

    def plane_angles(
        self, token: Token, which: Literal["query", "key"]
    ) -> list[tuple[sp.Expr, sp.Expr]] | None:
        """``[(scale_k, angle_k)]`` when every plane vector is :class:`Rotated`, else ``None``.

        The query's scale includes the plane amplitude.
        """
        rules = self.query_rules if which == "query" else self.key_rules
        out = []
        for index, plane in enumerate(self.planes):
            vec = rules[token.rule](token.params, index, plane)
            if not isinstance(vec, Rotated):
                return None
            scale = plane.amplitude * vec.scale if which == "query" else vec.scale
            out.append((scale, vec.angle))
        return out

    def exact_parameters(self) -> dict[sp.Symbol, sp.Expr]:
        """The parameters as exact sympy numbers: a float is the exact rational of its binary value (so
        ``7 * theta`` is formed exactly, not rounded to 53 bits as a sympy ``Float`` product would be)."""
        out: dict[sp.Symbol, sp.Expr] = {}
        for sym, value in self.parameters.items():
            if isinstance(value, sp.Basic):
                out[sym] = sp.Rational(value) if isinstance(value, sp.Float) else value
            elif isinstance(value, numbers.Integral):
                out[sym] = sp.Integer(int(value))
            else:
                out[sym] = sp.Rational(float(value))
        return out

    def numeric(self, expr: sp.Expr) -> float:
        """``expr`` with every parameter substituted exactly (:meth:`exact_parameters`), evaluated to 30
        significant digits and rounded to float (error if a symbol is left)."""
        value = sp.sympify(expr).subs(self.exact_parameters())
        if value.free_symbols:
            names = sorted(s.name for s in value.free_symbols)
            raise ConstructionError(f"construction {self.name!r}: parameters {names} have no value")
        return float(sp.N(value, 30))


def letter_tokens(letters: int | Sequence[str], prefix: str = "") -> list[Token]:
    """Letter tokens with code ``phi = 0, 1, ...`` in order; ``letters`` is a count or names.

    A count gives names ``A .. Z``, then ``L26, L27, ...``.
    """
    if isinstance(letters, numbers.Integral) or not isinstance(letters, Iterable):
        count = integer(letters, "letters", low=1, error=ConstructionError)
        names = [chr(ord("A") + i) if i < 26 else f"L{i}" for i in range(count)]
    else:
        names = list(letters)
        if not names or not all(isinstance(name, str) and name for name in names):
            raise ConstructionError(
                f"letters={letters!r} must be a count >= 1 or a non-empty sequence of non-empty names"
            )
    return [Token(prefix + name, "letter", {"phi": i, "letter": name}) for i, name in enumerate(names)]


def letter_pair_tokens(left: Token, letters: Sequence[Token]) -> list[Token]:
    """The (letter, letter) pairs ``(left, right)`` for every ``right`` in ``letters``: named
    ``"<left><right>"``, rule ``"pair_ll"``, parameters ``phi_left`` and ``phi_right``."""
    return [
        Token(
            f"{left.name}{right.name}",
            "pair",
            {"phi_left": left.params["phi"], "phi_right": right.params["phi"]},
            rule="pair_ll",
        )
        for right in letters
    ]
