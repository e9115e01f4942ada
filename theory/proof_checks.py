"""When a list of proof steps makes a proof (the rule behind a correction's status ``proved``), and the
small checks the steps share.

A proof is a list of :class:`~ropeproof.theory.dirichlet.ProofStep` s (docs/theory.md section 9). Each
step is one of

- ``"sympy"``: an identity or inequality that sympy proves for every value of its symbols;
- ``"exhaustive"``: a statement checked case by case over a finite range stated in the step (used
  only for side statements, such as which angles attain a bound, never for the bound itself);
- ``"definition"``: a step that only restates a definition (a minimum is at most each of its terms, a
  sum of non-negative terms is at least each term); it carries no check, and docs/theory.md spells it
  out;
- ``"argument"``: a step argued in words and not checked.

:func:`proof_status` calls a list *proved* when every step that carries a check has passed and no step is
an unchecked ``"argument"``.

:func:`monotone_on` decides that a function does not decrease (or increase) on a closed interval from
the exact range of its derivative there (sympy's ``AccumBounds``, which encloses ``sin`` and ``cos`` of an
interval exactly); it answers in milliseconds where ``sympy.is_increasing`` takes a tenth of a second.
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy as sp

from ropeproof.theory.dirichlet import ProofStep

DEFINITION = "definition"
"""Method of a step that restates a definition and needs no check."""


def run_steps(steps: Sequence[ProofStep]) -> dict[str, bool | None]:
    """Run every step that has a check (once: a step already run keeps its result); ``{name: passed}``
    with ``None`` for steps without a check."""
    out: dict[str, bool | None] = {}
    for s in steps:
        if s.check is not None and s.passed is None:
            s.run()
        out[s.name] = s.passed
    return out


def proof_status(steps: Sequence[ProofStep]) -> tuple[bool, str]:
    """``(proved, summary)``: whether ``steps`` prove their statement for every ``n`` (module docstring),
    and ``"k/m steps checked (d definitions)"`` or the names of the steps that stop the proof."""
    run_steps(steps)
    failed = [s.name for s in steps if s.check is not None and s.passed is not True]
    argued = [s.name for s in steps if s.check is None and s.method != DEFINITION]
    checked = sum(s.passed is True for s in steps)
    definitions = sum(s.method == DEFINITION for s in steps)
    if failed or argued:
        why = [f"failed: {', '.join(failed)}"] if failed else []
        why += [f"not checked: {', '.join(argued)}"] if argued else []
        return False, "; ".join(why)
    return True, f"{checked}/{len(steps)} steps checked ({definitions} definitions)"


def steps_table(steps: Sequence[ProofStep]) -> list[dict[str, object]]:
    """One row per step (name, statement, method, status) for reports."""
    run_steps(steps)
    return [{"name": s.name, "statement": s.statement, "method": s.method, "status": s.status} for s in steps]


def monotone_on(expr: sp.Expr, x: sp.Symbol, low: sp.Expr, high: sp.Expr, increasing: bool = True) -> bool:
    """``True`` when the derivative of ``expr`` in ``x`` is ``>= 0`` (``increasing``) or ``<= 0`` at every
    point of ``[low, high]``, decided from its exact range there (``AccumBounds``), so that ``expr`` does
    not decrease (resp. increase) on the interval; ``False`` when the range says otherwise or cannot be
    computed."""
    rng = sp.diff(expr, x).subs(x, sp.AccumBounds(low, high))
    if not isinstance(rng, sp.AccumBounds):
        return False
    return bool(rng.min >= 0) if increasing else bool(rng.max <= 0)
