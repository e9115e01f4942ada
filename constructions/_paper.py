"""[A]'s Theorem 3.1 constructions (``docs/theory.md`` section 4) as symbolic constructions.

All use one RoPE plane by default, base vector ``v = (1, 0)``, and the conventions of section 1.
Each accepts ``extra_planes``: ``(frequency, amplitude)`` pairs that get the same per-token rule
with their own frequency, so multi-plane variants are studied through the same API.

- :func:`index_construction` (T_Index): every key is ``v``; a letter's query is ``v``; integer
  ``s``'s query is ``rho(theta_k)^(-s) v``. Logit ``sum_k a_k cos((j - i + s) theta_k)``, peaking at
  ``j = i - s``. Selective value: weight ``value_weight > 1`` on letters, 0 on integers.
- :func:`retrieval_construction` (T_Retrieval): pair ``(L, R)`` has key ``rho(omega)^phi(L) v``;
  a (letter, letter) pair's query is ``rho(omega)^phi(R) v``; a (letter, integer) pair's query is
  ``rho(omega)^phi(L) v``; ``omega = 2 pi / |ALPH|``. Logit
  ``cos((phi(L_key) - phi(R_query)) omega + (j - i) theta)``. Value: identity.
- :func:`reflexive_construction` (Reflexive): every query and key is ``v``; logit
  ``cos((j - i) theta)`` peaks at ``j = i``. Value: identity.

Each carries its input family (:mod:`ropeproof.theory._family`), built from its tokens by
:func:`index_family`, :func:`retrieval_family` and :func:`reflexive_family`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import sympy as sp

from ropeproof.machinery._errors import ConstructionError, InputError
from ropeproof.machinery._size_limits import check_size
from ropeproof.machinery._validate import integer, real
from ropeproof.theory._construction import (
    Construction,
    Plane,
    Rotated,
    Token,
    letter_pair_tokens,
    letter_tokens,
)
from ropeproof.theory._family import Family, FamilyCase

THETA = sp.Symbol("theta", real=True)
"""The RoPE angle of a construction's main plane."""

# ------------------------------------------------------------------------------- the paper's constants
# Every claim, figure, benchmark and test takes [A]'s parameters from here.

INDEX_THETA = 0.8660
"""[A]'s Index angle: frequency id 2 of a 128-dim rotary head at base 10000, as [A] rounds it
(the exact spectrum value is ``10000 ** (-2 / 128) = 0.86596...``)."""
RETRIEVAL_THETA = 0.0027
"""[A]'s Retrieval angle: frequency id 42 of the same spectrum, rounded (``10000 ** (-82/128)``)."""
ALPHABET_SIZE = 8
"""[A]'s letter-task alphabet ``|ALPH|``, so ``omega = 2 pi / 8 = pi / 4``."""
OMEGA = 2 * math.pi / ALPHABET_SIZE
"""The Retrieval code angle ``2 pi / |ALPH|`` in float64."""
NUMBER_TASK_LETTERS = 120
"""[A]'s number task: letter vocabulary size."""
NUMBER_TASK_MAX_INT = 16
"""[A]'s number task: integers ``1 .. 16``."""
LETTER_TASK_MAX_INT = 8
"""[A]'s letter task: integers ``1 .. 8`` in (letter, integer) pairs."""
TASK_LENGTH = 17
"""[A]'s training length: 8 letters, 8 integers and the query (number task); 17 pairs (letter task)."""
HOPS = (1, 2, 3, 4)
"""[A]'s hop counts."""
TASKS: tuple[str, ...] = ("number", "letter")
"""[A]'s two tasks, in the order every report lists them."""


def check_task(task: str, error: type[Exception] = InputError) -> str:
    """``task`` if it names one of :data:`TASKS`; otherwise ``error`` (default :class:`InputError`)
    naming the parameter and listing them."""
    if task not in TASKS:
        raise error(f"task={task!r} is unknown; accepted: {list(TASKS)}")
    return task


ExtraPlanes = Sequence[tuple[float | sp.Expr, float | sp.Expr]]


def _planes(extra_planes: ExtraPlanes) -> tuple[Plane, ...]:
    planes = [Plane(THETA, 1)]
    for entry in extra_planes:
        if len(entry) != 2:
            raise ConstructionError(f"extra_planes entries must be (frequency, amplitude), got {entry!r}")
        planes.append(Plane(entry[0], entry[1]))
    return tuple(planes)


def _check_theta(theta: float | sp.Expr) -> float:
    if isinstance(theta, sp.Expr) and theta.is_number:  # sp.pi / 4 and the like
        theta = float(theta)
    return real(theta, "theta", error=ConstructionError)


def _zero(_params: Mapping[str, Any], _k: int, _plane: Plane) -> Rotated:
    return Rotated(0)


def index_family(tokens: Sequence[Token]) -> Family:
    """*Index at length n*: integer ``s`` at ``n - 1`` for every ``s`` in ``1 .. n-1``; a letter at
    ``n - 1 - s``; any token elsewhere. One case per integer token; the definition asks for every
    offset ``s < n`` (``every_offset``), so lengths up to ``max_int + 1`` are complete."""
    letters = tuple(t.name for t in tokens if t.kind == "letter")
    everything = tuple(t.name for t in tokens)
    cases = tuple(
        FamilyCase(f"s={t.params['s']}", (t.name,), letters, everything, int(t.params["s"]))
        for t in tokens
        if t.kind == "integer"
    )
    return Family(
        "index", cases, "query integer s at n-1, letter at n-1-s, any token elsewhere", every_offset=True
    )


def retrieval_family(tokens: Sequence[Token]) -> Family:
    """*Retrieval at length n*: ``(X, Y)`` with ``X != Y`` at ``n - 1``; exactly one earlier pair with
    left letter ``Y``; every other position any pair whose left letter is not ``Y``."""
    pairs = [t for t in tokens if t.kind == "pair"]
    codes = sorted({int(t.params["phi_left"]) for t in pairs})
    cases = []
    for y in codes:
        queries = tuple(
            t.name
            for t in pairs
            if t.rule == "pair_ll" and int(t.params["phi_right"]) == y and int(t.params["phi_left"]) != y
        )
        targets = tuple(t.name for t in pairs if int(t.params["phi_left"]) == y)
        others = tuple(t.name for t in pairs if int(t.params["phi_left"]) != y)
        cases.append(FamilyCase(f"Y=phi{y}", queries, targets, others, None))
    return Family(
        "retrieval", tuple(cases), "query (X, Y), X != Y; one earlier pair (Y, *); others (L != Y, *)"
    )


def reflexive_family(tokens: Sequence[Token]) -> Family:
    """*Reflexive at length n*: any token at ``n - 1`` is its own target; any token elsewhere."""
    everything = tuple(t.name for t in tokens)
    cases = tuple(FamilyCase(f"self={t}", (t,), (t,), everything, 0) for t in everything)
    return Family("reflexive", cases, "any token at n-1 is the target; any token elsewhere")


def integer_tokens(max_int: int) -> list[Token]:
    """Integer tokens ``1 .. max_int`` named by their value."""
    return [Token(str(s), "integer", {"s": s}) for s in range(1, max_int + 1)]


def _count(letters: int | Sequence[str]) -> int:
    """How many letters ``letters`` asks for (0 for a value letter_tokens refuses with its own error)."""
    if isinstance(letters, int) and not isinstance(letters, bool):
        return max(0, letters)
    return len(letters) if isinstance(letters, Sequence) and not isinstance(letters, str) else 0


def _check_vocabulary(what: str, tokens: int, cases: int = 0) -> None:
    """Refuse, before any token is built, a vocabulary past the limit ``construction tokens``, or a
    family of ``cases`` cases listing every token past ``construction family entries``
    (:mod:`ropeproof.machinery._size_limits`)."""
    check_size(what, tokens, "construction tokens")
    check_size(f"the family of {what}", cases * tokens, "construction family entries")


def index_construction(
    theta: float = INDEX_THETA,
    max_int: int = NUMBER_TASK_MAX_INT,
    letters: int | Sequence[str] = NUMBER_TASK_LETTERS,
    value_weight: float = 2.0,
    extra_planes: ExtraPlanes = (),
) -> Construction:
    """T_Index: at integer ``s``, attend ``s`` positions back; copy the token there if a letter.

    Defaults follow [A]: 120 letters, integers ``1..16``, ``theta = 0.8660`` (frequency id 2 of a
    128-dim rotary head at base 10000). ``value_weight`` must exceed 1.
    """
    integer(max_int, "max_int", low=1, error=ConstructionError)
    real(value_weight, "value_weight", low=1, low_open=True, error=ConstructionError)  # selective value
    _check_vocabulary(
        f"index_construction(max_int={max_int}, letters={_count(letters)})",
        _count(letters) + max_int,
        max_int,
    )
    tokens = letter_tokens(letters) + integer_tokens(max_int)
    weight = sp.nsimplify(value_weight)
    return Construction(
        name="index",
        tokens=tuple(tokens),
        planes=_planes(extra_planes),
        query_rules={"letter": _zero, "integer": lambda p, _k, plane: Rotated(-p["s"] * plane.freq)},
        key_rules={"letter": _zero, "integer": _zero},
        value=lambda t: {t.name: weight} if t.kind == "letter" else {},
        generic={
            "letter": Token("X", "letter", {"phi": sp.Symbol("phi", integer=True, nonnegative=True)}),
            "integer": Token("s", "integer", {"s": sp.Symbol("s", integer=True, positive=True)}),
        },
        parameters={THETA: _check_theta(theta)},
        description="T_Index ([A] Thm 3.1): integer s attends s positions back; selective value on letters.",
        family=index_family(tokens),
    )


def retrieval_construction(
    alphabet_size: int = ALPHABET_SIZE,
    theta: float = 0.0,
    max_int: int = LETTER_TASK_MAX_INT,
    extra_planes: ExtraPlanes = (),
) -> Construction:
    """T_Retrieval: at pair ``(X, Y)``, attend to the earlier pair whose first letter is ``Y``.

    Defaults follow [A]: 8 letters, integers ``1..8``. The sign convention is docs/theory.md section 4's
    (queries rotated by ``+phi``); the reported ``-phi`` version fails (see the tests).
    """
    integer(alphabet_size, "alphabet_size", low=2, error=ConstructionError)
    integer(max_int, "max_int", low=1, error=ConstructionError)
    _check_vocabulary(
        f"retrieval_construction(alphabet_size={alphabet_size}, max_int={max_int})",
        alphabet_size * (alphabet_size + max_int),
    )
    omega = 2 * sp.pi / alphabet_size
    letters = letter_tokens(alphabet_size)
    tokens: list[Token] = []
    for left in letters:
        tokens.extend(letter_pair_tokens(left, letters))
        for s in range(1, max_int + 1):
            tokens.append(
                Token(f"{left.name}{s}", "pair", {"phi_left": left.params["phi"], "s": s}, rule="pair_li")
            )
    phi_l = sp.Symbol("phi_L", integer=True, nonnegative=True)
    phi_r = sp.Symbol("phi_R", integer=True, nonnegative=True)
    s_sym = sp.Symbol("s", integer=True, positive=True)

    def key(p: Mapping[str, Any], _k: int, _plane: Plane) -> Rotated:
        return Rotated(p["phi_left"] * omega)

    return Construction(
        name="retrieval",
        tokens=tuple(tokens),
        planes=_planes(extra_planes),
        query_rules={
            "pair_ll": lambda p, _k, _plane: Rotated(p["phi_right"] * omega),
            "pair_li": lambda p, _k, _plane: Rotated(p["phi_left"] * omega),
        },
        key_rules={"pair_ll": key, "pair_li": key},
        value=lambda t: {t.name: 1},
        generic={
            "pair_ll": Token("(L,R)", "pair", {"phi_left": phi_l, "phi_right": phi_r}, rule="pair_ll"),
            "pair_li": Token("(L,s)", "pair", {"phi_left": phi_l, "s": s_sym}, rule="pair_li"),
        },
        parameters={THETA: _check_theta(theta)},
        description=(
            f"T_Retrieval ([A] Thm 3.1), |ALPH| = {alphabet_size}: pair (X, Y) attends to the earlier "
            "pair whose first letter is Y."
        ),
        family=retrieval_family(tokens),
    )


def reflexive_construction(
    theta: float = 0.5,
    letters: int | Sequence[str] = 8,
    max_int: int = 0,
    extra_planes: ExtraPlanes = (),
) -> Construction:
    """Reflexive: every token attends to itself (``cos((j - i) theta)`` peaks at ``j = i``)."""
    integer(max_int, "max_int", low=0, error=ConstructionError)
    _check_vocabulary(
        f"reflexive_construction(max_int={max_int}, letters={_count(letters)})",
        _count(letters) + max_int,
        max_int,
    )
    tokens = letter_tokens(letters) + integer_tokens(max_int)
    return Construction(
        name="reflexive",
        tokens=tuple(tokens),
        planes=_planes(extra_planes),
        query_rules={"letter": _zero, "integer": _zero},
        key_rules={"letter": _zero, "integer": _zero},
        value=lambda t: {t.name: 1},
        generic={
            "letter": Token("X", "letter", {"phi": sp.Symbol("phi", integer=True, nonnegative=True)}),
            "integer": Token("s", "integer", {"s": sp.Symbol("s", integer=True, positive=True)}),
        },
        parameters={THETA: _check_theta(theta)},
        description="Reflexive ([A] section 4): copy the current token.",
        family=reflexive_family(tokens),
    )


CONSTRUCTIONS = {
    "index": index_construction,
    "retrieval": retrieval_construction,
    "reflexive": reflexive_construction,
}
"""The paper's constructions by CLI name."""
