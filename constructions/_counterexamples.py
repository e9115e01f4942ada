"""Constructions that exist to test a claim rather than to reproduce the papers.

:func:`positional_retrieval_construction` is a *positional* head (every key the same vector, so its
attention ignores key contents) whose readout still answers single-hop Retrieval up to a length set
by ``bonus``: its planes make the query attend to itself with one logit and to every other position with one
smaller logit; every pair writes itself, and a (letter, letter) pair ``(X, Y)`` also writes ``bonus``
on every pair whose left letter is ``Y``. At the query this bonus lands on the target (the only pair
with left letter ``Y`` present) and on absent pairs; the target's own value, weighted by its share of
attention, decides between those, while the query's share of attention must outweigh the bonuses the
distractors write (docs/theory.md section 4, Remark 3.1).
"""

from __future__ import annotations

import sympy as sp

from ropeproof.constructions._paper import ALPHABET_SIZE, retrieval_construction
from ropeproof.machinery._errors import ConstructionError
from ropeproof.machinery._validate import integer, real
from ropeproof.theory._construction import Construction, Plane, Rotated, Token


def positional_retrieval_construction(
    alphabet_size: int = ALPHABET_SIZE, period: int = 65, bonus: float = 10.0, max_int: int = 2
) -> Construction:
    """The positional Retrieval head described in the module docstring.

    ``period`` ``N`` (odd, >= 3) sets ``K = (N - 1) / 2`` planes at ``theta_k = 2 pi k / N``; every
    query and key is ``v``, so the logit at offset ``u`` is ``sum_k cos(u theta_k)``: ``K`` at ``u = 0``
    and exactly ``-1/2`` at every ``u = 1 .. N - 1`` (the Dirichlet kernel). ``bonus > 0``.
    """
    period = integer(period, "period", low=3, error=ConstructionError)
    if period % 2 == 0:
        raise ConstructionError(f"period={period} is even; accepted: an odd integer >= 3")
    real(bonus, "bonus", low=0, low_open=True, error=ConstructionError)
    base = retrieval_construction(alphabet_size, 0.0, max_int=max_int)
    b = sp.nsimplify(bonus)
    by_left: dict[int, list[str]] = {}
    for t in base.tokens:
        by_left.setdefault(int(t.params["phi_left"]), []).append(t.name)

    def value(t: Token) -> dict[str, sp.Expr]:
        out: dict[str, sp.Expr] = {t.name: sp.Integer(1)}
        if t.rule == "pair_ll":
            for name in by_left[int(t.params["phi_right"])]:
                out[name] = out.get(name, sp.Integer(0)) + b
        return out

    def constant(_p: object, _k: int, _plane: Plane) -> Rotated:
        return Rotated(0)

    planes = tuple(Plane(2 * sp.pi * k / period, 1) for k in range(1, (period - 1) // 2 + 1))
    return Construction(
        name="retrieval",  # the Retrieval input family applies
        tokens=base.tokens,
        planes=planes,
        query_rules={"pair_ll": constant, "pair_li": constant},
        key_rules={"pair_ll": constant, "pair_li": constant},
        value=value,
        generic=base.generic,
        parameters={},
        description=f"Positional Retrieval head: constant keys on {len(planes)} planes (period {period}), "
        f"query value bonus {bonus} on the pairs the query asks for.",
        family=base.family,  # the Retrieval input family applies
    )
