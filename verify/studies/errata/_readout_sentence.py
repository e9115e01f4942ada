"""The positional readout correction's condensed sentence, as first written and as corrected, on abstract
positional heads (docs/theory.md section 9.4).

An :class:`AbstractPositionalHead` is what the theorem of :mod:`ropeproof.theory._positional_readout`
speaks about: a readout matrix ``s`` (row ``c`` is ``s(c) = W_E[c] W_V W_O W_U``) over the pair tokens
``(L, R)`` (``L`` one of ``letters`` letters, ``R`` a letter or the integer 1), and for each query token
``(X, Y)`` (``X != Y``) its attention weights over the key positions ``0 .. n - 2`` and itself (they depend
on the query token and the positions only). Entries may be ``Fraction`` s, and then every quantity here is
exact.

- :func:`worst_readout_margin`: ``margin_inf(n)`` by enumerating every Retrieval input of length ``n``;
- :func:`corrected_bound`: the corrected statement, the least over query tokens ``Q``, the letter ``Y``
  they ask for and pairs ``tau != o`` of left letter ``Y`` of ``min_j C(tau, o) p_j(Q)``, and its mean form
  ``C (1 - p_Q)/(n - 1)``;
- :func:`condensed_sentence_bound`: the sentence as first written, the least ``C`` over pairs of *every*
  letter times the least key weight over *every* query;
- :func:`counterexample_head`: a head (exact rationals, ``n = 3``) with ``margin_inf = 1/100`` against the
  first sentence's ``1/1000``.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from ropeproof.machinery._errors import InputError
from ropeproof.machinery._validate import integer


@dataclass(frozen=True)
class AbstractPositionalHead:
    """A positional head as the readout theorem sees it (module docstring).

    Shapes: readout [V, V], V = letters * (letters + 1); weights[q] [n] (keys 0 .. n - 2, then the query)"""

    letters: int
    readout: np.ndarray
    weights: dict[int, np.ndarray]

    def __post_init__(self) -> None:
        integer(self.letters, "letters", low=2)
        v = len(self.tokens)
        if np.shape(self.readout) != (v, v):
            raise InputError(
                f"readout must be [{v}, {v}] for {self.letters} letters, got {np.shape(self.readout)}"
            )
        missing = [q for q in self.query_tokens() if q not in self.weights]
        if missing:
            raise InputError(f"weights lacks the query tokens {missing}")
        lengths = {len(w) for w in self.weights.values()}
        if len(lengths) != 1 or min(lengths) < 2:
            raise InputError(
                f"every query's weights must have one length n >= 2, got lengths {sorted(lengths)}"
            )

    @property
    def tokens(self) -> list[tuple[int, int]]:
        """``(L, R)`` for every pair token, ``R = letters`` the integer 1."""
        return [(left, right) for left in range(self.letters) for right in range(self.letters + 1)]

    @property
    def n(self) -> int:
        """The length the weights are given for."""
        return len(next(iter(self.weights.values())))

    def index(self, token: tuple[int, int]) -> int:
        return self.tokens.index(token)

    def query_tokens(self, asking: int | None = None) -> list[int]:
        """Indices of the query tokens ``(X, Y)``, ``X != Y`` (those asking for ``asking`` when given)."""
        ys = range(self.letters) if asking is None else [asking]
        return [self.index((x, y)) for y in ys for x in range(self.letters) if x != y]

    def pairs_of(self, letter: int) -> list[int]:
        """Indices of the pairs with left letter ``letter``."""
        return [self.index((letter, r)) for r in range(self.letters + 1)]


def pair_constants(head: AbstractPositionalHead, letter: int) -> list[tuple[Any, int, int]]:
    """``(C(tau, o), tau, o)`` for every two distinct pairs of left letter ``letter``, in the readout's number
    type: ``C = (A(tau, o) + A(o, tau))/2``, ``A(x, y) = s(x)[x] - s(x)[y]``."""
    s = head.readout
    out = []
    for tau, o in itertools.combinations(head.pairs_of(letter), 2):
        a_to = s[tau][tau] - s[tau][o]
        a_ot = s[o][o] - s[o][tau]
        out.append(((a_to + a_ot) / 2, tau, o))
    return out


def worst_readout_margin(head: AbstractPositionalHead) -> Any:
    """``margin_inf(n)``: the least, over every Retrieval input of length ``n`` (every query token, target
    position, target pair and filling of the other key positions with pairs of other left letters), of the
    target's readout minus the best other's, ``out = sum_j p_j s(c_j)``."""
    s = np.asarray(head.readout, dtype=object)
    n = head.n
    worst = None
    for y in range(head.letters):
        others = [i for x in range(head.letters) if x != y for i in head.pairs_of(x)]
        for q in head.query_tokens(asking=y):
            p = np.asarray(head.weights[q], dtype=object)
            for t in range(n - 1):
                for tau in head.pairs_of(y):
                    for fill in itertools.product(others, repeat=n - 2):
                        seq = [*fill[:t], tau, *fill[t:], q]
                        out = p @ s[seq]
                        rest = max(out[c] for c in range(len(out)) if c != tau)
                        margin = out[tau] - rest
                        worst = margin if worst is None or margin < worst else worst
    return worst


def corrected_bound(head: AbstractPositionalHead) -> tuple[Any, Any]:
    """The corrected statement's two sides: ``(min over Q, Y, tau != o of min_j C p_j(Q), min of
    C (1 - p_Q(Q))/(n - 1))`` with ``Y`` the letter ``Q`` asks for."""
    n = head.n
    least, mean_form = None, None
    for y in range(head.letters):
        for c, _tau, _o in pair_constants(head, y):
            for q in head.query_tokens(asking=y):
                keys = list(head.weights[q][:-1])
                term = min(c * p for p in keys)
                mean = c * (1 - head.weights[q][-1]) / (n - 1)
                least = term if least is None or term < least else least
                mean_form = mean if mean_form is None or mean < mean_form else mean_form
    return least, mean_form


def condensed_sentence_bound(head: AbstractPositionalHead) -> Any:
    """The sentence as first written: ``C`` the least ``C(tau, o)`` over pairs of one left letter, every
    letter, times the least key weight over every query token."""
    c = min(pc[0] for y in range(head.letters) for pc in pair_constants(head, y))
    p = min(min(head.weights[q][:-1]) for q in head.query_tokens())
    return c * p


def counterexample_head() -> AbstractPositionalHead:
    """Three letters, length 3, exact rationals. ``s(c)[c'] = a_L [c' = c] + 10 [L(c') = R(c)]`` for
    ``c = (L, R)``: the query ``(X, Y)`` adds 10 times its own weight ``3/5`` to every pair of left letter
    ``Y``, which keeps pairs of other letters far below the target, and the only close competitor is the
    other pair of letter ``Y``, ``a_Y p_t`` below it. With ``a = (1/10, 1, 1)``, queries asking for letter 0
    weigh their keys ``(1/10, 3/10)`` and the others ``(1/100, 39/100)``: every ``a_Y min_j p_j`` is
    ``1/100``, the worst margin, while the least ``a`` times the least weight is ``1/1000``."""
    letters, bonus = 3, Fraction(10)
    a = [Fraction(1, 10), Fraction(1), Fraction(1)]
    tokens = [(left, right) for left in range(letters) for right in range(letters + 1)]
    readout = np.empty((len(tokens), len(tokens)), dtype=object)
    for i, (left, right) in enumerate(tokens):
        for k, (left2, _right2) in enumerate(tokens):
            readout[i, k] = (a[left] if i == k else Fraction(0)) + (bonus if right == left2 else Fraction(0))
    weights = {}
    for idx, (x, y) in enumerate(tokens):
        if y < letters and x != y:
            keys = [Fraction(1, 10), Fraction(3, 10)] if y == 0 else [Fraction(1, 100), Fraction(39, 100)]
            weights[idx] = np.array([*keys, Fraction(3, 5)], dtype=object)
    return AbstractPositionalHead(letters, readout, weights)
