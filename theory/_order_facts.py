"""Order facts that proof steps check with sympy: linear implications between real quantities, the
definitions of docs/theory.md section 5 as symbolic expressions, and the relations between them that a
*definition step* may restate.

- :func:`implies`: whether linear hypotheses imply a linear conclusion over the reals, decided by
  sympy's linear-real-arithmetic procedure (``lra_satask``, a simplex method): sound, and complete for
  linear relations. ``pi`` is replaced by a positive symbol, so a fact that needs its value is not proved.
- :func:`margin`, :func:`gap`, :func:`best`, :func:`worst`: the target margin (the target's logit minus
  the best other), the gap (the largest logit minus the second largest), the largest and the least of
  a finite family, as sympy ``Max``/``Min`` expressions of generic reals.
- :class:`Restatement`: ``lhs relation rhs`` for generic reals under optional hypotheses, every side
  built from those definitions with ``+``, ``-`` and numbers only. :func:`holds_in_every_order` decides
  it exactly: on each strict ordering of the symbols every ``Max`` and ``Min`` resolves to one symbol, so
  the relation becomes linear with a known sign; the relations are non-strict between continuous
  expressions, so ties follow by continuity. A restatement is checked on three generic terms here; that it
  holds for any number of terms is a separate, checked induction
  (:mod:`ropeproof.theory._counting_induction`), never the argument that three stand for any number.
- :data:`DEFINITIONS`: the only restatements a definition step may carry (reviewed; a test compares every
  proof's definition steps against it).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Literal

import sympy as sp
from sympy import Q
from sympy.assumptions.lra_satask import lra_satask
from sympy.logic.algorithms.lra_theory import UnhandledInput

Relation = Literal["==", "<=", ">="]
RELATIONS: tuple[str, ...] = ("==", "<=", ">=")
PI = sp.Symbol("pi_", positive=True)
"""Stand-in for pi in :func:`implies` (only its positivity is used)."""

_PREDICATES = {
    sp.GreaterThan: Q.ge,
    sp.StrictGreaterThan: Q.gt,
    sp.LessThan: Q.le,
    sp.StrictLessThan: Q.lt,
    sp.Equality: Q.eq,
}


def _predicate(rel: sp.Basic) -> sp.Basic:
    if rel is sp.true:
        return sp.true
    if not isinstance(rel, tuple(_PREDICATES)):
        raise ValueError(f"implies needs relations (<=, <, >=, >, ==), got {rel!r}")
    lhs, rhs = (sp.sympify(side).subs(sp.pi, PI) for side in (rel.lhs, rel.rhs))
    return _PREDICATES[type(rel)](lhs, rhs)


def implies(hypotheses: Iterable[sp.Basic], conclusion: sp.Basic | Sequence[sp.Basic]) -> bool:
    """``True`` when the hypotheses (relations linear in their symbols) imply every conclusion over the
        reals, decided by sympy's linear real arithmetic (a symbol declared positive or non-negative, ``pi``
    among them, is assumed so); ``False`` when they do not or the procedure cannot
        tell (for example a non-linear term)."""
    conclusions = list(conclusion) if isinstance(conclusion, Sequence) else [conclusion]
    preds = [_predicate(h) for h in hypotheses]
    goals = [_predicate(c) for c in conclusions]
    symbols = set().union(*(p.free_symbols for p in [*preds, *goals]))
    # lra_satask mishandles symbols that carry assumptions: plain reals, with the signs stated
    plain = {s: sp.Dummy(s.name, real=True) for s in symbols}
    signs = [Q.gt(plain[s], 0) if s.is_positive else Q.ge(plain[s], 0) for s in symbols if s.is_nonnegative]
    assumptions = sp.And(*[p.xreplace(plain) for p in preds], *signs)
    conclusions = [g.xreplace(plain) for g in goals]
    for c in conclusions:
        try:
            if lra_satask(c, assumptions) is not True:
                return False
        except (
            ValueError,
            TypeError,
            NotImplementedError,
            UnhandledInput,
        ):  # not linear: undecided, so not proved
            return False
    return True


def nonnegative(expr: sp.Expr) -> bool:
    """``True`` when sympy's assumptions prove ``expr >= 0`` (after expanding and factoring): for a sum or
    product of symbols declared non-negative, for example."""
    e = sp.sympify(expr)
    return any(bool(form.is_nonnegative) for form in (e, sp.expand(e), sp.factor(e)))


# ------------------------------------------------------------------------------------- definitions


def best(values: Sequence[sp.Expr]) -> sp.Expr:
    """The largest of ``values`` (``gap_sup`` over inputs, the best competitor over keys)."""
    return sp.Max(*values)


def worst(values: Sequence[sp.Expr]) -> sp.Expr:
    """The least of ``values`` (``margin_inf`` and ``gap_inf`` over inputs)."""
    return sp.Min(*values)


def margin(target: sp.Expr, others: Sequence[sp.Expr]) -> sp.Expr:
    """The target margin: the target's logit minus the best other logit (docs/theory.md section 5)."""
    return target - best(others)


def second_largest(values: Sequence[sp.Expr]) -> sp.Expr:
    """The second largest of ``values`` (with repeats): the largest of the pairwise minima."""
    return sp.Max(*[sp.Min(a, b) for a, b in itertools.combinations(values, 2)])


def gap(logits: Sequence[sp.Expr]) -> sp.Expr:
    """The gap of a query row: its largest logit minus its second largest (docs/theory.md section 5)."""
    return best(logits) - second_largest(logits)


_ALLOWED = (sp.Symbol, sp.Number, sp.Add, sp.Mul, sp.Max, sp.Min, sp.NumberSymbol)


def order_only(expr: sp.Expr) -> bool:
    """Whether ``expr`` is built from symbols and numbers with ``+``, ``-``, multiplication by numbers,
    ``Max`` and ``Min`` only (no function of the construction, no product of two symbols)."""
    for node in sp.preorder_traversal(sp.sympify(expr)):
        if not isinstance(node, _ALLOWED):
            return False
        if isinstance(node, sp.Mul) and sum(not a.is_number for a in node.args) > 1:
            return False
    return True


@dataclass(frozen=True)
class Restatement:
    """What a definition step states: ``lhs relation rhs`` for all reals satisfying ``given`` (module
    docstring); every expression is :func:`order_only`."""

    name: str
    lhs: sp.Expr
    relation: Relation
    rhs: sp.Expr
    given: tuple[sp.Basic, ...] = ()

    def __post_init__(self) -> None:
        if self.relation not in RELATIONS:
            raise ValueError(f"restatement {self.name!r}: relation={self.relation!r}; accepted: {RELATIONS}")
        for side in (self.lhs, self.rhs, *[x for g in self.given for x in (g.lhs, g.rhs)]):
            if not order_only(side):
                raise ValueError(
                    f"restatement {self.name!r}: {side} is not built from the definitions alone (Max, Min, "
                    "+, - of generic reals), so it is a lemma, not a definition"
                )
        if any(isinstance(g, (sp.Equality, sp.StrictGreaterThan, sp.StrictLessThan)) for g in self.given):
            raise ValueError(f"restatement {self.name!r}: hypotheses must be non-strict inequalities")

    def holds(self) -> bool:
        """:func:`holds_in_every_order` on this restatement."""
        return holds_in_every_order(self.lhs, self.relation, self.rhs, self.given)


def _decided(value: sp.Basic) -> bool | None:
    if value in (sp.true, True):
        return True
    if value in (sp.false, False):
        return False
    return None


def holds_in_every_order(
    lhs: sp.Expr, relation: Relation, rhs: sp.Expr, given: Sequence[sp.Basic] = ()
) -> bool:
    """Decide ``lhs relation rhs`` for every real value of the symbols that satisfies ``given`` (module
    docstring): on every strict ordering of the symbols consistent with ``given``, written as
    ``z < z + s_1 < z + s_1 + s_2 < ...`` with positive ``s_i``, the difference must simplify to a linear
    expression of the right sign. ``False`` when it does not, or when an expression does not resolve."""
    symbols = sorted(
        set().union(*(sp.sympify(e).free_symbols for e in (lhs, rhs, *given))), key=lambda s: s.name
    )
    if len(symbols) > 6:
        raise ValueError(f"holds_in_every_order: {len(symbols)} symbols; at most 6 (720 orderings)")
    z = sp.Dummy("z", real=True)
    slacks = [sp.Dummy(f"s{i}", positive=True) for i in range(max(0, len(symbols) - 1))]
    levels = [z + sum(slacks[:i], sp.Integer(0)) for i in range(len(symbols))]
    consistent = 0
    for order in itertools.permutations(symbols):
        values = dict(zip(order, levels, strict=True))
        verdicts = [_decided(sp.sympify(g).subs(values)) for g in given]
        if None in verdicts:
            return False
        if not all(verdicts):
            continue
        consistent += 1
        diff = sp.expand(sp.sympify(lhs - rhs).subs(values))
        if diff.has(sp.Max, sp.Min):
            return False
        ok = {"==": diff == 0, "<=": bool(diff.is_nonpositive), ">=": bool(diff.is_nonnegative)}[relation]
        if not ok:
            return False
    return consistent > 0


# --------------------------------------------------------------------- what a definition may restate

_T, _A, _B, _C, _BOUND = sp.symbols("t a b c B", real=True)
_TERMS = (_A, _B, _C)

DEFINITIONS: dict[str, Restatement] = {
    r.name: r
    for r in (
        Restatement("margin-at-most-one-competitor", margin(_T, _TERMS), "<=", _T - _A),
        Restatement("worst-at-most-one-input", worst(_TERMS), "<=", _A),
        Restatement("best-at-least-one", best(_TERMS), ">=", _A),
        Restatement(
            "best-below-a-common-bound", best(_TERMS), "<=", _BOUND, tuple(sp.Le(x, _BOUND) for x in _TERMS)
        ),
        Restatement(
            "worst-above-a-common-bound", worst(_TERMS), ">=", _BOUND, tuple(sp.Ge(x, _BOUND) for x in _TERMS)
        ),
        Restatement("worst-over-more-is-smaller", worst(_TERMS), "<=", worst(_TERMS[:2])),
        Restatement(
            "gap-is-margin-on-top",
            gap((_T, _A, _B)),
            "==",
            margin(_T, (_A, _B)),
            (sp.Ge(_T, _A), sp.Ge(_T, _B)),
        ),
    )
}
"""The reviewed restatements (module docstring), by name."""


@cache
def definition_holds(name: str) -> bool:
    """Whether the restatement :data:`DEFINITIONS` ``[name]`` holds (computed once per process)."""
    return DEFINITIONS[name].holds()
