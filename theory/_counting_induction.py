"""Facts about any number of terms, each checked as an induction: a base case and a step, both decided by
sympy (so that "three terms stand for any number" is never a step on trust).

- :data:`INDUCTIONS` and :func:`holds_for_any_count`: the definitions a definition step may restate
  (:data:`~ropeproof.theory._order_facts.DEFINITIONS`) for every number of terms. A least or largest value
  over ``k + 1`` terms is ``Min(m, x)`` / ``Max(m, x)`` with ``m`` the value over the first ``k`` (the
  definition of a least or largest value over a finite family, taken one term at a time), so a fact
  holds for every ``k >= 1`` when it holds for one term (the base) and survives adding one term to a
  family that satisfies it (the step). Each base and step is a
  :class:`~ropeproof.theory._order_facts.Restatement` decided exactly on every ordering of its symbols.
  Two facts are built on others: ``margin-at-most-one-competitor`` on ``best-at-least-one`` (then linear),
  and ``gap-is-margin-on-top`` on ``best-below-a-common-bound`` (the largest of a family with the target
  on top is the target, the second largest is the largest of the others).
- :func:`sum_beyond_count_times_bound`: ``k >= 1`` reals each above ``c`` sum to more than ``k c`` (each below
  ``c``: less than ``k c``), by induction on ``k``.
- :func:`linear_map_of_sum`: ``(sum_j p_j E_j) W = sum_j p_j (E_j W)`` for every number of terms and
  matrices of any (symbolic) sizes, by induction on the number of terms.
"""

from __future__ import annotations

from functools import cache

import sympy as sp

from ropeproof.theory._order_facts import DEFINITIONS, Restatement, best, implies, worst

_M, _X, _A, _B, _T, _BOUND, _P = sp.symbols("m x a b t B P", real=True)
"""``m``: the value over the first ``k`` terms; ``x``: the term added; ``a``, ``b``: terms of the family;
``t``: the target; ``B``: a common bound; ``P``: the largest pairwise least value among the others."""


def _r(name: str, lhs: sp.Expr, relation: str, rhs: sp.Expr, *given: sp.Basic) -> Restatement:
    return Restatement(name, lhs, relation, rhs, tuple(given))  # type: ignore[arg-type]


INDUCTIONS: dict[str, tuple[str, ...] | tuple[Restatement, ...]] = {
    "worst-at-most-one-input": (
        _r("base", worst((_A,)), "<=", _A),
        _r("step", sp.Min(_M, _X), "<=", _A, sp.Le(_M, _A)),
    ),
    "best-at-least-one": (
        _r("base", best((_A,)), ">=", _A),
        _r("step", sp.Max(_M, _X), ">=", _A, sp.Ge(_M, _A)),
    ),
    "best-below-a-common-bound": (
        _r("base", best((_A,)), "<=", _BOUND, sp.Le(_A, _BOUND)),
        _r("step", sp.Max(_M, _X), "<=", _BOUND, sp.Le(_M, _BOUND), sp.Le(_X, _BOUND)),
    ),
    "worst-above-a-common-bound": (
        _r("base", worst((_A,)), ">=", _BOUND, sp.Ge(_A, _BOUND)),
        _r("step", sp.Min(_M, _X), ">=", _BOUND, sp.Ge(_M, _BOUND), sp.Ge(_X, _BOUND)),
    ),
    # over the first k terms and j more, by induction on j: j = 0 is m <= m
    "worst-over-more-is-smaller": (
        _r("base", _M, "<=", _M),
        _r("step", sp.Min(_A, _X), "<=", _M, sp.Le(_A, _M)),
    ),
    # t - (largest other) <= t - a, as the largest other is at least a (best-at-least-one)
    "margin-at-most-one-competitor": (_r("linear", _T - _M, "<=", _T - _A, sp.Ge(_M, _A)),),
    # with t at least every other (so their largest m <= t, best-below-a-common-bound): the largest of the
    # family is t; the second largest, the largest least value over pairs, takes pairs (t, a) at a and
    # pairs of others at most a <= m, so it is m; the gap t - m is the margin
    "gap-is-margin-on-top": (
        _r("largest", sp.Max(_T, _M), "==", _T, sp.Le(_M, _T)),
        _r("pair-with-target", sp.Min(_T, _A), "==", _A, sp.Le(_A, _T)),
        _r("pair-of-others", sp.Min(_A, _B), "<=", _A),
        _r("second-largest", sp.Max(_M, _P), "==", _M, sp.Le(_P, _M)),
    ),
}
"""Per definition, the restatements whose exact check proves it for every number of terms (module
docstring): base and step, or the linear facts that build it on another definition."""

BUILT_ON: dict[str, tuple[str, ...]] = {
    "margin-at-most-one-competitor": ("best-at-least-one",),
    "gap-is-margin-on-top": ("best-below-a-common-bound", "worst-at-most-one-input", "best-at-least-one"),
}
"""The definitions another one's check for every number of terms rests on."""


@cache
def holds_for_any_count(name: str) -> bool:
    """Whether :data:`~ropeproof.theory._order_facts.DEFINITIONS` ``[name]`` holds for every number of
    terms: every restatement of :data:`INDUCTIONS` ``[name]`` holds, and so do the definitions it is built
    on (:data:`BUILT_ON`)."""
    if name not in DEFINITIONS or name not in INDUCTIONS:
        raise ValueError(f"definition={name!r} has no induction; accepted: {sorted(INDUCTIONS)}")
    return all(r.holds() for r in INDUCTIONS[name]) and all(  # type: ignore[union-attr]
        holds_for_any_count(other) for other in BUILT_ON.get(name, ())
    )


@cache
def sum_beyond_count_times_bound() -> bool:
    """For every ``k >= 1``: ``k`` reals each ``> c`` sum to ``> k c``, and each ``< c`` to ``< k c``. With
    ``s`` the sum of the first ``k`` and ``K = k c``: the base is ``x > c => x > 1 c``; the step is
    ``s > K, x > c => s + x > K + c`` with ``K + c = (k + 1) c`` (sympy), and the same with ``<``."""
    s, x, c, big_k = sp.symbols("s x c K", real=True)
    k = sp.Symbol("k", positive=True, integer=True)
    count = sp.expand((k + 1) * c - (k * c + c)) == 0
    above = implies([sp.Gt(x, c)], sp.Gt(x, 1 * c)) and implies(
        [sp.Gt(s, big_k), sp.Gt(x, c)], sp.Gt(s + x, big_k + c)
    )
    below = implies([sp.Lt(x, c)], sp.Lt(x, 1 * c)) and implies(
        [sp.Lt(s, big_k), sp.Lt(x, c)], sp.Lt(s + x, big_k + c)
    )
    return count and above and below


@cache
def linear_map_of_sum() -> bool:
    """``(sum_{j < k} p_j E_j) W = sum_{j < k} p_j (E_j W)`` for every ``k >= 1`` and matrices of any
    symbolic sizes (``E_j`` rows ``1 x d``, ``W`` ``d x v``): the base ``(p E) W = p (E W)`` and the step
    ``(S + p E) W = S W + p (E W)``, given the claim ``S W = R`` for the first ``k`` terms, both by
    sympy's matrix algebra."""
    d, v = sp.symbols("d v", positive=True, integer=True)
    e, s = sp.MatrixSymbol("E", 1, d), sp.MatrixSymbol("S", 1, d)
    w = sp.MatrixSymbol("W", d, v)
    p = sp.Symbol("p", real=True)
    base = sp.expand((p * e) * w - p * (e * w)) == sp.ZeroMatrix(1, v)
    step = sp.expand((s + p * e) * w - (s * w + p * (e * w))) == sp.ZeroMatrix(1, v)
    return base and step
